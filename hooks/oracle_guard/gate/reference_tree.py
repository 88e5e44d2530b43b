"""The trees of the reference run and of the evidence runs (rules 44, 48, 49): which
revision each path is taken from (``Side``, the oracle side and the code side), its bytes
read from git objects by their listed blob ids (``ListedView``), the helpers a test file
imports, and the tree written from them (``TreeBuilder``)."""
from __future__ import annotations

import ast
import hashlib
import os
import posixpath
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from oracle_guard.config import Config
from oracle_guard.config import under_any
from oracle_guard.reading.capabilities import capability_uses
from oracle_guard.reading.capabilities import parse_module
from oracle_guard.reading.plugin_names import plugin_names
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.strategy_reader import module_candidates
from oracle_guard.repo import gitrepo
from oracle_guard.repo.gitrepo import literal_pathspecs
from oracle_guard.repo.gitrepo import split_z
from oracle_guard.repo.tree_view import Entry
from oracle_guard.repo.tree_view import TreeView


# Files at the root that configure pytest: always the oracle side's (or absent).
# pytest 9 reads pytest.toml and .pytest.toml before the others.
PYTEST_CONFIGS = ('pytest.toml', '.pytest.toml', 'pytest.ini', '.pytest.ini', 'pyproject.toml',
                  'tox.ini', 'setup.cfg')


# Import names a non-test file of the pull request may not take in the tree: they would
# stand in for the test machinery (rules 28, 34 at the root and in a src root).
# Hypothesis' pytest plugin is the top-level module `_hypothesis_pytestplugin`, loaded by its
# entry point after the src roots are on sys.path; pytest-xdist's is `xdist`.
MACHINERY = frozenset(('pytest', '_pytest', 'pluggy', 'hypothesis', '_hypothesis_pytestplugin',
                       '_hypothesis_ftz_detector', '_hypothesis_globals', 'oracle_guard',
                       'xdist', 'py', 'sitecustomize', 'usercustomize', 'conftest'))


@dataclass
class Tree:
    """The files of one reference tree: repository path -> the revision it was read from."""

    root: str
    sources: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # not placed, and why
    digests: dict[str, str] = field(default_factory=dict)  # path -> sha256 of what was written
    # Paths whose bytes, as git gave them, are not the blob the side's listing named when
    # the gate listed it (before the install step): git's objects were changed since.
    forged: list[str] = field(default_factory=list)

    def changed(self, paths: Iterable[str]) -> list[str]:
        """The files among ``paths`` whose bytes on disk are no longer what was written."""
        changed = []
        for path in paths:
            try:
                with open(os.path.join(self.root, *path.split('/')), 'rb') as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            except OSError:
                digest = None
            if digest != self.digests.get(path):
                changed.append(path)
        return changed

    def by_side(self) -> dict[str, list[str]]:
        sides: dict[str, list[str]] = {}
        for path, rev in sorted(self.sources.items()):
            sides.setdefault(rev, []).append(path)
        return sides


# -- building a tree -------------------------------------------------------------------------
class Side:
    """One revision's tracked files (listed once).

    ``pin``: the side's view becomes a ``ListedView`` of this listing (rule 44): whatever
    is read of the revision through it later (the ledger, the baseline, the test code and
    the src listing the judge of the reference and evidence runs reads after the install
    step and the test command) is this listing and the blobs it named."""

    def __init__(self, view: TreeView, pin: bool = False) -> None:
        entries = view.entries()
        self.files = {e.path for e in entries if not e.is_symlink and not e.is_submodule}
        self.links = {e.path for e in entries if e.is_symlink or e.is_submodule}
        # The blob ids as listed now (the gate lists both sides before the install step):
        # a later listing of the same view answers from git's objects as they are then.
        self.objects = {path: view.object_id(path) for path in self.files}
        self.view = ListedView(view, entries) if pin and view.rev else view

    def object_id(self, path: str) -> str | None:
        return self.objects.get(path)

    @property
    def label(self) -> str:
        return self.view.label

    def view_of(self, path: str) -> TreeView:
        """The revision a file of this side is read from."""
        return self.view


