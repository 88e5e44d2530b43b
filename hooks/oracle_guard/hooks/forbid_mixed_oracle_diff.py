"""forbid-mixed-oracle-diff: a change to ``src/`` does not also change the oracle, nor add
code that reaches into the test run (rule 43)."""
from __future__ import annotations

import posixpath

from oracle_guard.config import in_paths
from oracle_guard.config import PYPROJECT
from oracle_guard.config import read_table
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.runner import run_hook

# A change without src/ returns before the manifest reader or the pytest-configuration
# reader (and ast) is needed: they are imported where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from oracle_guard.repo.changeset import ChangeSet
    from oracle_guard.config import Config
    from oracle_guard.context import RunContext

HOOK = 'forbid-mixed-oracle-diff'
SHOWN = 5


def _table(raw: bytes | None) -> object:
    if raw is None:
        return None
    try:
        return read_table(raw.decode('utf-8-sig'))
    except (ConfigError, UnicodeDecodeError):
        return ('unreadable', raw)


def pytest_config_change(path: str, changes: ChangeSet,
                         tests: tuple[str, ...] = ('tests/',)) -> str | None:
    """What test-run control a touched file changes, if any (rules 32 and 33)."""
    from oracle_guard.reading.run_control import CONFIG_NAMES
    from oracle_guard.reading.run_control import config_change
    from oracle_guard.reading.run_control import is_run_control_file
    from oracle_guard.reading.run_control import run_control_change

    name = posixpath.basename(path)
    if name in CONFIG_NAMES:
        def tracked(paths: list[str]) -> list[str]:
            return [e.path for e in changes.new.entries(paths)]

        if config_change(path, changes.read_base(path), changes.read_new(path),
                         changes.read_new, tracked):
            where = {'pyproject.toml': '[tool.pytest.ini_options]', 'tox.ini': '[pytest] section',
                     'setup.cfg': '[tool:pytest] section'}.get(name, 'pytest configuration file')
            return f'{where} (what pytest runs)'
        return None
    if is_run_control_file(path, tests):
        why = run_control_change(changes.read_base(path), changes.read_new(path))
        if why:
            kind = 'conftest hooks' if name == 'conftest.py' else 'tests __init__.py'
            return f'{kind}: test-run control changed ({"; ".join(why[:3])})'
    elif name.endswith('.py') and in_paths(path, tests):
        from oracle_guard.reading.run_control import plugin_loading_change

        why = plugin_loading_change(changes.read_base(path), changes.read_new(path))
        if why:
            return f'test module: the plugins it makes pytest load changed ({"; ".join(why[:3])})'
    return None


def changed_manifest_rows(changes: ChangeSet, path: str, folder: str | None = None
                          ) -> list[str]:
    """Rows that existed at the base and were edited or removed; new rows are fine.
    ``folder``: what the manifest's keys are relative to (Config.manifest_folder)."""
    from oracle_guard.oracle.manifest import base_manifest_or_none
    from oracle_guard.oracle.manifest import parse_manifest

    base = base_manifest_or_none(changes, path, folder)
    if base is None:
        return [] if changes.read_base(path) is None else ['(the whole manifest)']
    raw = changes.read_new(path)
    if raw is None:
        return sorted(base.rows)
    try:
        new = parse_manifest(raw, path, folder)
    except ConfigError:
        return ['(the whole manifest)']
    return sorted(p for p, row in base.rows.items()
                  if p not in new.rows or new.rows[p].raw != row.raw)


def changed_lock_entries(changes: ChangeSet, path: str) -> list[str]:
    """Lock entries that existed at the base and were edited or removed (rule 51: a new
    entry, for a new test, loosens nothing); the whole lock when it cannot be compared."""
    import json

    from oracle_guard.oracle.domain_lock import parse_lock

    base_raw, new_raw = changes.read_base(path), changes.read_new(path)
    if base_raw is None or new_raw is None:
        return ['(the whole lock)']
    try:
        parse_lock(new_raw, path)
        base, new = json.loads(base_raw), json.loads(new_raw)
    except (ConfigError, ValueError):
        return ['(the whole lock)']
    if not (isinstance(base, dict) and isinstance(new, dict)) or \
            {k: v for k, v in base.items() if k != 'properties'} != \
            {k: v for k, v in new.items() if k != 'properties'}:
        return ['(the whole lock)']
    old, now = base.get('properties'), new.get('properties')
    if not (isinstance(old, dict) and isinstance(now, dict)):
        return ['(the whole lock)']
    return sorted(k for k, v in old.items() if k not in now or now[k] != v)


