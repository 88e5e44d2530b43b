"""check-freeze-ledger: the ledger itself is valid (decision rows 18-21, 27, 29 and 42).

Whole-ledger rules run on every commit and every CI run, because a row expires
while nothing changes but the date. The identity rule asks ``git grep`` which
tracked test files mention a frozen function's name and parses only those, so a
large test tree costs one grep, not one parse per file; a commit that touches none of
the ledger, the test files or the configuration skips even that.
"""
from __future__ import annotations

from oracle_guard.repo.changeset import COMMIT
from oracle_guard.repo.changeset import NO_BASE
from oracle_guard.config import Config
from oracle_guard.config import key_line
from oracle_guard.config import table_config
from oracle_guard.config import PYPROJECT
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.oracle.ledger import empty_ledger
from oracle_guard.oracle.ledger import FREEZABLE
from oracle_guard.oracle.ledger import FREEZE_ID_FORMAT
from oracle_guard.oracle.ledger import FreezeLedger
from oracle_guard.oracle.ledger import FreezeRow
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import NEVER_FREEZABLE
from oracle_guard.oracle.ledger import parse_ledger
from oracle_guard.oracle.ledger import read_ledger
from oracle_guard.oracle.ledger import removed_ids
from oracle_guard.oracle.ledger import ROW_FIELDS
from oracle_guard.oracle.ledger import ROW_MODES
from oracle_guard.reading.precommit_config import configs_from_hook_args
from oracle_guard.reading.precommit_config import PRE_COMMIT_CONFIG
from oracle_guard.context import RunContext
from oracle_guard.runner import run_hook

# The scanner (and ast) is imported by the rules that parse test files, `datetime` by the
# expiry rule once a row has a date: a commit of a test file against a ledger without
# rows needs neither.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import datetime
    from collections.abc import Sequence

HOOK = 'check-freeze-ledger'
CLASSES = (*FREEZABLE, *NEVER_FREEZABLE)
OWN_CHANGE = ('commit the ledger edit alone, in a change with no test or src/ edits, so a '
              'person reviews it')


def load_ledger(view: TreeView, cfg: Config) -> FreezeLedger | None:
    """The ledger on the judged side of the change; None when the repository has none."""
    return read_ledger(view, cfg.ledger)


# -- rows 18 and 19: each row on its own, and the ledger as a whole ---------------------

def _name(row: FreezeRow) -> str:
    return row.id or f'the row on line {row.line}'


