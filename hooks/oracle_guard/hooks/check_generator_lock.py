"""check-generator-lock: no Hypothesis property tests less than its domain lock entry.

Rows 23-25, 27 and 28 of the decision table. Values are read statically (see
``property_reader``, and ``strategy_reader`` for the whole strategies of lock version 2);
the pytest plugin repeats the comparison at collection and at call time with the values
Hypothesis really uses (``lock_runtime``).
"""
from __future__ import annotations

import posixpath

from oracle_guard.repo.changeset import ALL_FILES
from oracle_guard.repo.changeset import COMMIT
from oracle_guard.repo.changeset import NO_BASE
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.reading.profile_files import CONFIG_DIRS
from oracle_guard.reading.profile_files import CONFIG_FILES
from oracle_guard.reading.profile_files import is_config_file
from oracle_guard.runner import run_hook

# A commit whose staged test files hold no property (no `given`, no profile) is decided
# without the property reader, the scanner, the domain lock's reader, `ast`, `re`, `json`
# or `typing`: each is imported where it is used, after that early return.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import ast
    from collections.abc import Sequence
    from typing import Any

    from oracle_guard.config import Config
    from oracle_guard.context import RunContext
    from oracle_guard.oracle.domain_lock import DomainLock
    from oracle_guard.oracle.domain_lock import Drift
    from oracle_guard.oracle.domain_lock import LockEntry
    from oracle_guard.reading.property_reader import Profile
    from oracle_guard.reading.property_reader import ProfileSources
    from oracle_guard.reading.property_reader import PropertyTest
    from oracle_guard.reading.import_aliases import ImportAliases
    from oracle_guard.repo.changeset import Change
    from oracle_guard.repo.changeset import ChangeSet
    from oracle_guard.repo.tree_view import Entry
    from oracle_guard.repo.tree_view import TreeView

HOOK = 'check-generator-lock'
LOCK_HINT = 'run `oracle-guard lock`, review the diff, and commit the lock in a change of its own'
_SHADOW_NAMES = ('hypothesis', '_hypothesis_pytestplugin')
_SHADOW_FILE = r'^(hypothesis|_hypothesis_pytestplugin)(\.[\w.-]+)?\.(py|pyc|so|pyd)$'


def _mentions_profile_words(raw: bytes) -> bool:
    """``register_profile`` or ``load_profile`` in the bytes (no regex to compile)."""
    if not raw.isascii():
        from oracle_guard.reading.silence_prefilter import as_python_reads

        raw = as_python_reads(raw)
    return b'register_profile' in raw or b'load_profile' in raw


def _shadow_file(part: str) -> bool:
    """Whether a file name imports as hypothesis (or its pytest plugin)."""
    if not part.startswith(_SHADOW_NAMES):
        return False  # every commit: most names are decided without compiling a regex
    import re

    return re.match(_SHADOW_FILE, part) is not None


def might_hold_properties(source: bytes) -> bool:
    """The byte prefilter: a module that never says `given` holds no @given test, and one
    that never says `StateMachine` runs no state machine (rule 23). A word on a line
    whose first character after the indentation is ``#`` does not count: that is a
    comment, or the inside of a multi-line string, and neither is a name the property
    reader resolves (sympy's ``# no vargs given`` made a module a property module),
    unless a quote or a brace comes before it on the line: a multi-line string may end
    there, or an f-string's replacement field begin, and code follow."""
    if not source.isascii():  # `\uff47iven` is `given` to Python
        from oracle_guard.reading.silence_prefilter import as_python_reads

        source = as_python_reads(source)
    for word in (b'given', b'StateMachine'):
        at = source.find(word)
        while at >= 0:
            # a line ends at \n, \r\n or a lone \r, as Python reads it
            start = max(source.rfind(b'\n', 0, at), source.rfind(b'\r', 0, at)) + 1
            head = source[start:at]
            if not head.lstrip(b' \t\f').startswith(b'#') or \
                    any(c in head for c in (b'"', b"'", b'{')):
                return True
            at = source.find(word, at + len(word))
    return False


def is_conftest(path: str) -> bool:
    return posixpath.basename(path) == 'conftest.py'


# -- row 28 ------------------------------------------------------------------------------

def shadowing_paths(paths: Sequence[str], has_file) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """(module location, example path) for tracked files that would import as hypothesis.

    A folder is on ``sys.path`` (pytest's rootdir/basedir insertion, a src layout) when it
    is not itself a package, so ``X/hypothesis.py`` shadows the library unless X has an
    ``__init__.py``.
    """
    found: dict[str, str] = {}
    for path in paths:
        parts = path.split('/')
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            if last and _shadow_file(part):
                module = part.split('.', 1)[0]
            elif not last and part == 'hypothesis' and path.endswith('.py'):
                module = part
            else:
                continue
            folder = '/'.join(parts[:i])
            if folder and has_file(f'{folder}/__init__.py'):
                continue
            found.setdefault(f'{folder}/{module}' if folder else module, path)
            break
    return sorted(found.items())