def _below(path: str, prefixes: Sequence[str]) -> bool:
    """Whether git's literal pathspecs ``prefixes`` take ``path`` (none: every path)."""
    if not prefixes:
        return True
    for prefix in prefixes:
        if prefix in ('', '.') or path.startswith(prefix.rstrip('/') + '/') or (
                path == prefix and not prefix.endswith('/')):
            return True
    return False


class ListedView(TreeView):
    """A commit as the gate listed it before the install step (rule 44).

    After the install step git may give other bytes for a blob (its loose object rewritten,
    another object under its name in ``objects/info/alternates``) and another listing for a
    folder (a tree object rewritten). This view answers every listing (``entries``,
    ``paths``, ``path_names``, ``top_kinds``, whether a document is a symlink) from the
    listing taken then, reads each file by the blob id listed then, and checks the bytes git
    gives against that id (``is_blob``), those the view had read already included; a path
    whose bytes are not its blob's is kept in ``forged`` (OG734) and its bytes are still
    given (the verdict fails on the finding). A path the listing does not hold is not there.
    ``grep`` answers from the listed files too: every file below the prefixes that holds
    one of the words (word boundaries and pathspec magic not weighed: a superset).
    """

    def __init__(self, view: TreeView, entries: Sequence[Entry]) -> None:
        super().__init__(view.root, view.rev)
        self._entries = {e.path: e for e in entries}
        listed = {e.path: view.object_id(e.path) for e in entries if not e.is_submodule}
        self._listed_objects = {path: oid for path, oid in listed.items() if oid}
        # The view's own reads are shared (the gate's head view reads the test code and the
        # ledger before the install step): each is checked like the rest when first given.
        self._read_cache = view._read_cache
        self._checked: set[str] = set()
        self.forged: list[str] = []

    def entries(self, prefixes: Sequence[str] = ()) -> list[Entry]:
        return [e for path, e in self._entries.items() if _below(path, prefixes)]

    def path_names(self, prefixes: Sequence[str]) -> list[bytes]:
        if not prefixes:
            return []
        return sorted(os.fsencode(e.path) for e in self.entries(prefixes))

    def top_kinds(self) -> dict[str, str] | None:
        if self._kinds is None:
            self._kinds = {}
            for path, e in self._entries.items():
                top, sep, _ = path.partition('/')
                self._kinds[top] = 'tree' if sep else ('commit' if e.is_submodule else 'blob')
        return self._kinds

    def _object(self, path: str) -> str:
        return self._listed_objects.get(path) or super()._object(path)

    def _committed_document(self, path: str) -> tuple[bool, bytes | None] | None:
        return None  # read_document then asks ``entries`` (the listing) and ``read``

    def read(self, path: str) -> bytes | None:
        object_id = self._listed_objects.get(path)
        if object_id is None:
            return None
        data = super().read(path)
        if path not in self._checked:
            self._checked.add(path)
            if data is None or not is_blob(object_id, data):
                self.forged.append(path)
        return data

    def read_many(self, paths: Sequence[str]) -> None:
        super().read_many([p for p in paths if p in self._listed_objects])

    def chunks(self, path: str) -> Iterator[bytes]:
        data = self.read(path)
        if data:
            yield data

    def grep(self, words: Sequence[str], prefixes: Sequence[str], *,
             whole_words: bool = True, magic: bool = False,
             kept: Callable[[str], bool] | None = None) -> list[str]:
        if not words or not prefixes:
            return []
        wanted = [p for p in self._listed_objects
                  if magic or _below(p, prefixes) and (kept is None or kept(p))]
        self.read_many(wanted)
        encoded = [os.fsencode(word) for word in set(words)]
        return sorted(p for p in wanted if any(w in (self.read(p) or b'') for w in encoded))


