"""The domain lock: the smallest domain each Hypothesis property may test.

```json
{"version": 1,
 "properties": {
   "test_parse_never_throws": {"max_examples": 200, "deadline_ms": 400, "max_size": 4096},
   "TestCodec::test_roundtrip": {"args": {"key": {"min_size": 16}, "buf": {"max_size": 512}}}
 }}
```

Every field present is enforced; this module knows which direction of each field is
*looser* (``loosened``), so the static hook, the runtime check and the ``lock``
command all judge a value the same way.

Version 2 adds, per entry, ``"strategies"``: each ``@given`` argument's whole strategy in
the canonical form of ``strategy_form`` (compared with ``strategy_form.compare``). Every
version-1 field stays valid in a version-2 entry and is enforced as before.
"""
from __future__ import annotations

import math

from oracle_guard.oracle.documents import LinedDict
from oracle_guard.oracle.documents import load_json
from oracle_guard.findings import ConfigError
from oracle_guard.oracle.records import FrozenRecord
from oracle_guard.oracle.records import Record

# Every commit reads the lock: no dataclasses (and so no inspect), typing or json at import.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

# Fields read from @settings / @seed: what Hypothesis runs.
SETTINGS_FIELDS = ('max_examples', 'deadline_ms', 'derandomize', 'seed', 'database', 'phases',
                   'suppress_health_check')
# Fields read from the strategy of one @given argument.
STRATEGY_FIELDS = ('min_size', 'max_size', 'alphabet', 'min_value', 'max_value')
# Measured by `oracle-guard lock --rates` (rule 55): the share of the property's draws its
# filters, assume and state-machine preconditions rejected, run against the base's src.
MEASURED_FIELDS = ('rejected_share',)
ENTRY_FIELDS = (*SETTINGS_FIELDS, *STRATEGY_FIELDS, 'filters', *MEASURED_FIELDS, 'args')
ENTRY_FIELDS_V2 = (*ENTRY_FIELDS, 'strategies')
VERSIONS = (1, 2)
TOP_FIELDS = ('version', 'properties')
PHASES = ('explicit', 'reuse', 'generate', 'target', 'shrink', 'explain')

# What Hypothesis uses when nothing sets a field (hypothesis/_settings.py, profile
# "default"): a test without @settings runs with these unless a profile says otherwise.
HYPOTHESIS_DEFAULTS: dict[str, Any] = {
    'max_examples': 100, 'deadline_ms': 200, 'derandomize': False, 'seed': None,
    'database': True, 'phases': list(PHASES), 'suppress_health_check': [],
}


def skips_generation(phases: Any) -> bool:
    """True when a phases setting leaves out "generate": no example is drawn at all.

    ``@settings(max_examples=500, phases=[Phase.explicit])`` runs only the @example
    cases, so a locked ``max_examples`` is judged as 0 whatever the test says.
    """
    return isinstance(phases, list) and 'generate' not in phases


class Unverifiable:
    """A live value oracle-guard could not read; never trusted, always reported."""

    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f'<unverifiable: {self.why}>'


def is_unverifiable(value: Any) -> bool:
    return isinstance(value, Unverifiable)


class LockEntry(FrozenRecord):
    __slots__ = ('identity', 'line', 'fields', 'args', 'key_lines', 'strategies')
    identity: str
    line: int
    fields: dict[str, Any]  # settings fields, top-level strategy fields, filters
    args: dict[str, dict[str, Any]]
    key_lines: dict[str, int]
    # version 2: argument name -> canonical strategy form (absent in version 1)
    strategies: dict[str, Any]

    def __init__(self, identity: str, line: int, fields: dict[str, Any],
                 args: dict[str, dict[str, Any]] | None = None,
                 key_lines: dict[str, int] | None = None,
                 strategies: dict[str, Any] | None = None) -> None:
        self._set(identity=identity, line=line, fields=fields,
                  args={} if args is None else args,
                  key_lines={} if key_lines is None else key_lines,
                  strategies={} if strategies is None else strategies)

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.fields)
        if self.args:
            data['args'] = {name: dict(values) for name, values in self.args.items()}
        if self.strategies:
            data['strategies'] = dict(self.strategies)
        return data


class DomainLock(Record):
    __slots__ = ('path', 'entries', 'present', 'version')
    path: str
    entries: dict[str, LockEntry]
    present: bool  # False when the file does not exist
    version: int

    def __init__(self, path: str, entries: dict[str, LockEntry], present: bool = True,
                 version: int = 1) -> None:
        self.path = path
        self.entries = entries
        self.present = present
        self.version = version

    def as_json(self) -> dict[str, Any]:
        return {'version': self.version,
                'properties': {k: e.as_json() for k, e in sorted(self.entries.items())}}


