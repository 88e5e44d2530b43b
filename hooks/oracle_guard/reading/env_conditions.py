"""Environment conditions: a skip that depends only on where the tests run (rules 40, 41).

``@pytest.mark.skipif(sys.platform == "win32", reason=...)`` is not a silence: it skips
on one platform and runs on the others. A condition built only from environment facts
(``sys.platform``, ``sys.version_info``, ``sys.implementation.name``, ``sys.maxsize``,
``os.name``, ``platform.system()``, ``platform.machine()``,
``platform.python_implementation()``), literals, and module-level names of the same file
bound to such expressions is evaluated in every environment of the matrix

    {linux, darwin, win32} x {cpython, pypy} x {32, 64 bit} x every Python 3 minor
    version the project's ``requires-python`` allows.

False in at least one of them: an honest environment skip (rule 40). True in all of
them (``skipif(True)``, ``sys.platform != "nope"``, ``sys.version_info > (2,)``): a
silence in disguise (rule 41). Anything else (an environment variable, an import that
may fail, a name imported from another module) cannot be evaluated here and is an
ordinary silence that needs a freeze.

The same evaluator, given the real interpreter's facts, tells the pytest plugin and the
audit whether the condition held in the run at hand.
"""
from __future__ import annotations

import ast
import itertools
import operator
import re
import sys
from collections.abc import Iterable
from collections.abc import Mapping

from oracle_guard.oracle.records import FrozenRecord

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from oracle_guard.reading.import_aliases import ImportAliases

# The newest Python 3 minor version the matrix knows (3.15 was released in October 2026).
LATEST_MINOR = 15
PLATFORMS = ('linux', 'darwin', 'win32')
IMPLEMENTATIONS = ('cpython', 'pypy')
BITS = (32, 64)

ENVIRONMENT = 'environment'  # false somewhere: an honest environment skip (rule 40)
ALWAYS = 'always'  # true everywhere: a silence in disguise (rule 41)
UNKNOWN = 'unknown'  # not built from environment facts alone: needs a freeze

# platform -> (os.name, platform.system(), {bits: platform.machine()})
_PLATFORM_FACTS = {
    'linux': ('posix', 'Linux', {32: 'i686', 64: 'x86_64'}),
    'darwin': ('posix', 'Darwin', {32: 'i386', 64: 'arm64'}),
    'win32': ('nt', 'Windows', {32: 'x86', 64: 'AMD64'}),
}
_IMPLEMENTATION_NAMES = {'cpython': 'CPython', 'pypy': 'PyPy'}


class VersionInfo(tuple):
    """``sys.version_info`` of a matrix environment: a tuple with named fields."""

    __slots__ = ()
    _fields = ('major', 'minor', 'micro', 'releaselevel', 'serial')

    def __getattr__(self, name: str) -> object:
        if name in self._fields:
            return self[self._fields.index(name)]
        raise AttributeError(name)


class Environment(FrozenRecord):
    """One place tests may run: the facts a condition can ask about."""

    __slots__ = ('platform', 'implementation', 'bits', 'version', 'os_name', 'system',
                 'machine')
    platform: str  # sys.platform
    implementation: str  # sys.implementation.name
    bits: int
    version: tuple[int, int]  # (major, minor)
    os_name: str
    system: str
    machine: str

    def __init__(self, platform: str, implementation: str, bits: int,
                 version: tuple[int, int], os_name: str, system: str, machine: str) -> None:
        self._set(platform=platform, implementation=implementation, bits=bits,
                  version=version, os_name=os_name, system=system, machine=machine)

    @classmethod
    def of_matrix(cls, platform: str, implementation: str, bits: int,
                  minor: int) -> Environment:
        os_name, system, machines = _PLATFORM_FACTS[platform]
        return cls(platform, implementation, bits, (3, minor), os_name, system, machines[bits])

    @classmethod
    def current(cls) -> Environment:
        """The interpreter running now: what the plugin and the audit ask about."""
        import os
        import platform

        return cls(sys.platform, sys.implementation.name, 64 if sys.maxsize > 2**32 else 32,
                   (sys.version_info[0], sys.version_info[1]), os.name, platform.system(),
                   platform.machine())

    def fact(self, name: str) -> object:
        if name == 'sys.platform':
            return self.platform
        if name == 'sys.implementation.name':
            return self.implementation
        if name == 'sys.maxsize':
            return 2**63 - 1 if self.bits == 64 else 2**31 - 1
        if name == 'sys.version_info':
            return VersionInfo((*self.version, 0, 'final', 0))
        if name == 'os.name':
            return self.os_name
        if name == 'platform.system':
            return self.system
        if name == 'platform.machine':
            return self.machine
        if name == 'platform.python_implementation':
            return _IMPLEMENTATION_NAMES.get(self.implementation, self.implementation)
        raise KeyError(name)

    def describe(self) -> str:
        return (f'{self.platform}/{self.implementation}/{self.bits}-bit/'
                f'{self.version[0]}.{self.version[1]}')