def check_shadowing(view: TreeView, paths: Sequence[str], tracked: set[str] | None
                    ) -> list[Finding]:
    def has_file(path: str) -> bool:
        return path in tracked if tracked is not None else view.read(path) is not None

    return [
        Finding(example, 1, 1, 'OG607',
                f'{module} would be imported instead of the real hypothesis library, so '
                'no property in this repository could be trusted',
                f'rename or remove {example} (git rm {example})')
        for module, example in shadowing_paths(paths, has_file)
    ]


_PATCH_HINTS = rb'setattr|sys\.modules|\.\w+\s*=(?!=)'


def _hypothesis_name(aliases: ImportAliases, node: ast.AST) -> str | None:
    import ast

    if type(node).__name__ == 'Index':  # Python < 3.9's subscript wrapper
        node = node.value  # type: ignore[attr-defined]
    name = aliases.resolve(node)
    if name and (name == 'hypothesis' or name.startswith('hypothesis.')):
        return name
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
            node.value.split('.')[0] == 'hypothesis':
        return node.value  # monkeypatch.setattr('hypothesis.given', …)
    return None


def patched_hypothesis(path: str, raw: bytes) -> list[Finding]:
    """Row 28 without a file: test code that rebinds the library itself.

    ``hypothesis.given = …``, ``setattr(hypothesis, …)``, ``monkeypatch.setattr(
    'hypothesis.settings', …)`` or ``sys.modules['hypothesis'] = …`` in a conftest or a
    test module can hollow out every property while each one still reads as locked.
    """
    if b'hypothesis' not in raw:
        return []
    import ast
    import re

    from oracle_guard.reading.import_aliases import ImportAliases
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    if not re.search(_PATCH_HINTS, raw):
        return []
    try:
        tree = parse_python(raw, path)
    except ScanError:
        return []  # reported by the hooks that must read the file
    aliases = ImportAliases(tree)
    found = []
    for node in ast.walk(tree):
        what = None
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and \
                        _hypothesis_name(aliases, target.value):
                    what = f'assigns {_hypothesis_name(aliases, target.value)}.{target.attr}'
                elif isinstance(target, ast.Subscript) and \
                        aliases.resolve(target.value) == 'sys.modules' and \
                        _hypothesis_name(aliases, target.slice):
                    what = f'replaces sys.modules[{_hypothesis_name(aliases, target.slice)!r}]'
        elif isinstance(node, ast.Call) and node.args and (
                (isinstance(node.func, ast.Name) and node.func.id == 'setattr') or
                (isinstance(node.func, ast.Attribute) and node.func.attr == 'setattr')):
            name = _hypothesis_name(aliases, node.args[0])
            if name:
                what = f'patches {name} with setattr'
        if what:
            found.append(Finding(
                path, node.lineno, node.col_offset + 1, 'OG607',  # type: ignore[attr-defined]
                f'test code {what}: the hypothesis library itself is changed, so no '
                'property in this repository could be trusted',
                'remove the patch; configure Hypothesis with settings profiles instead',
            ))
    return found


# -- rows 23, 24, 25 ---------------------------------------------------------------------

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


# -- rows 23-25 against the base revision's own source ------------------------------------

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


def _judged_against_base(ctx: RunContext, view: TreeView, cfg: Config) -> set[str]:
    """The test files whose properties a change may narrow: those it touches, and those
    importing a helper module it touches (tests/strategies.py)."""
    touched = [p for p in ctx.changes.touched() if cfg.is_test_code(p)]
    if not touched:
        return set()
    helpers = [p for p in touched if not _can_narrow(view, p)]
    return set(touched) | set(_importers(view, cfg, helpers))


# -- row 27 ------------------------------------------------------------------------------

def _retired(ctx: RunContext, relaxed: list[tuple[str, str, int]], live: set[str],
             unlocked: bool) -> set[str]:
    """Removed entries whose property the same change retires, and nothing else.

    Without this a locked property could never be retired: removing the test alone is
    OG609, removing the entry alone is OG601, and both together would be OG606. The
    change may touch the lock and the files the retired tests lived in, no other test
    code, no src/, and add no unlocked property.
    """
    cfg, changes = ctx.cfg, ctx.changes
    removed = {i for i, what, _ in relaxed if what == 'entry removed' and i not in live}
    touched = changes.touched()
    if not removed or unlocked or any(cfg.is_src(p) for p in touched):
        return set()
    tests = [p for p in touched if cfg.is_test_code(p)]
    homes = _base_identities(changes, tests)
    if {p for i, p in homes.items() if i in removed} != set(tests) or not removed <= set(homes):
        return set()
    return removed