def empty_lock(path: str) -> DomainLock:
    return DomainLock(path, {}, present=False)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def field_problem(name: str, value: Any) -> str | None:
    """Why a lock value is malformed, or None."""
    if name == 'max_examples':
        return None if _is_count(value) and value >= 1 else 'must be a whole number >= 1'
    if name in ('min_size', 'filters'):
        return None if _is_count(value) else 'must be a whole number >= 0'
    if name == 'rejected_share':
        return None if _is_number(value) and 0 <= value <= 1 else \
            'must be a number from 0 to 1 (written by `oracle-guard lock --rates`)'
    if name == 'max_size':
        return None if value is None or _is_count(value) else \
            'must be a whole number >= 0, or null for unbounded'
    if name == 'deadline_ms':
        return None if value is None or (_is_number(value) and value > 0) else \
            'must be a positive number of milliseconds, or null for no deadline'
    if name == 'seed':
        return None if isinstance(value, int) and not isinstance(value, bool) else \
            'must be a whole number'
    if name in ('derandomize', 'database'):
        return None if isinstance(value, bool) else 'must be true or false'
    if name == 'phases':
        if isinstance(value, list) and all(v in PHASES for v in value):
            return None
        return f'must be a list of phase names ({", ".join(PHASES)})'
    if name == 'suppress_health_check':
        if isinstance(value, list) and all(isinstance(v, str) and v for v in value):
            return None
        return 'must be a list of health check names'
    if name == 'alphabet':
        return None if isinstance(value, str) else \
            'must be a string: the literal alphabet or the strategy expression'
    if name in ('min_value', 'max_value'):
        return None if value is None or _is_number(value) else 'must be a number or null'
    return 'is not a lock field'


def parse_lock(raw: bytes, path: str) -> DomainLock:
    """Parse the lock strictly: unknown fields and malformed values are ConfigErrors."""
    data = load_json(raw, path)
    if not isinstance(data, dict):
        raise ConfigError(path, 1, 'the domain lock must be a JSON object with "version" '
                          'and "properties"')
    for name in data:
        if name not in TOP_FIELDS:
            raise ConfigError(path, data.line_of(name), f'unknown top-level key {name!r}',
                              'a domain lock holds only "version" and "properties"')
    version = data.get('version')
    if isinstance(version, bool) or version not in VERSIONS:
        raise ConfigError(path, data.line_of('version'),
                          f'unsupported domain lock version {version!r}; expected 1 or 2')
    properties = data.get('properties', {})
    if not isinstance(properties, dict):
        raise ConfigError(path, data.line_of('properties'), '"properties" must be an object')
    entries = {}
    for identity, raw_entry in properties.items():
        line = properties.line_of(identity)
        entries[identity] = _parse_entry(path, identity, raw_entry, line, version)
    return DomainLock(path, entries, version=version)


def _check_fields(path: str, where: str, values: LinedDict, allowed: tuple[str, ...]) -> None:
    for name, value in values.items():
        line = values.line_of(name)
        if name not in allowed:
            raise ConfigError(path, line, f'{where}: unknown field {name!r}',
                              f'allowed fields: {", ".join(allowed)}')
        problem = field_problem(name, value)
        if problem:
            raise ConfigError(path, line, f'{where}: {name} {problem} (got {value!r})')


