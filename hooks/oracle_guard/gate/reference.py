"""The reference run (rule 44) and the evidence for freezes and new tests (rules 48, 49).

The test command of ``oracle-guard ci`` runs the pull request's own tests, conftests and
``src/`` together, and its record is written by that process. The reference run takes the
tests from the task, not the patch (SWE-bench's rule): a fresh temporary tree holds the
**base revision's** human-owned oracle (the property files, the fixtures and manifest, the
data files under the tests roots, the domain lock, the ledger, the conftests and
``__init__.py`` files on the path of each test file, the test helper modules they import and
the modules outside the tests and src roots they import, the pytest configuration) and the
**pull request's** ``src/`` and other non-test files, all from git objects, never from the
working tree. None of the pull request's test code is on disk there. Its property tests run
in a fresh process of the test environment with the plugin on; every one must pass or be
explained by a freeze live at base.

The same tree is built twice more for evidence (rules 48, 49), with the pull request's own
tests placed in it (their conftests and ``__init__.py`` files still from the oracle side):

* a freeze row the pull request adds for a flaky class is rerun ``flaky-reruns`` times
  against the pull request's ``src/``: no pass in any run means broken, not flaky;
* tests the pull request adds or changes, when it also changes ``src/``, run against the
  base revision's ``src/``: those that pass there are listed ("passes without your
  change"), and are a finding with ``require-fail-to-pass = true``.

With an approval of the oracle change (rule 47) the oracle side is the pull request.

Codes:

OG730 a base oracle test failed against the pull request's src/ (every item of a property
      file: inherited tests, doctests, a state machine's TestCase, a plugin's items)
OG731 a base oracle test errored (set-up, teardown, or its module could not be collected)
OG732 a base oracle test was skipped or xfailed and no freeze live at base explains it
OG733 a base oracle test did not run (not collected, deselected, never started)
OG734 the reference run did not complete (no record, a crash, an early exit), its tree
      (or the tree of the freeze reruns or of the new-test run) was changed while it
      ran or was built from other bytes than the blobs listed before the install step,
      a run mechanism the audit names (OG707-OG717) was seen in it, or pytest exited
      non-zero while the run (canaries taken out) reported no failed test of the oracle
OG735 a freeze added for a flaky test whose test passed in none of the reruns
OG736 a test the pull request adds or changes passes without its src/ change
      (only with ``require-fail-to-pass = true``; otherwise listed in the review report)
OG737 (``gate/sealed.py``) a file of a tree, other than src, that its run compiled from
      other bytes than the gate wrote (``compiled_elsewhere``)
"""
from __future__ import annotations

import ast
import atexit
import datetime
import hashlib
import json
import os
import posixpath
import shutil
import subprocess
import secrets
import tempfile
import threading
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from oracle_guard.config import Config
from oracle_guard.config import load_config
from oracle_guard.config import under_any
from oracle_guard.context import RunContext
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.gate import audit
from oracle_guard.gate import audit_context
from oracle_guard.gate import inventory as gate_inventory
from oracle_guard.gate import canaries
from oracle_guard.gate import stream
from oracle_guard.gate.processes import Reaper
from oracle_guard.gate.sealed import compiled_from_other_bytes
from oracle_guard.gate.sealed import exit_status_findings
from oracle_guard.gate.sealed import uses_hypothesis
from oracle_guard.gate.timings import children_cpu
from oracle_guard.gate.timings import Timings
from oracle_guard.gate.timings import watch_exit
from oracle_guard.oracle.ledger import FreezeLedger
from oracle_guard.oracle.ledger import FREEZABLE
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import identity_of
from oracle_guard.oracle.ledger import read_ledger
from oracle_guard.reading.plugin_names import plugin_names
from oracle_guard.reading.scanner import is_test_module
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.scanner import test_functions
from oracle_guard.reading.strategy_reader import module_candidates
from oracle_guard.repo.tree_view import Entry
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.runtime.run_record import read_record
from oracle_guard.runtime.run_record import RECORD_ENV
from oracle_guard.runtime.run_record import RunRecord

# Freeze classes whose freeze claims a flake, so a rerun can earn it (rule 48). The
# contract's "flaky" is these two; a literal `flaky` row is refused by check-freeze-ledger
# and, should one get this far, is rerun too.
FLAKY_CLASSES = (*FREEZABLE, 'flaky')
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
# Environment variables of the gate's job a pytest process would read as options.
DROPPED_ENV = ('PYTEST_ADDOPTS', 'PYTEST_PLUGINS', 'PYTEST_DISABLE_PLUGIN_AUTOLOAD',
               'PYTEST_CURRENT_TEST', 'PYTEST_XDIST_WORKER', 'PYTEST_XDIST_WORKER_COUNT',
               'PYTEST_RUN_FORKED', RECORD_ENV)
