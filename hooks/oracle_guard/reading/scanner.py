"""The test-file scanner: every way a test can be silenced, under any alias.

A *silence* is a skip or xfail in any of its spellings: ``@pytest.mark.skip``, ``skipif``,
``xfail``, ``pytest.skip()``, ``pytest.importorskip()``, ``pytestmark = [...]`` at module or
class level, ``pytest.param(..., marks=...)``, ``unittest.skip*``, ``@expectedFailure``,
``raise SkipTest`` and ``self.skipTest()``; imported under any name (``import pytest as
pt``, ``from pytest import mark as m``) or re-bound (``s = pytest.mark.skip``).

Scanning is two steps: a byte prefilter (no marker word, no parse) and one walk of
the syntax tree that records each silence with the test identities it covers.
"""
from __future__ import annotations

import bisect
import gc
import warnings

from oracle_guard.config import is_test_module  # noqa: F401 -- pytest's python_files
from oracle_guard.oracle.patterns import LazyPattern
from oracle_guard.reading import syntax as ast  # `ast` without its import cost
from oracle_guard.reading.module_body import module_statements
from oracle_guard.oracle.records import FrozenRecord
from oracle_guard.reading.silence_prefilter import foreign_encoding  # noqa: F401 -- rule 36
from oracle_guard.reading.silence_prefilter import might_silence  # noqa: F401 -- the byte prefilter
from oracle_guard.reading.silence_prefilter import might_tamper  # noqa: F401 -- rule 35
from oracle_guard.oracle.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable

    from oracle_guard.repo.tree_view import TreeView

FREEZE_ID = LazyPattern(r'\bFZ-\d+\b')

# Where the real objects live, so that `from _pytest.outcomes import skip` and
# `from unittest.case import SkipTest` resolve like their public spellings.
_CANONICAL_PREFIXES = (
    ('_pytest.outcomes.', 'pytest.'),
    ('_pytest.mark.', 'pytest.mark.'),
    ('unittest.case.', 'unittest.'),
)
SILENCES = {
    'pytest.mark.skip': 'skip',
    'pytest.mark.skipif': 'skipif',
    'pytest.mark.xfail': 'xfail',
    'pytest.skip': 'skip',
    'pytest.skip.Exception': 'skip',
    'pytest.xfail': 'xfail',
    'pytest.xfail.Exception': 'xfail',
    'pytest.importorskip': 'importorskip',
    # The exceptions pytest.skip() and pytest.xfail() raise, raised directly.
    'pytest.Skipped': 'skip',
    'pytest.XFailed': 'xfail',
    'unittest.skip': 'unittest-skip',
    'unittest.skipIf': 'unittest-skip',
    'unittest.skipUnless': 'unittest-skip',
    'unittest.expectedFailure': 'expectedFailure',
    'unittest.SkipTest': 'SkipTest',
}
# The exception classes among SILENCES: a site only where raised or derived from.
_EXCEPTIONS = frozenset(('pytest.skip.Exception', 'pytest.xfail.Exception', 'pytest.Skipped',
                         'pytest.XFailed', 'unittest.SkipTest'))
# What catching each exception class ends: the calls and raises that throw it.
_SKIPPED = frozenset(('pytest.skip', 'pytest.importorskip', 'pytest.skip.Exception',
                      'pytest.Skipped'))
_XFAILED = frozenset(('pytest.xfail', 'pytest.xfail.Exception', 'pytest.XFailed'))
_CAUGHT_BY = {'pytest.skip.Exception': _SKIPPED, 'pytest.Skipped': _SKIPPED,
              'pytest.xfail.Exception': _XFAILED, 'pytest.XFailed': _XFAILED,
              'unittest.SkipTest': frozenset(('unittest.SkipTest', 'skipTest'))}
# Names that `from pytest import *` brings in.
_PYTEST_STAR = ('mark', 'skip', 'xfail', 'importorskip', 'param')
# The silences among what `from unittest import *` brings in.
_UNITTEST_STAR = ('skip', 'skipIf', 'skipUnless', 'expectedFailure', 'SkipTest')
# The last name of every spelling in SILENCES (plus ``skipTest``): a silence is always
# written on a line that holds one of them or a local name bound to one.
_SILENCE_WORDS = (
    'skip', 'skipif', 'xfail', 'importorskip', 'skipIf', 'skipUnless', 'expectedFailure',
    'SkipTest', 'skipTest', 'Exception', 'Skipped', 'XFailed', '__test__', 'parametrize',
)
# ``request.node.add_marker("xfail")``: a marker added by name at run time.
_MARKER_ADDERS = ('add_marker', 'applymarker')
_MARKERS_BY_NAME = {'skip': 'skip', 'skipif': 'skipif', 'xfail': 'xfail'}
# A class's set-up methods (unittest's and pytest's): a silence there silences every test
# of the class, as a class-level marker does.
_SET_UP_METHODS = frozenset(('setUp', 'asyncSetUp', 'setUpClass', 'setup_method',
                             'setup_class'))
# A silence that takes no reason carries its freeze id in a comment on its line.
_REASONLESS = ('expectedFailure',)
# Calls that build a decorator: ``xfail_arm = pytest.mark.xfail(reason=...)`` silences
# nothing until ``@xfail_arm`` is applied, and then silences that test.
_DECORATOR_FACTORIES = ('unittest.skip', 'unittest.skipIf', 'unittest.skipUnless')