def oracle_changes(cfgs: Sequence[Config], changes: ChangeSet) -> list[tuple[str, str]]:
    """(path, what) for every oracle file the change touches."""
    touched = changes.touched()
    oracle_files = {p for c in cfgs for p in c.oracle_files()}
    locks = {c.domain_lock for c in cfgs}
    found = []
    for path in sorted(touched):
        if any(c.is_property(path) for c in cfgs):
            found.append((path, 'human-owned property test'))
        elif path in locks:
            entries = changed_lock_entries(changes, path)
            if entries:
                found.append((path, f'existing lock entries: {_shown(entries)}'))
        elif path in oracle_files:
            found.append((path, 'oracle file'))
    if PYPROJECT in touched:
        base, new = changes.read_base(PYPROJECT), changes.read_new(PYPROJECT)
        if _table(base) != _table(new):
            found.append((PYPROJECT, '[tool.oracle-guard] table'))
    tests = tuple(root for c in cfgs for root in (*c.tests, *c.properties))
    for path in sorted(touched):
        what = pytest_config_change(path, changes, tests)
        if what:
            found.append((path, what))
    folders = {c.manifest: c.manifest_folder() for c in cfgs}
    for manifest in sorted(set(folders) & touched):
        rows = changed_manifest_rows(changes, manifest, folders[manifest])
        if rows:
            found.append((manifest, f'existing manifest rows: {_shown(rows)}'))
    return found


def _shown(items: Sequence[str]) -> str:
    extra = f' (+{len(items) - SHOWN} more)' if len(items) > SHOWN else ''
    return ', '.join(items[:SHOWN]) + extra


def vanished_tests(cfgs: Sequence[Config], changes: ChangeSet) -> list[tuple[str, int, str]]:
    """(path, line, identity) of tests the base had in a touched test module that no
    touched test module defines any more: deleted, renamed, moved out of a file pytest
    collects, or switched off by ``__test__ = False`` (rule 30).

    Only the test files of the change are read, on both sides; a test moved to another
    file of the change keeps its identity (rule 52), unless the pytest configuration leaves
    it out there. The properties folder has its own rules.
    """
    def test_code(path: str) -> bool:
        return any(c.is_test_code(path) for c in cfgs) and \
            not any(c.is_property(path) for c in cfgs)

    paths = sorted(p for p in changes.touched() if test_code(p))
    if not paths:
        return []
    from oracle_guard.oracle.ledger import function_of
    from oracle_guard.reading.scanner import is_test_module
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import scan_tests

    from oracle_guard.reading.scanner import test_functions

    base: dict[tuple[str, str], tuple[int, tuple[str, str]]] = {}  # (path, identity)
    # Where the tests are after the change: by function identity, and the collected ones by
    # (function name, body); each as (path, identity with its classes).
    now: dict[str, list[tuple[str, str]]] = {}
    bodies: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for path in paths:
        if not is_test_module(path):
            continue
        for raw, into_base in ((changes.read_base(path), True), (changes.read_new(path), False)):
            if raw is None:
                continue
            try:
                tree = parse_python(raw, path)
                tests = scan_tests(tree)
            except ScanError:
                continue  # an unparsable new side collects nothing; check-named-freezes says why
            nodes = dict(test_functions(tree))
            for test in tests:
                identity = function_of(test.identity)
                body = test_body(identity, nodes.get(test.identity))
                if into_base:
                    base.setdefault((path, identity), (test.line, body))
                else:
                    now.setdefault(identity, []).append((path, test.identity))
                    if _collected(test.identity, tree):
                        bodies.setdefault(body, []).append((path, test.identity))
    # Rule 30 follows the body (rule 52): a test moved into a class, out of one or to
    # another module of the change, with its name and body unchanged, did not disappear.
    # A move onto a test the pytest configuration leaves out (--ignore, --deselect,
    # collect_ignore, testpaths) is a removal all the same: nothing runs it there.
    left_out: list[set[str]] = []

    def runs(path: str, identity: str) -> bool:
        if not left_out:
            from oracle_guard.reading.pytest_exclusions import excluded_tests

            left_out.append({n for c in cfgs for n in excluded_tests(changes.new, c)})
        return f'{path}::{identity}' not in left_out[0]

    gone = []
    for (path, identity), (line, body) in sorted(base.items()):
        places = now.get(identity, [])
        if any(p == path for p, _ in places):
            continue  # still defined in its own file
        if not any(runs(*place) for place in places + bodies.get(body, [])):
            gone.append((path, line, identity))
    return gone


