"""The executable lines a pull request added or changed in a Python file of ``src/``.

A changed line counts as the statement it belongs to: a line inside a multi-line statement
is that statement, a line of a compound statement's header (``if``, ``for``, ``def`` with
its decorators) is the header. Blank lines, comments and docstrings are no statement and do
not count; nor are ``global``/``nonlocal`` declarations and ``try:``, which run nothing.
What the reach measurement and the mutants work on (``gate/reach.py``, ``gate/mutants.py``).
"""
from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass

# Statements whose header holds its children's bodies: only the header lines are its own.
_BODIES = ('body', 'orelse', 'finalbody', 'handlers', 'cases')
_NOT_RUN = (ast.Global, ast.Nonlocal, ast.Try, *((ast.TryStar,) if hasattr(ast, 'TryStar')
                                                  else ()))


@dataclass(frozen=True)
class Statement:
    """One executable statement: lines ``line`` to ``end`` (a compound statement's header
    only), in function ``function`` (``Class.method``; ``<module>`` at the top level)."""

    path: str
    line: int
    end: int
    function: str
    text: str  # its first line, stripped

    def lines(self) -> range:
        return range(self.line, self.end + 1)


def changed_line_numbers(old: bytes | None, new: bytes) -> set[int]:
    """Line numbers (1-based) of ``new`` that are added or changed against ``old``."""
    before = (old or b'').decode('utf-8', 'replace').splitlines()
    after = new.decode('utf-8', 'replace').splitlines()
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    changed: set[int] = set()
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ('replace', 'insert'):
            changed.update(range(j1 + 1, j2 + 1))
    return changed


def _is_docstring(node: ast.stmt, parent: ast.AST) -> bool:
    body = getattr(parent, 'body', None)
    return bool(body) and body[0] is node and isinstance(node, ast.Expr) and \
        isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) and \
        isinstance(parent, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _start(node: ast.AST) -> int:
    """A statement's first line: its first decorator's, if it has one."""
    first = node.lineno  # type: ignore[attr-defined]
    return min([first, *(d.lineno for d in getattr(node, 'decorator_list', ()))])


def statements(source: bytes, path: str) -> list[Statement]:
    """Every executable statement of a module, in line order ([] when it does not parse)."""
    try:
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError):
        return []
    lines = source.decode('utf-8', 'replace').splitlines()
    found: list[Statement] = []

    def visit(parent: ast.AST, function: str) -> None:
        for name in _BODIES:
            for child in getattr(parent, name, None) or ():
                if isinstance(child, ast.excepthandler) or type(child).__name__ == 'match_case':
                    visit(child, function)
                    continue
                if not isinstance(child, ast.stmt):
                    continue
                inner = function
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner = child.name if function == '<module>' else f'{function}.{child.name}'
                if not isinstance(child, _NOT_RUN) and not _is_docstring(child, parent):
                    start = _start(child)
                    end = child.end_lineno or child.lineno
                    bodies = [getattr(child, n) for n in _BODIES if getattr(child, n, None)]
                    if bodies:
                        # (`if x: return` on one line: the header is that line)
                        end = max(child.lineno, min(_start(b[0]) for b in bodies) - 1)
                    text = lines[start - 1].strip() if start <= len(lines) else ''
                    found.append(Statement(path, start, end, function, text))
                visit(child, inner)

    visit(tree, '<module>')
    return sorted(found, key=lambda s: s.line)


def changed_statements(old: bytes | None, new: bytes, path: str) -> list[Statement]:
    """The statements of ``new`` with a line added or changed against ``old`` (a new file:
    all of them)."""
    changed = changed_line_numbers(old, new)
    return [s for s in statements(new, path) if any(n in changed for n in s.lines())]