class ScanError(Exception):
    """A test file that cannot be read as Python; reported, never ignored."""

    def __init__(self, line: int, col: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.col = col
        self.message = message


class Silence(FrozenRecord):
    __slots__ = ('line', 'col', 'kind', 'freeze_ids', 'targets', 'scope', 'code', 'node',
                 'call', 'owner')
    _uncompared = ('node', 'call', 'owner')
    line: int
    col: int
    kind: str
    freeze_ids: tuple[str, ...]
    targets: tuple[str, ...]  # identities of the tests it silences
    scope: str  # 'test', 'class' or 'module'
    code: str  # the spelling, for messages
    # The syntax it was found in, for the baseline digest and environment conditions:
    # the node recorded, and the call carrying its arguments (condition, reason), if any.
    node: ast.AST | None
    call: ast.Call | None
    # For a class-level silence, the class (``Outer::Inner``): it also silences the tests
    # the class inherits, which its file does not list under it.
    owner: str

    def __init__(self, line: int, col: int, kind: str, freeze_ids: tuple[str, ...],
                 targets: tuple[str, ...], scope: str, code: str,
                 node: ast.AST | None = None, call: ast.Call | None = None,
                 owner: str = '') -> None:
        self._set(line=line, col=col, kind=kind, freeze_ids=freeze_ids, targets=targets,
                  scope=scope, code=code, node=node, call=call, owner=owner)


class TestFunction(FrozenRecord):
    __slots__ = ('identity', 'line', 'does_something', 'uses_given')
    identity: str  # Class::function, without the file path
    line: int
    does_something: bool  # an assert, a call, a raise or an import before any return (rule 31)
    uses_given: bool

    def __init__(self, identity: str, line: int, does_something: bool, uses_given: bool
                 ) -> None:
        self._set(identity=identity, line=line, does_something=does_something,
                  uses_given=uses_given)


class ScannedFile(Record):
    __slots__ = ('silences', 'tests')
    silences: list[Silence]
    tests: list[TestFunction]

    def __init__(self, silences: list[Silence] | None = None,
                 tests: list[TestFunction] | None = None) -> None:
        self.silences = [] if silences is None else silences
        self.tests = [] if tests is None else tests


def source_text(source: bytes) -> str:
    """The text Python reads: the declared codec when rule 36 lets it through (latin-1,
    cp1252), UTF-8 otherwise; undecodable bytes replaced (the parse reports them)."""
    from oracle_guard.reading.silence_prefilter import declared_codec

    codec = declared_codec(source)
    if codec is not None:
        try:
            return source.decode(codec, 'replace')
        except LookupError:
            pass
    return source.decode('utf-8', 'replace')


def parse_python(source: bytes, path: str = '<test>') -> ast.Module:
    if source.startswith(b'\xef\xbb\xbf'):
        source = source[3:]
    if b'\0' in source:
        raise ScanError(1, 1, 'contains NUL bytes; not a Python source file')
    try:
        text = source.decode('utf-8')
    except UnicodeDecodeError as exc:
        # PEP 263 coding cookies are honoured by compile() on bytes; try that first.
        import re

        if not re.search(rb'^[ \t\f]*#.*?coding[:=]', source[:400], re.M):
            line = source.count(b'\n', 0, exc.start) + 1
            raise ScanError(line, 1, 'is not valid UTF-8 and declares no encoding') from None
        text = None
    # Syntax trees hold no reference cycles, yet building one of a big file triggers the
    # cyclic collector over and over: about a fifth of the parse time on real suites.
    collecting = gc.isenabled()
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # SyntaxWarning for odd escapes is not ours
            return ast.parse(source if text is None else text, filename=path)
    except SyntaxError as exc:
        raise ScanError(exc.lineno or 1, exc.offset or 1,
                        f'cannot be parsed as Python: {exc.msg}') from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ScanError(1, 1, f'cannot be parsed as Python: {exc}') from None
    finally:
        if collecting:
            gc.enable()


# The dotted-name form of a helper module under the tests roots, by its path
# (``reading/helper_modules``): no module name has a colon or a slash.
HELPER = 'oracle-guard-helper:'
# A class of a helper module whose attributes pass a silence on: HELPER + path + CLASS_IN +
# the class's name.
CLASS_IN = '::class:'


class ImportAliases:
    """Local name -> dotted name of what it refers to, from imports and assignments.

    With ``helpers`` (a ``reading.helper_modules`` view of the importing file), a name
    imported from a helper module under the tests roots means what that module binds it
    to (rule 14: ``from tests.harness import skip`` after ``skip = unittest.skip`` there
    is ``unittest.skip``); without it, such a name is ``tests.harness.skip``."""

    def __init__(self, tree: ast.Module, helpers=None) -> None:  # type: ignore[no-untyped-def]
        self.names: dict[str, str] = {}
        # name -> the call it is bound to, for marks named at module or class level
        self.named_marks: dict[str, ast.Call] = {}
        self.helpers = helpers
        # `import tests.harness` (no `as`): dotted module name -> the helper's path
        self.helper_modules: dict[str, str] = {}
        self.uses_helpers = False  # a name was bound through a helper module
        assignments = []
        statements = all_statements(tree)
        owner_class = {id(item): node.name for node in statements
                       if isinstance(node, ast.ClassDef) for item in node.body}
        for node in statements:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if helpers is not None and self._import_helper(alias):
                        continue
                    if alias.asname:
                        self.names[alias.asname] = _canonical(alias.name)
                    else:
                        top = alias.name.split('.')[0]
                        self.names[top] = top
            elif isinstance(node, ast.ImportFrom) and helpers is not None and \
                    (node.level or node.module):
                self._from_helper(node)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name == '*':
                        self._runner_star(node.module)
                        continue
                    self.names[alias.asname or alias.name] = _canonical(
                        f'{node.module}.{alias.name}',
                    )
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                assignments.append(node)
        # `m = pytest.mark`, then `s = m.skip`: resolve chains of plain re-bindings.
        for _ in range(3):
            changed = False
            for node in assignments:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = self.resolve(node.value)
                if value is None:
                    continue
                for target in targets:
                    if isinstance(target, ast.Name) and self.names.get(target.id) != value:
                        self.names[target.id] = value
                        changed = True
            if not changed:
                break
        # `class H: later = unittest.skip`, then `@H.later(...)` here or in a module that
        # imports H: the class's attribute under the dotted name `H.later`, so a silence kept
        # on a class is still seen.
        for node in assignments:
            owner = owner_class.get(id(node))
            if owner is None:
                continue
            value = self.resolve(node.value)
            if value is None or not (is_runner_object(value) or value.startswith(HELPER)):
                continue
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(target, ast.Name):
                    self.names[f'{owner}.{target.id}'] = value
        for node in _outside_functions(tree):
            if _is_named_mark(node, self):
                self.named_marks[node.targets[0].id] = node.value  # type: ignore[attr-defined]

    def _runner_star(self, module: str) -> None:
        """``from pytest import *`` and friends: the silences a star import of a runner
        module binds (``from unittest import *``, in a test or a helper), which no name spells."""
        if module == 'pytest':
            for name in _PYTEST_STAR:
                self.names.setdefault(name, f'pytest.{name}')
        elif module in ('unittest', 'unittest.case'):  # in unittest's __all__ since 3.1
            for name in _UNITTEST_STAR:
                self.names.setdefault(name, f'unittest.{name}')
        elif module.startswith('_pytest.'):
            # No _pytest module declares __all__ but _pytest.mark (MARK_GEN); the outcome
            # functions are imported into many of them (_pytest.python has skip): bind what
            # any may bring in.
            for name in (*_PYTEST_OUTCOMES, 'MARK_GEN'):
                self.names.setdefault(name, _canonical(f'{module}.{name}'))

    def _import_helper(self, alias: ast.alias) -> bool:
        """``import tests.harness [as h]`` of a helper module: bound to its path."""
        path = self.helpers.module(alias.name, 0)
        if path is None:
            return False
        self.uses_helpers = True
        if alias.asname or '.' not in alias.name:
            self.names[alias.asname or alias.name] = HELPER + path
        else:
            top = alias.name.split('.')[0]
            self.names[top] = top
            self.helper_modules[alias.name] = path
        return True

    def _from_helper(self, node: ast.ImportFrom) -> None:
        """``from M import n`` (relative too) where M, or M.n, is a helper module."""
        helpers = self.helpers
        base = helpers.module(node.module, node.level)
        if base is not None:  # whatever it binds now: what the helper says may change
            self.uses_helpers = True
        for alias in node.names:
            if alias.name == '*':
                if base is not None:
                    self.uses_helpers = True
                    self.names.update(helpers.star(base))
                elif node.module and not node.level:
                    self._runner_star(node.module)
                continue
            target = helpers.export(base, alias.name) if base is not None else None
            if target is None and base is not None and helpers.owns(base, alias.name):
                target = f'{HELPER}{base}{CLASS_IN}{alias.name}'  # a class, its members kept
            if target is None:
                inner = f'{node.module}.{alias.name}' if node.module else alias.name
                sub = helpers.module(inner, node.level)
                target = None if sub is None else HELPER + sub
            if target is not None:
                self.uses_helpers = True
                self.names[alias.asname or alias.name] = target
            elif node.module and not node.level:
                self.names[alias.asname or alias.name] = _canonical(
                    f'{node.module}.{alias.name}')

    def _member(self, base: str, attr: str) -> str:
        """``base.attr``: the public spelling, or what a helper module binds ``attr`` to."""
        if self.helpers is not None:
            if base.startswith(HELPER):
                path, owner = base[len(HELPER):], ''
                if CLASS_IN in path:
                    path, _, owner = path.rpartition(CLASS_IN)
                    return self.helpers.export(path, f'{owner}.{attr}') or f'{base}.{attr}'
                found = self.helpers.export(path, attr)
                if found is None and self.helpers.owns(path, attr):
                    return f'{base}{CLASS_IN}{attr}'
                return found or f'{base}.{attr}'
            name = f'{base}.{attr}'
            if name in self.helper_modules:
                return HELPER + self.helper_modules[name]
        return _canonical(f'{base}.{attr}')

    def resolve(self, node: ast.AST) -> str | None:
        """``pt.mark.skip`` -> ``pytest.mark.skip`` when ``pt`` is pytest."""
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name):
                member = self.names.get(f'{node.value.id}.{node.attr}')  # a class attribute
                if member is not None:
                    return member
            base = self.resolve(node.value)
            return self._member(base, node.attr) if base else None
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[-1], ast.Constant) \
                and isinstance(node.args[-1].value, str):
            # Indirection that still names its target: __import__('pytest'),
            # importlib.import_module('pytest'), getattr(pytest.mark, 'skip').
            func = node.func
            text = node.args[-1].value
            if isinstance(func, ast.Name) and func.id == '__import__' and \
                    func.id not in self.names and len(node.args) == 1:
                return text.split('.')[0]
            if self.resolve(func) == 'importlib.import_module' and len(node.args) == 1:
                return _canonical(text)
            if isinstance(func, ast.Name) and func.id == 'getattr' and \
                    func.id not in self.names and len(node.args) == 2:
                base = self.resolve(node.args[0])
                return self._member(base, text) if base else None
        return None