def _collected(identity: str, tree: object) -> bool:
    """Whether pytest's default rules collect a test's classes: ``Test*`` classes, or a
    unittest case (a top-level class whose base is named ``...TestCase``)."""
    parts = identity.split('::')[:-1]
    if not parts:
        return True
    import ast

    top = next((n for n in getattr(tree, 'body', ()) if isinstance(n, ast.ClassDef)
                and n.name == parts[0]), None)
    if top is not None and any(ast.unparse(b).endswith('TestCase') for b in top.bases):
        return True
    return all(part.startswith('Test') for part in parts)


def test_body(identity: str, node: object) -> tuple[str, str]:
    """(function name, its body as syntax, no line numbers) of one test. The shape is
    written without the ``ast`` module (on Python 3.13 its import brings ``re``): node
    types and fields, as ``ast.dump`` gives them, for comparing bodies within one run."""
    name = identity.rsplit('::', 1)[-1]
    body = getattr(node, 'body', None)
    return name, repr(_shape(body)) if body else ''


def _shape(value: object) -> object:
    from oracle_guard.reading.syntax import AST

    if isinstance(value, AST):
        return (type(value).__name__,
                tuple(_shape(getattr(value, field, None)) for field in value._fields))
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return value



def submodules_under_tests(cfgs: Sequence[Config], changes: ChangeSet) -> list[str]:
    """Gitlinks under the tests roots or the properties folder (rule 37): pytest collects
    what a submodule checkout holds, conftest.py included, and none of it is reviewed here.

    A commit or a range looks at the paths it adds, by the modes its diff reports (or one
    ``git ls-files`` where it reports none); other runs at the whole test tree.
    """
    from oracle_guard.repo.changeset import COMMIT
    from oracle_guard.repo.changeset import HISTORY
    from oracle_guard.repo.changeset import RANGE

    def under_tests(path: str) -> bool:
        return any(c.is_test(path) for c in cfgs)

    if changes.mode in (COMMIT, RANGE, HISTORY):
        added = [c for c in changes.changes if c.status != 'D' and under_tests(c.path)]
        # The staged diff usually says each path's mode: then git is not asked again.
        found = [c.path for c in added if c.mode == '160000']
        unknown = [c.path for c in added if c.mode is None]
        entries = changes.new.entries(unknown) if unknown else []
        return sorted(found + [e.path for e in entries if e.is_submodule])
    roots = sorted({r for c in cfgs for r in c.test_roots()})
    entries = changes.new.entries(roots) if roots else []
    return sorted(e.path for e in entries if e.is_submodule and under_tests(e.path))


def test_run_reach(ctx: RunContext, cfgs: Sequence[Config]) -> list[tuple[str, int, int, str]]:
    """(path, line, col, what) for each construct the change adds to a ``src`` file that
    reaches into the test run (rule 43). A file that is also test code (tests inside the
    package) is not production code. Exempt: modules ``src-test-imports`` lists on both
    sides of the change, so the change that widens the list cannot use it.

    A site the change removes from a production file vouches for the same site elsewhere
    (``reading/moved_uses``): a module split, moved or renamed adds nothing.
    Only the new side's bytes are read first; a file without any marker is not parsed."""
    changes = ctx.changes

    def production(path: str) -> bool:
        return path.endswith('.py') and any(g.is_src(path) for g in cfgs) and \
            not any(g.is_test_code(path) for g in cfgs)

    candidates = [c for c in changes.changes if c.status != 'D' and production(c.path)]
    if not candidates:
        return []
    from oracle_guard.reading.test_run_reach import may_reach

    changes.new.read_many([c.path for c in candidates])
    reaching = [c for c in candidates if may_reach(changes.read_new(c.path) or b'')]
    if not reaching:
        return []
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import source_text
    from oracle_guard.reading.test_run_reach import added_sites
    from oracle_guard.reading.test_run_reach import counted_sites

    def parsed_base(path: str) -> tuple[object, str] | None:
        # read and parsed only when a site of the new side needs it (rule 43)
        raw = changes.read_base(path)
        try:
            return (parse_python(raw, path), source_text(raw)) \
                if raw is not None and may_reach(raw) else None
        except ScanError:
            return None  # a base that did not compile ran nothing

    allowed = set(ctx.cfg.src_test_imports) & set(ctx.base_cfg.src_test_imports)
    found = []
    sides, paths = [], []
    for change in reaching:
        raw = changes.read_new(change.path) or b''
        try:
            new = parse_python(raw, change.path)
            # rule 43's walk of only the lines that can hold a site
            sites = counted_sites(new, allowed, source_text(raw))
        except ScanError as exc:
            if 'recursion' in exc.message:  # too deep for this process, not for Python
                found.append((change.path, 1, 1, DEEP))
            continue  # a syntax error: the file runs nothing
        except RecursionError:
            found.append((change.path, 1, 1, DEEP))
            continue
        # a copy's source is still there: only a rename's old side is the file's base
        old = change.old_path if change.status == 'R' and change.old_path else change.path
        sides.append((sites, lambda old=old: parsed_base(old)))
        paths.append(change.path)

    def others() -> list[tuple[object, str] | None]:
        """The base sides of the change's other production files: deleted, renamed or
        moved out of src, not parsed on the new side."""
        judged = set(paths)
        olds = [c.old_path or c.path for c in changes.changes
                if c.status not in ('A', 'C') and c.path not in judged
                and production(c.old_path or c.path)]
        return [parsed_base(old) for old in olds]

    for path, sites in zip(paths, added_sites(sides, others)):
        found.extend((path, site.line, site.col, site.what) for site in sites)
    return found