VALUE_FACTS = ('sys.platform', 'sys.implementation.name', 'sys.maxsize', 'sys.version_info',
               'os.name')
CALL_FACTS = ('platform.system', 'platform.machine', 'platform.python_implementation')
MODULES = ('sys', 'os', 'platform', 'sys.implementation')


# -- requires-python -> the minor versions of the matrix ----------------------------------

_CLAUSE = re.compile(r'^\s*(~=|===|==|!=|<=|>=|<|>)\s*([0-9][0-9.]*)(\.\*)?\s*$')


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split('.') if part != '')


def _satisfies(version: tuple[int, int, int], op: str, text: str, wildcard: bool) -> bool:
    wanted = _version(text)
    if wildcard or op == '~=':
        prefix = wanted if wildcard else wanted[:-1]
        matches = version[:len(prefix)] == prefix + (0,) * (len(prefix) - len(version))
        if op == '==':
            return matches
        if op == '!=':
            return not matches
        # ~=X.Y[.Z]: >= X.Y[.Z] and the same prefix
        return matches and _satisfies(version, '>=', text, False)
    size = max(len(wanted), len(version))
    a = version + (0,) * (size - len(version))
    b = wanted + (0,) * (size - len(wanted))
    compare = {'==': operator.eq, '===': operator.eq, '!=': operator.ne, '<=': operator.le,
               '>=': operator.ge, '<': operator.lt, '>': operator.gt}[op]
    return bool(compare(a, b))


def python_minors(requires_python: str | None) -> tuple[int, ...]:
    """The Python 3 minor versions (3.0 .. LATEST_MINOR) that ``requires-python`` allows.

    A minor version counts when any of its patch releases is allowed (``>=3.9.2`` keeps
    3.9). No specifier, or one that cannot be read, allows them all.
    """
    everything = tuple(range(LATEST_MINOR + 1))
    if not requires_python or not requires_python.strip():
        return everything
    clauses = []
    for part in requires_python.split(','):
        match = _CLAUSE.match(part)
        if match is None:
            return everything
        clauses.append((match.group(1), match.group(2), bool(match.group(3))))
    allowed = tuple(
        minor for minor in everything
        if any(all(_satisfies((3, minor, patch), op, text, wildcard)
                   for op, text, wildcard in clauses) for patch in range(40))
    )
    return allowed or everything


def matrix(minors: Iterable[int]) -> list[Environment]:
    """Every environment of the matrix, in its order (made once per set of minors: each
    conditional silence of a run is judged over the same one, and they are frozen)."""
    key = tuple(minors)
    made = _MATRICES.get(key)
    if made is None:
        made = _MATRICES[key] = [
            Environment.of_matrix(p, i, b, m)
            for p, i, b, m in itertools.product(PLATFORMS, IMPLEMENTATIONS, BITS, key)]
    return list(made)


_MATRICES: dict[tuple[int, ...], list[Environment]] = {}


# -- evaluating a condition ----------------------------------------------------------------

class NotEvaluable(Exception):
    """The condition uses something that is not an environment fact; says what."""


class _Module(FrozenRecord):
    __slots__ = ('name',)
    name: str

    def __init__(self, name: str) -> None:
        self._set(name=name)


class _Callable(FrozenRecord):
    __slots__ = ('name',)
    name: str

    def __init__(self, name: str) -> None:
        self._set(name=name)


_STR_METHODS = ('startswith', 'endswith', 'lower', 'upper', 'casefold', 'strip')
_COMPARE = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_,
    ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_BINARY = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Pow: operator.pow, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}