def all_statements(tree: ast.Module) -> list[ast.stmt]:
    """Every statement at any depth; imports and assignments never hide in expressions.

    Walking statement lists only, not every expression node, is what keeps alias
    collection cheap on large test files (``ast.walk`` visits ten times as many nodes).
    """
    found: list[ast.stmt] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        for name in ('body', 'orelse', 'finalbody', 'handlers', 'cases'):
            block = getattr(node, name, None)
            if isinstance(block, list):
                for child in block:
                    if isinstance(child, ast.stmt):
                        found.append(child)
                    todo.append(child)  # an except handler or match case holds a body
    return found


def _outside_functions(tree: ast.Module) -> list[ast.AST]:
    """Module- and class-level nodes, without descending into function bodies."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                found.append(child)
                todo.append(child)
    return found


def _is_named_mark(node: ast.AST, aliases: ImportAliases) -> bool:
    """``name = pytest.mark.xfail(...)``: a silence waiting to be applied by name."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)):
        return False
    if node.targets[0].id == 'pytestmark':  # applied to the module or class right here
        return False
    name = aliases.resolve(node.value.func) or ''
    return name in SILENCES and (name.startswith('pytest.mark.') or
                                 name in _DECORATOR_FACTORIES)


# pytest's outcome functions and exceptions, re-exported by many ``_pytest`` modules
# (``_pytest.python.skip``, ``_pytest.runner.Skipped``): under any ``_pytest.*`` module
# they mean the public name. ``MARK_GEN`` is the object ``pytest.mark`` is.
_PYTEST_OUTCOMES = frozenset(('skip', 'xfail', 'importorskip', 'Skipped', 'XFailed'))


def _canonical(name: str) -> str:
    if name.startswith('_pytest.'):
        parts = name.split('.')
        for i, part in enumerate(parts[1:], 1):
            if part == 'MARK_GEN':
                return '.'.join(('pytest.mark', *parts[i + 1:]))
            if part in _PYTEST_OUTCOMES:
                return '.'.join(('pytest', *parts[i:]))
    for prefix, replacement in _CANONICAL_PREFIXES:
        if name.startswith(prefix):
            return replacement + name[len(prefix):]
    return name


def _is_test_name(name: str) -> bool:
    return name.startswith('test')


def _class_tests(cls: ast.ClassDef, prefix: str) -> list[tuple[str, ast.AST]]:
    found = []
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_test_name(item.name):
            found.append((f'{prefix}{cls.name}::{item.name}', item))
        elif isinstance(item, ast.ClassDef):
            found.extend(_class_tests(item, f'{prefix}{cls.name}::'))
    return found


def test_functions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """(identity, node) of every test pytest or unittest collects, in if/try/with too."""
    found: list[tuple[str, ast.AST]] = []
    for node in module_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_test_name(node.name):
            found.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            found.extend(_class_tests(node, ''))
    return found


def _acts(node: ast.AST) -> bool:
    """An assert, a call, a raise, an await or an import somewhere below ``node``: an
    import that raises fails the test (a test of what a module exposes imports it)."""
    return any(isinstance(sub, (ast.Assert, ast.Call, ast.Raise, ast.Await, ast.Import,
                                ast.ImportFrom))
               for sub in ast.walk(node))


def _does_something(func: ast.AST, aliases: ImportAliases) -> tuple[bool, bool]:
    """(the body asserts, calls, raises or imports something; the test uses @given).

    A body of ``pass``, ``...`` or a docstring does nothing, and neither does whatever
    follows a ``return`` at the top of the body (rule 31): ``@given`` alone is not a test.
    """
    uses_given = any(
        (aliases.resolve(d.func if isinstance(d, ast.Call) else d) or '') == 'hypothesis.given'
        for d in func.decorator_list  # type: ignore[attr-defined]
    )
    for stmt in func.body:  # type: ignore[attr-defined]
        if isinstance(stmt, ast.Return):
            return stmt.value is not None and _acts(stmt.value), uses_given
        if _acts(stmt):
            return True, uses_given
    return False, uses_given


def reason_ids(call: ast.Call | None, node: ast.AST, lines: list[str], kind: str) -> tuple[str, ...]:
    ids: list[str] = []
    if call is not None:
        for arg in [*call.args, *(k.value for k in call.keywords)]:
            for sub in ast.walk(arg):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    ids.extend(FREEZE_ID.findall(sub.value))
    if kind in _REASONLESS:
        first, last = node.lineno, getattr(node, 'end_lineno', node.lineno) or node.lineno
        for text in lines[first - 1:last]:
            hash_at = text.find('#')
            if hash_at != -1:
                ids.extend(FREEZE_ID.findall(text[hash_at:]))
    return tuple(dict.fromkeys(ids))


