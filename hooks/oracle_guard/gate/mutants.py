"""Mutants of a changed statement: one small change of its code that a test of the
statement should notice (diff-based mutation testing, as Google runs it on code review).

At most one mutant per statement: the first operator, in this order, that applies to the
statement's own code (a compound statement's header; never the statements it holds):

``boundary``    ``<`` and ``<=``, ``>`` and ``>=`` swapped
``comparison``  ``==`` and ``!=``, ``is`` and ``is not``, ``in`` and ``not in`` swapped
``boolean``     ``and`` and ``or`` swapped, ``not x`` made ``x``, ``True`` and ``False`` swapped,
                a condition negated (``a if c else b``; ``if c:`` or ``while c:`` when
                nothing else of it flips)
``arithmetic``  ``+`` and ``-``, ``*`` and ``/`` swapped, ``//`` made ``*``, ``%`` made ``//``
                (an augmented assignment too)
``constant``    a whole number ``n`` made ``n + 1``
``return``      ``return X`` made ``return`` of a neutral value (``None``; ``0``, ``''``,
                ``False`` for a literal of that kind)
``statement``   a simple statement removed (``pass`` in its place)

Arid statements get no mutant: a docstring, an ``assert``, a call of a logger (``log``,
``logger``, ``logging``, ``warnings.warn``, ``print``), ``pass``, an import, a ``def`` or
``class`` header, ``global``/``nonlocal``. The mutant is written as a splice of the
statement's source (only the changed node is unparsed), so every other line and column of
the module stays where it was; a splice that does not parse is no mutant. Python's ``ast``
does this in a few lines, on one file at a time, without writing anything: a mutation
library (mutmut, cosmic-ray) mutates a whole project and rewrites its files in place.
"""
from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass

OPERATORS = ('boundary', 'comparison', 'boolean', 'arithmetic', 'constant', 'return',
             'statement')
_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_COMPARISON = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
               ast.In: ast.NotIn, ast.NotIn: ast.In}
_ARITHMETIC = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
               ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv}
_LOGGERS = ('log', 'logger', 'logging', 'LOG', 'LOGGER', '_log', '_logger', 'warnings')
_ARID = (ast.Assert, ast.Pass, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal,
         ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.Raise)


@dataclass(frozen=True)
class Mutant:
    path: str
    line: int  # the statement's first line
    operator: str  # one of OPERATORS
    before: str  # the code changed, as written
    after: str  # what the mutant has there
    source: bytes  # the whole mutated module

    def describe(self) -> str:
        return f'{self.operator}: `{self.before}` -> `{self.after}`'


def is_arid(node: ast.stmt) -> bool:
    """Code whose change no test is expected to notice."""
    if isinstance(node, _ARID):
        return True
    if isinstance(node, ast.Expr):
        value = node.value
        if isinstance(value, ast.Constant):  # a docstring or a bare literal
            return True
        if isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Name) and func.id == 'print':
                return True
            while isinstance(func, ast.Attribute):
                func = func.value
            if isinstance(func, ast.Name) and func.id in _LOGGERS:
                return True
    return False


def _own_nodes(stmt: ast.stmt) -> Iterator[ast.AST]:
    """The nodes of a statement's own code, in source order: the header of a compound
    statement, never the statements it holds."""
    pending = [child for name, child in ast.iter_fields(stmt)
               if name not in ('body', 'orelse', 'finalbody', 'handlers', 'cases')]
    flat: list[ast.AST] = []
    for item in pending:
        flat.extend(item if isinstance(item, list) else [item])
    stack = [n for n in reversed(flat) if isinstance(n, ast.AST)]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Lambda, ast.stmt)):
            continue
        yield node
        stack.extend(reversed([c for c in ast.iter_child_nodes(node)]))


def _swap_op(node: ast.AST, table: dict[type, type]) -> ast.AST | None:
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in table:
        new = copy.deepcopy(node)
        new.op = table[type(node.op)]()
        return new
    if isinstance(node, ast.Compare):
        for at, op in enumerate(node.ops):
            if type(op) in table:
                new = copy.deepcopy(node)
                new.ops[at] = table[type(op)]()
                return new
    return None


