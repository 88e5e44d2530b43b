"""Python syntax trees, and the few functions of the ``ast`` module the scanner walks
them with, built on the ``_ast`` extension module alone.

``import ast`` costs a hook about 0.9× a bare interpreter's start-up (it imports
``contextlib``, ``enum``, ``collections`` and ``functools``); ``_ast`` costs 0.1×. A
commit whose property modules must be parsed (every cache off: CI, a first commit) paid
more for that import than for the parse. The node classes are ``_ast``'s, the very
objects ``ast`` re-exports, so a tree made here is the tree ``ast.parse`` makes and
``isinstance`` agrees with code that imports ``ast``. ``parse``, ``iter_child_nodes``,
``walk`` and ``NodeVisitor`` do what the standard library's do on Python 3.9 to 3.14
(``tests/test_syntax.py`` holds them to it on real files).
"""
from __future__ import annotations

from _ast import *  # noqa: F401,F403 -- the node classes, as `ast` re-exports them
from _ast import AST
from _ast import PyCF_ONLY_AST

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator
    from typing import Any


def parse(source: str | bytes, filename: str = '<unknown>', mode: str = 'exec') -> Any:
    """``ast.parse(source, filename, mode)``."""
    return compile(source, filename, mode, PyCF_ONLY_AST, _feature_version=-1)


def iter_child_nodes(node: AST) -> Iterator[AST]:
    """``ast.iter_child_nodes``: the direct children, in field order."""
    for name in node._fields:
        field = getattr(node, name, None)
        if isinstance(field, AST):
            yield field
        elif isinstance(field, list):
            for item in field:
                if isinstance(item, AST):
                    yield item


def walk(node: AST) -> Iterator[AST]:
    """``ast.walk``: every node below ``node`` and itself, breadth first."""
    todo = [node]
    at = 0
    while at < len(todo):
        node = todo[at]
        at += 1
        todo.extend(iter_child_nodes(node))
        yield node


def get_source_segment(source: str, node: AST) -> str | None:
    """``ast.get_source_segment(source, node)``. The standard function splits the whole
    text into lines, a character at a time, at every call; the lines of the last text
    asked about are kept here, so a file's many segments cost one split."""
    try:
        if node.end_lineno is None or node.end_col_offset is None:  # type: ignore[attr-defined]
            return None
        lineno = node.lineno - 1  # type: ignore[attr-defined]
        end_lineno = node.end_lineno - 1  # type: ignore[attr-defined]
        col_offset = node.col_offset  # type: ignore[attr-defined]
        end_col_offset = node.end_col_offset  # type: ignore[attr-defined]
    except AttributeError:
        return None
    if _LINES[0] is not source:
        _LINES[0], _LINES[1] = source, split_lines(source)
    lines = _LINES[1]
    if end_lineno == lineno:
        return lines[lineno].encode()[col_offset:end_col_offset].decode()
    first = lines[lineno].encode()[col_offset:].decode()
    last = lines[end_lineno].encode()[:end_col_offset].decode()
    return ''.join([first, *lines[lineno + 1:end_lineno], last])


# The last text get_source_segment split, and its lines.
_LINES: list = [None, []]


def split_lines(source: str) -> list[str]:
    """The lines of ``source`` with their ends, split at ``\\r\\n``, ``\\r`` and ``\\n``
    only, as the parser counts lines (``str.splitlines`` splits at form feeds too)."""
    if '\r' not in source:
        lines = [line + '\n' for line in source.split('\n')]
        if lines[-1] == '\n':  # the text ends with a line break, or is empty
            lines.pop()
        else:
            lines[-1] = lines[-1][:-1]
        return lines
    import re

    return re.findall(r'[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+', source)


class NodeVisitor:
    """``ast.NodeVisitor``: ``visit`` calls ``visit_<class name>`` or ``generic_visit``."""

    def visit(self, node: AST) -> Any:
        return getattr(self, 'visit_' + node.__class__.__name__, self.generic_visit)(node)

    def generic_visit(self, node: AST) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, AST):
                        self.visit(item)
            elif isinstance(value, AST):
                self.visit(value)
