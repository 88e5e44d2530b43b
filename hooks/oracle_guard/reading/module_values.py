"""Values of one module read from its syntax tree: literals, module constants, and names
bound once at module level. Shared by the property reader and the strategy reader."""
from __future__ import annotations

import ast
import datetime
from typing import Any

from oracle_guard.oracle.domain_lock import Unverifiable
from oracle_guard.oracle.domain_lock import is_unverifiable
from oracle_guard.reading.module_body import module_statements  # noqa: F401 -- its home before
from oracle_guard.reading.import_aliases import ImportAliases

STRING_CONSTANTS = {
    'string.digits': '0123456789', 'string.hexdigits': '0123456789abcdefABCDEF',
    'string.octdigits': '01234567', 'string.ascii_lowercase': 'abcdefghijklmnopqrstuvwxyz',
    'string.ascii_uppercase': 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    'string.ascii_letters': 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
}
MAX_DEPTH = 8


class ModuleReader:
    """Values of one module: literals, constants, and names bound once at module level."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.aliases = ImportAliases(tree)
        self.bindings: dict[str, list[ast.expr]] = {}
        for stmt in module_statements(tree.body):
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    self._bind(target, stmt.value)
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                self._bind(stmt.target, stmt.value)
            elif isinstance(stmt, (ast.AugAssign, ast.For, ast.AsyncFor)):
                self._bind(stmt.target, None)
        for node in ast.walk(tree):  # `global X` in a function can re-bind X anywhere
            if isinstance(node, ast.Global):
                for name in node.names:
                    self.bindings.setdefault(name, []).append(None)  # type: ignore[arg-type]

    def _bind(self, target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append(value)  # type: ignore[arg-type]
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind(elt, None)

    def binding(self, name: str) -> ast.expr | None:
        """The one expression a module-level name is bound to, or None."""
        values = self.bindings.get(name, [])
        return values[0] if len(values) == 1 else None

    def resolve(self, node: ast.AST) -> str:
        return self.aliases.resolve(node) or ''

    def callee(self, node: ast.AST) -> str:
        """Dotted name of what a call or decorator calls, following local bindings."""
        func = node.func if isinstance(node, ast.Call) else node
        return self.resolve(func)

    def value(self, node: ast.AST, depth: int = 0) -> Any:
        """A Python value for literal-ish expressions, else Unverifiable."""
        if depth > MAX_DEPTH:
            return Unverifiable('constants nested too deeply')
        if isinstance(node, ast.Constant) and isinstance(
                node.value, (int, float, str, bool, type(None))):
            return node.value
        if isinstance(node, ast.Name):
            bound = self.binding(node.id)
            if bound is not None:
                return self.value(bound, depth + 1)
            if node.id in self.bindings:
                return Unverifiable(f'{node.id} is bound more than once')
            dotted = self.resolve(node)
            if dotted in STRING_CONSTANTS:
                return STRING_CONSTANTS[dotted]
            return Unverifiable(f'{node.id} is not a constant of this module')
        if isinstance(node, ast.Attribute):
            dotted = self.resolve(node)
            if dotted in STRING_CONSTANTS:
                return STRING_CONSTANTS[dotted]
            return Unverifiable(f'{unparse(node)} is not a literal')
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.value(node.operand, depth + 1)
            if is_number(operand):
                return -operand if isinstance(node.op, ast.USub) else operand
            return unresolved_value(operand, node)
        if isinstance(node, ast.BinOp):
            return self._binop(node, depth)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.value(e, depth + 1) for e in node.elts]
            bad = [i for i in items if is_unverifiable(i)]
            return bad[0] if bad else items
        if isinstance(node, ast.Call) and self.callee(node) == 'datetime.timedelta':
            return self._timedelta(node, depth)
        return Unverifiable(f'{unparse(node)} is not a literal')

    def _binop(self, node: ast.BinOp, depth: int) -> Any:
        left, right = self.value(node.left, depth + 1), self.value(node.right, depth + 1)
        for side in (left, right):
            if is_unverifiable(side):
                return side
        try:
            if is_number(left) and is_number(right):
                if isinstance(node.op, ast.Pow) and abs(right) > 64:
                    return Unverifiable('exponent too large')
                if isinstance(node.op, ast.LShift) and abs(right) > 64:
                    return Unverifiable('shift too large')
                ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
                       ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
                       ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b,
                       ast.Mod: lambda a, b: a % b, ast.LShift: lambda a, b: a << b}
                op = ops.get(type(node.op))
                if op is not None:
                    return op(left, right)
            if isinstance(left, str) and isinstance(right, str) and isinstance(node.op, ast.Add):
                return left + right
        except (ArithmeticError, ValueError, TypeError):
            pass
        return Unverifiable(f'{unparse(node)} is not a simple constant expression')

    def _timedelta(self, node: ast.Call, depth: int) -> Any:
        kwargs = {}
        units = ('days', 'seconds', 'microseconds', 'milliseconds', 'minutes', 'hours',
                 'weeks')
        for name, arg in zip(units, node.args):
            kwargs[name] = arg
        for kw in node.keywords:
            if kw.arg is None:
                return Unverifiable('timedelta(**...) is not a literal')
            kwargs[kw.arg] = kw.value
        values = {}
        for name, arg in kwargs.items():
            value = self.value(arg, depth + 1)
            if not is_number(value):
                return unresolved_value(value, arg)
            values[name] = value
        try:
            return datetime.timedelta(**values)
        except (TypeError, OverflowError, ValueError):
            return Unverifiable(f'{unparse(node)} is not a valid timedelta')


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def unresolved_value(value: Any, node: ast.AST) -> Unverifiable:
    return value if is_unverifiable(value) else Unverifiable(f'{unparse(node)} is not a number')


def unparse(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 -- only used in messages
        return '<expression>'
    return text if len(text) <= 80 else text[:77] + '...'


# -- settings ----------------------------------------------------------------------------