class _SilenceFinder(ast.NodeVisitor):
    def __init__(self, aliases: ImportAliases, source_text: str, module_tests: list[str]) -> None:
        lines = source_text.splitlines()
        self.aliases = aliases
        self.lines = lines
        self.hit_lines = _hit_lines(source_text, aliases)
        self.module_tests = module_tests
        self.classes: list[tuple[ast.ClassDef, str]] = []  # (class, its Class:: prefix)
        self.function: str | None = None  # identity of the enclosing test-level function
        self.set_up = False  # that function is a class's set-up method (setUp, setup_method)
        self.decorating: str | None = None  # the class whose decorators are being read
        self.decorated: tuple[str, ...] | None = None  # targets while inside decorators
        self.silences: list[Silence] = []
        self.caught: frozenset[str] = frozenset()  # spellings a surrounding handler catches
        self.raising = False  # inside the exception of a `raise`
        self.in_bases = False  # inside the base classes of a class statement

    def visit(self, node: ast.AST) -> None:
        # A statement on no line that names a silence cannot hold one: skip its subtree.
        first = getattr(node, 'lineno', None)
        if first is not None:
            for deco in getattr(node, 'decorator_list', ()):  # decorators precede `def`
                first = min(first, deco.lineno)
            at = bisect.bisect_left(self.hit_lines, first)
            if at == len(self.hit_lines) or \
                    self.hit_lines[at] > (getattr(node, 'end_lineno', None) or first):
                return
        super().visit(node)

    # -- where are we ------------------------------------------------------------------
    def _class_targets(self) -> tuple[str, ...]:
        cls, prefix = self.classes[-1]
        return tuple(identity for identity, _ in _class_tests(cls, prefix))

    def _targets(self) -> tuple[tuple[str, ...], str]:
        if self.decorated is not None:
            return self.decorated, 'test' if len(self.decorated) == 1 else 'class'
        if self.function is not None:
            if self.set_up and self.classes:  # it runs before each test of the class
                return self._class_targets(), 'class'
            return (self.function,), 'test'
        if self.classes:
            return self._class_targets(), 'class'
        return tuple(self.module_tests), 'module'

    def _record(self, node: ast.AST, kind: str, call: ast.Call | None, spelling: str) -> None:
        if spelling in self.caught:
            return  # raised inside `pytest.raises(pytest.skip.Exception)`: it skips nothing
        targets, scope = self._targets()
        owner = ''
        if self.decorated is not None and self.decorating is not None:
            owner = self.decorating  # a class decorator, however many tests it lists
        elif scope == 'class' and self.classes and (self.function is None or self.set_up):
            owner = self.classes[-1][1] + self.classes[-1][0].name
        self.silences.append(Silence(
            line=node.lineno, col=node.col_offset + 1, kind=kind,  # type: ignore[attr-defined]
            freeze_ids=reason_ids(call, node, self.lines, kind),
            targets=targets, scope=scope, code=spelling, node=node, call=call, owner=owner,
        ))

    # -- scopes --------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        prefix = self.classes[-1][1] + self.classes[-1][0].name + '::' if self.classes else ''
        if self.function is None:
            saved = self.decorated
            self.decorated = tuple(i for i, _ in _class_tests(node, prefix))
            saved_class, self.decorating = self.decorating, prefix + node.name
            for deco in node.decorator_list:
                self.visit(deco)
            self.decorated, self.decorating = saved, saved_class
            saved_bases, self.in_bases = self.in_bases, True
            for base in [*node.bases, *node.keywords]:
                self.visit(base)
            self.in_bases = saved_bases
            self.classes.append((node, prefix))
            for stmt in node.body:
                self.visit(stmt)
            self.classes.pop()
        else:  # a class inside a test function belongs to that test
            self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if self.function is not None:
            self.generic_visit(node)
            return
        prefix = self.classes[-1][1] + self.classes[-1][0].name + '::' if self.classes else ''
        identity = prefix + node.name
        saved = self.decorated
        self.decorated = (identity,)
        for deco in node.decorator_list:
            self.visit(deco)
        self.decorated = saved
        self.visit(node.args)
        if node.returns:
            self.visit(node.returns)
        self.function = identity
        self.set_up = bool(self.classes) and node.name in _SET_UP_METHODS
        for stmt in node.body:
            self.visit(stmt)
        self.function = None
        self.set_up = False

    visit_AsyncFunctionDef = visit_FunctionDef

    # -- the silences themselves ---------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        pass

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        pass

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        # `except SkipTest:` catches a silence; it is not one.
        for stmt in node.body:
            self.visit(stmt)

    def _not_collected(self, node: ast.Assign) -> bool:
        """``__test__ = False`` (module, class) or ``test_x.__test__ = False``: pytest
        and unittest loaders do not collect the test at all, no skip word needed."""
        if isinstance(node.value, ast.Constant) and node.value.value:
            return False  # `__test__ = True` collects
        for target in node.targets:
            if isinstance(target, ast.Name) and target.id == '__test__':
                targets, scope = self._targets()
            elif isinstance(target, ast.Attribute) and target.attr == '__test__':
                owner = dotted_name(target.value)
                if owner is None:
                    continue
                prefix = self.classes[-1][1] + self.classes[-1][0].name + '::' \
                    if self.classes and self.function is None else ''
                targets, scope = (f'{prefix}{owner.replace(".", "::")}',), 'test'
            else:
                continue
            self.silences.append(Silence(
                line=node.lineno, col=node.col_offset + 1, kind='skip',
                freeze_ids=reason_ids(None, node, self.lines, 'expectedFailure'),
                targets=targets, scope=scope, code='__test__ = False (not collected)',
                node=node,
            ))
            return True
        return False

    def visit_Assign(self, node: ast.Assign) -> None:
        if self._not_collected(node):
            return
        # `s = pytest.mark.skip` only names the marker; using `s` is the silence.
        # `pytestmark = pytest.mark.skip` is the silence itself, though.
        # In a module that defines no test (tests/helpers.py, a conftest), such a binding
        # is exported for other modules to apply, where the scanner cannot follow it: it
        # is a silence of its own, at the binding.
        exported = not self.module_tests and self.function is None and not self.classes
        if all(isinstance(t, ast.Name) and t.id != 'pytestmark' for t in node.targets) and \
                self.aliases.resolve(node.value) in SILENCES:
            if exported:
                name = self.aliases.resolve(node.value) or ''
                self._record(node, SILENCES[name], None, f'{name} (exported as '
                             f'{node.targets[0].id})')  # type: ignore[attr-defined]
            return
        # `xfail_arm = pytest.mark.xfail(...)` outside a test: recorded where it is applied.
        if self.function is None and isinstance(node.value, ast.Call) and \
                self.aliases.named_marks.get(getattr(node.targets[0], 'id', '')) is node.value:
            if exported:
                name = self.aliases.resolve(node.value.func) or ''
                self._record(node.value, SILENCES[name], node.value,
                             f'{name} (exported as {node.targets[0].id})')  # type: ignore[attr-defined]
            for arg in [*node.value.args, *node.value.keywords]:
                self.visit(arg)
            return
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.aliases.resolve(node.func)
        if name == 'pytest.mark.parametrize' and len(node.args) >= 2 and \
                isinstance(node.args[1], (ast.List, ast.Tuple)) and not node.args[1].elts:
            # An empty parameter set: pytest skips the test ("got empty parameter set").
            self._record(node, 'skip', node, 'parametrize with an empty parameter set')
            return
        whole = self.aliases.resolve(node)  # `@getattr(pytest.mark, "skip")`
        if whole in SILENCES:
            self._record(node, SILENCES[whole], None, whole)
            return
        if name in SILENCES:
            self._record(node, SILENCES[name], node, name)
            for arg in [*node.args, *node.keywords]:
                self.visit(arg)
            return
        if isinstance(node.func, ast.Attribute) and node.func.attr in _MARKER_ADDERS and \
                node.args and isinstance(node.args[0], ast.Constant) and \
                node.args[0].value in _MARKERS_BY_NAME:
            kind = _MARKERS_BY_NAME[node.args[0].value]
            self._record(node, kind, node, f'{node.func.attr}({node.args[0].value!r})')
            return
        if isinstance(node.func, ast.Attribute) and node.func.attr == 'skipTest':
            self._record(node, 'skipTest', node, 'skipTest')
            self.visit(node.func.value)
            for arg in [*node.args, *node.keywords]:
                self.visit(arg)
            return
        self.generic_visit(node)

    # -- a skip raised where the test itself catches it -----------------------------------
    def _catches(self, node: ast.AST | None) -> frozenset[str]:
        """The outcome spellings an ``except`` type or ``pytest.raises`` argument catches."""
        if node is None:
            return frozenset()
        if isinstance(node, ast.Tuple):
            return frozenset(s for elt in node.elts for s in self._catches(elt))
        return _CAUGHT_BY.get(self.aliases.resolve(node) or '', frozenset())

    def _visit_caught(self, body: list[ast.stmt], caught: frozenset[str]) -> None:
        saved, self.caught = self.caught, self.caught | caught
        for stmt in body:
            self.visit(stmt)
        self.caught = saved

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        caught: frozenset[str] = frozenset()
        for item in node.items:
            self.visit(item)
            expr = item.context_expr
            if isinstance(expr, ast.Call) and expr.args and \
                    self.aliases.resolve(expr.func) == 'pytest.raises':
                caught |= self._catches(expr.args[0])
        self._visit_caught(node.body, caught)

    visit_AsyncWith = visit_With

    def visit_Try(self, node: ast.Try) -> None:
        # A handler that re-raises lets the silence through; one that does not ends it.
        caught = frozenset(s for h in node.handlers
                           if not any(isinstance(n, ast.Raise) for b in h.body for n in ast.walk(b))
                           for s in self._catches(h.type))
        self._visit_caught(node.body, caught)
        for block in (node.handlers, node.orelse, node.finalbody):
            for child in block:
                self.visit(child)

    visit_TryStar = visit_Try

    def visit_Raise(self, node: ast.Raise) -> None:
        saved, self.raising = self.raising, True
        if node.exc is not None:
            self.visit(node.exc)
        self.raising = saved
        if node.cause is not None:
            self.visit(node.cause)

    def _reference(self, node: ast.Name | ast.Attribute) -> bool:
        name = self.aliases.resolve(node)
        if name in _EXCEPTIONS and not self.raising and not self.in_bases:
            # `pytest.raises(pytest.skip.Exception)`, `isinstance(e, SkipTest)`: naming the
            # exception class skips nothing; raising it, or deriving from it, does.
            return True
        if name in SILENCES:
            self._record(node, SILENCES[name], None, name)
            return True
        return False

    def visit_Name(self, node: ast.Name) -> None:
        call = self.aliases.named_marks.get(node.id)
        if call is not None and isinstance(node.ctx, ast.Load):
            name = self.aliases.resolve(call.func) or ''
            self._record(node, SILENCES[name], call, f'{name} (as {node.id})')
            return
        self._reference(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not self._reference(node):
            self.generic_visit(node)


def _hit_lines(text: str, aliases: ImportAliases) -> list[int]:
    """Line numbers that mention a silence word or a local name bound to a silence."""
    words = set(_SILENCE_WORDS)
    words.update(n for n, target in aliases.names.items()
                 if target in SILENCES or target.startswith(HELPER))
    words.update(aliases.named_marks)
    return _word_lines(text, words)


def _word_lines(text: str, words: Iterable[str]) -> list[int]:
    """Line numbers on which one of ``words`` is written as a whole word."""
    import re
    import unicodedata

    pattern = re.compile(r'\b(?:' + '|'.join(map(re.escape, sorted(words))) + r')\b')
    if not text.isascii():  # identifiers are NFKC-normalised by the parser
        text = unicodedata.normalize('NFKC', text)
    # Count lines the way the parser does (\r\n, \r or \n), not like str.splitlines().
    if '\r' in text:
        text = text.replace('\r\n', '\n').replace('\r', '\n')
    hits, line, pos = [], 1, 0
    for match in pattern.finditer(text):
        line += text.count('\n', pos, match.start())
        pos = match.start()
        if not hits or hits[-1] != line:
            hits.append(line)
    return hits


def scan_silences(tree: ast.Module, source_text: str,
                  aliases: ImportAliases | None = None, helpers=None,  # type: ignore[no-untyped-def]
                  ) -> list[Silence]:
    """``aliases``: the file's ``ImportAliases``, when the caller built them already (one
    collection per file serves every rule); ``helpers``: the file's view of the helper
    modules under the tests roots, for names imported from them."""
    try:
        if aliases is None:
            aliases = ImportAliases(tree, helpers)
        module_tests = [identity for identity, _ in test_functions(tree)]
        finder = _SilenceFinder(aliases, source_text, module_tests)
        finder.visit(tree)
    except RecursionError:  # valid Python nested deeper than a tree walk can follow
        raise ScanError(1, 1, 'is nested too deeply to be scanned') from None
    return finder.silences


def _switched_off(tree: ast.Module) -> tuple[bool, set[str]]:
    """(whole module off, identities off): what ``__test__ = False`` and a test name
    rebound or deleted later at module level keep pytest from collecting."""
    def false(value: ast.AST | None) -> bool:
        return not (isinstance(value, ast.Constant) and value.value)

    module_off, off = False, set()
    defined: set[str] = set()
    for node in module_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
            if isinstance(node, ast.ClassDef) and any(
                    isinstance(s, ast.Assign) and false(s.value) and
                    any(isinstance(t, ast.Name) and t.id == '__test__' for t in s.targets)
                    for s in node.body):
                off.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == '__test__' and false(node.value):
                    module_off = True
                elif isinstance(target, ast.Name) and target.id in defined:
                    off.add(target.id)  # `test_p = None` after the def
                elif isinstance(target, ast.Attribute) and target.attr == '__test__' and \
                        false(node.value) and isinstance(target.value, ast.Name):
                    off.add(target.value.id)
        elif isinstance(node, ast.Delete):
            off.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return module_off, off


def scan_tests(tree: ast.Module) -> list[TestFunction]:
    """The tests pytest would collect from a module, and whether each does something."""
    try:
        module_off, off = _switched_off(tree)
        if module_off:
            return []
        aliases = ImportAliases(tree)
        tests = []
        for identity, node in test_functions(tree):
            if identity.split('::', 1)[0] in off:
                continue
            does, given = _does_something(node, aliases)
            tests.append(TestFunction(identity, node.lineno, does, given))  # type: ignore[attr-defined]
    except RecursionError:
        raise ScanError(1, 1, 'is nested too deeply to be scanned') from None
    return tests


def scan_file(source: bytes, path: str = '<test>') -> ScannedFile:
    """Silences and tests of one file; raises ScanError if it is not Python."""
    tree = parse_python(source, path)
    text = source_text(source)
    return ScannedFile(silences=scan_silences(tree, text), tests=scan_tests(tree))


def dotted_name(node: ast.AST) -> str | None:
    """``TestX.test_y`` -> ``'TestX.test_y'``; None for anything but names and attributes."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted_name(node.value)
        return f'{base}.{node.attr}' if base else None
    return None


def silences_naming(view, roots: tuple[str, ...], freeze_ids, is_test_code, helpers=None,
                    ) -> list[tuple[str, Silence, str]]:  # type: ignore[no-untyped-def]
    """(path, silence, id) for every silence in tracked test code that names one of
    ``freeze_ids``: one ``git grep`` for the ids over the test roots, then a parse of the
    files it names only (rule 29: a ledger-only change leaves those files untouched).
    ``helpers``: the helper modules of ``view`` (``reading/helper_modules``)."""
    wanted = set(freeze_ids)
    if not wanted:
        return []
    found = []
    for path in view.grep(sorted(wanted), roots):
        if not is_test_code(path):
            continue
        source = view.read(path)
        if source is None:
            continue
        try:
            silences = scan_silences(parse_python(source, path), source_text(source),
                                     helpers=None if helpers is None else helpers.seen_from(path))
        except ScanError:
            continue  # check-named-freezes reports the file itself (OG307)
        for silence in silences:
            for freeze_id in silence.freeze_ids:
                if freeze_id in wanted:
                    found.append((path, silence, freeze_id))
    return found


# -- what is reviewed must be what runs (rule 35) -------------------------------------

def _is_pytest_object(name: str | None) -> bool:
    return name is not None and (name in ('pytest', '_pytest') or
                                 name.startswith(('pytest.', '_pytest.')))


_RUNNER_ROOTS = ('pytest', '_pytest', 'unittest')


def is_runner_object(name: str | None) -> bool:
    """``pytest``, ``_pytest``, ``unittest`` or a name inside one of them."""
    return name is not None and (name in _RUNNER_ROOTS or
                                 name.startswith(tuple(f'{r}.' for r in _RUNNER_ROOTS)))


_is_runner_object = is_runner_object


def _literal(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


_NAME_TABLES = ('globals()', 'locals()', 'vars()', 'sys.modules')


def _namespace_of(node: ast.AST, aliases: ImportAliases) -> str | None:
    """What a mapping of names is: ``globals()``, ``vars()``, ``sys.modules`` (a computed key
    may name pytest), or ``vars(pytest.mark)`` / ``pytest.__dict__`` (any key reaches into
    pytest); None for any other expression."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in ('globals', 'locals', 'vars') and node.func.id not in aliases.names:
        if not node.args:
            return f'{node.func.id}()'
        owner = aliases.resolve(node.args[0]) if node.func.id == 'vars' else None
        return f'vars({owner})' if _is_runner_object(owner) else None
    if isinstance(node, ast.Attribute) and node.attr == '__dict__':
        owner = aliases.resolve(node.value)
        return f'{owner}.__dict__' if _is_runner_object(owner) else None
    if aliases.resolve(node) == 'sys.modules':
        return 'sys.modules'
    return None


def _leading_text(node: ast.AST) -> str | None:
    """The literal text a computed string starts with: ``f"numpy.{x}"``, ``"numpy." + x``,
    ``"numpy.%s" % x``, ``"numpy.{}".format(x)``; None when it starts computed."""
    if _literal(node):
        return node.value  # type: ignore[attr-defined]
    if isinstance(node, ast.JoinedStr) and node.values:
        return _leading_text(node.values[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _leading_text(node.left)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        lead = _leading_text(node.left)
        return None if lead is None else lead.split('%', 1)[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == 'format':
        lead = _leading_text(node.func.value)
        return None if lead is None else lead.split('{', 1)[0]
    return None


def _in_pieces(node: ast.AST | None, text: str | None) -> bool:
    """A string literal whose value its own source does not spell: ``"_py" "test"`` or
    ``"\\x73kip"`` is one constant to the parser, and no reader or byte search finds the
    name (rule 35b). Unknown without the source text."""
    if text is None or not _literal(node):
        return False
    segment = ast.get_source_segment(text, node)
    return segment is not None and node.value not in segment  # type: ignore[attr-defined]


def _names_runner(value: str) -> bool:
    return _is_runner_object(value.split('.', 1)[0]) or _is_runner_object(value)


def _cannot_name_runner(node: ast.AST | None) -> bool:
    """Whether a computed name provably names no pytest, _pytest or unittest module or
    global: the module's own ``__name__``, or a literal start that none of them has."""
    if isinstance(node, ast.Name) and node.id == '__name__':
        return True
    lead = _leading_text(node) if node is not None else None
    if not lead:
        return False
    top = lead.split('.', 1)[0]
    return not any(root.startswith(lead) or top == root for root in _RUNNER_ROOTS)


class _ComputedNames:
    """Whether the name an expression computes may be one of pytest's (rule 35b).

    A literal is read as it is (spelled in pieces, ``"_py" "test"``, it is computed: no
    reviewer or byte search finds it). A variable is judged by what the file assigns to it;
    one the file never assigns (a parameter, a loop over data) is not knowable here and is
    left to the verified run, whose audit sees the skip or the missing test it causes.
    Any other expression may name pytest unless its literal start rules that out."""

    def __init__(self, tree: ast.Module, text: str | None, every_node: bool = True) -> None:
        self.text = text
        self.assigned: dict[str, list[ast.AST]] = {}
        # Assignments are statements (``all_statements`` finds them at any depth); only a
        # walrus hides in an expression, and it is spelled ``:=``.
        nodes: Iterable[ast.AST] = ast.walk(tree) if every_node or text is None or \
            ':=' in text else all_statements(tree)
        for node in nodes:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(target.id, []).append(node.value)
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None \
                    and isinstance(node.target, ast.Name):
                self.assigned.setdefault(node.target.id, []).append(node.value)

    def may_name_runner(self, node: ast.AST | None, depth: int = 0) -> bool:
        if node is None or depth > 5:
            return False
        if _literal(node):
            value = node.value  # type: ignore[attr-defined]
            if not _is_runner_object(value.split('.', 1)[0]) and not _is_runner_object(value):
                return False
            # a literal spelled out is read by the other rules; a variable hides it too
            return depth > 0 or (self.text is not None and value not in self.text)
        if isinstance(node, ast.Name):
            return any(self.may_name_runner(v, depth + 1)
                       for v in self.assigned.get(node.id, ()))
        if isinstance(node, ast.Attribute):
            return False  # obj.__module__ and the like: not knowable here
        value = _fold(node)
        if isinstance(value, str):
            return _is_runner_object(value.split('.', 1)[0]) or _is_runner_object(value)
        head = _top_name_parts(node)
        if head is not None:
            # ``app.name + ".migrations"``, ``module + "." + file[:-3]``: the text after
            # the first literal dot is a submodule's; the top-level name is the head's.
            if not head:
                return False  # ".x": a relative name
            if len(head) == 1:
                return self.may_name_runner(head[0], depth + 1)
            if not any(self.carries_text(part) for part in head):
                return False
        elif not self.carries_text(node):
            return False  # built from data only (a helper's return value): not knowable
        return not _cannot_name_runner(node)  # a name assembled from pieces

    def carries_text(self, node: ast.AST | None, depth: int = 0) -> bool:
        """Whether text this file spells may end up in the string ``node`` computes: not a
        key it looks up (``backend["ENGINE"]``), a separator it splits at, a dot or an
        empty string (``root.replace(os.sep, ".")``), nor a helper's return value called
        with data only (``apps.get_app_config(label).name``)."""
        if node is None:
            return False
        if depth > 16:
            return True  # too deep (or a name bound to itself): it may
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, int) and not isinstance(value, bool):
                return True  # chr(95), bytes([95, ...]): a code point is text too
            return isinstance(value, (str, bytes)) and \
                bool(value.strip('.' if isinstance(value, str) else b'.'))
        if isinstance(node, ast.Name):
            return any(self.carries_text(v, depth + 1) for v in self.assigned.get(node.id, ()))
        if isinstance(node, ast.Attribute):
            return False  # obj.name: data, as ``may_name_runner`` has it
        if isinstance(node, ast.Subscript):
            return self.carries_text(node.value, depth + 1)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _PIECE_METHODS:
                return self.carries_text(func.value, depth + 1)
            parts: list[ast.AST] = [*node.args, *(k.value for k in node.keywords)]
            if isinstance(func, ast.Attribute):
                parts.append(func.value)
            return any(self.carries_text(p, depth + 1) for p in parts)
        if isinstance(node, ast.BinOp):
            return self.carries_text(node.left, depth + 1) or \
                self.carries_text(node.right, depth + 1)
        if isinstance(node, ast.FormattedValue):
            return self.carries_text(node.value, depth + 1)
        if isinstance(node, (ast.JoinedStr, ast.BoolOp)):
            return any(self.carries_text(v, depth + 1) for v in node.values)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return any(self.carries_text(e, depth + 1) for e in node.elts)
        if isinstance(node, ast.IfExp):
            return self.carries_text(node.body, depth + 1) or \
                self.carries_text(node.orelse, depth + 1)
        return any(isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes, int))
                   for n in ast.walk(node))


# str methods whose result is made of the owner's characters alone: their arguments are
# separators or characters taken away, never text added.
_PIECE_METHODS = frozenset(('split', 'rsplit', 'splitlines', 'strip', 'lstrip', 'rstrip',
                            'removeprefix', 'removesuffix', 'lower', 'upper', 'casefold',
                            'title', 'capitalize', 'swapcase', 'encode', 'decode'))


def _top_name_parts(node: ast.AST) -> list[ast.AST] | None:
    """The pieces of a concatenated name (``a + "." + b``, ``f"{a}.{b}"``) before the
    first literal piece holding a dot, when that literal starts at the dot: what the
    top-level module name is made of. None when no such piece ends the top-level name."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        parts = _added(node)
    elif isinstance(node, ast.JoinedStr):
        parts = [v.value if isinstance(v, ast.FormattedValue) else v for v in node.values]
    else:
        return None
    for at, part in enumerate(parts):
        if isinstance(part, ast.Constant) and isinstance(part.value, str) and '.' in part.value:
            return parts[:at] if part.value.startswith('.') else None
    return None


def _added(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_added(node.left), *_added(node.right)]
    return [node]


_STR_METHODS = frozenset(('join', 'replace', 'lower', 'upper', 'strip', 'lstrip',
                          'rstrip', 'capitalize', 'casefold', 'title', 'swapcase', 'decode'))


def _fold(node: ast.AST, depth: int = 0) -> object:
    """The value of a constant string expression built from literals only (``"py" + "test"``,
    ``"".join(["py", "test"])``, ``chr(95) + "pytest"``, ``f"{'py'}test"``), else None."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes, int)):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_fold(e, depth + 1) for e in node.elts]
        return None if any(i is None for i in items) else items
    if isinstance(node, ast.JoinedStr):
        parts = [_fold(v, depth + 1) for v in node.values]
        return ''.join(parts) if all(isinstance(p, str) for p in parts) else None  # type: ignore[arg-type]
    if isinstance(node, ast.FormattedValue):
        value = _fold(node.value, depth + 1)
        return value if isinstance(value, str) and node.format_spec is None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod, ast.Mult)):
        left, right = _fold(node.left, depth + 1), _fold(node.right, depth + 1)
        if left is None or right is None:
            return None
        try:
            if isinstance(node.op, ast.Add):
                return left + right  # type: ignore[operator]
            if isinstance(node.op, ast.Mod):
                # only plain %s: a width ("%999999999s") would build a huge string
                import re

                if not isinstance(left, str) or re.search(r'%(?!s|%)', left):
                    return None
                return left % (tuple(right) if isinstance(right, list) else right)
            text, count = (left, right) if isinstance(right, int) else (right, left)
            if not isinstance(count, int) or not isinstance(text, (str, bytes)) or \
                    len(text) * max(count, 0) > 1000:
                return None
            return text * count
        except (TypeError, ValueError, OverflowError, MemoryError):
            return None
    if isinstance(node, ast.Call) and not node.keywords:
        args = [_fold(a, depth + 1) for a in node.args]
        if any(a is None for a in args):
            return None
        try:
            if isinstance(node.func, ast.Name) and node.func.id == 'chr' and len(args) == 1:
                return chr(args[0])  # type: ignore[arg-type]
            if isinstance(node.func, ast.Name) and node.func.id in ('bytes', 'bytearray') and \
                    len(args) == 1 and isinstance(args[0], list) and len(args[0]) <= 1000:
                return bytes(args[0])  # type: ignore[arg-type]  # bytes([95, 112, ...])
            if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS:
                owner = _fold(node.func.value, depth + 1)
                if isinstance(owner, (str, bytes)):
                    result = getattr(owner, node.func.attr)(*args)
                    return result if isinstance(result, (str, bytes)) else None
        except (TypeError, ValueError, OverflowError, IndexError, LookupError):
            return None
    return None


