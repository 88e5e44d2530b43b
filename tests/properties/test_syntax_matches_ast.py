"""Human-owned properties of the scanner's syntax trees (``reading/syntax``): on any input
they are the standard ``ast`` module's, trees and errors alike."""
from __future__ import annotations

import ast

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from oracle_guard.reading import syntax


def outcome(parse, source):  # type: ignore[no-untyped-def]
    try:
        tree = parse(source, 'f.py')
    except (SyntaxError, ValueError) as exc:
        return type(exc), getattr(exc, 'lineno', None), getattr(exc, 'offset', None), \
            getattr(exc, 'msg', str(exc))
    return ast.dump(tree, include_attributes=True), [type(n) for n in syntax.walk(tree)]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=512))
def test_syntax_parses_any_bytes_as_ast_does(raw):
    assert outcome(syntax.parse, raw) == outcome(ast.parse, raw)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(alphabet=' \n\t()[]{}:=+-*/%@,.;#\'"\\abcdefxyz0123456789_', max_size=300))
def test_syntax_parses_code_like_text_as_ast_does(text):
    assert outcome(syntax.parse, text) == outcome(ast.parse, text)