def module_bindings(tree: ast.Module) -> dict[str, ast.expr | None]:
    """Module-level ``NAME = expression``; None for a name bound more than once or in
    a way the reader cannot follow (``for``, ``with``, ``import``, augmented)."""
    bound: dict[str, ast.expr | None] = {}

    def mark(name: str, value: ast.expr | None) -> None:
        bound[name] = None if name in bound else value

    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    mark(target.id, node.value if len(node.targets) == 1 else None)
                else:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name):
                            mark(sub.id, None)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            mark(node.target.id, node.value)
        elif isinstance(node, (ast.AugAssign, ast.For, ast.While, ast.If, ast.With, ast.Try)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                    mark(sub.id, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            mark(node.name, None)
    return bound


class ConditionReader:
    """Evaluates conditions of one test file in any environment.

    ``names`` maps local names to what they were imported as (``{'sys': 'sys',
    'plat': 'sys.platform'}``: the scanner's import aliases); ``bindings`` are the
    module-level assignments of the same file.
    """

    def __init__(self, names: Mapping[str, str], bindings: Mapping[str, ast.expr | None]):
        self.names = names
        self.bindings = bindings

    @classmethod
    def of_tree(cls, tree: ast.Module, aliases: ImportAliases | None = None
                ) -> ConditionReader:
        """``aliases``: the scanner's, when it has read this tree already."""
        from oracle_guard.reading.import_aliases import ImportAliases

        return cls((aliases or ImportAliases(tree)).names, module_bindings(tree))

    def value(self, node: ast.AST, env: Environment, depth: int = 0) -> object:
        if depth > 50:
            raise NotEvaluable('nested too deeply')
        v = lambda n: self.value(n, env, depth + 1)  # noqa: E731
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (str, int, float, bool, type(None))):
                return node.value
            raise NotEvaluable(f'literal {node.value!r}')
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return tuple(v(e) for e in node.elts)
        if isinstance(node, ast.Name):
            return self._name(node.id, env, depth)
        if isinstance(node, ast.Attribute):
            return self._attribute(v(node.value), node.attr, env)
        if isinstance(node, ast.Call):
            return self._call(node, v, env)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, v)
        if isinstance(node, ast.Compare):
            left = v(node.left)
            for op, comparator in zip(node.ops, node.comparators):
                right = v(comparator)
                try:
                    if not _COMPARE[type(op)](left, right):
                        return False
                except TypeError:
                    raise NotEvaluable('a comparison of values of different types') from None
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                result: object = True
                for operand in node.values:
                    result = v(operand)
                    if not result:
                        return result
                return result
            result = False
            for operand in node.values:
                result = v(operand)
                if result:
                    return result
            return result
        if isinstance(node, ast.UnaryOp):
            operand = v(node.operand)
            if isinstance(node.op, ast.Not):
                return not operand
            if isinstance(node.op, ast.USub) and isinstance(operand, int):
                return -operand
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = v(node.left), v(node.right)
            if isinstance(left, int) and isinstance(right, int) and not (
                    isinstance(node.op, (ast.Pow, ast.LShift)) and right > 256):
                try:
                    return _BINARY[type(node.op)](left, right)
                except (ArithmeticError, ValueError):
                    raise NotEvaluable('arithmetic that fails') from None
        if isinstance(node, ast.IfExp):
            return v(node.body) if v(node.test) else v(node.orelse)
        raise NotEvaluable(f'`{_source(node)}`')

    def _name(self, name: str, env: Environment, depth: int) -> object:
        imported = self.names.get(name)
        if imported is not None:
            return self._dotted(imported, env)
        if name in self.bindings:
            bound = self.bindings[name]
            if bound is None:
                raise NotEvaluable(f'{name} (bound more than once, or not by a plain '
                                   'assignment)')
            return self.value(bound, env, depth + 1)
        raise NotEvaluable(f'{name} (not an environment fact of this file)')

    def _dotted(self, dotted: str, env: Environment) -> object:
        if dotted in VALUE_FACTS:
            return env.fact(dotted)
        if dotted in CALL_FACTS:
            return _Callable(dotted)
        if dotted in MODULES:
            return _Module(dotted)
        raise NotEvaluable(f'{dotted} (not an environment fact)')

    def _attribute(self, base: object, attr: str, env: Environment) -> object:
        if isinstance(base, _Module):
            return self._dotted(f'{base.name}.{attr}', env)
        if isinstance(base, VersionInfo) and attr in VersionInfo._fields:
            return getattr(base, attr)
        if isinstance(base, str) and attr in _STR_METHODS:
            return getattr(base, attr)
        raise NotEvaluable(f'.{attr}')

    def _call(self, node: ast.Call, v, env: Environment) -> object:  # type: ignore[no-untyped-def]
        func = v(node.func)
        if node.keywords:
            raise NotEvaluable(f'`{_source(node)}`')
        args = [v(a) for a in node.args]
        if isinstance(func, _Callable) and not args:
            return env.fact(func.name)
        if callable(func) and getattr(func, '__self__', None).__class__ is str:
            try:
                return func(*args)
            except TypeError:
                raise NotEvaluable(f'`{_source(node)}`') from None
        raise NotEvaluable(f'`{_source(node)}`')

    def _subscript(self, node: ast.Subscript, v) -> object:  # type: ignore[no-untyped-def]
        base = v(node.value)
        index = node.slice
        if sys.version_info < (3, 9) and isinstance(index, ast.Index):  # pragma: no cover
            index = index.value  # type: ignore[attr-defined]
        if isinstance(index, ast.Slice):
            parts = [None if p is None else v(p) for p in (index.lower, index.upper, index.step)]
            key: object = slice(*parts)
        else:
            key = v(index)
        if not isinstance(base, (tuple, str)):
            raise NotEvaluable(f'`{_source(node)}`')
        try:
            result = base[key]  # type: ignore[index]
        except (TypeError, IndexError, ValueError):
            raise NotEvaluable(f'`{_source(node)}`') from None
        return tuple(result) if isinstance(result, tuple) else result