def check_loosening(ctx: RunContext, lock: DomainLock, live: set[str],
                    unlocked: bool) -> list[Finding]:
    """OG606; ``live`` are the identities of the @given tests read, ``unlocked`` whether
    any of them has no entry (both only matter when the lock changed: then all are read)."""
    from oracle_guard.oracle.domain_lock import loosened_entries
    from oracle_guard.oracle.domain_lock import read_lock_bytes
    cfg, changes = ctx.cfg, ctx.changes
    if not changes.has_base:
        return ctx.missing_base(HOOK)
    # Where the lock was: moving it (domain-lock = "…" in the table) is no way around it.
    base_path = ctx.base_cfg.domain_lock
    if cfg.domain_lock not in changes.touched() and base_path not in changes.touched():
        return []
    raw = changes.read_base(base_path)
    if raw is None:
        return []
    try:
        base = read_lock_bytes(raw, cfg.domain_lock)
    except ConfigError:
        return []  # a base nobody could read locked nothing
    relaxed = loosened_entries(base, lock)
    if not relaxed:
        return []
    others = sorted(p for p in changes.touched() if cfg.is_test_code(p) or cfg.is_src(p))
    if not others:
        return []  # loosening alone is the small diff a person reviews
    retired = _retired(ctx, relaxed, live, unlocked)
    shown = ', '.join(others[:3]) + (f' (+{len(others) - 3} more)' if len(others) > 3 else '')
    return [
        Finding(cfg.domain_lock, line, 1, 'OG606',
                f'{identity}: lock loosened ({what}) in the same change as {shown}',
                f'loosening must be its own change: commit {cfg.domain_lock} alone '
                f'(git restore --staged {" ".join(others[:3])}) so a person reviews it')
        for identity, what, line in relaxed if identity not in retired
    ]


# -- OG609: a locked property that no longer exists -------------------------------------

def _base_identities(changes: ChangeSet, paths: Sequence[str]) -> dict[str, str]:
    """identity -> path of the @given tests these files defined at the base revision."""
    found: dict[str, str] = {}
    for path in sorted(paths):
        raw = changes.read_base(path)
        if raw is None or not might_hold_properties(raw):
            continue
        from oracle_guard.reading.property_reader import read_properties
        from oracle_guard.reading.scanner import parse_python
        from oracle_guard.reading.scanner import ScanError

        try:
            tree = parse_python(raw, path)
        except ScanError:
            continue  # a base nobody could read defined nothing we could lock
        for prop in read_properties(path, tree):
            found.setdefault(prop.identity, path)
    return found


def _orphan(lock: DomainLock, identity: str, where: str = '') -> Finding:
    return Finding(
        lock.path, lock.entries[identity].line, 1, 'OG609',
        f'{identity}: locked property no longer exists: no @given test has this '
        f'identity{where}',
        'restore the @given test; to retire it, remove the test and its lock entry '
        'together in a change that touches no src/ and no other test')


def _vanished(view: TreeView, cfg: Config, lock: DomainLock, gone: dict[str, str],
              known: set[str]) -> list[Finding]:
    """OG609 for locked identities the changed files dropped, unless defined elsewhere.

    Identity is path-free, so a test moved to another file is still there: one
    ``git grep`` for the function names finds the files worth parsing.
    """
    from oracle_guard.reading.property_reader import ProfileSources

    names = sorted({identity.rsplit('::', 1)[-1] for identity in gone})
    live: set[str] = set()
    for path in _grep(view, names, _roots(cfg), whole_words=True):
        if path in known or not cfg.is_test_code(path):
            continue
        props: list[PropertyTest] = []
        _read_module(view, path, ProfileSources(), props, profiles=False)
        live.update(p.identity for p in props)
    return [_orphan(lock, identity, f' (it was in {path} at the base revision)')
            for identity, path in sorted(gone.items()) if identity not in live]


# -- the run -----------------------------------------------------------------------------

PROFILE_WORDS = ('register_profile', 'load_profile', 'hypothesis-profile', 'HYPOTHESIS_PROFILE')


def _roots(cfg: Config) -> list[str]:
    return [f':(literal){root.rstrip("/") or "."}' for root in cfg.test_roots()]


def _python_files(cfg: Config) -> list[str]:
    """The ``*.py`` files below the test roots, as pathspecs: git then reads no fixture,
    data file or snapshot it would grep only for the caller to drop. A glob entry whose
    parts git's glob magic reads as the configuration does (``**`` alone between slashes,
    ``*`` and ``?`` inside a part) is its own pathspec: ``sympy/**/tests/`` greps the test
    folders, not all of ``sympy/`` below its literal root."""
    from oracle_guard.config import is_file_entry
    from oracle_guard.config import is_glob
    from oracle_guard.config import scan_roots

    specs, roots = [], []
    for entry in (*cfg.tests, *cfg.properties):
        if is_glob(entry) and _same_glob_for_git(entry):
            specs.append(f':(glob){entry}' if is_file_entry(entry) else
                         f':(glob){entry.rstrip("/")}/**/*.py')
        else:
            roots.append(entry)
    for root in scan_roots(tuple(roots)):
        if is_file_entry(root):
            specs.append(f':(literal){root}')
            continue
        folder = root if root.endswith('/') or not root else root + '/'
        escaped = ''.join('\\' + c if c in '*?[\\' else c for c in folder)
        specs.append(f':(glob){escaped}**/*.py')
    return specs


