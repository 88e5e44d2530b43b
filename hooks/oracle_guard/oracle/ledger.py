"""The freeze ledger (SPEC §3.2): every silenced test, named, owned and dated."""
from __future__ import annotations

TYPE_CHECKING = False  # every commit reads the ledger: no typing, datetime or re at import
if TYPE_CHECKING:  # pragma: no cover
    import datetime
    from typing import Any

from oracle_guard.oracle.documents import LinedDict
from oracle_guard.oracle.documents import load_yaml
from oracle_guard.findings import ConfigError
from oracle_guard.oracle.patterns import LazyPattern
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.oracle.records import FrozenRecord
from oracle_guard.oracle.records import Record

FREEZABLE = ('order-dependent', 'time-dependent')
# Known classes that are never frozen, with what to do instead.
NEVER_FREEZABLE = {
    'network': 'isolate the test from the network (a fake server or a recorded response)',
    'unseeded-entropy': 'lock the seed so the test is deterministic',
    'resource': 'cap the resource the test uses (time, memory, size)',
}
ROW_FIELDS = ('id', 'nodeid', 'class', 'evidence', 'owner', 'expires', 'agent_may_extend',
              'fixtures', 'mode')
TOP_FIELDS = ('budget', 'freezes')

FREEZE_ID_FORMAT = LazyPattern(r'^FZ-\d+$')
# How a frozen test is treated at run time: skipped (default) or run as a non-strict xfail.
ROW_MODES = ('skip', 'run')
# Owners that are not a person: nobody, an agent or a bot cannot answer for a freeze.
NOT_A_PERSON = frozenset(('', 'unassigned', 'agent', 'bot', 'nobody', 'none', 'null', 'tbd',
                          'todo', 'ai'))
_BOT_OWNER = LazyPattern(
    r'\[bot\]$|(^|[-_. /@])(bot|agent)$|^(bot|agent)[-_. /@]|^(dependabot|renovate|'
    r'github-actions|copilot|pre-commit-ci)\b',
    2,  # re.I
)


def identity_of(nodeid: str) -> str:
    """A node id without its file path: what survives moving the test to another file."""
    first, sep, rest = nodeid.partition('::')
    if sep and (first.endswith('.py') or '/' in first):
        return rest
    return nodeid


def function_of(identity: str) -> str:
    """``TestX::test_y[a-1]`` -> ``TestX::test_y``: parameters resolve to the function."""
    return identity.split('[', 1)[0]


class FreezeRow(FrozenRecord):
    __slots__ = ('raw', 'line')
    raw: dict[str, Any]
    line: int

    def __init__(self, raw: dict[str, Any], line: int) -> None:
        self._set(raw=raw, line=line)

    def _str(self, key: str) -> str:
        value = self.raw.get(key)
        return value if isinstance(value, str) else ''

    @property
    def id(self) -> str:
        return self._str('id')

    @property
    def nodeid(self) -> str:
        return self._str('nodeid')

    @property
    def identity(self) -> str:
        return identity_of(self.nodeid)

    @property
    def freeze_class(self) -> str:
        return self._str('class')

    @property
    def owner(self) -> str:
        value = self.raw.get('owner')
        return str(value) if value is not None else ''

    @property
    def expires(self) -> datetime.date | None:
        import datetime

        value = self.raw.get('expires')
        if isinstance(value, datetime.datetime):
            return value.date()
        if isinstance(value, datetime.date):
            return value
        if isinstance(value, str):
            try:
                return datetime.date.fromisoformat(value)
            except ValueError:
                return None
        return None

    @property
    def fixtures(self) -> tuple[str, ...]:
        value = self.raw.get('fixtures') or ()
        return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()

    @property
    def mode(self) -> str:
        value = self.raw.get('mode', 'skip')
        return value if isinstance(value, str) else ''

    def line_of(self, key: str) -> int:
        return self.raw.line_of(key) if isinstance(self.raw, LinedDict) else self.line

    def owner_problem(self) -> str | None:
        """Why the owner is not a person who can answer for the freeze, or None."""
        value = self.raw.get('owner')
        if value is None:
            return 'has no owner'
        if not isinstance(value, str):
            return f'owner {value!r} is not a name'
        name = value.strip()
        if name.lower() in NOT_A_PERSON:
            return f'owner is {name!r}, not a person' if name else 'has an empty owner'
        if _BOT_OWNER.search(name):
            return f'owner {name!r} is a bot or an agent, not a person'
        return None

    def is_freezable(self) -> bool:
        return self.freeze_class in FREEZABLE

    def is_live(self, today: datetime.date) -> bool:
        expires = self.expires
        return expires is not None and expires >= today and self.is_freezable()


class FreezeLedger(Record):
    __slots__ = ('path', 'budget', 'rows', 'budget_line')
    path: str
    budget: Any
    rows: list[FreezeRow]
    budget_line: int

    def __init__(self, path: str, budget: Any, rows: list[FreezeRow],
                 budget_line: int = 0) -> None:
        self.path = path
        self.budget = budget
        self.rows = rows
        self.budget_line = budget_line

    def by_id(self) -> dict[str, FreezeRow]:
        result: dict[str, FreezeRow] = {}
        for row in self.rows:
            result.setdefault(row.id, row)
        return result


def empty_ledger(path: str) -> FreezeLedger:
    return FreezeLedger(path, 0, [])


def parse_ledger(raw: bytes, path: str) -> FreezeLedger:
    data = load_yaml(raw, path)
    if data is None:
        raise ConfigError(path, 1, 'the ledger is empty', 'write at least "budget: 0" and "freezes: []"')
    if not isinstance(data, dict):
        raise ConfigError(path, 1, 'the ledger must be a mapping with "budget" and "freezes"')
    for name in data:
        if name not in TOP_FIELDS:
            raise ConfigError(path, data.line_of(name), f'unknown top-level key {name!r}',
                              'a ledger holds only "budget" and "freezes"')
    freezes = data.get('freezes') or []
    if not isinstance(freezes, list):
        raise ConfigError(path, data.line_of('freezes'), '"freezes" must be a list of rows')
    rows = []
    for item in freezes:
        if not isinstance(item, dict):
            raise ConfigError(path, data.line_of('freezes'), 'every freeze must be a mapping')
        rows.append(FreezeRow(item, getattr(item, 'line', 0)))
    return FreezeLedger(path, data.get('budget'), rows, data.line_of('budget'))


def read_ledger(view: TreeView, path: str) -> FreezeLedger | None:
    """The ledger on one side of a change; None when the repository has none.

    The one loader every hook, command and the plugin use, so they agree on what a
    readable ledger is: a regular file (no symlink), valid YAML, a whole-number budget.
    """
    raw = view.read_document(path)
    if raw is None:
        return None
    ledger = parse_ledger(raw, path)
    budget = ledger.budget
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        where = ledger.budget_line or 1
        what = 'has no "budget"' if budget is None else f'"budget" is {budget!r}'
        raise ConfigError(path, where, f'the ledger {what}; it must be a whole number >= 0',
                          'write "budget: 0" and raise it only in a change of its own')
    return ledger


def removed_ids(base: FreezeLedger, new: FreezeLedger) -> list[str]:
    """Ids the base ledger had and the new one has not (rows deleted or renumbered)."""
    now = {row.id for row in new.rows if row.id}
    return sorted({row.id for row in base.rows if row.id and row.id not in now})