# A file nested deeper than the reader follows could hide anything: fail closed.
DEEP = 'is nested too deeply to be read to the end (an expression of a thousand parts?)'



def judging_configs(ctx: RunContext) -> list[Config]:
    """The configuration now, at the base, and as the base side's hook args set it (a
    change that re-points ``--src`` in .pre-commit-config.yaml is judged by the old args,
    rule 38)."""
    from oracle_guard.reading.precommit_config import configs_from_hook_args
    from oracle_guard.reading.precommit_config import PRE_COMMIT_CONFIG

    cfgs = [ctx.cfg, ctx.base_cfg]
    if PRE_COMMIT_CONFIG in ctx.changes.touched():
        # ctx.cfg and ctx.base_cfg carry the args this run was started with, which are the
        # new side's: the base side is its own table with its own args on top.
        table = _base_table(ctx)
        cfgs.append(table)
        cfgs.extend(configs_from_hook_args(table, ctx.changes.read_base(PRE_COMMIT_CONFIG)))
    return cfgs


def _base_table(ctx: RunContext) -> Config:
    """``[tool.oracle-guard]`` as the base revision has it, without any hook args."""
    from oracle_guard.config import table_config

    # an unreadable table is reported as a configuration error
    return table_config(ctx.cfg.root, ctx.changes.read_base(PYPROJECT)) or ctx.base_cfg


def mixed_findings(ctx: RunContext) -> list[Finding]:
    """The rules about the change: oracle files and vanished tests next to ``src/``."""
    missing = ctx.missing_base(HOOK)
    if missing or not ctx.changes.has_base:
        return missing
    changes = ctx.changes
    cfgs = judging_configs(ctx)
    src = sorted(p for p in changes.touched() if any(c.is_src(p) for c in cfgs))
    if not src:
        return []
    src_shown = _shown(src)
    findings = [
        Finding(
            path, 1, 1, 'OG201',
            f'{what} changed in the same change as production code: {src_shown}',
            'split it: commit the oracle change on its own so a person reviews it '
            f'(git restore --staged {path}), then the code change',
        )
        for path, what in oracle_changes(cfgs, changes)
    ]
    findings.extend(
        Finding(
            path, line, 1, 'OG202',
            f'test {identity} disappears in the same change as production code: {src_shown}',
            'tests leave in a change of their own: restore it (git restore --staged --worktree '
            f'--source=HEAD {path}) and remove or rename it in a commit without src/',
        )
        for path, line, identity in vanished_tests(cfgs, changes)
    )
    findings.extend(
        Finding(
            path, line, col, 'OG204',
            f'production code {what}: code under src that detects or changes the test run',
            'remove it; a project whose src really uses this module (a pytest plugin, a '
            'library of Hypothesis strategies) lists it in src-test-imports of '
            '[tool.oracle-guard], in a change of its own',
        )
        for path, line, col, what in test_run_reach(ctx, cfgs)
    )
    return findings


def check(ctx: RunContext) -> list[Finding]:
    cfgs = [ctx.cfg, ctx.base_cfg] if ctx.changes.has_base else [ctx.cfg]
    findings = [
        Finding(path, 1, 1, 'OG203', 'git submodule under the test roots: pytest would run '
                'code this repository does not review',
                f'remove it (git rm --cached {path}) and commit the tests as files if needed')
        for path in submodules_under_tests(cfgs, ctx.changes)
    ]
    return findings + mixed_findings(ctx)


def history_check(ctx: RunContext) -> list[Finding]:
    """One commit of history mode: the rules about the change (the submodule rule is
    about the tree, which the run itself judges once)."""
    return mixed_findings(ctx)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(check, argv, 'A change to src/ may not also change the test oracle.',
                    history=history_check)


if __name__ == '__main__':
    raise SystemExit(main())
