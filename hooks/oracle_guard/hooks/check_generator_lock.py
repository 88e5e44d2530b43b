"""check-generator-lock: no Hypothesis property tests less than its domain lock entry.

Rows 23-25, 27 and 28 of the decision table. Values are read statically (see
``property_reader``, and ``strategy_reader`` for the whole strategies of lock version 2);
the pytest plugin repeats the comparison at collection and at call time with the values
Hypothesis really uses (``lock_runtime``).
"""
from __future__ import annotations

from oracle_guard.repo.changeset import COMMIT
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.reading.hypothesis_shadowing import check_shadowing
from oracle_guard.reading.hypothesis_shadowing import patched_hypothesis
from oracle_guard.reading.lock_judgement import judge
from oracle_guard.reading.lock_judgement import narrowed_since_base
from oracle_guard.reading.profile_files import is_config_file
from oracle_guard.reading.property_modules import full_scope
from oracle_guard.reading.property_modules import grep
from oracle_guard.reading.property_modules import module_source
from oracle_guard.reading.property_modules import profile_pathspecs
from oracle_guard.reading.property_modules import read_lock
from oracle_guard.reading.property_modules import read_module
from oracle_guard.reading.property_modules import readable
from oracle_guard.reading.property_modules import root_pathspecs
from oracle_guard.reading.property_prefilter import can_narrow
from oracle_guard.reading.property_prefilter import is_conftest
from oracle_guard.reading.property_prefilter import mentions_profiles
from oracle_guard.reading.property_prefilter import might_hold_properties
from oracle_guard.reading.property_prefilter import PROFILE_WORDS
from oracle_guard.reading.property_users import held_properties
from oracle_guard.reading.property_users import helper_users
from oracle_guard.reading.property_users import judged_against_base
from oracle_guard.reading.property_users import remember_imports
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
    from oracle_guard.reading.property_reader import PropertyTest
    from oracle_guard.repo.changeset import Change
    from oracle_guard.repo.changeset import ChangeSet
    from oracle_guard.repo.tree_view import TreeView

HOOK = 'check-generator-lock'


# -- row 28 ------------------------------------------------------------------------------


# -- rows 23, 24, 25 ---------------------------------------------------------------------


# -- rows 23-25 against the base revision's own source ------------------------------------


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
    for path in grep(view, names, root_pathspecs(cfg), whole_words=True):
        if path in known or not cfg.is_test_code(path):
            continue
        props: list[PropertyTest] = []
        read_module(view, path, ProfileSources(), props, profiles=False)
        live.update(p.identity for p in props)
    return [_orphan(lock, identity, f' (it was in {path} at the base revision)')
            for identity, path in sorted(gone.items()) if identity not in live]


# -- the run -----------------------------------------------------------------------------


def _patches(view: TreeView, paths: Sequence[str]) -> list[Finding]:
    findings: list[Finding] = []
    for path in paths:
        raw = view.read(path)
        if raw is not None:
            findings += patched_hypothesis(path, raw)
    return findings


def check(ctx: RunContext) -> list[Finding]:
    from oracle_guard.reading.new_tests import hint_unlocked_new_tests  # row 51's hint
    return hint_unlocked_new_tests(ctx, _check_everything(ctx) if full_scope(ctx, ctx.cfg)
                                   else _check_change(ctx))


def _check_everything(ctx: RunContext) -> list[Finding]:
    """--all-files, a range or commit that touches the lock, a conftest or a config file."""
    from oracle_guard.reading.property_reader import ProfileSources
    from oracle_guard.reading.property_reader import read_config_text

    cfg, view = ctx.cfg, ctx.changes.new
    modes = {e.path: e for e in view.entries()}
    findings = check_shadowing(view, list(modes), set(modes))
    findings += _patches(view, [p for p in modes if ctx.cfg.is_test_code(p) and
                                readable(modes[p])])
    test_paths = [p for p in modes if cfg.is_test_code(p)]
    lock = read_lock(view, cfg)
    sources = ProfileSources()
    for path, entry in modes.items():
        if not readable(entry):
            continue
        if is_conftest(path) and path not in test_paths:
            read_module(view, path, sources, None)
        elif is_config_file(path):
            raw = view.read(path)
            if raw is not None:
                read_config_text(path, raw.decode('utf-8', 'replace'), sources)
    props: list[PropertyTest] = []
    modules = module_source(view, cfg)
    for path in sorted(test_paths):
        if readable(modes.get(path)):
            findings += read_module(view, path, sources, props, modules=modules)
    judged = judge(lock, props, sources, ctx.notes)
    live = {p.identity for p in props}
    findings += judged
    if ctx.changes.has_base and not ctx.changes.history:
        findings += narrowed_since_base(ctx, props, judged_against_base(ctx, view, cfg))
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
    narrowing = any(can_narrow(view, p) for p in test_paths)
    # A helper module the properties import (tests/strategies.py) holds no @given test
    # itself; narrowing it narrows every property that uses it, whatever the lock's
    # version (the base revision's source is the measure when the lock has no form).
    users = helper_users(ctx, [p for p in test_paths if not can_narrow(view, p)],
                          touched_tests, narrowing, prefetched)
    test_paths += [p for p in users if p not in test_paths]
    narrowing = narrowing or bool(users)
    # @given tests the changed files held at the base: if one is gone, its entry orphans.
    # The lock is read only when a changed file holds or held a property (rule 24's
    # entries are what such a file is judged by).
    if changes.mode == COMMIT:  # HEAD's bytes were asked with the staged ones
        held = [p for p in touched_tests if held_properties(changes, p)]
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
    for path in grep(view, PROFILE_WORDS, profile_pathspecs(cfg)):
        if path in test_paths:
            continue  # read below, with its properties
        if is_conftest(path) or (cfg.is_test_code(path) and not is_config_file(path)):
            read_module(view, path, sources, None)
            profile_read.add(path)
        elif is_config_file(path):
            raw = view.read(path)
            if raw is not None:
                read_config_text(path, raw.decode('utf-8', 'replace'), sources)
    props: list[PropertyTest] = []
    parsed: dict[str, ast.Module] = {}
    for path in sorted(test_paths):
        if readable(modes.get(path)):
            findings += read_module(view, path, sources, props, modules=modules,
                                     parsed=parsed)
    if prefetched is not None:
        remember_imports(view, parsed)
    known = set(touched_tests)
    if any(mentions_profiles(view, p) for p in test_paths):
        # a test module registering a profile may govern every locked test
        for entry in view.entries(list(cfg.test_roots())):
            path = entry.path
            if cfg.is_test_code(path) and path not in known and not is_conftest(path) and \
                    readable(entry):
                findings += read_module(view, path, sources, props,
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
    paths = judged_against_base(ctx, view, cfg)
    if paths:
        narrowable: list[PropertyTest] = []
        modules = module_source(view, cfg)
        for path in sorted(paths):
            if view.read(path) is not None:
                read_module(view, path, ProfileSources(), narrowable, profiles=False,
                             modules=modules)
        findings += narrowed_since_base(ctx, narrowable, paths)
    if cfg.domain_lock not in touched and ctx.base_cfg.domain_lock not in touched:
        return findings
    if not any(cfg.is_test_code(p) or cfg.is_src(p) for p in touched):
        return findings  # alone, the lock edit is the small diff a person reviews
    lock = read_lock(view, cfg)
    props: list[PropertyTest] = []
    for path in sorted(p for p in touched if cfg.is_test_code(p)):
        read_module(view, path, ProfileSources(), props, profiles=False)
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