def _boolean(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        return new
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return copy.deepcopy(node.operand)
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return ast.Constant(not node.value)
    if isinstance(node, ast.IfExp):
        new = copy.deepcopy(node)
        new.test = ast.UnaryOp(ast.Not(), new.test)
        return new
    return None


def _constant(node: ast.AST) -> ast.AST | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return ast.Constant(node.value + 1)
    return None


_EXPRESSION_OPERATORS: dict[str, Callable[[ast.AST], ast.AST | None]] = {
    'boundary': lambda n: _swap_op(n, _BOUNDARY),
    'comparison': lambda n: _swap_op(n, _COMPARISON),
    'boolean': _boolean,
    'arithmetic': lambda n: _swap_op(n, _ARITHMETIC),
    'constant': _constant,
}


def _neutral(value: ast.expr) -> ast.expr:
    if isinstance(value, ast.Constant) and type(value.value) in (int, float, str, bool):
        return ast.Constant(type(value.value)())
    return ast.Constant(None)


class _Source:
    """A module's bytes, spliced by ``ast`` positions (line, UTF-8 byte column)."""

    def __init__(self, source: bytes) -> None:
        self.lines = source.splitlines(keepends=True)

    def offset(self, line: int, col: int) -> int:
        return sum(len(part) for part in self.lines[:line - 1]) + col

    def segment(self, node: ast.AST) -> bytes:
        data = b''.join(self.lines)
        return data[self.offset(node.lineno, node.col_offset):  # type: ignore[attr-defined]
                    self.offset(node.end_lineno, node.end_col_offset)]  # type: ignore[attr-defined]

    def splice(self, node: ast.AST, text: str) -> bytes:
        data = b''.join(self.lines)
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return data[:start] + text.encode('utf-8') + data[end:]


def _statement_at(tree: ast.AST, line: int) -> ast.stmt | None:
    """The first statement (outermost, then first in order) that starts at ``line`` (its
    first decorator's line for a decorated definition)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            start = min([node.lineno, *(d.lineno for d in getattr(node, 'decorator_list', ()))])
            if start == line:
                return node
    return None


def _shown(text: str) -> str:
    text = ' '.join(text.split())
    return text if len(text) <= 60 else text[:57] + '...'


def mutate(source: bytes, path: str, line: int,
           operators: tuple[str, ...] = OPERATORS) -> Mutant | None:
    """The mutant of the statement starting at ``line``, or None (arid, or no operator
    applies)."""
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError):
        return None
    stmt = _statement_at(tree, line)
    if stmt is None or is_arid(stmt):
        return None
    text = _Source(source)
    candidates: list[tuple[str, ast.AST, ast.AST]] = []
    nodes = list(_own_nodes(stmt))
    for name in operators:
        if name in _EXPRESSION_OPERATORS:
            for node in [stmt, *nodes]:
                if not hasattr(node, 'end_col_offset') and not isinstance(node, ast.stmt):
                    continue
                new = _EXPRESSION_OPERATORS[name](node)
                if new is not None:
                    candidates.append((name, node, new))
                    break
            else:
                if name == 'boolean' and isinstance(stmt, (ast.If, ast.While)):
                    # a condition with nothing else to flip: negated
                    candidates.append((name, stmt.test, ast.UnaryOp(ast.Not(), stmt.test)))
        elif name == 'return' and isinstance(stmt, ast.Return) and stmt.value is not None \
                and not (isinstance(stmt.value, ast.Constant) and stmt.value.value is None):
            candidates.append((name, stmt.value, _neutral(stmt.value)))
        elif name == 'statement' and isinstance(stmt, _SIMPLE):
            candidates.append((name, stmt, ast.Pass()))
    for name, node, new in candidates:
        if isinstance(node, ast.AugAssign):  # only the operator: `x += 1` -> `x -= 1`
            after = ast.unparse(new)
        elif isinstance(node, ast.stmt) and name != 'statement':
            continue
        else:
            after = ast.unparse(new)
        mutated = text.splice(node, after)
        try:
            ast.parse(mutated, path)
        except (SyntaxError, ValueError):
            continue
        before = text.segment(node).decode('utf-8', 'replace')
        return Mutant(path, line, name, _shown(before), _shown(after), mutated)
    return None