def _shown(value: object) -> str:
    """A value as the YAML file spells it."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return repr(value)


def _expiry_findings(row: FreezeRow, path: str, cfg: Config,
                     today: datetime.date) -> list[Finding]:
    name = _name(row)
    line = row.line_of('expires')
    expires = row.expires
    if expires is None:
        return [Finding(path, line, 1, 'OG502',
                        f'{name}: expires is {_shown(row.raw.get("expires"))}, '
                        'not a date (YYYY-MM-DD)',
                        'give every freeze a date on which it fails again')]
    if expires < today:
        return [Finding(path, line, 1, 'OG501',
                        f'{name} expired on {expires.isoformat()} (today is {today.isoformat()})',
                        f'fix {row.nodeid or "the test"} and delete the row, or have '
                        f'{row.owner or "its owner"} renew it in a change of its own')]
    import datetime

    limit = today + datetime.timedelta(days=cfg.max_freeze_days)
    if expires > limit:
        return [Finding(path, line, 1, 'OG503',
                        f'{name}: expires {expires.isoformat()}, more than '
                        f'{cfg.max_freeze_days} days away (max-freeze-days)',
                        f'choose a date no later than {limit.isoformat()}')]
    return []


def _class_findings(row: FreezeRow, path: str) -> list[Finding]:
    name = _name(row)
    line = row.line_of('class')
    value = row.raw.get('class')
    if value in NEVER_FREEZABLE:
        return [Finding(path, line, 1, 'OG507',
                        f'{name}: class {value!r} is never freezable',
                        f'{NEVER_FREEZABLE[value]}, then delete the row')]
    if value not in FREEZABLE:
        return [Finding(path, line, 1, 'OG508',
                        f'{name}: unknown class {value!r}',
                        f'use one of: {", ".join(CLASSES)} (only {" and ".join(FREEZABLE)} '
                        'can be frozen)')]
    return []


def _field_findings(row: FreezeRow, path: str) -> list[Finding]:
    name = _name(row)
    findings = []
    for key in row.raw:
        if key not in ROW_FIELDS:
            findings.append(Finding(path, row.line_of(key), 1, 'OG512',
                                    f'{name}: unknown key {key!r}',
                                    f'a row holds only: {", ".join(ROW_FIELDS)}'))
    if not row.nodeid.strip() or '::' not in row.nodeid:
        findings.append(Finding(path, row.line_of('nodeid'), 1, 'OG513',
                                f'{name}: nodeid {row.raw.get("nodeid")!r} does not name a test',
                                'write the pytest node id: '
                                'tests/test_file.py::TestClass::test_name'))
    if row.mode not in ROW_MODES:
        findings.append(Finding(path, row.line_of('mode'), 1, 'OG513',
                                f'{name}: mode {row.raw.get("mode")!r} is not one of '
                                f'{", ".join(ROW_MODES)}',
                                'use "skip" (the default) or "run" (runs as a non-strict xfail)'))
    fixtures = row.raw.get('fixtures')
    if fixtures is not None and (not isinstance(fixtures, list)
                                 or not all(isinstance(f, str) for f in fixtures)):
        findings.append(Finding(path, row.line_of('fixtures'), 1, 'OG513',
                                f'{name}: fixtures must be a list of fixture paths',
                                'write fixtures: [checkout/timeout.json]'))
    return findings


def row_findings(row: FreezeRow, path: str, cfg: Config, today: datetime.date) -> list[Finding]:
    name = _name(row)
    findings = []
    if not isinstance(row.raw.get('id'), str) or not FREEZE_ID_FORMAT.match(row.id):
        findings.append(Finding(path, row.line_of('id'), 1, 'OG506',
                                f'id {_shown(row.raw.get("id"))} is not of the form FZ-<n>',
                                'name the row FZ-<number>, the id its skip/xfail reason carries'))
    findings.extend(_class_findings(row, path))
    owner = row.owner_problem()
    if owner:
        findings.append(Finding(path, row.line_of('owner'), 1, 'OG509', f'{name}: {owner}',
                                'name the person who answers for this freeze'))
    evidence = row.raw.get('evidence')
    if not isinstance(evidence, str) or not evidence.strip():
        findings.append(Finding(path, row.line_of('evidence'), 1, 'OG510',
                                f'{name}: evidence is empty',
                                'quote how the test fails and when (the failure, the order, '
                                'the clock)'))
    if row.raw.get('agent_may_extend', False) is not False:
        value = _shown(row.raw.get('agent_may_extend'))
        findings.append(Finding(path, row.line_of('agent_may_extend'), 1, 'OG511',
                                f'{name}: agent_may_extend is {value}; only a person renews '
                                'a freeze', 'delete the key or set it to false'))
    findings.extend(_expiry_findings(row, path, cfg, today))
    findings.extend(_field_findings(row, path))
    return findings


def ledger_findings(ledger: FreezeLedger, cfg: Config, today: datetime.date) -> list[Finding]:
    path = ledger.path
    findings = []
    if len(ledger.rows) > ledger.budget:
        findings.append(Finding(path, ledger.budget_line or 1, 1, 'OG504',
                                f'{len(ledger.rows)} freezes, over the budget of {ledger.budget}',
                                'fix frozen tests and delete their rows; raising the budget is '
                                'a change of its own that a person reviews'))
    first_line: dict[str, int] = {}
    for row in ledger.rows:
        if row.id and row.id in first_line:
            findings.append(Finding(path, row.line_of('id'), 1, 'OG505',
                                    f'duplicate id {row.id} (first on line {first_line[row.id]})',
                                    'give each freeze its own id; an id names one test'))
        elif row.id:
            first_line[row.id] = row.line_of('id')
        findings.extend(row_findings(row, path, cfg, today))
    return findings


# -- rows 20 and 21: every frozen identity still names a test ---------------------------

def _last_name(identity: str) -> str:
    return function_of(identity).rsplit('::', 1)[-1]


def identities_in(view: TreeView, cfg: Config, names: Sequence[str]
                  ) -> tuple[set[str], list[str]]:
    """(test identities, unparsable files) among tracked test files mentioning ``names``."""
    from oracle_guard.reading.scanner import identities_of
    from oracle_guard.reading.scanner import is_test_module

    # Only modules pytest collects: a `def test_x` in helpers.py or a conftest is no test.
    return identities_of(view, [p for p in view.grep(names, cfg.test_roots())
                                if cfg.is_test_code(p) and is_test_module(p)])


def identities_may_have_changed(ctx: RunContext) -> bool:
    """Whether the change can make a frozen identity vanish (rows 20 and 21).

    A commit that touches neither the ledger, a test file nor the configuration (which
    says where tests live) leaves every identity as the last commit had it, so the
    commit hook skips the grep. Ranges and --all-files always look.
    """
    changes = ctx.changes
    if changes.mode != COMMIT:
        return True
    cfg = ctx.cfg
    return any(p in (cfg.ledger, PYPROJECT) or cfg.is_test_code(p) for p in changes.touched())


def vanished_findings(ledger: FreezeLedger, view: TreeView, cfg: Config) -> list[Finding]:
    rows = [r for r in ledger.rows if '::' in r.nodeid and r.identity.strip()]
    if not rows:
        return []  # no grep, no parse: nothing is frozen
    found, unparsable = identities_in(view, cfg, [_last_name(r.identity) for r in rows])
    findings = []
    for row in rows:
        if function_of(row.identity) in found:
            continue  # the same identity in any file: moving a test keeps its freeze
        old_file = row.nodeid.split('::', 1)[0]
        why = f' ({", ".join(unparsable)} could not be parsed)' if unparsable else ''
        findings.append(Finding(
            ledger.path, row.line_of('nodeid'), 1, 'OG514',
            f'{_name(row)}: frozen identity {row.identity} was renamed or deleted; '
            f'no tracked test file defines it (it was in {old_file}){why}',
            'restore the test under its old name; renaming a frozen test does not lift the '
            'freeze. If the test is fixed, delete the row in a change of its own',
        ))
    return findings


# -- row 27: loosening the ledger is a change of its own ---------------------------------

def _still_silenced(view: TreeView, cfg: Config, row: FreezeRow,
                    by_id: bool = True) -> str | None:
    """``path:line`` of a skip/xfail that still silences the row's test (or names its id)."""
    from oracle_guard.reading.helper_modules import HelperModules
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import scan_silences
    from oracle_guard.reading.scanner import ScanError

    helpers = HelperModules.of(cfg, view)
    function = function_of(row.identity)
    words = [w for w in (row.id if by_id else '', _last_name(row.identity)) if w]
    for path in view.grep(words, cfg.test_roots()):
        source = view.read(path) if cfg.is_test_code(path) else None
        if source is None:
            continue
        try:
            silences = scan_silences(parse_python(source, path), source.decode('utf-8', 'replace'),
                                     helpers=helpers.seen_from(path))
        except ScanError:
            continue  # check-named-freezes reports the file (OG307)
        for silence in silences:
            if (by_id and row.id in silence.freeze_ids) or \
                    function in map(function_of, silence.targets):
                return f'{path}:{silence.line}'
    return None


