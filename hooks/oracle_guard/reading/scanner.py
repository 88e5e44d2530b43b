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
from oracle_guard.reading.import_aliases import HELPER
from oracle_guard.reading.import_aliases import ImportAliases
from oracle_guard.reading.import_aliases import SILENCES
from oracle_guard.reading.source_lines import word_lines

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable

    from oracle_guard.repo.tree_view import TreeView

FREEZE_ID = LazyPattern(r'\bFZ-\d+\b')

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
    return word_lines(text, words)


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
