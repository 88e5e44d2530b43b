"""The inventory of tests the audit holds a run against: every test function or method under
the test roots that pytest's default naming rules collect, read from the files at HEAD; and
the src modules a change removed."""
from __future__ import annotations

import ast
import fnmatch
import posixpath
from dataclasses import dataclass

from oracle_guard.config import Config
from oracle_guard.reading.scanner import is_test_module
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.scanner import test_functions
from oracle_guard.repo.changeset import ChangeSet
from oracle_guard.repo.tree_view import TreeView


# pytest's default ``norecursedirs``: folders it never looks into.
NORECURSE = ('*.egg', '.*', '_darcs', 'build', 'CVS', 'dist', 'node_modules', 'venv',
             '{arch}')


@dataclass(frozen=True)
class TestDef:
    """One test of the inventory: where it is defined."""

    path: str
    identity: str  # Class::function
    line: int  # the `def` line
    first_line: int  # its first decorator (what the compiled code calls its first line)
    # (first line, `def` line) of the other definitions of the same test in another branch
    # of an `if` (`if PY3: def test_b ... else: def test_b`): code of the file that may run
    alternatives: tuple[tuple[int, int], ...] = ()


# -- the inventory -------------------------------------------------------------------------
def skipped_folder(path: str) -> bool:
    parts = path.split('/')[:-1]
    return any(fnmatch.fnmatchcase(part, pattern) for part in parts for pattern in NORECURSE)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f'{_dotted(node.value)}.{node.attr}'
    return ''


def _collected_classes(tree: ast.Module) -> set[str]:
    """Top-level classes pytest collects by default: ``Test*`` and unittest cases."""
    cases: set[str] = set()
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    changed = True
    while changed:  # a TestCase subclass of a TestCase subclass in the same file
        changed = False
        for cls in classes:
            if cls.name in cases:
                continue
            bases = [_dotted(b).rsplit('.', 1)[-1] for b in cls.bases]
            if any(b.endswith('TestCase') or b in cases for b in bases):
                cases.add(cls.name)
                changed = True
    return cases | {c.name for c in classes if c.name.startswith('Test')}


def first_line(node: ast.AST) -> int:
    lines = [node.lineno] + [d.lineno for d in getattr(node, 'decorator_list', ())]  # type: ignore[attr-defined]
    return min(lines)


def file_inventory(source: bytes, path: str) -> list[TestDef]:
    """The tests pytest's default rules collect from one test file."""
    try:
        tree = parse_python(source, path)
    except ScanError:
        return []
    classes = _collected_classes(tree)
    found = test_functions(tree)
    branches = _if_branches(tree) if len({i for i, _ in found}) < len(found) else {}
    tests = []
    for identity, node in found:
        parts = identity.split('::')
        if len(parts) > 1:
            if parts[0] not in classes:
                continue
            if len(parts) > 2 and not all(p.startswith('Test') for p in parts[1:-1]):
                continue
        alternatives = tuple(
            (first_line(other), other.lineno)  # type: ignore[attr-defined]
            for name, other in found if name == identity and other is not node and
            _exclusive(branches.get(id(node), ()), branches.get(id(other), ())))
        tests.append(TestDef(path, identity, node.lineno, first_line(node),  # type: ignore[attr-defined]
                             alternatives))
    return tests


def _if_branches(tree: ast.Module) -> dict[int, tuple[tuple[int, int], ...]]:
    """id(statement) -> the (``if`` statement, branch) pairs that hold it, in classes and
    ``try``/``with`` blocks too."""
    held: dict[int, tuple[tuple[int, int], ...]] = {}

    def walk(body: list[ast.stmt], chain: tuple[tuple[int, int], ...]) -> None:
        for stmt in body:
            held[id(stmt)] = chain
            if isinstance(stmt, ast.If):
                walk(stmt.body, chain + ((id(stmt), 0),))
                walk(stmt.orelse, chain + ((id(stmt), 1),))
            elif isinstance(stmt, (ast.ClassDef, ast.With, ast.AsyncWith)):
                walk(stmt.body, chain)
            elif isinstance(stmt, ast.Try) or type(stmt).__name__ == 'TryStar':
                for part in (stmt.body, *(h.body for h in stmt.handlers),  # type: ignore[attr-defined]
                             stmt.orelse, stmt.finalbody):  # type: ignore[attr-defined]
                    walk(part, chain)

    walk(tree.body, ())
    return held


