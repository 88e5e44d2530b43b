"""Rule 34: a module or package of the test code, or at the repository's root, whose import
name would shadow a top-level module of src or a library the tests run on (pytest, unittest,
Hypothesis) once pytest puts its folder first on ``sys.path``."""
from __future__ import annotations

import os
import posixpath

from oracle_guard.findings import Finding
from oracle_guard.repo.changeset import ALL_FILES
from oracle_guard.repo.changeset import NO_BASE
from oracle_guard.repo.tree_view import TreeView

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from oracle_guard.config import Config
    from oracle_guard.context import RunContext


# Always shadowed when a test folder puts a module of this name first on sys.path.
SHADOWED_LIBRARIES = ('pytest', '_pytest', 'unittest', 'hypothesis')


def _import_name(path: str) -> tuple[str, str] | None:
    """(import name, folder that would be on sys.path) of a module or package file."""
    folder, name = posixpath.split(path)
    if name == '__init__.py':
        folder, name = posixpath.split(folder)
    elif name.endswith('.py'):
        name = name[:-3]
    else:
        return None
    return (name, folder) if name.isidentifier() else None


def shadowing_findings(cfg: Config, files: Sequence[str], view: TreeView) -> list[Finding]:
    """Rule 34: a module or package in the test code whose import name is a top-level
    name of the code under ``src`` (or pytest, unittest, hypothesis) shadows it.

    pytest's default import mode puts the first folder above a test module that is not a
    package (has no ``__init__.py``) at the front of ``sys.path``, so ``tests/app.py`` or
    ``tests/app/__init__.py`` is what ``import app`` finds, not ``src/app``. Only the test
    files being judged that are not test modules are candidates; one ``git ls-files``
    asks whether ``src`` holds their names, one more whether their folders are packages.
    """
    candidates: dict[str, list[tuple[str, str]]] = {}
    for path in files:
        named = _import_name(path)
        # Test modules (test_*.py, *_test.py) and conftest.py are named for pytest, not
        # for importing: a commit of tests alone asks git nothing here.
        if named is not None and named[0] != 'conftest' and not (
                named[0].startswith('test_') or named[0].endswith('_test')):
            candidates.setdefault(named[0], []).append((path, named[1]))
    if not candidates:
        return []
    src_roots = cfg.src_roots()
    # A src root that is a package itself (a flat layout's django/) is imported under its
    # own name: django.apps is no top-level name, and tests/apps/ shadows nothing of it.
    inits = [f'{root}__init__.py' for root in src_roots if root]
    lookups = [f'{root}{name}{suffix}' for root in src_roots for name in sorted(candidates)
               if name not in SHADOWED_LIBRARIES for suffix in ('', '.py')]
    shadowed = {name: f'the {name!r} library' for name in SHADOWED_LIBRARIES}
    entries = view.entries(inits + lookups) if lookups else []
    found = {entry.path for entry in entries}
    packages_roots = {root for root in src_roots if root and f'{root}__init__.py' in found}
    for root in sorted(packages_roots):
        own = root.rstrip('/').rsplit('/', 1)[-1]
        shadowed.setdefault(own, f'{root.rstrip("/")} (the code under test)')
    for entry in entries:
        if not cfg.is_src(entry.path):
            continue  # a test folder inside the package (pkg/tests/) is no code under test
        for root in src_roots:
            if root in packages_roots:
                continue
            if entry.path.startswith(root):
                top = entry.path[len(root):].split('/', 1)[0]
                top = top[:-3] if top.endswith('.py') else top
                shadowed.setdefault(top, f'{root}{top} (the code under test)')
    hits = [(path, folder, name) for name, places in sorted(candidates.items())
            if name in shadowed for path, folder in places]
    if not hits:
        return []
    packages = {posixpath.dirname(p) for p in view.paths(
        sorted({posixpath.join(folder, '__init__.py') for _p, folder, _n in hits}))}
    return [Finding(path, 1, 1, 'OG309',
                    f'importable as {name!r} from {folder or "."}/, which pytest puts first on '
                    f'sys.path: it shadows {shadowed[name]}',
                    f'rename it (e.g. {name}_helpers), or make {folder or "."}/ a package '
                    'with an __init__.py')
            for path, folder, name in hits if folder not in packages]


def shadowing_candidates(ctx: RunContext, files: list[str], view: TreeView) -> list[str]:
    """Rule 34 from the other side: a change that adds a file under a ``src`` root (maybe a
    new top-level package named like an existing test helper) or deletes a tests
    ``__init__.py`` (its folder goes first on sys.path) makes untouched test files shadow
    code. Then every test file is a candidate, as ``--all-files`` has it; other changes
    keep to their own files."""
    if ctx.all_files or ctx.changes.mode in (ALL_FILES, NO_BASE):
        return files
    cfg, changes = ctx.cfg, ctx.changes
    new_src = any(c.status in ('A', 'R', 'C') and cfg.is_src(c.path) for c in changes.changes)
    lost_package = any(posixpath.basename(p) == '__init__.py' and cfg.is_test_code(p)
                       for p in changes.deleted())
    if not (new_src or lost_package):
        return files
    roots = list(cfg.test_roots())
    others = [p for p in (view.paths(roots) if roots else [])
              if cfg.is_test_code(p) and p not in files]
    return [*files, *others]


def root_shadowing_findings(ctx: RunContext, view: TreeView) -> list[Finding]:
    """Rule 34 at the repository root: ``python -m pytest`` puts the working folder first
    on ``sys.path``, so a ``pytest.py`` (or ``pytest/``, ``_pytest/``, ``hypothesis/``,
    ``unittest/``) there is what runs instead of the library: the change's own code would
    be the test runner, and could report anything."""
    if ctx.filenames and not ctx.all_files:  # pre-commit passed them (python files only)
        candidates = [p.replace(os.sep, '/') for p in ctx.filenames]
    elif ctx.all_files or ctx.changes.mode in (ALL_FILES, NO_BASE):
        candidates = view.paths([name + suffix for name in SHADOWED_LIBRARIES
                                 for suffix in ('', '.py')])
    else:
        candidates = ctx.changes.added_or_modified()
    hits = []
    for path in candidates:
        top = path.split('/', 1)[0]
        name = top[:-3] if top.endswith('.py') and '/' not in path else top
        if name in SHADOWED_LIBRARIES and (path.endswith('.py') or '/' not in path):
            hits.append((path, name))
    return [Finding(path, 1, 1, 'OG309',
                    f'importable as {name!r} from the repository root, which `python -m pytest` '
                    f'puts first on sys.path: it shadows the {name!r} library',
                    f'rename it; nothing at the root may be named {name}')
            for path, name in sorted(hits)]
