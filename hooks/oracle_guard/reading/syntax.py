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
    """``ast.get_source_segment`` (rarely asked: the standard module is imported then)."""
    import ast

    return ast.get_source_segment(source, node)


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