class BuildProducts(Side):
    """The checkout's untracked, git-ignored Python modules under the ``src`` roots, as they
    are when the tree is built (after the install step): what a build backend generates
    there (setuptools_scm's and hatch-vcs' ``_version.py``). The test command imports them
    from the checkout; the reference tree takes them so that the base oracle imports the
    pull request's ``src/`` as installed. A file that is not a regular ``.py`` module
    outside ``__pycache__`` (a symlink, byte code, an extension module, data) is not taken,
    and neither is one that uses an interpreter capability (rule 54: ``skipped``), which a
    committed module would have to show to a person."""

    def __init__(self, cfg: Config, code: Side) -> None:
        self.view = TreeView(cfg.root, None)
        self.objects: dict[str, str | None] = {}
        self.links: set[str] = set()
        self.skipped: list[str] = []
        self.files: set[str] = set()
        # A module completes a package the code side tracks (or sits at a src root's top):
        # a virtual environment or a build folder under a src root is no package of it.
        folders = {posixpath.dirname(p) for p in code.files if p.endswith('.py')}
        folders.update(r.rstrip('/') for r in cfg.src_roots())
        for path in untracked_ignored(cfg.root, cfg.src_roots()):
            full = os.path.join(cfg.root, *path.split('/'))
            if not path.endswith('.py') or posixpath.dirname(path) not in folders or \
                    os.path.islink(full) or not os.path.isfile(full):
                continue
            try:
                with open(full, 'rb') as f:
                    tree = parse_module(f.read())
            except OSError:
                continue
            uses = capability_uses(tree) if tree is not None else []
            if uses:
                self.skipped.append(
                    f'{path} (untracked and git-ignored, it uses {uses[0].expression} '
                    f'({uses[0].kind}): commit it to have it judged)')
                continue
            self.files.add(path)

    @property
    def label(self) -> str:
        return 'the checkout (untracked, git-ignored)'


def untracked_ignored(root: str, prefixes: Sequence[str]) -> list[str]:
    """The untracked files git ignores below ``prefixes`` in the working tree at ``root``
    (none when no prefix is given: the root itself is never listed)."""
    if not prefixes:
        return []
    code, out, _ = gitrepo.run_git(('ls-files', '-z', '--others', '--ignored',
                                    '--exclude-standard', '--', *literal_pathspecs(prefixes)),
                                   root, stderr=False)
    return sorted(split_z(out)) if code == 0 else []


class Approved(Side):
    """The oracle side after an approval (rule 47): the base's files, except the approved
    ones, which are the pull request's (an approved deletion is gone)."""

    def __init__(self, base: Side, head: Side, approved: Iterable[str]) -> None:
        self.view = base.view
        self.base = base
        self.head = head
        self.approved = frozenset(approved)
        self.files = (base.files - self.approved) | (head.files & self.approved)
        self.links = base.links

    def object_id(self, path: str) -> str | None:
        return (self.head if path in self.approved else self.base).object_id(path)

    def view_of(self, path: str) -> TreeView:
        return self.head.view if path in self.approved else self.view


def _import_name(path: str, roots: Sequence[str]) -> str:
    """The top-level import name a file takes at the root or at the top of a src root."""
    for root in ('', *roots):
        if root and not path.startswith(root):
            continue
        first = path[len(root):].split('/', 1)[0]
        name = first[:-3] if first.endswith('.py') else first
        if name in MACHINERY:
            return name
    return ''


def is_test_side(path: str, cfg: Config) -> bool:
    """Whether a file is test code or oracle, never taken from the code side."""
    return (under_any(path, cfg.tests) or cfg.is_property(path) or cfg.is_fixture(path)
            or path in cfg.oracle_files() or path in (cfg.manifest, cfg.traces)
            or posixpath.basename(path) == 'conftest.py' or path in PYTEST_CONFIGS)


# (path, source) -> its imports: the same file is read for the reference tree and for the
# evidence trees (rules 48, 49); parsed once per gate run.
_IMPORTS: dict[tuple[str, bytes], list[tuple[str, int]]] = {}