# Rule 35b's words: every site spells one within its own lines (the function it calls or
# the mapping it reads), or a local name bound to one of the objects they name.
_COMPUTE_WORDS = ('getattr', '__import__', 'import_module', 'globals', 'locals', 'vars',
                  '__dict__', 'modules')
_COMPUTE_TARGETS = ('importlib.import_module', 'importlib.__import__', 'builtins.__import__',
                    'sys.modules')


def _compute_words(aliases: ImportAliases) -> list[str]:
    return [*_COMPUTE_WORDS, *(name for name, target in aliases.names.items()
                               if target in _COMPUTE_TARGETS)]


def computed_access(tree: ast.Module, text: str | None = None,
                    aliases: ImportAliases | None = None, *, every_node: bool = False,
                    ) -> list[tuple[int, int, str]]:
    """(line, col, what) of every name of pytest's or unittest's marks, outcomes or
    internals that the source computes instead of spelling (rule 35b): ``getattr`` with a
    non-literal name on a pytest/unittest object, ``import_module``/``__import__`` of a
    computed string, a computed key into ``globals()``/``vars()``/``sys.modules``, and any
    lookup in the namespace of a pytest/unittest object. What is computed cannot be read,
    so a silence or a patch spelled that way would pass unseen. With the source ``text``, a
    pytest/unittest module name spelled in pieces (``"_py" "test"``) counts as computed:
    nothing a reviewer or a byte search looks for is in the file.

    With the ``text``, only the lines that spell a word of a site are walked
    (``walk_lines``), and the file's assignments are collected when a site needs them;
    ``every_node`` walks every node (the reference the fast path is tested against).
    ``aliases``: the file's ``ImportAliases``, when the caller built them already."""
    if aliases is None:
        aliases = ImportAliases(tree)
    every_node = every_node or text is None
    computed: list[_ComputedNames] = []
    found = []

    class _Lazy:
        def may_name_runner(self, node: ast.AST | None) -> bool:
            if not computed:
                computed.append(_ComputedNames(tree, text, every_node))
            return computed[0].may_name_runner(node)

    names = _Lazy()

    def lookup(node: ast.AST, space: str | None, key: ast.AST | None) -> None:
        if space is None:
            return
        if space not in _NAME_TABLES:
            found.append((node.lineno, node.col_offset + 1, f'reads the namespace {space}'))
        elif (names.may_name_runner(key) if not _literal(key) else
              _in_pieces(key, text) and _names_runner(key.value)):  # type: ignore[union-attr]
            # sys.modules["_py" "test"]: one literal to the parser, spelled nowhere
            found.append((node.lineno, node.col_offset + 1,
                          f'looks up a name in {space} that the source does not spell'))

    nodes = ast.walk(tree) if every_node else \
        walk_lines(tree, _word_lines(text, _compute_words(aliases)))  # type: ignore[arg-type]
    for node in nodes:
        if isinstance(node, ast.Call) and node.args:
            func, first = node.func, node.args[0]
            name = aliases.resolve(func)
            plain = isinstance(func, ast.Name) and func.id not in aliases.names
            if plain and func.id == 'getattr' and len(node.args) >= 2 and \
                    (not _literal(node.args[1]) or _in_pieces(node.args[1], text)) and \
                    _is_runner_object(aliases.resolve(first)):
                found.append((node.lineno, node.col_offset + 1,
                              f'getattr of a computed name on {aliases.resolve(first)}'))
            elif ((plain and func.id == '__import__') or
                  name in ('importlib.import_module', 'importlib.__import__',
                           'builtins.__import__')) and names.may_name_runner(first):
                found.append((node.lineno, node.col_offset + 1,
                              'imports a module whose name is computed'))
            elif isinstance(func, ast.Attribute) and func.attr in ('get', 'setdefault', 'pop'):
                lookup(node, _namespace_of(func.value, aliases), first)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            lookup(node, _namespace_of(node.value, aliases), node.slice)
    return sorted(found)