def _same_test(a: FreezeRow, b: FreezeRow) -> bool:
    return function_of(a.identity) == function_of(b.identity)


def _counterpart(base_row: FreezeRow, new: FreezeLedger) -> FreezeRow | None:
    """The new row for a base row: the same test, under the same id or renumbered.

    A row that keeps its id but names another test is no counterpart: the base row
    is gone, so an id never covers the old test and the new one at once.
    """
    for row in new.rows:
        if row.id and row.id == base_row.id and _same_test(row, base_row):
            return row
    for row in new.rows:
        if row.identity and _same_test(row, base_row):
            return row
    return None


def _moved_to(base_row: FreezeRow, new: FreezeLedger) -> FreezeRow | None:
    """The new row that took the base row's id for another test, if one did."""
    for row in new.rows:
        if row.id and row.id == base_row.id and not _same_test(row, base_row):
            return row
    return None


def still_named_findings(base: FreezeLedger, new: FreezeLedger, view: TreeView,
                         cfg: Config) -> tuple[list[Finding], frozenset[str]]:
    """Rule 29: a row deleted or renumbered while test code still names its id.

    Judged even when the change touches only the ledger: the test file that carries the
    id is then untouched, so one ``git grep`` for the vanished ids finds it.
    """
    from oracle_guard.reading.helper_modules import HelperModules
    from oracle_guard.reading.scanner import silences_naming

    sites = silences_naming(view, cfg.test_roots(), removed_ids(base, new), cfg.is_test_code,
                            HelperModules.of(cfg, view))
    return [Finding(new.path, 1, 1, 'OG516',
                    f'{freeze_id} removed from the ledger (deleted or renumbered) while '
                    f'{path}:{silence.line} still names it',
                    f'fix the test and remove its {silence.code} in the same change, or keep '
                    f'the row {freeze_id}')
            for path, silence, freeze_id in sites], frozenset(i for _p, _s, i in sites)