def _imports(source: bytes, path: str) -> list[tuple[str, int]]:
    """(module, level) of every import in a file, ``from a import b`` also as ``a.b``."""
    key = (path, source)
    if key not in _IMPORTS:
        _IMPORTS[key] = parse_imports(source, path)
    return list(_IMPORTS[key])


def parse_imports(source: bytes, path: str) -> list[tuple[str, int]]:
    try:
        tree = parse_python(source, path)
    except ScanError:
        return []
    found = [(name, 0) for name in plugin_names(tree)]  # pytest imports those too
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, 0) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ''
            found.append((module, node.level))
            found += [(f'{module}.{alias.name}' if module else alias.name, node.level)
                      for alias in node.names if alias.name != '*']
    return found


# Nodes that hold statements: an import is a statement, and no expression holds one.
_HOLDERS = (ast.mod, ast.stmt, ast.excepthandler,
            *((ast.match_case,) if hasattr(ast, 'match_case') else ()))


def _statements(tree: ast.AST) -> list[ast.AST]:
    """The statements of a tree (and the nodes that hold them) in ``ast.walk``'s order:
    the same breadth-first walk, never entering an expression. Every statement's parent
    holds statements, so each keeps its depth and its place among its siblings."""
    found = [tree]
    at = 0
    while at < len(found):
        found.extend(child for child in ast.iter_child_nodes(found[at])
                     if isinstance(child, _HOLDERS))
        at += 1
    return found


def oracle_helpers(cfg: Config, view: TreeView) -> list[str]:
    """The files outside the tests and src roots that the property files of one side
    import, directly or through their helpers, and the ``__init__.py`` files of their
    packages: oracle, placed from the oracle side in a reference tree, and an oracle
    change when the pull request edits them (rules 44, 47)."""
    side = Side(view)
    builder = TreeBuilder(cfg, side, side)
    builder.add_tests(sorted(p for p in side.files if cfg.is_property(p)), side)
    return sorted(p for p in builder.plan if not is_test_side(p, cfg) and not cfg.is_src(p))