def _same_glob_for_git(entry: str) -> bool:
    """Whether git's ``:(glob)`` matches what ``config.entry_matches`` does for ``entry``:
    each part ``**`` or free of ``**`` and of classes (``[...]``, which the two read
    differently), nothing git's glob would take for an escape."""
    return all(part == '**' or ('**' not in part and not any(c in part for c in '[]\\'))
               for part in entry.rstrip('/').split('/'))


def _profile_pathspecs(cfg: Config) -> list[str]:
    """Where a profile can be registered, loaded or selected: test roots, every
    conftest.py, the pytest and CI config files."""
    return [*_roots(cfg), ':(glob)**/conftest.py',
            *(f':(literal){p}' for p in (*CONFIG_FILES, *CONFIG_DIRS))]


def _grep(view: TreeView, words: Sequence[str], pathspecs: Sequence[str], *,
          whole_words: bool = False, kept: Any = None) -> list[str]:
    """Tracked paths on this side of the change that contain one of ``words``: one
    ``git grep``, so commit mode stays proportional to the change. The pathspecs carry
    their own magic (``:(glob)**/conftest.py``, ``:(literal)…``); ``kept``: see
    ``TreeView.grep``."""
    return view.grep(words, pathspecs, whole_words=whole_words, magic=True, kept=kept)


def _full_scope(ctx: RunContext, cfg: Config) -> bool:
    changes = ctx.changes
    if ctx.all_files or changes.mode in (ALL_FILES, NO_BASE):
        return True
    return any(p == cfg.domain_lock or is_conftest(p) or is_config_file(p)
               for p in changes.touched())


def read_lock(view: TreeView, cfg: Config) -> DomainLock:
    from oracle_guard.oracle.domain_lock import read_lock_bytes
    return read_lock_bytes(view.read_document(cfg.domain_lock), cfg.domain_lock)


def _can_narrow(view: TreeView, path: str) -> bool:
    raw = view.read(path)
    return raw is not None and (might_hold_properties(raw) or _mentions_profile_words(raw))


def _readable(entry: Entry | None) -> bool:
    return entry is not None and not (entry.is_symlink or entry.is_submodule)


def _patches(view: TreeView, paths: Sequence[str]) -> list[Finding]:
    findings: list[Finding] = []
    for path in paths:
        raw = view.read(path)
        if raw is not None:
            findings += patched_hypothesis(path, raw)
    return findings


def check(ctx: RunContext) -> list[Finding]:
    from oracle_guard.reading.new_tests import hint_unlocked_new_tests  # row 51's hint
    return hint_unlocked_new_tests(ctx, _check_everything(ctx) if _full_scope(ctx, ctx.cfg)
                                   else _check_change(ctx))


def _check_everything(ctx: RunContext) -> list[Finding]:
    """--all-files, a range or commit that touches the lock, a conftest or a config file."""
    from oracle_guard.reading.property_reader import ProfileSources
    from oracle_guard.reading.property_reader import read_config_text

    cfg, view = ctx.cfg, ctx.changes.new
    modes = {e.path: e for e in view.entries()}
    findings = check_shadowing(view, list(modes), set(modes))
    findings += _patches(view, [p for p in modes if ctx.cfg.is_test_code(p) and
                                _readable(modes[p])])
    test_paths = [p for p in modes if cfg.is_test_code(p)]
    lock = read_lock(view, cfg)
    sources = ProfileSources()
    for path, entry in modes.items():
        if not _readable(entry):
            continue
        if is_conftest(path) and path not in test_paths:
            _read_module(view, path, sources, None)
        elif is_config_file(path):
            raw = view.read(path)
            if raw is not None:
                read_config_text(path, raw.decode('utf-8', 'replace'), sources)
    props: list[PropertyTest] = []
    modules = module_source(view, cfg)
    for path in sorted(test_paths):
        if _readable(modes.get(path)):
            findings += _read_module(view, path, sources, props, modules=modules)
    judged = judge(lock, props, sources, ctx.notes)
    live = {p.identity for p in props}
    findings += judged
    if ctx.changes.has_base and not ctx.changes.history:
        findings += narrowed_since_base(ctx, props, _judged_against_base(ctx, view, cfg))
    findings += [_orphan(lock, identity) for identity in sorted(lock.entries)
                 if identity not in live]
    findings += check_loosening(ctx, lock, live, any(f.code == 'OG601' for f in judged))
    return findings


