"""What the base revision's own collection leaves out, so the record of adoption does not
outlive its reason (rule 39b).

The baseline's ``excluded`` list names the tests adoption's collection left out. A
conftest hook that leaves a test out may read ``src/``, so whether it still does is the
pull request's to choose; the record alone would let it. The gate therefore collects the
**base revision** once more: a fresh temporary tree holds every file of the base revision
(its tests, conftests, pytest configuration and ``src/``), read from git objects, none of
the pull request's; ``pytest --collect-only`` with the collection probe runs in it in a
fresh ``python -I -S`` process of the test environment (the reference run's bootstrap: no
``.pth`` import line runs, rule 46). A recorded identity is accepted only
when that collection left it out too, and a case that collection kept which is gone from
the pull request's run (neither collected nor deselected) is not run. A test the base's
collection kept whose ``skipif`` held for none of its conditions there is one the base
ran: a baselined ``skipif`` explains no skip of it in the pull request's runs.

Run when the baseline records excluded tests, and when the text of a property's module
does not fix how many cases it has (``parametrize`` over a name imported from ``src``, a
comprehension, a starred list, a fixture's ``params`` likewise, a ``pytest_generate_tests``
hook): ``src`` could then stop declaring a case the base ran, and only the base's own
collection says it ran. A property parametrized over a list written in its module cannot
lose a case without a change to it (rule 11).
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

from oracle_guard.config import Config
from oracle_guard.findings import Finding
from oracle_guard.gate.audit_context import BaseCollection
from oracle_guard.gate.reference_tree import Side
from oracle_guard.gate.reference_process import BOOTSTRAP
from oracle_guard.gate.reference_process import DROPPED_ENV
from oracle_guard.gate.reference_process import path_argument
from oracle_guard.gate.reference_tree import is_test_side
from oracle_guard.gate.reference_process import ISOLATED
from oracle_guard.gate.reference_tree import TreeBuilder
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import identity_of
from oracle_guard.repo.tree_view import TreeView

TIMEOUT = 1800
# The probe's output variable (runtime/collection_probe.py, which imports pytest: the gate
# process does not import it).
OUTPUT = 'ORACLE_GUARD_COLLECTION_PROBE'


class BaseCollector:
    """Writes the base tree and starts its collection at once; ``wait`` gives the result."""

    def __init__(self, cfg: Config, base: TreeView, python: str,
                 only: list[str] | None = None, side: Side | None = None,
                 switched_off: Sequence[str] = ()) -> None:
        """``side``: the base listed before the install step (rule 44): its blob ids are
        what every file of the tree is checked against (``forged``); ``switched_off``: the
        plugins the test command switches off (``no:NAME``), off here too."""
        self.folder = tempfile.mkdtemp(prefix='oracle-guard-base-collect-')
        side = side or Side(base)
        self.sources: dict[str, bytes] = {}
        builder = TreeBuilder(cfg, side, side)
        builder.add_code()
        builder.add_pytest_config()
        builder.add_tests(sorted(p for p in side.files if is_test_side(p, cfg)), side)
        self.root = os.path.join(self.folder, 'base')
        os.mkdir(self.root)
        tree = builder.write(self.root)
        self.forged = sorted(tree.forged)
        for path in tree.sources:
            if is_test_side(path, cfg):
                with open(os.path.join(self.root, *path.split('/')), 'rb') as f:
                    self.sources[path] = f.read()
        self.out = os.path.join(self.folder, 'collected.json')
        env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        env[OUTPUT] = self.out
        # --assert=plain: a collection runs no assert, and rewriting every test module
        # was about 40 % of its CPU (attrs: 2.2 s against 1.3 s). Which tests are kept,
        # deselected or never collected does not depend on it; the tree holds only the
        # base revision's own code, nothing of the pull request's.
        command = [python, *ISOLATED, '-c', BOOTSTRAP,
                   path_argument(self.root, cfg.src),
                   '--collect-only', '-q', '-p', 'no:cacheprovider', '--assert=plain',
                   f'--rootdir={self.root}',
                   '--continue-on-collection-errors', '-p', 'no:oracle_guard',
                   '-p', 'oracle_guard.runtime.collection_probe',
                   *[a for name in switched_off for a in ('-p', name)],
                   # Only the property files, when only their cases are asked about
                   # (``scope``): the rest of the suite is not collected.
                   *[p for p in (only or ()) if p in tree.sources]]
        self.output = open(os.path.join(self.folder, 'output.txt'), 'w+b')  # noqa: SIM115
        self.proc: subprocess.Popen[bytes] | None = None
        self.error = ''
        try:
            self.proc = subprocess.Popen(command, cwd=self.root, env=env,
                                         stdin=subprocess.DEVNULL, stdout=self.output,
                                         stderr=subprocess.STDOUT)
        except OSError as exc:
            self.error = f'cannot run {python!r}: {exc.strerror}'

    def forged_findings(self) -> list[Finding]:
        """OG734: git gave the base collection's tree other bytes than the blobs listed
        before the install step (a loose object rewritten): its answer is not the base's."""
        if not self.forged:
            return []
        shown = ', '.join(f'`{p}`' for p in self.forged[:5]) + (
            f' and {len(self.forged) - 5} more' if len(self.forged) > 5 else '')
        return [Finding('.', 1, 1, 'OG734', f'base collection: git gave other bytes for '
                        f'{shown} than the blobs the base named when the gate listed it '
                        'before the install step: git\'s objects were changed',
                        'nothing may write into .git/objects (or its alternates): remove '
                        'what does from the install step and the tests')]

    def wait(self) -> BaseCollection:
        try:
            if self.proc is not None:
                try:
                    self.proc.wait(timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
                    self.error = f'it did not end within {TIMEOUT} s'
            return self._read()
        finally:
            self.close()

    def _read(self) -> BaseCollection:
        if not self.error:
            try:
                with open(self.out, encoding='utf-8') as f:
                    data = json.load(f)
                if not (isinstance(data, dict) and isinstance(data.get('items'), list)
                        and isinstance(data.get('removed'), list)
                        and isinstance(data.get('unskipped', []), list)
                        and all(isinstance(i, list) and len(i) == 2 and
                                all(isinstance(v, str) for v in i)
                                for i in data.get('unskipped', []))
                        and all(isinstance(i, list) and len(i) == 2 and
                                all(isinstance(v, str) for v in i) for i in data['items'])
                        and all(isinstance(i, list) and len(i) == 3 and
                                all(isinstance(v, str) for v in i) for i in data['removed'])):
                    raise ValueError('not what the collection probe writes')
            except (OSError, ValueError):
                self.output.seek(0)
                tail = [line for line in self.output.read().decode('utf-8', 'replace')
                        .splitlines() if line.strip()][-3:]
                self.error = ' / '.join(tail) or 'no output'
        if self.error:
            return BaseCollection(error=self.error)
        real = os.path.realpath(self.root)

        def key(nodeid: str, path: str) -> str:
            full = path if os.path.isabs(path) else os.path.join(self.root, path)
            rel = os.path.relpath(os.path.realpath(full), real).replace(os.sep, '/')
            return f'{rel}::{identity_of(nodeid)}'

        kept = frozenset(key(n, p) for n, p in data['items'])
        functions: dict[str, set[str]] = {}
        for case in kept:
            functions.setdefault(function_of_nodeid(case), set()).add(case)
        return BaseCollection(kept=kept,
                              left_out=frozenset(key(n, p) for n, p, _ in data['removed']),
                              kept_functions={f: frozenset(c) for f, c in functions.items()},
                              sources=self.sources,
                              unskipped=frozenset(key(n, p) for n, p in
                                                  data.get('unskipped', [])))

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.output.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _records_exclusions(view: TreeView, cfg: Config) -> bool:
    """Whether the pull request's baseline records tests left out at adoption (an
    unreadable one records nothing: check-named-freezes reports it)."""
    from oracle_guard.findings import ConfigError
    from oracle_guard.oracle.baseline import read_baseline

    try:
        baseline = read_baseline(view, cfg.baseline)
    except ConfigError:
        return False
    return bool(baseline and baseline.excluded)


def _property_modules(view: TreeView, cfg: Config) -> list[str]:
    from oracle_guard.config import is_test_module

    return sorted(p for p in view.paths(cfg.property_roots())
                  if cfg.is_property(p) and is_test_module(p))


def needed(view: TreeView, cfg: Config, base: TreeView | None = None) -> bool:
    """Whether the gate makes the base revision's collection (rule 39b): the pull
    request's baseline records excluded tests, or a property of the base revision takes
    its cases from outside its own module (``cases_from_code``), or carries a ``skipif``
    (``skipifs``: whether the base ran it is the base's collection's to say)."""
    if base is not None and (cases_from_code(base, cfg) or skipifs(base, cfg)):
        return True
    return _records_exclusions(view, cfg)


def skipifs(view: TreeView, cfg: Config) -> list[str]:
    """The property files of ``view`` whose text names ``skipif`` (a byte search): a
    baselined ``skipif`` explains a skip only where the base revision skipped too, and its
    condition may read ``src``."""
    properties = _property_modules(view, cfg)
    view.read_many(properties)
    return [p for p in properties if b'skipif' in (view.read(p) or b'')]


def scope(view: TreeView, cfg: Config, base: TreeView) -> list[str] | None:
    """What the base revision's collection must collect: None for the whole suite (the
    pull request's baseline records excluded tests, which may be anywhere), or else the
    base's property modules, when the collection is made for their cases alone
    (``cases_from_code``): a dateutil-sized suite is not collected for a few properties."""
    if _records_exclusions(view, cfg):
        return None
    return _property_modules(base, cfg) or None


def cases_from_code(view: TreeView, cfg: Config) -> list[str]:
    """The property files (and the conftests on their path) of ``view`` whose text does
    not fix how many cases they have: a ``parametrize`` whose values are not a list or
    tuple written there (nor a module-level name bound once to one), a fixture's
    ``params`` likewise, a ``pytest_generate_tests`` hook. Read statically, one parse per
    file (rule 39b)."""
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    properties = _property_modules(view, cfg)
    if not properties:
        return []
    # The conftests on the properties' paths: each folder from the root down.
    conftests = set()
    for path in properties:
        parts = path.split('/')[:-1]
        conftests.update('/'.join([*parts[:n], 'conftest.py']) for n in range(len(parts) + 1))
    files = sorted({*properties, *conftests})
    view.read_many(files)
    found = []
    for path in files:
        source = view.read(path)
        if not source or (b'parametrize' not in source and b'params' not in source
                          and b'pytest_generate_tests' not in source):
            continue
        try:
            tree = parse_python(source, path)
        except ScanError:
            continue
        if _cases_from_code(tree):
            found.append(path)
    return found


def _literal(node: ast.AST, names: dict[str, ast.AST], depth: int = 0) -> bool:
    """Whether the module's text fixes how many cases ``node`` gives: a list or tuple
    display without a starred element (whatever its elements: a class of the module, a
    value built by src, a ``pytest.param``), a literal, or a module-level name bound once
    to one of those. A set display counts only with literal elements (equal values
    merge)."""
    if depth > 20:
        return False
    if isinstance(node, ast.Name):
        bound = names.get(node.id)
        return bound is not None and _literal(bound, names, depth + 1)
    if isinstance(node, (ast.List, ast.Tuple)):
        return not any(isinstance(e, ast.Starred) for e in node.elts)
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _literal_names(tree: ast.Module) -> dict[str, ast.AST]:
    """Names bound once, at module level, by ``NAME = <value>``, never rebound (no other
    assignment, import, definition or loop target) and never reached into (no attribute
    or subscript on them: ``CASES.append(...)``, ``CASES[0] = ...``)."""
    names: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    bindings: dict[str, int] = {}
    spoiled: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bindings[node.id] = bindings.get(node.id, 0) + 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            spoiled.update((a.asname or a.name).split('.')[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            spoiled.add(node.name)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and \
                isinstance(node.value, ast.Name):
            spoiled.add(node.value.id)
        elif isinstance(node, ast.Global):
            spoiled.update(node.names)
    return {name: value for name, value in names.items()
            if bindings.get(name) == 1 and name not in spoiled}


def _cases_from_code(tree: ast.Module) -> bool:
    names = _literal_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name == 'pytest_generate_tests':
            return True
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr == 'parametrize':
            values = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == 'argvalues'), None)
            if values is None or not _literal(values, names):
                return True
        elif node.func.attr == 'fixture':
            params = next((k.value for k in node.keywords if k.arg == 'params'), None)
            if params is not None and not _literal(params, names):
                return True
    return False


def function_of_nodeid(nodeid: str) -> str:
    """``path::test_x[3]`` -> ``path::test_x``."""
    path, _, identity = nodeid.partition('::')
    return f'{path}::{function_of(identity)}'