# The child of the test environment's interpreter, started as ``python -I -S -c
# BOOTSTRAP`` (``ISOLATED``). `-I` keeps out what a checkout could use to run code before
# pytest does: the current folder on sys.path, PYTHONPATH/PYTHONSTARTUP/PYTHONHOME, the
# user site. `-S` keeps out what the install step could (rule 46): ``site`` runs
# every ``import`` line of the site folders' ``.pth`` files at start-up, and a ``.pth`` that
# a hand-written ``RECORD`` lists is no stray (OG727), yet its code would run in the gate's
# own runs before pytest and the plugin, and could change them in memory. So the bootstrap
# (``START_UP``) does ``site``'s work on sys.path itself: a venv's prefix from its
# ``pyvenv.cfg`` (the base interpreter's site folders too when it includes them), the site
# folders ``site.getsitepackages`` names for those prefixes (``site`` imported under -S only
# defines its functions), each followed by the folders its ``.pth`` files' path lines name,
# in ``site``'s order; it runs no ``import`` line, ``sitecustomize`` or ``usercustomize``.
# The project is then made importable by putting the tree's src roots first on sys.path
# here, after pytest itself is imported (a `src/pytest.py` cannot stand in for it), and
# nothing else of the tree; no .pth file is written anywhere. The roots come as JSON in
# argv[1].
ISOLATED = ('-I', '-S')
START_UP = '''\
import os, sys
def _site_path():
    import site
    here = os.path.dirname(os.path.abspath(sys.executable))
    prefixes = [sys.prefix, sys.exec_prefix]
    for folder in (here, os.path.dirname(here)):
        cfg = os.path.join(folder, "pyvenv.cfg")
        if os.path.isfile(cfg):
            system = "true"
            with open(cfg, encoding="utf-8", errors="replace") as f:
                for line in f:
                    key, _, value = line.partition("=")
                    if value and key.strip().lower() == "include-system-site-packages":
                        system = value.strip().lower()
            sys.prefix = sys.exec_prefix = os.path.dirname(here)
            prefixes = [sys.prefix] + (prefixes if system == "true" else [])
            break
    known = {os.path.normcase(os.path.abspath(p)) for p in sys.path}
    def add(path):
        path = os.path.abspath(path)
        if os.path.normcase(path) not in known and os.path.exists(path):
            known.add(os.path.normcase(path))
            sys.path.append(path)
    for folder in site.getsitepackages(prefixes):
        if not os.path.isdir(folder):
            continue
        add(folder)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".pth") or (name.startswith(".") and sys.version_info >= (3, 13)):
                continue
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    lines = os.fsdecode(f.read()).splitlines()
            except OSError:
                continue
            for line in lines:
                if line.startswith(("#", "import ", "import\t")) or not line.strip():
                    continue
                add(os.path.join(folder, line.rstrip()))
    site.setquit()
    site.setcopyright()
    site.sethelper()
_site_path()
del _site_path
'''
BOOTSTRAP = START_UP + (
    'import json\n'
    'import pytest\n'
    'sys.path[:0] = json.loads(sys.argv[1])\n'
    'raise SystemExit(pytest.main(sys.argv[2:]))\n'
)
OUTPUT_TAIL = 12  # lines of the child's output shown when a run did not complete
# The audit's codes that this module judges itself for the base oracle's tests.
_OWN_JUDGEMENT = {'OG703': 'OG733', 'OG704': 'OG733', 'OG705': 'OG733', 'OG706': 'OG732'}
_REFERENCE_HINT = ('the tests of this run are the base revision\'s oracle, not your '
                   'test files: fix src/ so they pass (a change to the oracle itself '
                   'needs a person\'s approval)')


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


@dataclass
class Run:
    record: RunRecord
    exit_code: int
    output: str
    # The sealed run's findings on this run (rule 45): its stream, exit status, canaries.
    sealed: list[Finding] = field(default_factory=list)

    def tail(self) -> str:
        lines = [line for line in self.output.splitlines() if line.strip()]
        return '\n'.join(lines[-OUTPUT_TAIL:])


@dataclass
class ReferenceResult:
    """What the three runs found, and what the review report says about them."""

    findings: list[Finding] = field(default_factory=list)
    report: list[tuple[str, list[str]]] = field(default_factory=list)


# -- building a tree -------------------------------------------------------------------------
class _Side:
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


class _Approved(_Side):
    """The oracle side after an approval (rule 47): the base's files, except the approved
    ones, which are the pull request's (an approved deletion is gone)."""

    def __init__(self, base: _Side, head: _Side, approved: Iterable[str]) -> None:
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
        _IMPORTS[key] = _parse_imports(source, path)
    return list(_IMPORTS[key])


def _parse_imports(source: bytes, path: str) -> list[tuple[str, int]]:
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
    side = _Side(view)
    builder = TreeBuilder(cfg, side, side)
    builder.add_tests(sorted(p for p in side.files if cfg.is_property(p)), side)
    return sorted(p for p in builder.plan if not is_test_side(p, cfg) and not cfg.is_src(p))