def _check_change(ctx: RunContext) -> list[Finding]:
    """A commit or range that touches none of the lock, a conftest, a config file."""
    cfg, changes = ctx.cfg, ctx.changes
    view = changes.new
    added = changes.added_or_modified()
    findings = check_shadowing(view, added, None)
    test_paths = [p for p in added if cfg.is_test_code(p)]
    touched_tests = [p for p in changes.touched() if cfg.is_test_code(p)]
    prefetched = _prefetch(ctx, test_paths, touched_tests)
    findings += _patches(view, test_paths)
    narrowing = any(_can_narrow(view, p) for p in test_paths)
    # A helper module the properties import (tests/strategies.py) holds no @given test
    # itself; narrowing it narrows every property that uses it, whatever the lock's
    # version (the base revision's source is the measure when the lock has no form).
    users = _helper_users(ctx, [p for p in test_paths if not _can_narrow(view, p)],
                          touched_tests, narrowing, prefetched)
    test_paths += [p for p in users if p not in test_paths]
    narrowing = narrowing or bool(users)
    # @given tests the changed files held at the base: if one is gone, its entry orphans.
    # The lock is read only when a changed file holds or held a property (rule 24's
    # entries are what such a file is judged by).
    if changes.mode == COMMIT:  # HEAD's bytes were asked with the staged ones
        held = [p for p in touched_tests if _held_properties(changes, p)]
        lock = read_lock(view, cfg) if narrowing or held else None
    else:  # a range: the base is read only when the lock has entries
        lock = read_lock(view, cfg)
        held = touched_tests
    at_base = _base_identities(changes, held) if lock is not None and lock.entries else {}
    if not narrowing and not at_base:
        # No changed file holds or held a property or a profile, and neither the lock, a
        # conftest nor a config file changed: the cost stays with the change.
        return findings
    if lock is None:
        lock = read_lock(view, cfg)

    from oracle_guard.reading.property_reader import ProfileSources
    from oracle_guard.reading.property_reader import read_config_text

    modes = {e.path: e for e in view.entries(test_paths)} if test_paths else {}
    sources = ProfileSources()
    modules = module_source(view, cfg)
    profile_read = set()
    for path in _grep(view, PROFILE_WORDS, _profile_pathspecs(cfg)):
        if path in test_paths:
            continue  # read below, with its properties
        if is_conftest(path) or (cfg.is_test_code(path) and not is_config_file(path)):
            _read_module(view, path, sources, None)
            profile_read.add(path)
        elif is_config_file(path):
            raw = view.read(path)
            if raw is not None:
                read_config_text(path, raw.decode('utf-8', 'replace'), sources)
    props: list[PropertyTest] = []
    parsed: dict[str, ast.Module] = {}
    for path in sorted(test_paths):
        if _readable(modes.get(path)):
            findings += _read_module(view, path, sources, props, modules=modules,
                                     parsed=parsed)
    if prefetched is not None:
        _remember_imports(view, parsed)
    known = set(touched_tests)
    if any(_mentions_profiles(view, p) for p in test_paths):
        # a test module registering a profile may govern every locked test
        for entry in view.entries(list(cfg.test_roots())):
            path = entry.path
            if cfg.is_test_code(path) and path not in known and not is_conftest(path) and \
                    _readable(entry):
                findings += _read_module(view, path, sources, props,
                                         profiles=path not in profile_read, modules=modules)
                known.add(path)

    findings += judge(lock, props, sources, ctx.notes)
    findings += narrowed_since_base(ctx, props, set(test_paths))
    live = {p.identity for p in props}
    gone = {i: p for i, p in at_base.items() if i in lock.entries and i not in live}
    if gone:
        findings += _vanished(view, cfg, lock, gone, known)
    findings += check_loosening(ctx, lock, live, True)  # the lock is untouched here
    return findings


def _held_properties(changes: ChangeSet, path: str) -> bool:
    raw = changes.read_base(path)
    return raw is not None and might_hold_properties(raw)


def _plain_roots(cfg: Config) -> list[str] | None:
    """The test roots as folders ('' for the whole tree) git can be asked for by name;
    None when one is not (a file entry, a name cat-file would misread)."""
    roots = []
    for root in cfg.test_roots():
        if root and (not root.endswith('/') or any(c in root for c in '\n\t:\x1f') or
                     root.startswith(('/', '.')) or '//' in root):
            return None
        roots.append(root)
    return roots


def _object_names(changes: Sequence[Change], test_paths: Sequence[str],
                  touched: Sequence[str], roots: Sequence[str] | None
                  ) -> tuple[list[tuple[str, str]], list[str], list[str]]:
    """What the commit path reads, as ``git cat-file --batch`` names: (path, blob id) of
    the staged test files, the touched ones at HEAD (``HEAD:path``), and the folders
    whose HEAD trees key and predict the closure (``HEAD:tests``; '' is ``HEAD^{tree}``)."""
    from oracle_guard.repo.tree_ids import folders_to_read

    ids = {c.path: c.object_id for c in changes
           if c.status != 'D' and c.object_id and c.object_id.strip('0') and
           c.mode not in (None, '160000', '120000')}
    staged = [(p, ids[p]) for p in test_paths if p in ids]
    folders: list[str] = []
    if roots is not None:
        folders = sorted({r.rstrip('/') for r in roots} |
                         {f for r in roots for f in folders_to_read(r, changes)})
    return staged, list(touched), folders


