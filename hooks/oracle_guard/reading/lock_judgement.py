"""The judgement of properties against the domain lock (check-generator-lock): each
property's strategies compared with its locked form, the settings profiles that may apply to
it, and a lock narrowed since the base revision."""
from __future__ import annotations

from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.reading.property_modules import module_source
from oracle_guard.reading.property_prefilter import might_hold_properties

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence
    from typing import Any

    from oracle_guard.context import RunContext
    from oracle_guard.oracle.domain_lock import DomainLock
    from oracle_guard.oracle.domain_lock import Drift
    from oracle_guard.oracle.domain_lock import LockEntry
    from oracle_guard.reading.property_reader import Profile
    from oracle_guard.reading.property_reader import ProfileSources
    from oracle_guard.reading.property_reader import PropertyTest


LOCK_HINT = 'run `oracle-guard lock`, review the diff, and commit the lock in a change of its own'


def _restricted(entry: LockEntry, fields: Sequence[str]) -> LockEntry:
    from oracle_guard.oracle.domain_lock import LockEntry
    return LockEntry(entry.identity, entry.line,
                     {k: v for k, v in entry.fields.items() if k in fields})


def _drift_finding(prop: PropertyTest, drift: Drift, line: int, col: int, where: str = ''
                   ) -> Finding:
    if drift.unverifiable:
        return Finding(prop.path, line, col, 'OG603',
                       f'{prop.identity}: {drift.describe()}{where}',
                       'use a literal or a constant of this module, so the value can be '
                       'checked before the test runs')
    if drift.field == 'filters':
        return Finding(prop.path, line, col, 'OG604',
                       f'{prop.identity}: {drift.live} .filter()/assume() call(s) but the '
                       f'lock allows {drift.locked}',
                       'draw the values you need instead of discarding examples; or a person '
                       'raises "filters" in the lock in a change of its own')
    return Finding(prop.path, line, col, 'OG602',
                   f'{prop.identity} tests less than its lock: {drift.describe()}{where}',
                   'restore the locked value; a person who means to shrink the domain '
                   'edits the lock in a change of its own')


class ProfileCandidates:
    """The profiles that may govern a test's unset settings fields, and who selects them."""

    def __init__(self, sources: ProfileSources) -> None:
        self.profiles: dict[str, Profile] = {p.name: p for p in sources.profiles}
        self.selections: dict[str, list] = {}  # name -> [ProfileSelection]
        for sel in sources.selections:
            names = [sel.name]
            if sel.name == '$HYPOTHESIS_PROFILE':
                names = list(dict.fromkeys(sources.env_names))
            for name in names:
                key = name if isinstance(name, str) else '<unknown>'
                self.selections.setdefault(key, []).append(sel)
        unconditional = any(s.unconditional for s in sources.selections)
        names = list(self.profiles)
        names += [n for n in self.selections if n not in self.profiles]
        if not unconditional and 'default' not in names:
            names.insert(0, 'default')
        self.names = names

    def values(self, name: str) -> dict:
        from oracle_guard.reading.property_reader import profile_values

        if name == '<unknown>':
            return profile_values('<a profile chosen at run time>', {})
        return profile_values(name, self.profiles)


def _own_phases(prop: PropertyTest, candidates: ProfileCandidates) -> Any:
    """The phases the test sets itself or inherits from its parent; None: the profile's."""
    from oracle_guard.oracle.domain_lock import is_unverifiable
    from oracle_guard.reading.property_reader import profile_values

    if 'phases' in prop.settings:
        return prop.settings['phases'].value
    if prop.parent is None:
        return None
    if is_unverifiable(prop.parent):
        return prop.parent
    return profile_values(prop.parent, candidates.profiles).get('phases')  # type: ignore[arg-type]


def _no_generation_note(phases: Any) -> str:
    from oracle_guard.oracle.domain_lock import render
    return f' (phases {render(phases)} leave out "generate": no example is generated)'


def judge_forms(prop: PropertyTest, entry: LockEntry, notes: list[str]) -> list[Finding]:
    """Lock version 2 (rows 23 and 24 for whole strategies): every locked strategy form
    against the one the source spells now. Narrower is OG610; what the static reader
    cannot resolve is a note, checked by the pytest plugin at call time."""
    from oracle_guard.oracle.strategy_form import compare

    findings = []
    if entry.strategies:
        # Row 24 for whole strategies: an argument the lock has no form for is unlocked;
        # narrowing it later would pass unseen.
        for arg in sorted(set(prop.forms) - set(entry.strategies)):
            findings.append(Finding(
                prop.path, prop.strategy_lines.get(arg, prop.line), 1, 'OG601',
                f'unlocked argument: {prop.identity} draws {arg}, which its entry\'s '
                '"strategies" does not lock', LOCK_HINT))
    for arg, locked in sorted(entry.strategies.items()):
        line = prop.strategy_lines.get(arg, prop.line)
        if arg not in prop.forms:
            findings.append(Finding(
                prop.path, prop.line, prop.col, 'OG610',
                f'{prop.identity} tests less than its lock: args.{arg}: locked '
                f'{_short(locked)}, but the test no longer draws this argument',
                'restore the argument; a person who means to shrink the domain edits the '
                'lock in a change of its own'))
            continue
        for difference in compare(locked, prop.forms[arg]):
            if difference.runtime:
                notes.append(f'{prop.path}:{line}:1: note: {prop.identity}: args.{arg}: '
                             f'{difference.describe()}; the pytest plugin checks it')
                continue
            findings.append(Finding(
                prop.path, line, 1, 'OG610',
                f'{prop.identity} tests less than its lock: args.{arg}: '
                f'{difference.describe()}',
                'restore the locked strategy (a wider one passes); a person who means to '
                'narrow it re-locks with `oracle-guard lock --allow-loosen` in a change of '
                'its own'))
    return findings