# Rule 35's words: every tampering site spells one within its own lines. An owner that is
# a pytest object is reached from a local name bound to pytest (or to importlib, which
# imports it by name) or from `__import__`; only `setattr`/`delattr` name it in a string,
# and `__code__` needs no owner. (`vars(...)`, `getattr(...)`, `.__dict__` reach their
# object through one of those, so they need no word of their own.)
_TAMPER_WORDS = ('__code__', 'setattr', 'delattr', '__import__')


def _tamper_words(aliases: ImportAliases) -> list[str]:
    return [*_TAMPER_WORDS, *(name for name, target in aliases.names.items()
                              if target.startswith(('pytest', '_pytest', 'importlib')))]


def walk_lines(tree: ast.AST, hit_lines: list[int]) -> list[ast.AST]:
    """The nodes of ``tree`` that ``ast.walk`` yields, except those on lines holding no
    hit: a node is skipped with its subtree when none of its lines (a definition's
    decorators included) is in ``hit_lines``. (Expressions inside f-strings carry their
    real lines from Python 3.9 on: tests/test_scan_fast_path.py has such sites.)"""
    found: list[ast.AST] = []
    todo: list[ast.AST] = [tree]
    count = len(hit_lines)
    while todo:
        node = todo.pop()
        found.append(node)
        for child in ast.iter_child_nodes(node):
            first = getattr(child, 'lineno', None)
            if first is not None:
                for deco in getattr(child, 'decorator_list', ()):
                    first = min(first, deco.lineno)
                at = bisect.bisect_left(hit_lines, first)
                if at == count or hit_lines[at] > (getattr(child, 'end_lineno', None) or first):
                    continue
            todo.append(child)
    return found