def _names(staged: list[tuple[str, str]], based: list[str], folders: list[str]) -> list[str]:
    return [*(oid for _, oid in staged), *(f'HEAD:{p}' for p in based),
            *(f'HEAD:{f}' if f else 'HEAD^{tree}' for f in folders)]


def commit_objects(changes: tuple[Change, ...]) -> list[str]:
    """For ``run_hook``: what ``_prefetch`` will ask for, guessed before the configuration
    is read (the default test roots), so that HEAD's first git process answers it. What
    the configuration then asks beyond it is read by ``_prefetch`` itself."""
    from oracle_guard.config import Config
    from oracle_guard.reading.cache_policy import enabled

    cfg = Config('')
    test_paths = sorted({c.path for c in changes if c.status != 'D' and cfg.is_test_code(c.path)})
    touched = sorted({p for c in changes for p in (c.path, c.old_path)
                      if p and cfg.is_test_code(p)})
    if not touched or any('\n' in p for p in touched):
        return []
    roots = _plain_roots(cfg) if enabled() else None
    return _names(*_object_names(changes, test_paths, touched, roots))


def _prefetch(ctx: RunContext, test_paths: Sequence[str], touched: Sequence[str]
              ) -> dict[str, Any] | None:
    """What the commit path reads, from HEAD's first git process when ``commit_objects``
    asked for it there, the rest from one ``git cat-file --batch``: the staged test files
    (by the blob ids of the staged diff), the touched ones at HEAD, and, when the closure
    cache is on, the test roots' trees at HEAD with the folders of the staged paths
    (``reading/import_closure.py``). Returns the roots' (object id, raw tree) at HEAD and
    those folders' raw trees, or None without the cache."""
    from oracle_guard.reading.cache_policy import enabled
    from oracle_guard.repo.gitrepo import cat_file_batch
    from oracle_guard.repo.gitrepo import EMPTY_TREE

    changes, view = ctx.changes, ctx.changes.new
    if changes.mode != COMMIT or not touched or \
            any('\n' in p for c in changes.changes for p in (c.path, c.old_path or '')):
        return None  # a range, or a commit of no test file: nothing to read here
    head = changes.base if changes.base and changes.base != EMPTY_TREE else None
    roots = _plain_roots(ctx.cfg) if head and enabled() else None
    staged, based, folders = _object_names(changes.changes, test_paths,
                                           touched if head else [], roots)
    names = _names(staged, based, folders)
    answers = dict(view.objects)
    missing = [n for n in names if n not in answers]
    if missing:
        fetched = cat_file_batch(changes.root, missing)
        if fetched is None:
            return None
        answers.update(zip(missing, fetched))
    for path, oid in staged:
        answer = answers[oid]
        view.remember(path, answer[2] if answer and answer[1] == 'blob' else None)
    base_view = changes.base_view
    for path in based:
        answer = answers[f'HEAD:{path}']
        if base_view is not None:
            base_view.remember(path, answer[2] if answer and answer[1] == 'blob' else None)
    if roots is None:
        return None
    trees = {}
    for folder, name in zip(folders, _names([], [], folders)):
        answer = answers[name]
        trees[folder] = (answer[0], answer[2]) if answer and answer[1] == 'tree' else None
    return {'head': head, 'roots': roots, 'trees': trees}