def loosening_findings(base: FreezeLedger, new: FreezeLedger, view: TreeView, cfg: Config,
                       others: Sequence[str], named: frozenset[str] = frozenset(),
                       ) -> list[Finding]:
    shown = ', '.join(others[:3]) + (f' (+{len(others) - 3} more)' if len(others) > 3 else '')
    path = new.path
    findings = []

    def loosened(line: int, what: str) -> None:
        findings.append(Finding(path, line, 1, 'OG515',
                                f'{what} in the same change as {shown}; loosening must be a '
                                'change of its own', OWN_CHANGE))

    if isinstance(base.budget, int) and new.budget > base.budget:
        loosened(new.budget_line or 1, f'budget raised from {base.budget} to {new.budget}')
    for base_row in base.rows:
        row = _counterpart(base_row, new)
        name = base_row.id or base_row.identity
        if row is None:
            moved = _moved_to(base_row, new)
            if moved is not None:
                # The id now covers another test; the skips that name it stay legitimate,
                # but any silence left on the old test has lost its row.
                where = _still_silenced(view, cfg, base_row, by_id=False)
                if where:
                    loosened(moved.line_of('nodeid'),
                             f'{name} moved from {base_row.identity} to {moved.identity} '
                             f'while {where} still silences {base_row.identity}')
                continue
            if base_row.id in named:
                continue  # rule 29 (OG516) already names the test code that uses the id
            where = _still_silenced(view, cfg, base_row)
            if where:
                loosened(1, f'{name} deleted from the ledger while {where} still silences '
                            f'{base_row.identity}')
            continue
        old, now = base_row.expires, row.expires
        if old is not None and now is not None and now > old:
            loosened(row.line_of('expires'),
                     f'{name}: expiry moved from {old.isoformat()} to {now.isoformat()}')
        if base_row.raw.get('agent_may_extend', False) is False and \
                row.raw.get('agent_may_extend', False) is not False:
            loosened(row.line_of('agent_may_extend'), f'{name}: agent_may_extend switched on')
    return findings