def _parse_entry(path: str, identity: str, raw: Any, line: int, version: int = 1
                 ) -> LockEntry:
    if not identity or identity.strip() != identity or '/' in identity.split('::')[0]:
        raise ConfigError(path, line, f'{identity!r} is not a test identity',
                          'key entries by function name or Class::function, without the file')
    if not isinstance(raw, dict):
        raise ConfigError(path, line, f'{identity}: an entry must be an object')
    flat = LinedDict({k: v for k, v in raw.items() if k not in ('args', 'strategies')})
    flat.line, flat.key_lines = raw.line, {k: raw.line_of(k) for k in flat}
    if 'strategies' in raw and version < 2:
        raise ConfigError(path, raw.line_of('strategies'),
                          f'{identity}: "strategies" needs "version": 2',
                          'run `oracle-guard lock --upgrade`')
    _check_fields(path, identity, flat, ENTRY_FIELDS)
    args: dict[str, dict[str, Any]] = {}
    key_lines = {k: raw.line_of(k) for k in raw}
    if 'args' in raw:
        raw_args = raw['args']
        if not isinstance(raw_args, dict):
            raise ConfigError(path, raw.line_of('args'), f'{identity}: "args" must be an object '
                              'of argument name -> strategy fields')
        for name, values in raw_args.items():
            if not isinstance(values, dict):
                raise ConfigError(path, raw_args.line_of(name),
                                  f'{identity}: args.{name} must be an object')
            _check_fields(path, f'{identity} args.{name}', values, STRATEGY_FIELDS)
            args[name] = dict(values)
            key_lines[f'args.{name}'] = raw_args.line_of(name)
            for key in values:
                key_lines[f'args.{name}.{key}'] = values.line_of(key)
    strategies: dict[str, Any] = {}
    if 'strategies' in raw:
        raw_forms = raw['strategies']
        if not isinstance(raw_forms, dict):
            raise ConfigError(path, raw.line_of('strategies'), f'{identity}: "strategies" must '
                              'be an object of argument name -> strategy form')
        for name, form in raw_forms.items():
            problem = form_problem(form)
            if problem:
                raise ConfigError(path, raw_forms.line_of(name),
                                  f'{identity}: strategies.{name}: {problem}',
                                  'write it with `oracle-guard lock`; see docs/domain-lock.md')
            strategies[name] = _plain(form)
            key_lines[f'strategies.{name}'] = raw_forms.line_of(name)
    return LockEntry(identity, line, dict(flat), args, key_lines, strategies)