def tampering(tree: ast.Module, aliases: ImportAliases | None = None,
              text: str | None = None) -> list[tuple[int, int, str]]:
    """(line, col, what) of every assignment to a function's ``__code__`` or to an
    attribute of a ``pytest``/``_pytest`` object, however reached (rule 35): such a test
    runs code nobody reviews as the test, or changes how pytest runs every test.

    With the file's ``text``, only the lines that spell a word of such a site are walked
    (``walk_lines``); without it, every node (the reference the fast path is tested
    against)."""
    if aliases is None:
        aliases = ImportAliases(tree)
    found = []
    nodes = ast.walk(tree) if text is None else \
        walk_lines(tree, _word_lines(text, _tamper_words(aliases)))
    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if node.attr == '__code__':
                found.append((node.lineno, node.col_offset + 1, 'assigns a function\'s __code__'))
            elif _is_pytest_object(aliases.resolve(node.value)):
                owner = aliases.resolve(node.value)
                found.append((node.lineno, node.col_offset + 1,
                              f'assigns {owner}.{node.attr}, an attribute of pytest'))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)):
            value = node.value
            owner = None
            if isinstance(value, ast.Attribute) and value.attr == '__dict__':
                owner = aliases.resolve(value.value)
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and \
                    value.func.id == 'vars' and value.args:
                owner = aliases.resolve(value.args[0])
            if _is_pytest_object(owner):
                found.append((node.lineno, node.col_offset + 1,
                              f'writes into the namespace of {owner}, a pytest object'))
        elif isinstance(node, ast.Call) and node.args and (
                (isinstance(node.func, ast.Name) and node.func.id in ('setattr', 'delattr')) or
                (isinstance(node.func, ast.Attribute) and
                 node.func.attr in ('setattr', 'delattr'))):
            first = node.args[0]
            owner = first.value if isinstance(first, ast.Constant) and \
                isinstance(first.value, str) else aliases.resolve(first)
            attr = node.args[1] if len(node.args) > 1 else None
            if _is_pytest_object(owner if isinstance(owner, str) else None):
                found.append((node.lineno, node.col_offset + 1,
                              f'patches {owner}, a pytest object'))
            elif isinstance(attr, ast.Constant) and attr.value == '__code__':
                found.append((node.lineno, node.col_offset + 1,
                              'sets a function\'s __code__'))
    return sorted(found)


def identities_of(view: TreeView, paths: Iterable[str]) -> tuple[set[str], list[str]]:
    """(test identities the files define, files that could not be parsed).

    Shared by check-freeze-ledger and the pytest plugin, which asks it of the working tree.
    """
    found: set[str] = set()
    unparsable = []
    for path in paths:
        source = view.read(path)
        if source is None:
            continue
        try:
            tree = parse_python(source, path)
        except ScanError:
            unparsable.append(path)
            continue
        found.update(identity for identity, _ in test_functions(tree))
    return found, unparsable