def _short(form: Any) -> str:
    from oracle_guard.oracle.strategy_form import short
    return short(form)


def judge_property(prop: PropertyTest, entry: LockEntry, candidates: ProfileCandidates,
                   notes: list[str] | None = None) -> list[Finding]:
    from oracle_guard.oracle.domain_lock import compare_entry
    from oracle_guard.oracle.domain_lock import is_unverifiable
    from oracle_guard.oracle.domain_lock import LockEntry
    from oracle_guard.oracle.domain_lock import SETTINGS_FIELDS
    from oracle_guard.oracle.domain_lock import skips_generation
    from oracle_guard.oracle.domain_lock import Unverifiable
    from oracle_guard.reading.property_reader import profile_values

    findings = judge_forms(prop, entry, notes if notes is not None else [])
    settings: dict = {}
    where: dict[str, tuple[int, int]] = {}
    ambient = []
    phases = _own_phases(prop, candidates)
    notes: dict[str, str] = {}
    for name in entry.fields:
        if name not in SETTINGS_FIELDS:
            continue
        if name == 'max_examples' and skips_generation(phases):
            settings[name] = 0
            notes[name] = _no_generation_note(phases)
            located = prop.settings.get('phases')
            where[name] = (located.line, located.col) if located else (prop.line, prop.col)
        elif name == 'max_examples' and 'phases' in prop.settings and is_unverifiable(phases):
            settings[name] = Unverifiable(f'phases cannot be read ({phases.why}), so whether '
                                          'any example is generated is unknown')
            where[name] = (prop.settings['phases'].line, prop.settings['phases'].col)
        elif name in prop.settings:
            located = prop.settings[name]
            settings[name] = located.value
            where[name] = (located.line, located.col)
        elif prop.parent is not None:
            settings[name] = prop.parent if is_unverifiable(prop.parent) else \
                profile_values(prop.parent, candidates.profiles).get(name)  # type: ignore[arg-type]
        else:
            ambient.append(name)
    own = LockEntry(entry.identity, entry.line,
                    {k: v for k, v in entry.fields.items() if k not in ambient}, entry.args)
    for drift in compare_entry(own, settings, prop.strategies, prop.filters):
        if drift.field == 'filters':
            line, col = prop.filter_line, 1
        elif drift.field.startswith('args.'):
            line, col = prop.strategy_lines.get(drift.field.split('.')[1], prop.line), 1
        elif drift.field in prop.strategies or drift.field not in SETTINGS_FIELDS:
            line, col = next(iter(prop.strategy_lines.values()), prop.line), 1
        else:
            line, col = where.get(drift.field, (prop.line, prop.col))
        findings.append(_drift_finding(prop, drift, line, col, notes.get(drift.field, '')))
    # A test that sets max_examples but leaves phases to the profile: a profile without
    # "generate" still runs it with no example.
    phases_ambient = 'max_examples' in settings and phases is None
    if ambient or phases_ambient:
        fields = ambient + (['max_examples'] if phases_ambient else [])
        findings.extend(_judge_ambient(prop, _restricted(entry, fields), candidates,
                                       judged=('max_examples',) if phases_ambient else ()))
    return findings