class TreeBuilder:
    """Plans which file of which revision goes into a reference tree, then writes it."""

    def __init__(self, cfg: Config, oracle: _Side, code: _Side) -> None:
        self.cfg = cfg
        self.oracle = oracle
        self.code = code
        self.plan: dict[str, _Side] = {}
        self.skipped: list[str] = []

    def place(self, path: str, side: _Side) -> bool:
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

    def add_oracle_documents(self, side: _Side) -> None:
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

    def add_tests(self, paths: Iterable[str], side: _Side) -> None:
        """Test files (or property folder files) and, from the same side, the test helper
        modules they import; the conftests and ``__init__.py`` files on their path from
        the oracle side (an ``__init__.py`` the oracle lacks from ``side``)."""
        # (path, the side it is read from): a conftest or __init__.py found on the way
        # stays the oracle's even when `side` has one too.
        pending: list[tuple[str, _Side]] = [
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

    def helpers(self, path: str, side: _Side) -> list[str]:
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


# -- running pytest in a tree -----------------------------------------------------------------
def import_roots(tree: str, src: Sequence[str]) -> list[str]:
    """sys.path entries that make the tree's src roots importable: a src root that is a
    package itself (``mypkg/__init__.py``) is imported from its parent."""
    roots = []
    for root in src:
        folder = os.path.join(tree, *[p for p in root.split('/') if p])
        if os.path.isfile(os.path.join(folder, '__init__.py')):
            folder = os.path.dirname(folder.rstrip(os.sep))
        roots.append(folder)
    return list(dict.fromkeys(roots))


class PytestChild:
    """One pytest process in a reference tree, started at once; ``wait`` gives its Run.
    Its output goes to a file, so the gate need not read it while it runs."""

    def __init__(self, tree: Tree, python: str, src: Sequence[str], args: Sequence[str],
                 today: datetime.date, extra_plugins: Sequence[str] = (),
                 sealed: bool = False) -> None:
        self.work = tempfile.mkdtemp(prefix='oracle-guard-record-')
        record = os.path.join(self.work, 'record')
        os.mkdir(record)
        self.record_folder = record
        env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        env[RECORD_ENV] = record
        # The reference run is sealed like the test command (rule 45): its record is the
        # gate's copy of the stream, and canaries planted from a secret of its own prove
        # that the pull request's src/ in it did not make failures pass.
        self.listener: stream.EventListener | None = None
        self.plan: canaries.CanaryPlan | None = None
        if sealed:
            def read(path: str) -> bytes | None:
                try:
                    with open(os.path.join(tree.root, path), 'rb') as f:
                        return f.read()
                except OSError:
                    return None

            tests = [p for p in args if p in tree.sources]
            self.plan = canaries.plant_canaries(
                os.path.join(self.work, 'canaries'), secrets.token_hex(16), root=tree.root,
                test_files=tests, oracle_files=tests, read=read,
                hypothesis=uses_hypothesis(tests, read))
            self.listener = stream.EventListener(self.work).__enter__()
            env.update({**self.listener.env(), **self.plan.env()})
        command = [python, *ISOLATED, '-c', BOOTSTRAP, json.dumps(import_roots(tree.root, src)),
                   '-q', '-p', 'no:cacheprovider', f'--rootdir={tree.root}',
                   # One module that cannot be imported must not hide the others' outcomes.
                   '--continue-on-collection-errors',
                   f'--oracle-guard-today={today.isoformat()}',
                   *[a for p in extra_plugins for a in ('-p', p)], *args, '-p', 'oracle_guard']
        self.output = open(os.path.join(self.work, 'output.txt'), 'w+b')  # noqa: SIM115
        self.proc: subprocess.Popen[bytes] | None = None
        # An interpreter that cannot be started is bad input, said when the run is waited
        # for: the sealed run's own inspection of the test environment says it first.
        self.error: ConfigError | None = None
        try:
            self.proc = subprocess.Popen(command, cwd=tree.root, env=env,
                                         stdin=subprocess.DEVNULL, stdout=self.output,
                                         stderr=subprocess.STDOUT)
        except OSError as exc:
            self.error = ConfigError('--test-python', 0,
                                     f'cannot run {python!r}: {exc.strerror}',
                                     'give the interpreter of the test environment')

    def wait(self) -> Run:
        try:
            if self.proc is None:
                assert self.error is not None
                raise self.error
            code = self.proc.wait()
            code = 128 - code if code < 0 else code
            self.output.seek(0)
            text = self.output.read().decode('utf-8', 'replace')
            if self.listener is None or self.plan is None:
                return Run(read_record(self.record_folder), code, text)
            self.listener.close()
            full = self.listener.record()
            found = [*stream.contradictions(self.listener.streams),
                     *stream.cross_checks(full, read_record(self.record_folder), None),
                     *exit_status_findings(full, code),
                     *canaries.judge_canaries(self.plan, full)]
            found = [Finding(f.path, f.line, f.col, f.code, f'reference run: {f.message}', f.hint)
                     for f in found]
            return Run(self.plan.without(full), code, text, found)
        finally:
            self.close()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
        self.output.close()
        shutil.rmtree(self.work, ignore_errors=True)


def run_pytest(tree: Tree, python: str, src: Sequence[str], args: Sequence[str],
               today: datetime.date, extra_plugins: Sequence[str] = (),
               reaper: Reaper | None = None, leftovers: list[Finding] | None = None) -> Run:
    """One pytest process in ``tree``, waited for; with ``reaper``, what it leaves running
    is killed and said in ``leftovers`` (OG718)."""
    mark = reaper.mark() if reaper is not None else frozenset()
    run = PytestChild(tree, python, src, args, today, extra_plugins).wait()
    if reaper is not None and leftovers is not None:
        for finding in reaper.leftovers(mark, 'an evidence run (rules 48, 49)'):
            if finding not in leftovers:
                leftovers.append(finding)
    return run


def _nodeids_by_test(record: RunRecord, root: str) -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for nodeid, item in record.items.items():
        path = os.path.relpath(os.path.realpath(item['path']), os.path.realpath(root))
        key = (path.replace(os.sep, '/'), function_of(identity_of(nodeid)))
        found.setdefault(key, []).append(nodeid)
    return found


def _failed_phase(record: RunRecord, nodeid: str) -> str:
    phases = record.reports.get(nodeid, {})
    for when in ('setup', 'call', 'teardown'):
        report = phases.get(when)
        if report is not None and report['outcome'] == 'failed':
            return when
    return 'call'


def test_outcome(record: RunRecord, nodeids: Sequence[str]) -> str:
    """One test function's outcome over its cases: failed, error, skipped, passed or
    'not run'."""
    if not nodeids:
        return 'not run'
    outcomes = [record.outcome(n) for n in nodeids]
    if 'failed' in outcomes:
        failed = [n for n, o in zip(nodeids, outcomes) if o == 'failed']
        return 'failed' if any(_failed_phase(record, n) == 'call' for n in failed) else 'error'
    if None in outcomes:
        return 'not run'
    if any(o in ('skipped', 'xfailed') for o in outcomes):
        return 'skipped'
    return 'passed'


# -- the reference run (rule 44) --------------------------------------------------------------
def _last_line(text: object) -> str:
    lines = [line.strip() for line in str(text or '').splitlines() if line.strip()]
    return lines[-1][:200] if lines else 'no reason given'


def _describe_failure(record: RunRecord, nodeid: str) -> str:
    """What the failed test raised, as the plugin saw its call, else the first line of
    the failed report's crash message (a doctest, a plugin's item)."""
    raised = (record.calls.get(nodeid) or {}).get('raised')
    if raised:
        return f'it raised {raised}'
    crash = (record.reports.get(nodeid, {}).get(_failed_phase(record, nodeid)) or {}).get('crash')
    first = str(crash or '').strip().splitlines()
    return first[0][:200] if first else 'see the test output above'


def _item_path(record: RunRecord, nodeid: str, root: str) -> str:
    """The repository path of a run's item (its node id's file when it was never
    collected, as a report of a session's teardown may be)."""
    item = record.items.get(nodeid)
    if item is None:
        return nodeid.split('::', 1)[0]
    path = os.path.relpath(os.path.realpath(item['path']), os.path.realpath(root))
    return path.replace(os.sep, '/')


def _unexplained_exit(run: Run, elsewhere: Sequence[str]) -> list[Finding]:
    """OG734: the reference run exited non-zero, and nothing it reported says why (rule
    44). Its must-fail canaries always make pytest's status 1: a 1 is theirs when the
    record, canaries taken out, holds no failed item and no module that failed to be
    collected; the sealed run's findings (``run.sealed``) say when a canary did not."""
    record = run.record
    failed_collection = [p for p in record.collect_problems if p.get('outcome') == 'failed']
    if run.exit_code == 0 or (run.exit_code == 1 and not elsewhere and not failed_collection):
        return []
    what = [*elsewhere, *[str(p.get('nodeid') or p.get('path') or '?')
                          for p in failed_collection]]
    more = f' and {len(what) - 5} more' if len(what) > 5 else ''
    told = f': {", ".join(what[:5])}{more} failed, outside the base oracle\'s test files' \
        if what else ''
    return [Finding('.', 1, 1, 'OG734', f'reference run: pytest exited {run.exit_code} but '
                    f'reported no failure of a test of the base oracle{told} '
                    f'({_last_line(run.tail())})',
                    'the reference run must pass: look at its output above for what ended '
                    'it (a conftest, a plugin, an error outside the tests)')]


def judge_reference(run: Run, tree: Tree, cfg: Config, oracle: TreeView, code: TreeView,
                    inventory: dict[tuple[str, str], gate_inventory.TestDef],
                    ledger: FreezeLedger | None, today: datetime.date,
                    base_collection: audit_context.BaseCollection | None = None,
                    src_gone: frozenset[str] = frozenset()) -> list[Finding]:
    record = run.record
    findings: list[Finding] = []
    if record.empty:
        return [Finding('.', 1, 1, 'OG734', 'the reference run left no record: pytest did not '
                        f'start in the test environment (exit {run.exit_code}): '
                        f'{run.tail() or "no output"}',
                        'run the gate with the test environment\'s interpreter '
                        '(--test-python) with oracle-guard and the project\'s test '
                        'dependencies installed')]
    ctx = audit_context.AuditContext(cfg=cfg.replace(root=tree.root), record=record,
                             inventory=inventory, ledger=ledger, today=today,
                             src_modules=gate_inventory.src_modules(code, cfg), view=oracle,
                             base_collection=base_collection, src_gone=src_gone)
    broken_modules = {}
    for problem in record.collect_problems:
        if problem.get('outcome') == 'failed':
            path = problem.get('path') or problem['nodeid'].split('::', 1)[0]
            rel = os.path.relpath(os.path.realpath(os.path.join(tree.root, path)),
                                  os.path.realpath(tree.root))
            broken_modules[rel.replace(os.sep, '/')] = problem
    for path, problem in sorted(broken_modules.items()):
        # Every oracle file, inventoried tests or not (a module of a state machine's
        # TestCase alone, rule 44).
        if not cfg.is_property(path):
            continue
        findings.append(Finding(path, 1, 1, 'OG731', f'reference run: {path}, a test file of '
                                'the base oracle, could not be collected against your src/ '
                                f'({_last_line(problem.get("reason"))})',
                                _REFERENCE_HINT))
    for finding in audit.audit(ctx):
        code_ = _OWN_JUDGEMENT.get(finding.code)
        if finding.path in broken_modules and code_ == 'OG733':
            continue  # said once, as OG731
        if code_ is None:  # a mechanism of the run (the lock check too): not the oracle's
            findings.append(Finding(finding.path, finding.line, 1, 'OG734',
                                    f'reference run: {finding.code} {finding.message}',
                                    finding.hint))
        else:
            findings.append(Finding(finding.path, finding.line, 1, code_,
                                    f'reference run: {finding.message}', _REFERENCE_HINT))
    # Every failed item of an oracle file, known to the inventory or not (an inherited test,
    # a doctest, a state machine's TestCase, a plugin's item: rule 44); no canary is here.
    elsewhere = []
    for nodeid in stream.failed_tests(record):
        path = _item_path(record, nodeid, tree.root)
        if not cfg.is_property(path):
            elsewhere.append(nodeid)
            continue
        test = inventory.get((path, function_of(identity_of(nodeid))))
        line = test.line if test is not None else 1
        phase = _failed_phase(record, nodeid)
        if phase == 'call' and not (record.calls.get(nodeid) or {}).get('lock'):
            findings.append(Finding(path, line, 1, 'OG730', f'reference run: '
                                    f'{nodeid}, a test of the base oracle, failed against '
                                    f'your src/ ({_describe_failure(record, nodeid)})',
                                    _REFERENCE_HINT))
        elif phase != 'call':  # (failed by the lock check at call: said as OG734 above)
            findings.append(Finding(path, line, 1, 'OG731', f'reference run: '
                                    f'{nodeid}, a test of the base oracle, errored in '
                                    f'{phase} against your src/ '
                                    f'({_describe_failure(record, nodeid)})',
                                    _REFERENCE_HINT))
    if not findings and not run.sealed:
        findings += _unexplained_exit(run, elsewhere)
    return findings


# -- evidence: freezes (rule 48) and new tests (rule 49) --------------------------------------
def added_flaky_freezes(base: FreezeLedger | None, head: FreezeLedger | None) -> list:
    """Ledger rows of a flaky class the pull request adds (a new id, or an id that now
    names another test)."""
    if head is None:
        return []
    old = {row.id: row.nodeid for row in (base.rows if base else [])}
    return [row for row in head.rows if row.freeze_class in FLAKY_CLASSES and row.nodeid
            and old.get(row.id) != row.nodeid]


def changed_tests(base: TreeView | None, head: TreeView, paths: Iterable[str]
                  ) -> dict[str, list[str]]:
    """Test file -> identities the pull request adds or whose body it changes."""
    def functions(view: TreeView | None, path: str) -> dict[str, str]:
        source = view.read(path) if view is not None else None
        if source is None:
            return {}
        try:
            tree = parse_python(source, path)
        except ScanError:
            return {}
        return {identity: ast.dump(node) for identity, node in test_functions(tree)}

    found: dict[str, list[str]] = {}
    for path in sorted(paths):
        before, after = functions(base, path), functions(head, path)
        inventory = {t.identity
                     for t in gate_inventory.file_inventory(head.read(path) or b'', path)}
        new = [i for i, body in after.items() if before.get(i) != body and i in inventory]
        if new:
            found[path] = new
    return found


def _code_list(paths: Sequence[str], limit: int = 0) -> str:
    shown = [f'`{p}`' for p in (paths[:limit] if limit else paths)]
    more = len(paths) - len(shown)
    return ', '.join(shown) + (f' and {more} more' if more > 0 else '')


class ReferenceRuns:
    def __init__(self, ctx: RunContext, python: str, approved: bool,
                 approved_files: Iterable[str] | None = None,
                 timings: Timings | None = None) -> None:
        self.ctx = ctx
        self.python = python
        changes = ctx.changes
        assert changes.base is not None and ctx.judged is not None
        # Both sides listed now, before the install step, and read through that listing
        # from here on (rule 44): the judge reads the ledgers, the baseline, the test code
        # and the src listing after the test command, when git may give other bytes.
        self.base = _Side(TreeView(ctx.cfg.root, changes.base), pin=True)
        self.head = _Side(ctx.judged, pin=True)
        self.base_view = self.base.view
        self.head_view = self.head.view
        # An approval takes the approved files from the pull request (all of its oracle
        # when no list is given), every other oracle file still from the base.
        self.oracle = self.base
        if approved:
            self.oracle = self.head if approved_files is None else \
                _Approved(self.base, self.head, approved_files)
        self.approved = approved
        # The oracle side's own configuration says where its files are; the tests roots
        # of both sides keep the pull request's test code out.
        oracle_cfg = load_config(ctx.cfg.root, self.oracle.view_of('pyproject.toml'))
        self.cfg = oracle_cfg.replace(tests=tuple(dict.fromkeys([*oracle_cfg.tests,
                                                                 *ctx.cfg.tests])),
                                      src=ctx.cfg.src)
        self.result = ReferenceResult()
        self.pending: tuple = ()  # type: ignore[type-arg]  # the started reference run
        self.folder = ''  # made when the first tree is built (after the install step)
        self.timings = timings if timings is not None else Timings()
        self.watcher: threading.Thread | None = None
        # The base revision's own collection (rule 39b), when the gate ran one.
        self.base_collection: audit_context.BaseCollection | None = None
        # Kills what an evidence run leaves running before the next one (OG718).
        self.reaper: Reaper | None = None

    def close(self) -> None:
        child = self.pending[3] if self.pending else None
        if child is not None:
            if child.proc is not None and child.proc.poll() is None:
                child.proc.kill()
                child.proc.wait()
            child.close()
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
        atexit.unregister(self.close)

    def pid(self) -> int | None:
        """The reference run's pytest process, while it runs."""
        child = self.pending[3] if self.pending else None
        return child.proc.pid if child is not None and child.proc is not None else None

    def forged_findings(self) -> list[Finding]:
        """OG734: git gave the judge of these runs other bytes for a file than the blob its
        revision listed before the install step (``ListedView``): what it judged with is
        not the revision's."""
        shown = [f'`{path}` ({name} `{side.view.label}`)'
                 for name, side in (('base', self.base), ('the pull request', self.head))
                 for path in sorted(set(getattr(side.view, 'forged', ())))]
        if not shown:
            return []
        more = f' and {len(shown) - 5} more' if len(shown) > 5 else ''
        return [Finding('.', 1, 1, 'OG734', 'reference and evidence runs: git gave other bytes '
                        f'for {", ".join(shown[:5])}{more} than the blobs the revisions named '
                        'when the gate listed them before the install step, when the gate read '
                        'them to judge the runs (the ledger, the baseline, the test code): '
                        'git\'s objects were changed',
                        'nothing may write into .git/objects (or its alternates): remove what '
                        'does from the install step and the tests')]

    def ledger(self, side: _Side) -> FreezeLedger | None:
        try:
            return read_ledger(side.view_of(self.cfg.ledger), self.cfg.ledger)
        except ConfigError:
            return None  # check-freeze-ledger has reported it

    def build(self, name: str, code: _Side, tests: Iterable[str] = (),
              tests_side: _Side | None = None) -> Tree:
        builder = TreeBuilder(self.cfg, self.oracle, code)
        builder.add_code()
        builder.add_oracle_documents(tests_side or self.oracle)
        builder.add_pytest_config()
        builder.add_tests([p for p in self.oracle.files if self.cfg.is_property(p)], self.oracle)
        if tests_side is not None:
            builder.add_tests(tests, tests_side)
        if not self.folder:
            self.folder = tempfile.mkdtemp(prefix='oracle-guard-reference-')
        root = os.path.join(self.folder, name)
        os.mkdir(root)
        return builder.write(root)

    def files_section(self, tree: Tree) -> list[str]:
        """The files of a tree by the revision they were read from (base or head)."""
        lines = []
        for rev, paths in tree.by_side().items():
            side = f'base `{rev}`' if rev == self.base.label else f'the pull request `{rev}`'
            src = [p for p in paths if self.cfg.is_src(p)]
            rest = [p for p in paths if not self.cfg.is_src(p)]
            if src:
                lines.append(f'- src from {side}: {_code_list(src, 40)}')
            if rest:
                lines.append(f'- other files from {side}: {_code_list(rest, 60)}')
        lines += [f'- not placed: {why}' for why in tree.skipped]
        return lines

    # -- rule 44 -----------------------------------------------------------------------
    def start_reference(self) -> None:
        """Build the tree and start its pytest process; ``finish_reference`` judges it."""
        with self.timings.step('reference tree build'):
            tree = self.build('reference', self.head)
            oracle_tests = sorted(p for p in tree.sources if self.cfg.is_property(p)
                                  and is_test_module(p) and not gate_inventory.skipped_folder(p))
            inventory: dict[tuple[str, str], gate_inventory.TestDef] = {}
            for path in oracle_tests:
                source = self.oracle.view_of(path).read(path)
                for test in gate_inventory.file_inventory(source or b'', path):
                    inventory[(path, test.identity)] = test
        child = None
        # A property file the static inventory finds no test in (a state machine's
        # TestCase, doctests) runs too: its items are judged all the same (rule 44).
        if oracle_tests:
            step = self.timings.get('reference run')
            step.started = time.perf_counter()
            child = PytestChild(tree, self.python, self.cfg.src, oracle_tests, self.ctx.today,
                                sealed=True)
            if child.proc is not None:
                self.watcher = watch_exit(child.proc.pid, step)
                # The test command, which runs the pull request's test code, starts only
                # once this run has collected: the oracle's modules (conftests, helpers,
                # canaries) are compiled from the bytes written above by then, and a test
                # command that rewrites the tree changes nothing they run (rule 44). The
                # collection is the one the plugin reports on its own connection, which
                # src in that process cannot open (rule 45: gate/stream.py).
                proc, listener = child.proc, child.listener
                assert listener is not None
                listener.wait_for_collection(proc.pid, lambda: proc.poll() is None)
        self.pending = (tree, oracle_tests, inventory, child)

    def finish_reference(self) -> None:
        tree, oracle_tests, inventory, child = self.pending
        lines = self.files_section(tree)
        if child is None:
            self.result.report.append(('Reference run', [
                '- no test of the oracle\'s properties to run (check-properties-present '
                'judges that)', *lines]))
            return
        step = self.timings.get('reference run')
        cpu, children = time.process_time(), children_cpu()
        try:
            run = child.wait()
            found = tampered(tree, self.cfg) + compiled_elsewhere(run, tree, self.cfg) + \
                run.sealed + judge_reference(run, tree, self.cfg, self.oracle.view,
                                             self.head.view, inventory,
                                             self.ledger(self.oracle), self.ctx.today,
                                             self.base_collection,
                                             gate_inventory.src_gone(self.base_view,
                                                                     self.head_view, self.cfg))
        finally:
            # Its CPU is counted when it is reaped; its wall time ends when it exited.
            if self.watcher is not None:
                self.watcher.join(timeout=1.0)
            if step.ended < step.started:
                step.ended = time.perf_counter()
            step.wall = step.ended - step.started
            step.cpu += time.process_time() - cpu
            step.children += children_cpu() - children
            step.ran = True
        self.result.findings += found
        verdict = (f'{len(inventory)} oracle test(s) of {len(oracle_tests)} file(s): '
                   + (f'{len(found)} finding(s)' if found else 'all passed or frozen at base'))
        self.result.report.append(('Reference run', [f'- {verdict}', *lines]))

    def reference(self) -> None:
        self.start_reference()
        self.finish_reference()

    # -- rule 48 -----------------------------------------------------------------------
    def freezes(self) -> None:
        rows = added_flaky_freezes(self.ledger(self.base), self.ledger(self.head))
        if not rows:
            return
        files = sorted({row.nodeid.split('::', 1)[0] for row in rows})
        tree = self.build('freezes', self.head, files, self.head)
        reruns = self.cfg.flaky_reruns
        outcomes: dict[str, list[str]] = {row.id: [] for row in rows}
        for _ in range(reruns):
            run = run_pytest(tree, self.python, self.cfg.src,
                             sorted({row.nodeid for row in rows}), self.ctx.today,
                             ('oracle_guard.runtime.unfrozen',), self.reaper,
                             self.result.findings)
            # The same digests as the reference tree's (rule 44): a rerun whose tree was
            # rewritten proves nothing about the freeze.
            for finding in tampered(tree, self.cfg, 'freeze reruns (rule 48)',
                                    'the tree of the reruns') + compiled_elsewhere(
                                        run, tree, self.cfg, 'freeze reruns (rule 48)'):
                if finding not in self.result.findings:
                    self.result.findings.append(finding)
            by_test = _nodeids_by_test(run.record, tree.root)
            for row in rows:
                path = row.nodeid.split('::', 1)[0]
                outcomes[row.id].append(test_outcome(
                    run.record, by_test.get((path, function_of(row.identity)), [])))
        lines = []
        for row in rows:
            seen = outcomes[row.id]
            summary = ', '.join(seen)
            passed, failed = seen.count('passed'), seen.count('failed') + seen.count('error')
            where = f'{self.cfg.ledger} {row.id} ({row.nodeid}, {row.freeze_class})'
            if not passed:
                self.result.findings.append(Finding(
                    self.cfg.ledger, row.line_of('id'), 1, 'OG735',
                    f'{row.id} freezes {row.nodeid} as {row.freeze_class}, but it passed in '
                    f'none of {reruns} reruns against your src/ ({summary}): broken, not '
                    'flaky', 'fix the test or the code; a flaky freeze needs a run where it '
                    'passed'))
                lines.append(f'- {where}: passed 0 of {reruns}: {summary} (broken, not flaky)')
            elif failed:
                lines.append(f'- {where}: passed {passed} and failed {failed} of {reruns} '
                             f'reruns: {summary} (a measured flip)')
            else:
                lines.append(f'- {where}: passed {passed} of {reruns} reruns: {summary} '
                             '(no flip seen)')
        self.result.report.append(('Freeze evidence (reruns against the pull request\'s src)',
                                   lines + self.files_section(tree)))

    # -- rule 49 -----------------------------------------------------------------------
    def new_tests(self) -> None:
        changes = self.ctx.changes
        touched = changes.touched()
        if not any(self.ctx.cfg.is_src(p) for p in touched):
            return  # no src/ change: nothing a new test could be testing
        candidates = [p for p in changes.added_or_modified() if is_test_module(p) and
                      (under_any(p, self.cfg.tests) or self.cfg.is_property(p))]
        tests = changed_tests(self.base_view, self.head_view, candidates)
        if not tests:
            return
        tree = self.build('new-tests', self.base, sorted(tests), self.head)
        nodeids = [f'{path}::{identity}' for path, identities in sorted(tests.items())
                   for identity in identities]
        run = run_pytest(tree, self.python, self.cfg.src, nodeids, self.ctx.today,
                         reaper=self.reaper, leftovers=self.result.findings)
        self.result.findings += tampered(tree, self.cfg, 'new-test run (rule 49)',
                                         'the tree of the new tests') + compiled_elsewhere(
                                             run, tree, self.cfg, 'new-test run (rule 49)')
        by_test = _nodeids_by_test(run.record, tree.root)
        passing = [n for n in nodeids if test_outcome(
            run.record, by_test.get((n.split('::', 1)[0], n.split('::', 1)[1]), [])) ==
            'passed']
        lines = [f'- `{n}`: passes without your change' for n in passing]
        if self.cfg.require_fail_to_pass:
            inventory = gate_inventory.static_inventory(
                self.head_view, self.cfg.replace(tests=tuple(sorted(tests)), properties=()))
            for nodeid in passing:
                path, identity = nodeid.split('::', 1)
                test = inventory.get((path, identity))
                self.result.findings.append(Finding(
                    path, test.line if test else 1, 1, 'OG736',
                    f'{nodeid} passes against the base revision\'s src/ too: it does not test '
                    'your change (require-fail-to-pass = true)',
                    'make the test fail on the old code (assert what the change fixes)'))
        if run.record.empty:
            lines.append(f'- the run against the base src did not start: {run.tail()}')
        elif not passing:
            lines.append(f'- none of the {len(nodeids)} new or changed test(s) passes '
                         'without your change')
        self.result.report.append(('New tests against the base src', lines +
                                   self.files_section(tree)))


def tampered(tree: Tree, cfg: Config, run: str = 'reference run',
             name: str = 'the reference tree') -> list[Finding]:
    """OG734: a file of the tree, other than src, that is not what the gate wrote when
    the run ended (the test command ran beside the reference run, as the same user; an
    evidence run runs the pull request's own tests in its tree)."""
    found = []
    if tree.forged:
        shown = _code_list(sorted(tree.forged), 5)
        found.append(Finding('.', 1, 1, 'OG734', f'{run}: git gave other bytes for {shown} '
                             'than the blobs the revisions named when the gate listed them '
                             'before the install step: git\'s objects were changed',
                             'nothing may write into .git/objects (or its alternates): '
                             'remove what does from the install step and the tests'))
    changed = tree.changed(p for p in tree.sources if not cfg.is_src(p))
    if not changed:
        return found
    shown = ', '.join(changed[:5]) + (f' and {len(changed) - 5} more' if len(changed) > 5
                                       else '')
    return found + [Finding('.', 1, 1, 'OG734', f'{run}: {name} was changed while it ran: '
                            f'{shown}', 'nothing may write into the gate\'s reference tree: '
                            'remove what does (a test or conftest that looks for it)')]


def compiled_elsewhere(run: Run, tree: Tree, cfg: Config,
                       name: str = 'reference run') -> list[Finding]:
    """OG737: a file of the tree, other than src, that the run compiled from other bytes
    than the gate wrote (rewritten before its compile, put back after: ``tampered``
    cannot see it)."""
    expected = {p: d for p, d in tree.digests.items() if not cfg.is_src(p)}
    return compiled_from_other_bytes(run.record, tree.root, expected, f'{name}: ')


def prepare_reference_runs(ctx: RunContext, python: str, approved: bool = False,
                           approved_files: Iterable[str] | None = None,
                           timings: Timings | None = None) -> ReferenceRuns:
    """List both revisions' files and their blob ids (and read the oracle side's
    configuration) now, before the install step runs the pull request's code: every blob a
    tree is later built from is checked against these ids (OG734). ``start_reference_runs``
    with ``prepared`` builds the reference tree and starts its run."""
    if not ctx.changes.has_base:
        raise ConfigError('--base', 0, 'the reference run needs the base revision',
                          'fetch full history (actions/checkout fetch-depth: 0)')
    runs = ReferenceRuns(ctx, python, approved, approved_files, timings)
    # However the gate ends (bad input in a later step is exit 2), the child and the tree
    # go with it.
    atexit.register(runs.close)
    return runs


def start_reference_runs(ctx: RunContext, python: str, approved: bool = False,
                         approved_files: Iterable[str] | None = None,
                         timings: Timings | None = None,
                         prepared: ReferenceRuns | None = None) -> ReferenceRuns:
    """Build the reference tree from git objects and start the reference run (rule 44),
    before the test command runs: it runs beside it once it has collected (its modules are
    compiled from the tree as written), and a file of the tree's oracle side that is not
    what was written when it ends is OG734. ``finish_reference_runs`` waits for it,
    then reruns newly frozen flaky tests (rule 48) and runs the pull request's new or
    changed tests against the base src/ (rule 49)."""
    runs = prepared or prepare_reference_runs(ctx, python, approved, approved_files, timings)
    runs.start_reference()
    return runs


def finish_reference_runs(runs: ReferenceRuns, reaper: Reaper | None = None,
                          mark: frozenset[tuple[int, str]] | None = None) -> ReferenceResult:
    """Wait for the reference run and judge it, then the evidence runs; with ``reaper``,
    what each of them leaves running is killed before the next one starts (OG718). ``mark``
    is the gate's children before the reference run started (now, without it)."""
    runs.reaper = reaper
    try:
        if mark is None:
            mark = reaper.mark() if reaper is not None else frozenset()
        runs.finish_reference()
        if reaper is not None:
            runs.result.findings += reaper.leftovers(mark, 'the reference run')
        with runs.timings.step('freeze reruns'):
            runs.freezes()
        with runs.timings.step('new-test run'):
            runs.new_tests()
        runs.result.findings += runs.forged_findings()
    finally:
        runs.close()
    return runs.result


def reference_runs(ctx: RunContext, python: str, approved: bool = False,
                   approved_files: Iterable[str] | None = None) -> ReferenceResult:
    """All three, one after the other."""
    return finish_reference_runs(start_reference_runs(ctx, python, approved, approved_files))