def change_findings(ctx: RunContext, new: FreezeLedger) -> list[Finding]:
    missing = ctx.missing_base(HOOK)
    if missing or not ctx.changes.has_base:
        return missing
    cfg, changes = ctx.cfg, ctx.changes
    touched = changes.touched()
    # Where the ledger was: moving it (ledger = "…" in the table) is no way around row 27.
    base_path = ctx.base_cfg.ledger
    if cfg.ledger not in touched and base_path not in touched:
        return []
    raw = changes.read_base(base_path)
    if raw is None:
        return []
    try:
        base = parse_ledger(raw, cfg.ledger)
    except ConfigError:
        return []  # a base nobody could read set no limit to loosen
    findings, named = still_named_findings(base, new, changes.new, cfg)
    others = sorted(p for p in touched if cfg.is_test_code(p) or cfg.is_src(p))
    if others:  # alone, the ledger edit is the small diff a person reviews
        findings.extend(loosening_findings(base, new, changes.new, cfg, others, named))
    return findings


def baseline_growth(ctx: RunContext) -> list[Finding]:
    """Rule 42: the baseline of adopted silences grows only in a change of its own."""
    if ctx.changes.mode == NO_BASE:
        return []
    touched = ctx.changes.touched()
    if ctx.cfg.baseline not in touched and ctx.base_cfg.baseline not in touched:
        return []  # the usual commit: no import, no read
    from oracle_guard.oracle.baseline import baseline_growth_findings

    return baseline_growth_findings(ctx)


# -- rule 42: the guard's own settings loosened next to test code or src/ ---------------

def _settings(cfgs: Sequence[Config]) -> dict[str, object]:
    """The settings whose widening lets more through, the widest any of ``cfgs`` gives:
    silence kinds exempt, modules an importorskip may name (once that key exists), how
    far ahead a freeze may expire, the test-run modules production code may use."""
    return {
        'allow-silences': frozenset(k for c in cfgs for k in c.allow_silences),
        'optional-modules': frozenset(m for c in cfgs
                                      for m in getattr(c, 'optional_modules', ()) or ()),
        'max-freeze-days': max(c.max_freeze_days for c in cfgs),
        # test-run modules src/ may name (rule 43)
        'src-test-imports': frozenset(m for c in cfgs for m in c.src_test_imports),
        # interpreter capabilities code src runs may use without approval (rule 54)
        'src-capabilities': frozenset(m for c in cfgs for m in c.src_capabilities),
    }


def _loosened(before: Sequence[Config], after: Sequence[Config]) -> list[tuple[str, str]]:
    """(key, what) for each setting ``after`` widens compared with ``before``."""
    old, new = _settings(before), _settings(after)
    found = []
    for key in ('allow-silences', 'optional-modules', 'src-test-imports', 'src-capabilities'):
        added = sorted(new[key] - old[key])  # type: ignore[operator]
        if added:
            found.append((key, f'{key} widened by {", ".join(added)}'))
    if new['max-freeze-days'] > old['max-freeze-days']:  # type: ignore[operator]
        found.append(('max-freeze-days', f'max-freeze-days raised from '
                      f'{old["max-freeze-days"]} to {new["max-freeze-days"]}'))
    return found