def _exclusive(one: tuple[tuple[int, int], ...], other: tuple[tuple[int, int], ...]) -> bool:
    """Two statements in different branches of the same ``if``: at most one runs."""
    branch = dict(one)
    return any(statement in branch and branch[statement] != side for statement, side in other)


def static_inventory(view: TreeView, cfg: Config) -> dict[tuple[str, str], TestDef]:
    """Every test under the test roots on one side, keyed by (path, identity)."""
    inventory: dict[tuple[str, str], TestDef] = {}
    roots = cfg.test_roots()
    for entry in view.entries(list(roots)) if roots else []:
        path = entry.path
        if entry.is_symlink or entry.is_submodule or not is_test_module(path) or \
                not cfg.is_test_code(path) or skipped_folder(path):
            continue
        source = view.read(path)
        if source is None:
            continue
        for test in file_inventory(source, path):
            inventory[(path, test.identity)] = test
    return inventory


def moved_out_of_collection(changes: ChangeSet, cfg: Config
                            ) -> dict[tuple[str, str], TestDef]:
    """Tests of a test module the change deleted or renamed that now live in a file
    pytest's default rules do not collect (``git mv tests/test_core.py
    tests/check_core.py``): they still exist, they just stopped running."""
    gone: set[str] = set()
    for change in changes.changes:
        old = change.old_path if change.status == 'R' else (
            change.path if change.status == 'D' else None)
        if old and cfg.is_test(old) and is_test_module(old):
            source = changes.read_base(old)
            if source is not None:
                gone.update(test.identity for test in file_inventory(source, old))
    found: dict[tuple[str, str], TestDef] = {}
    if not gone:
        return found
    for change in changes.changes:
        path = change.path
        if change.status == 'D' or not cfg.is_test_code(path) or is_test_module(path):
            continue
        source = changes.read_new(path)
        for test in file_inventory(source or b'', path):
            if test.identity in gone:
                found[(path, test.identity)] = test
    return found


def src_modules(view: TreeView, cfg: Config) -> dict[str, str]:
    """Top-level import names defined under the ``src`` roots -> their path. A src root
    that is a package itself (``natsort/``) is imported from its parent: its one name is
    the package's, not those of the modules in it (``natsort/__main__.py`` is
    ``natsort.__main__``, never the ``__main__`` of ``python -m pytest``)."""
    found: dict[str, str] = {}
    for root in cfg.src_roots():
        paths = list(view.paths([root]))
        package = root.rstrip('/').rsplit('/', 1)[-1]
        if root.endswith('/') and f'{root}__init__.py' in paths and package.isidentifier():
            found.setdefault(package, root.rstrip('/'))
            continue
        for path in paths:
            if not cfg.is_src(path):
                continue
            rest = path[len(root):]
            first = rest.split('/', 1)[0]
            if '/' in rest:
                if rest.split('/', 1)[1] == '__init__.py' and first.isidentifier():
                    found.setdefault(first, root + first)
            elif first.endswith('.py') and first[:-3].isidentifier():
                found.setdefault(first[:-3], path)
    return found


def src_module_names(view: TreeView, cfg: Config) -> set[str]:
    """The dotted import names of every module and package under the ``src`` roots on
    one side (a src root that is a package itself is imported from its parent)."""
    names: set[str] = set()
    files = set(view.paths(list(cfg.src_roots())))
    for root in cfg.src_roots():
        prefix: list[str] = []
        if root.endswith('/') and f'{root}__init__.py' in files:
            prefix = [root.rstrip('/').rsplit('/', 1)[-1]]
        for path in files:
            if not path.startswith(root) or not path.endswith('.py') or not cfg.is_src(path):
                continue
            if root and not root.endswith('/'):  # a src root that is one module
                parts = [posixpath.basename(path)[:-3]]
            else:
                parts = [*prefix, *path[len(root):-3].split('/')]
            if parts[-1] == '__init__':
                parts.pop()
            for n in range(1, len(parts) + 1):  # its packages (namespace ones too)
                if all(p.isidentifier() for p in parts[:n]):
                    names.add('.'.join(parts[:n]))
    return names


def src_gone(base: TreeView, head: TreeView, cfg: Config) -> frozenset[str]:
    """Modules under the ``src`` roots at the base revision that the pull request's side
    no longer has (rule 41: their importorskip explains no skip)."""
    return frozenset(src_module_names(base, cfg) - src_module_names(head, cfg))