def _helper_users(ctx: RunContext, helpers: Sequence[str], touched: Sequence[str],
                  narrowing: bool, prefetched: dict[str, Any] | None) -> list[str]:
    """The property files that may read one of ``helpers`` (rule 23 through helper
    modules). With the closure cache, none when no helper is in the closure of HEAD's
    test roots (``reading/import_closure.py``); otherwise, and without the cache, the
    ``git grep`` of ``_importers``."""
    cfg, view = ctx.cfg, ctx.changes.new
    if not helpers:
        return []
    if prefetched is None:
        return _importers(view, cfg, helpers)
    from oracle_guard.reading.import_closure import ClosureCache
    from oracle_guard.reading.import_closure import tree_key

    roots, trees, head = prefetched['roots'], prefetched['trees'], prefetched['head']
    config = repr((cfg.tests, cfg.properties)).replace('\t', ' ')
    ids = [trees[r.rstrip('/')][0] if trees.get(r.rstrip('/')) else None for r in roots]
    key = tree_key(config, ids)
    # This tree with this staged change seen before (every run of the hooks on one
    # commit): the tree the commit leaves was kept then, if it could be.
    change = ' '.join(f'{c.status}{c.mode}{c.object_id}:{c.path}:{c.old_path or ""}'
                      for c in ctx.changes.changes).replace('\t', ' ')
    seen = f'{key}>{change}'
    cache = ClosureCache.for_this_code()
    found = cache.get([key, seen])
    closure = found.get(key)
    store = []
    if closure is None:
        closure = _build_closure(ctx, head, roots, cache)
        store.append((key, closure))
    # What the commit leaves: the same closure when no file of it changes and no new
    # property appears; kept under the ids the roots will have, for the next commit.
    if seen not in found and not narrowing and not any(closure.matters(p) for p in touched):
        predicted = _predicted_key(ctx, config, roots, trees, len(head) // 2)
        if predicted is not None and predicted != key:
            store += [(predicted, closure), (seen, closure)]
    cache.put(store)
    if any(closure.matters(p) for p in helpers):
        return _importers(view, cfg, helpers)
    return []


def _predicted_key(ctx: RunContext, config: str, roots: Sequence[str],
                   trees: dict[str, Any], width: int) -> str | None:
    from oracle_guard.reading.import_closure import tree_key
    from oracle_guard.repo.tree_ids import parse_tree
    from oracle_guard.repo.tree_ids import predict

    raw = {f: parse_tree(t[1], width) if t else None for f, t in trees.items()}
    ids = []
    for root in roots:
        relevant = {f: e for f, e in raw.items()
                    if not root or f == root.rstrip('/') or f.startswith(root)}
        if not any(c.path.startswith(root) or (c.old_path or '').startswith(root)
                   for c in ctx.changes.changes):
            known = trees.get(root.rstrip('/'))
            ids.append(known[0] if known else None)
            continue
        oid = predict(root, ctx.changes.changes, relevant, width)
        if oid is None and any(c.status != 'D' and c.path.startswith(root)
                               for c in ctx.changes.changes):
            return None  # not predictable here
        ids.append(oid.hex() if oid is not None else None)
    return tree_key(config, ids)


def _remember_imports(view: TreeView, parsed: dict[str, ast.Module]) -> None:
    """The imports of the staged modules just parsed, kept per blob id: once committed,
    the closure of the next tree is built without parsing them again."""
    from oracle_guard.reading.import_closure import ClosureCache
    from oracle_guard.reading.import_closure import import_specs

    specs = ClosureCache.for_this_code().specs(load=False)
    for path, tree in parsed.items():
        oid = view.object_id(path)
        raw = view.read(path)
        if oid and raw is not None:
            specs.put(oid, might_hold_properties(raw), import_specs(tree))
    specs.save()


def _build_closure(ctx: RunContext, head: str, roots: Sequence[str], cache: Any) -> Any:
    """The closure of HEAD's test roots: one ``git ls-tree`` of them, each test module's
    imports from the per-blob cache or, for a blob never seen, from one batch read."""
    from oracle_guard.reading.import_closure import build
    from oracle_guard.repo.gitrepo import cat_file_batch
    from oracle_guard.repo.tree_view import TreeView

    cfg = ctx.cfg
    at_head = TreeView(ctx.changes.root, head)
    files = {}
    for entry in at_head.entries(list(roots)):
        if cfg.is_test_code(entry.path) and _readable(entry):
            oid = at_head.object_id(entry.path)
            if oid:
                files[entry.path] = oid

    def read(paths: Sequence[str]) -> dict[str, bytes | None]:
        # by blob id: git then resolves no path through HEAD's trees
        answers = cat_file_batch(ctx.changes.root, [files[p] for p in paths], buffer=True)
        if answers is None:
            at_head.read_many(paths)
            return {p: at_head.read(p) for p in paths}
        return {p: a[2] if a and a[1] == 'blob' else None for p, a in zip(paths, answers)}

    specs = cache.specs()
    closure = build(files, read, list(roots), specs, might_hold_properties)
    specs.save()
    return closure


def module_source(view: TreeView, cfg: Config) -> Any:
    """The helper modules a property's strategies may import: Python files under the tests
    roots on this side of the change (``strategy_reader.ModuleSource``)."""
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    from oracle_guard.reading.strategy_reader import module_candidates

    parsed: dict[str, ast.Module | None] = {}
    roots = list(cfg.test_roots())

    def find(importer: str, module: str, level: int) -> tuple[str, ast.Module] | None:
        for path in module_candidates(importer, module, level, roots):
            if not cfg.is_test_code(path):
                continue
            if path not in parsed:
                raw = view.read(path)
                try:
                    parsed[path] = None if raw is None else parse_python(raw, path)
                except ScanError:
                    parsed[path] = None  # reported when the file itself is read
            tree = parsed[path]
            if tree is not None:
                return path, tree
        return None

    return find


def _module_names(path: str) -> list[str]:
    """Names an import of this file may use: ``strategies`` for tests/strategies.py."""
    parts = path[:-3].split('/') if path.endswith('.py') else path.split('/')
    if parts[-1] == '__init__':
        parts = parts[:-1]
    return [parts[-1]] if parts else []


def _importers(view: TreeView, cfg: Config, helpers: Sequence[str], depth: int = 0
               ) -> list[str]:
    """Test files that may import these helper modules, followed through helpers of
    helpers: one ``git grep`` for the module names per level."""
    names = sorted({n for p in helpers if p.endswith('.py') for n in _module_names(p)})
    if not names or depth > 3:
        return []

    def python_test_file(path: str) -> bool:
        return cfg.is_test_code(path) and path.endswith('.py')

    # In a commit, HEAD's tree is grepped and the staged files are read here: the
    # 50 000-entry index is not loaded again (the paths kept are filtered the same way).
    found = [p for p in _grep(view, names, _python_files(cfg), whole_words=True,
                              kept=python_test_file)
             if python_test_file(p) and p not in helpers]
    view.read_many(found)
    found = [p for p in found if _may_import(view.read(p), p, names)]
    users = [p for p in found if _can_narrow(view, p)]
    more = _importers(view, cfg, [p for p in found if p not in users], depth + 1)
    return sorted(set(users) | set(more))


def _may_import(raw: bytes | None, path: str, names: Sequence[str]) -> bool:
    """Whether a file the grep found for a module name may import that module: an import
    statement (or text shaped like one: ``helper_paths.imports_of``) names it as a part
    of a dotted module or as an imported name, or the file cannot be read here. A file
    that names the module only in a string or a comment (sympy's skip reasons name test
    modules), or imports it by a computed name (``import_module("...")``, which neither
    the import closure nor the strategy reader follows), is no link to a property."""
    if raw is None:
        return True
    from oracle_guard.reading.helper_paths import imports_of

    imports = imports_of(raw, path)
    if imports is None:
        return True
    wanted = set(names)
    return any(wanted.intersection(module.split('.') if module else ()) or
               wanted.intersection(imported) for _level, module, imported in imports)


def _mentions_profiles(view: TreeView, path: str) -> bool:
    raw = view.read(path)
    return raw is not None and _mentions_profile_words(raw)


def _read_module(view: TreeView, path: str, sources: ProfileSources,
                 props: list[PropertyTest] | None, profiles: bool = True,
                 modules: Any = None, parsed: dict[str, ast.Module] | None = None
                 ) -> list[Finding]:
    from oracle_guard.reading.property_reader import read_profiles
    from oracle_guard.reading.property_reader import read_properties
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    raw = view.read(path)
    if raw is None:
        return []
    wants_profiles = profiles and _mentions_profile_words(raw)
    wants_props = props is not None and might_hold_properties(raw)
    if not (wants_profiles or wants_props):
        return []
    try:
        tree = parse_python(raw, path)
    except ScanError as exc:
        return [Finding(path, exc.line, exc.col, 'OG608', f'test file {exc.message}',
                        'make the file valid Python 3 (UTF-8): properties nobody can read '
                        'cannot be checked against the lock')]
    if parsed is not None:
        parsed[path] = tree
    if wants_profiles:
        read_profiles(path, tree, sources)
    if wants_props:
        props.extend(read_properties(path, tree, modules))  # type: ignore[union-attr]
    return []


def history_check(ctx: RunContext) -> list[Finding]:
    """Row 27 (OG606) for one commit of history mode: the lock that commit left, against
    its first parent. Only the test files the commit touched are read: a property can
    be retired only together with its own file, and an unlocked one lives in a file the
    commit added or edited."""
    from oracle_guard.reading.property_reader import ProfileSources

    cfg, changes = ctx.cfg, ctx.changes
    touched = changes.touched()
    view = changes.new
    # Rows 23-25 against the commit's first parent: a narrowing the lock has no field for.
    findings: list[Finding] = []
    paths = _judged_against_base(ctx, view, cfg)
    if paths:
        narrowable: list[PropertyTest] = []
        modules = module_source(view, cfg)
        for path in sorted(paths):
            if view.read(path) is not None:
                _read_module(view, path, ProfileSources(), narrowable, profiles=False,
                             modules=modules)
        findings += narrowed_since_base(ctx, narrowable, paths)
    if cfg.domain_lock not in touched and ctx.base_cfg.domain_lock not in touched:
        return findings
    if not any(cfg.is_test_code(p) or cfg.is_src(p) for p in touched):
        return findings  # alone, the lock edit is the small diff a person reviews
    lock = read_lock(view, cfg)
    props: list[PropertyTest] = []
    for path in sorted(p for p in touched if cfg.is_test_code(p)):
        _read_module(view, path, ProfileSources(), props, profiles=False)
    live = {p.identity for p in props}
    return findings + check_loosening(ctx, lock, live, any(i not in lock.entries for i in live))


def main(argv: Sequence[str] | None = None) -> int:
    from oracle_guard.config import SCHEMA

    # Read on every commit: asked of HEAD with its first git process (the default path).
    return run_hook(check, argv, 'No Hypothesis property tests less than its domain lock.',
                    history=history_check, documents=(SCHEMA['domain-lock'][0],),
                    objects=commit_objects)


if __name__ == '__main__':
    raise SystemExit(main())