def settings_loosening_findings(ctx: RunContext) -> list[Finding]:
    """Rule 42: a setting that lets more through, widened in the same change as test code
    or ``src/``, fails; alone it passes (that small diff is what a person reviews).

    The settings are read from ``[tool.oracle-guard]`` and from the args of the
    oracle-guard hooks in .pre-commit-config.yaml, each on both sides of the change; a
    change touching neither costs nothing. (The baseline growing, the same rule, is
    ``baseline_growth`` above: OG520.)
    """
    changes = ctx.changes
    if not changes.has_base:
        return []
    touched = changes.touched()
    sources = [p for p in (PYPROJECT, PRE_COMMIT_CONFIG) if p in touched]
    if not sources:
        return []
    cfg = ctx.cfg
    others = sorted(p for p in touched if cfg.is_test_code(p) or cfg.is_src(p) or
                    ctx.base_cfg.is_src(p))
    if not others:
        return []
    base_table = table_config(ctx.cfg.root, changes.read_base(PYPROJECT))
    new_table = table_config(ctx.cfg.root, changes.read_new(PYPROJECT))
    if base_table is None or new_table is None:
        return []
    # the table, and each oracle-guard hook entry's args on top of it, on both sides
    before = [base_table, *configs_from_hook_args(base_table,
                                                  changes.read_base(PRE_COMMIT_CONFIG))]
    after = [new_table, *configs_from_hook_args(new_table, changes.read_new(PRE_COMMIT_CONFIG))]
    shown = ', '.join(others[:3]) + (f' (+{len(others) - 3} more)' if len(others) > 3 else '')
    text = (changes.read_new(PYPROJECT) or b'').decode('utf-8', 'replace')
    findings = []
    for key, what in _loosened(before, after):
        in_table = key_line(text, key) if PYPROJECT in sources else 0
        path = PYPROJECT if in_table else sources[-1]
        findings.append(Finding(
            path, in_table or 1, 1, 'OG517',
            f'{what} in the same change as {shown}; loosening must be a change of its own',
            'commit the setting alone, in a change with no test or src/ edits, so a person '
            'reviews it'))
    return findings


def check(ctx: RunContext) -> list[Finding]:
    cfg = ctx.cfg
    view = ctx.changes.new
    if cfg.acknowledged in ctx.changes.touched():
        # The acknowledged commits sit beside the ledger: a change that edits the list
        # is refused while it is malformed (exit 2), not only once history mode reads it.
        from oracle_guard.oracle.acknowledgements import read_acknowledgements

        read_acknowledgements(view, cfg.acknowledged)
    ledger = load_ledger(view, cfg)
    settings = settings_loosening_findings(ctx)
    if ledger is None:
        # No ledger now: nothing to validate, but deleting one is still judged against the base.
        return settings + change_findings(ctx, empty_ledger(cfg.ledger)) + baseline_growth(ctx)
    # expiry: on every commit; a ledger without rows needs no date (nor datetime)
    findings = ledger_findings(ledger, cfg, ctx.today if ledger.rows else None)  # type: ignore[arg-type]
    if identities_may_have_changed(ctx):
        findings.extend(vanished_findings(ledger, view, cfg))
    findings.extend(change_findings(ctx, ledger))
    findings.extend(baseline_growth(ctx))
    return findings + settings


def history_check(ctx: RunContext) -> list[Finding]:
    """Rules 27, 29 and 42 for one commit of history mode: the ledger and the baseline
    that commit left, against its first parent. The whole-ledger rules judge only the
    ledger as it is now."""
    cfg, touched = ctx.cfg, ctx.changes.touched()
    settings = settings_loosening_findings(ctx)
    if cfg.ledger not in touched and ctx.base_cfg.ledger not in touched:
        return settings + baseline_growth(ctx)
    ledger = load_ledger(ctx.changes.new, cfg)
    return settings + change_findings(ctx, ledger or empty_ledger(cfg.ledger)) + \
        baseline_growth(ctx)


def main(argv: Sequence[str] | None = None) -> int:
    from oracle_guard.config import SCHEMA

    # Read on every commit: asked of HEAD with its first git process (the default path).
    return run_hook(check, argv, 'The freeze ledger is valid: budget, classes, owners, '
                                 'expiry, and identities that still exist.',
                    history=history_check, documents=(SCHEMA['ledger'][0],))


if __name__ == '__main__':
    raise SystemExit(main())