def _judge_ambient(prop: PropertyTest, entry: LockEntry, candidates: ProfileCandidates,
                   judged: Sequence[str] = ()) -> list[Finding]:
    """Fields the test leaves to the active profile: every profile that may be active.

    ``judged`` fields the test sets itself (already compared); a profile can only take
    them away by leaving out the "generate" phase.
    """
    from oracle_guard.oracle.domain_lock import compare_entry
    from oracle_guard.oracle.domain_lock import skips_generation
    from oracle_guard.reading.property_reader import BUILTIN_PROFILES

    findings = []
    for name in candidates.names:
        values = candidates.values(name)
        note = ''
        if 'max_examples' in entry.fields and skips_generation(values.get('phases')):
            values = {**values, 'max_examples': 0}
            note = _no_generation_note(values['phases'])
        elif 'max_examples' in judged:
            values = {**values, 'max_examples': entry.fields['max_examples']}
        drifts = compare_entry(entry, values, {})
        if not drifts:
            continue
        profile = candidates.profiles.get(name)
        if profile is None and name in BUILTIN_PROFILES and name not in candidates.selections:
            for drift in drifts:  # Hypothesis's own default: the test itself sets too little
                findings.append(_drift_finding(
                    prop, drift, prop.line, prop.col,
                    f' (Hypothesis {name!r} profile; no @settings on the test sets it)'))
            continue
        text = '; '.join(d.describe() for d in drifts) + note
        places = [(s.path, s.line, s.col, s.how) for s in candidates.selections.get(name, [])]
        if profile is not None:
            places.insert(0, (profile.path, profile.line, profile.col, 'register_profile'))
        for path, line, col, how in places:
            if any(d.unverifiable for d in drifts) and profile is None:
                findings.append(Finding(
                    path, line, col, 'OG603',
                    f'{how} selects profile {name!r}, which governs {prop.identity}: {text}',
                    'register the profile in a conftest.py of this repository with literal '
                    'values, or set the locked fields with @settings on the test'))
                continue
            findings.append(Finding(
                path, line, col, 'OG605',
                f'{how}: profile {name!r} would run {prop.identity} ({prop.path}) with less '
                f'than its lock: {text}',
                'raise the profile to the lock, or set the locked values with @settings on '
                'the test itself'))
    return findings


def judge(lock: DomainLock, props: Sequence[PropertyTest], sources: ProfileSources,
          notes: list[str] | None = None) -> list[Finding]:
    candidates = ProfileCandidates(sources)
    findings = []
    for prop in props:
        entry = lock.entries.get(prop.identity)
        if entry is None:
            findings.append(Finding(
                prop.path, prop.line, prop.col, 'OG601',
                f'unlocked property: {prop.identity} has no entry in {lock.path}', LOCK_HINT))
            continue
        findings.extend(judge_property(prop, entry, candidates, notes))
    return findings


BASE_HINT = ('restore the strategy the base revision has (a wider one passes); a person who '
             'means to narrow it records the whole strategy with `oracle-guard lock --upgrade` '
             'and re-locks with `oracle-guard lock --allow-loosen`, in a change of its own')


def _base_lock(ctx: RunContext) -> DomainLock | None:
    from oracle_guard.oracle.domain_lock import read_lock_bytes
    raw = ctx.changes.read_base(ctx.base_cfg.domain_lock)
    if raw is None:
        return None
    try:
        return read_lock_bytes(raw, ctx.base_cfg.domain_lock)
    except ConfigError:
        return None


def narrowed_since_base(ctx: RunContext, props: Sequence[PropertyTest],
                        paths: set[str]) -> list[Finding]:
    """Rows 23-25 whatever the lock's version: each ``@given`` argument of a property in
    ``paths`` (the test files of the change and the properties that import its helper
    modules) against the same property's whole strategy at the base revision, read with
    the base side's helper modules. An argument whose base lock entry records a whole
    strategy is the lock's to judge (OG610); every other one may not narrow (OG611), so a
    version-1 entry ``{max_examples: 100}`` does not make ``alphabet="ab"`` invisible."""
    from oracle_guard.oracle.strategy_form import compare
    from oracle_guard.oracle.strategy_form import short
    from oracle_guard.reading.property_reader import read_properties
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    changes = ctx.changes
    chosen = [p for p in props if p.path in paths and p.forms]
    if not chosen or not changes.has_base or changes.base_view is None:
        return []
    base_lock = _base_lock(ctx)
    modules = module_source(changes.base_view, ctx.base_cfg)
    at_base: dict[str, dict[str, PropertyTest]] = {}
    # A file renamed in the change is the same file: its properties had the old name.
    renamed = {c.path: c.old_path for c in changes.changes
               if c.status in ('R', 'C') and c.old_path}
    findings = []
    for prop in chosen:
        if prop.path not in at_base:
            raw = changes.read_base(renamed.get(prop.path, prop.path))
            found: dict[str, PropertyTest] = {}
            if raw is not None and might_hold_properties(raw):
                try:
                    tree = parse_python(raw, prop.path)
                    found = {b.identity: b for b in read_properties(prop.path, tree, modules)}
                except ScanError:
                    pass  # a base nobody could read drew nothing we could compare
            at_base[prop.path] = found
        base = at_base[prop.path].get(prop.identity)
        if base is None:
            continue  # new in the change: the lock judges it (rule 51)
        entry = base_lock.entries.get(prop.identity) if base_lock else None
        for arg, live in sorted(prop.forms.items()):
            if arg not in base.forms or (entry is not None and arg in entry.strategies):
                continue
            for difference in compare(base.forms[arg], live):
                if difference.runtime:
                    continue  # unreadable on one side: the plugin compares at call time
                findings.append(Finding(
                    prop.path, prop.strategy_lines.get(arg, prop.line), 1, 'OG611',
                    f'{prop.identity} tests less than at the base revision: args.{arg}: '
                    f'{difference.where}: base {short(difference.locked)}, now '
                    f'{short(difference.live)} (the lock entry records no whole strategy '
                    'for it; `oracle-guard lock --upgrade` records the whole strategy)',
                    BASE_HINT))
    return findings