class TreeBuilder:
    """Plans which file of which revision goes into a reference tree, then writes it."""

    def __init__(self, cfg: Config, oracle: Side, code: Side) -> None:
        self.cfg = cfg
        self.oracle = oracle
        self.code = code
        self.plan: dict[str, Side] = {}
        self.skipped: list[str] = []

    def place(self, path: str, side: Side) -> bool:
        if path not in side.files:
            return False
        self.plan[path] = side
        return True

    def add_code(self) -> None:
        """The code side's non-test files: src/ and everything else that is not tests."""
        for path in sorted(self.code.files):
            if is_test_side(path, self.cfg):
                continue
            name = _import_name(path, self.cfg.src_roots())
            if name:
                self.skipped.append(f'{path} (its import name {name!r} would stand in for '
                                    'the test machinery)')
                continue
            self.place(path, self.code)
        self.skipped += [f'{path} (a symlink or submodule)'
                         for path in sorted(self.code.links) if not is_test_side(path, self.cfg)]

    def add_build_products(self, products: BuildProducts) -> None:
        """The checkout's generated modules under src (``BuildProducts``) that no
        revision's file of the tree stands for, with the filters of ``add_code``."""
        self.skipped += products.skipped
        for path in sorted(products.files):
            if path in self.plan or path in self.code.files or not self.cfg.is_src(path) \
                    or is_test_side(path, self.cfg):
                continue
            name = _import_name(path, self.cfg.src_roots())
            if name:
                self.skipped.append(f'{path} (its import name {name!r} would stand in for '
                                    'the test machinery)')
                continue
            self.place(path, products)

    def add_oracle_documents(self, side: Side) -> None:
        cfg = self.cfg
        for path in sorted(side.files):
            if cfg.is_fixture(path) or path in (cfg.manifest, cfg.traces) or path in \
                    cfg.oracle_files() or under_any(path, cfg.tests) and \
                    not path.endswith(('.py', '.pyc', '.pyo')):  # the data tests read
                self.place(path, side)

    def add_pytest_config(self) -> None:
        for path in PYTEST_CONFIGS:
            self.plan.pop(path, None)
            self.place(path, self.oracle)

    def add_tests(self, paths: Iterable[str], side: Side) -> None:
        """Test files (or property folder files) and, from the same side, the test helper
        modules they import; the conftests and ``__init__.py`` files on their path from
        the oracle side (an ``__init__.py`` the oracle lacks from ``side``)."""
        # (path, the side it is read from): a conftest or __init__.py found on the way
        # stays the oracle's even when `side` has one too.
        pending: list[tuple[str, Side]] = [
            (p, side if p in side.files else self.oracle) for p in paths]
        seen: set[str] = set()
        while pending:
            path, owner = pending.pop()
            if path in seen:
                continue
            seen.add(path)
            if not self.place(path, owner):
                continue
            folder = posixpath.dirname(path)
            while True:
                for name in ('conftest.py', '__init__.py'):
                    on_path = posixpath.join(folder, name)
                    if on_path in seen:
                        continue
                    if on_path in self.oracle.files:
                        pending.append((on_path, self.oracle))
                    elif name == '__init__.py' and on_path in side.files:
                        pending.append((on_path, side))
                if not folder:
                    break
                folder = posixpath.dirname(folder)
            if path.endswith('.py'):
                pending += [(helper, owner) for helper in self.helpers(path, owner)]

    def helpers(self, path: str, side: Side) -> list[str]:
        """The modules a test file imports from ``side``: test helpers within the tests
        roots, and oracle helpers outside both the tests and the src roots (a root
        ``testing/oracle.py`` on ``pythonpath``, rule 44). A module under src is the code
        under test, never the oracle's."""
        source = side.view_of(path).read(path) or b''
        found = []
        for module, level in _imports(source, path):
            if not level and module.split('.')[0] in MACHINERY:
                continue
            for candidate in module_candidates(path, module, level, list(self.cfg.test_roots())):
                if candidate in side.files and (self.cfg.is_test(candidate) or (
                        not self.cfg.is_src(candidate) and not is_test_side(candidate, self.cfg)
                        and not _import_name(candidate, self.cfg.src_roots()))):
                    found.append(candidate)
                    break
        return found

    def write(self, root: str) -> Tree:
        tree = Tree(root=root, skipped=list(self.skipped))
        by_view: dict[int, list[str]] = {}
        views: dict[int, TreeView] = {}
        listed: dict[str, str | None] = {}
        for path, side in self.plan.items():
            listed[path] = side.object_id(path)
            view = side.view_of(path)
            views[id(view)] = view
            by_view.setdefault(id(view), []).append(path)
        for key, paths in by_view.items():
            view = views[key]
            for start in range(0, len(paths), 500):
                # A reader of its own per chunk: memory stays bounded on a large tree,
                # and the gate's shared views do not keep every file of it.
                chunk = paths[start:start + 500]
                reader = TreeView(view.root, view.rev)
                reader.read_many(chunk)
                for path in chunk:
                    data = reader.read(path)
                    if data is None:
                        continue
                    if not is_blob(listed.get(path), data):
                        tree.forged.append(path)
                    full = os.path.join(root, *path.split('/'))
                    os.makedirs(os.path.dirname(full), exist_ok=True)
                    with open(full, 'wb') as f:
                        f.write(data)
                    tree.sources[path] = view.label
                    tree.digests[path] = hashlib.sha256(data).hexdigest()
        return tree


def is_blob(object_id: str | None, data: bytes) -> bool:
    """Whether ``data`` is the blob ``object_id`` names (git's id: the SHA-1, or SHA-256 in a
    repository of that format, of ``blob LEN\\0`` and the bytes). git does not check an
    object's bytes against its name when it reads one: a loose object rewritten in place,
    or a different one under the same name in ``objects/info/alternates``, is read as
    the blob. No id listed: nothing to check against."""
    if not object_id:
        return True
    digest = hashlib.sha1 if len(object_id) == 40 else hashlib.sha256
    return digest(b'blob %d\0' % len(data) + data).hexdigest() == object_id