def _source(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 -- only a message
        text = type(node).__name__
    return text if len(text) <= 60 else text[:57] + '...'


class Verdict(FrozenRecord):
    __slots__ = ('kind', 'detail')
    kind: str  # ENVIRONMENT, ALWAYS or UNKNOWN
    detail: str  # why: where it is false, or what could not be evaluated

    def __init__(self, kind: str, detail: str) -> None:
        self._set(kind=kind, detail=detail)


def evaluate(reader: ConditionReader, conditions: list[ast.expr], env: Environment,
             negate: bool = False) -> bool:
    """Whether the silence applies in ``env``: any condition true (``not`` for skipUnless)."""
    result = any(bool(reader.value(_parsed(c), env)) for c in conditions)
    return not result if negate else result


def _parsed(condition: ast.expr) -> ast.expr:
    """pytest evaluates a string condition (``skipif("sys.platform == 'win32'")``) with
    ``os``, ``sys`` and ``platform`` in scope: read it as the expression it spells."""
    if isinstance(condition, ast.Constant) and isinstance(condition.value, str):
        try:
            return ast.parse(condition.value.strip(), mode='eval').body
        except SyntaxError:
            raise NotEvaluable(f'the string {condition.value!r} is not an expression') from None
    return condition


def judge(reader: ConditionReader, conditions: list[ast.expr], minors: Iterable[int],
          negate: bool = False) -> Verdict:
    """Over the whole matrix: ENVIRONMENT (false somewhere), ALWAYS, or UNKNOWN."""
    string_names = {'sys': 'sys', 'os': 'os', 'platform': 'platform'}
    if any(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in conditions):
        reader = ConditionReader({**string_names, **reader.names}, reader.bindings)
    try:
        for env in matrix(minors):
            if not evaluate(reader, conditions, env, negate):
                return Verdict(ENVIRONMENT, f'false on {env.describe()}')
    except NotEvaluable as exc:
        return Verdict(UNKNOWN, f'not an environment condition: {exc}')
    return Verdict(ALWAYS, 'true in every environment of the matrix')


def holds_now(reader: ConditionReader, conditions: list[ast.expr],
              negate: bool = False) -> bool | None:
    """Whether the condition holds in this interpreter; None when it cannot be evaluated."""
    string_names = {'sys': 'sys', 'os': 'os', 'platform': 'platform'}
    reader = ConditionReader({**string_names, **reader.names}, reader.bindings)
    try:
        return evaluate(reader, conditions, Environment.current(), negate)
    except NotEvaluable:
        return None


# -- which silences carry a condition ------------------------------------------------------

CONDITIONAL = {
    'pytest.mark.skipif': False,
    'pytest.mark.xfail': False,
    'unittest.skipIf': False,
    'unittest.skipUnless': True,  # skips when the condition is false
}


def silence_conditions(dotted: str | None, call: ast.Call | None
                       ) -> tuple[list[ast.expr], bool] | None:
    """(conditions, negate) of a conditional silence; None when it has no condition."""
    if call is None or dotted not in CONDITIONAL:
        return None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    conditions: list[ast.expr] = []
    if dotted == 'pytest.mark.skipif':
        conditions = list(call.args)
    elif call.args:
        conditions = [call.args[0]]
    for keyword in call.keywords:
        if keyword.arg == 'condition':
            conditions.append(keyword.value)
    if not conditions:
        return None
    return conditions, CONDITIONAL[dotted]