def _plain(value: Any) -> Any:
    """A parsed JSON value without the line bookkeeping of ``LinedDict``."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


_FORM_KEYS = ('strategy', 'unresolved', 'expr', 'code')


def form_problem(form: Any, depth: int = 0) -> str | None:
    """Why a locked strategy form is malformed, or None (strategy_form writes the shape)."""
    if depth > 64:
        return 'nested too deeply'
    if not isinstance(form, dict) or not any(k in form for k in _FORM_KEYS):
        return ('must be an object with "strategy" (or "unresolved", "expr", "code"); '
                f'got {render(form)[:60]}')
    if 'strategy' in form and not (isinstance(form['strategy'], str) and form['strategy']):
        return '"strategy" must be a strategy name'
    for key, value in form.items():
        if isinstance(value, dict) and any(k in value for k in _FORM_KEYS):
            problem = form_problem(value, depth + 1)
            if problem:
                return f'{key}: {problem}'
    return None


def read_lock_bytes(raw: bytes | None, path: str) -> DomainLock:
    return empty_lock(path) if raw is None else parse_lock(raw, path)


# -- which way is looser ------------------------------------------------------------------

def loosened(name: str, locked: Any, live: Any) -> bool:
    """True when ``live`` tests less than ``locked`` for field ``name``.

    ``None`` means "unbounded" for sizes and values and "no deadline" for deadline_ms.
    """
    if name == 'max_examples':
        return live < locked
    if name == 'deadline_ms':
        return live is not None and (locked is None or live < locked)
    if name in ('derandomize', 'database'):
        return bool(locked) and not live
    if name in ('seed', 'alphabet'):
        return live != locked
    if name == 'phases':
        return bool(set(locked) - set(live))
    if name == 'suppress_health_check':
        return bool(set(live) - set(locked))
    if name == 'min_size':
        return (live or 0) > locked
    if name == 'max_size':
        return live is not None and (locked is None or live < locked)
    if name == 'min_value':
        return live is not None and (locked is None or live > locked)
    if name == 'max_value':
        return live is not None and (locked is None or live < locked)
    if name in ('filters', 'rejected_share'):
        return live > locked
    raise KeyError(name)


def render(value: Any) -> str:
    """A value as the lock would spell it (JSON), for messages."""
    if is_unverifiable(value):
        return '<unverifiable>'
    import json

    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


class Drift(FrozenRecord):
    """One locked field whose live value is looser than the lock, or unreadable."""

    __slots__ = ('field', 'locked', 'live')
    field: str  # 'max_size' or 'args.buf.max_size'
    locked: Any
    live: Any

    def __init__(self, field: str, locked: Any, live: Any) -> None:
        self._set(field=field, locked=locked, live=live)

    @property
    def unverifiable(self) -> bool:
        return is_unverifiable(self.live)

    def describe(self) -> str:
        if self.unverifiable:
            return (f'{self.field}: locked at {render(self.locked)}, but the live value is '
                    f'unverifiable ({self.live.why})')
        return f'{self.field}: locked at {render(self.locked)}, live value {render(self.live)}'


MISSING_ARG = Unverifiable('the test no longer draws this argument')


def compare_entry(entry: LockEntry, settings: dict[str, Any],
                  strategies: dict[str, dict[str, Any]], filters: Any = None) -> list[Drift]:
    """Every locked field the live values loosen, or cannot show.

    ``settings`` maps settings fields to live values; ``strategies`` maps each @given
    argument to its strategy fields. A field missing from a strategy's dict is
    unverifiable (the strategy does not take it, or could not be read).
    ``filters`` None skips that field (the runtime cannot count ``assume``).
    """
    drifts = []
    for name, locked in entry.fields.items():
        if name in SETTINGS_FIELDS:
            live = settings.get(name, Unverifiable('not read'))
        elif name == 'filters' or name in MEASURED_FIELDS:
            continue  # filters: below; a measured share: the gate's reference run (rule 55)
        elif len(strategies) == 1:
            live = next(iter(strategies.values())).get(
                name, Unverifiable(f'the strategy has no {name}'))
        else:
            live = Unverifiable(f'the test draws {len(strategies)} arguments; lock '
                                f'{name} per argument under "args"')
        drifts.extend(_drift(name, locked, live))
    # No "filters" in an entry allows none: a new .filter()/assume() needs a person.
    allowed = entry.fields.get('filters', 0)
    if filters is not None and filters > allowed:
        drifts.append(Drift('filters', allowed, filters))
    for arg, values in entry.args.items():
        fields_live = strategies.get(arg)
        for name, locked in values.items():
            live = MISSING_ARG if fields_live is None else fields_live.get(
                name, Unverifiable(f'the strategy has no {name}'))
            drifts.extend(_drift(f'args.{arg}.{name}', locked, live, name))
    return drifts


def _drift(label: str, locked: Any, live: Any, name: str | None = None) -> list[Drift]:
    if is_unverifiable(live):
        return [Drift(label, locked, live)]
    try:
        if loosened(name or label, locked, live):
            return [Drift(label, locked, live)]
    except TypeError:  # a live value of another kind (a date where a number was locked)
        return [Drift(label, locked, Unverifiable(f'{live!r} cannot be compared'))]
    return []


def loosened_entries(base: DomainLock, new: DomainLock) -> list[tuple[str, str, int]]:
    """(identity, what, line in the new lock) for every entry the new lock relaxes."""
    found = []
    for identity, old in sorted(base.entries.items()):
        entry = new.entries.get(identity)
        if entry is None:
            found.append((identity, 'entry removed', 1))
            continue
        flat_old = {**old.fields, **{f'args.{a}.{k}': v for a, vs in old.args.items()
                                     for k, v in vs.items()}}
        flat_new = {**entry.fields, **{f'args.{a}.{k}': v for a, vs in entry.args.items()
                                       for k, v in vs.items()}}
        for label, locked in sorted(flat_old.items()):
            name = label.rsplit('.', 1)[-1]
            if label not in flat_new:
                found.append((identity, f'{label} removed (was {render(locked)})',
                              entry.line))
            elif loosened(name, locked, flat_new[label]):
                found.append((identity, f'{label} {render(locked)} -> '
                                        f'{render(flat_new[label])}',
                              entry.line_of(label.split('.')[0])))
        if 'filters' not in flat_old:
            if flat_new.get('filters'):
                found.append((identity, f'filters 0 -> {flat_new["filters"]}',
                              entry.line_of('filters')))
        found.extend(_loosened_forms(identity, old, entry))
    return found


def _loosened_forms(identity: str, old: LockEntry, new: LockEntry
                    ) -> list[tuple[str, str, int]]:
    """Version 2: a locked strategy the new lock narrows (or drops) is loosened too."""
    from oracle_guard.oracle.strategy_form import compare
    from oracle_guard.oracle.strategy_form import is_unresolved

    found = []
    for arg, locked in sorted(old.strategies.items()):
        label = f'strategies.{arg}'
        if arg not in new.strategies:
            found.append((identity, f'{label} removed', new.line))
            continue
        for difference in compare(locked, new.strategies[arg]):
            # Replacing a locked value by an unreadable one loosens it as well.
            if not is_unresolved(difference.locked):
                found.append((identity, f'{label}: {difference.describe()}',
                              new.line_of(label)))
    return found


def dump_lock(lock_data: dict[str, Any]) -> str:
    """Stable formatting: sorted keys, 2-space indent, trailing newline."""
    import json

    return json.dumps(lock_data, indent=2, sort_keys=True, ensure_ascii=False) + '\n'
