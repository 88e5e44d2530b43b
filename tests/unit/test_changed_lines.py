"""The executable statements a change adds or edits in a src file (gate/changed_lines.py):
a line inside a multi-line statement counts as that statement; blank lines, comments and
docstrings count as nothing."""
from __future__ import annotations

import textwrap

from oracle_guard.gate.changed_lines import changed_line_numbers
from oracle_guard.gate.changed_lines import changed_statements
from oracle_guard.gate.changed_lines import statements

BASE = textwrap.dedent('''\
    def total(xs):
        """Add them up."""
        return sum(xs)


    class Box:
        def size(self):
            return 1
    ''').encode()


def _shown(found):  # type: ignore[no-untyped-def]
    return [(s.line, s.end, s.function, s.text) for s in found]


def test_lines_that_are_no_statement_count_as_nothing() -> None:
    head = BASE.replace(b'"""Add them up."""', b'"""Add them all up."""\n    # a comment\n')
    assert changed_line_numbers(BASE, head) == {2, 3, 4}
    assert changed_statements(BASE, head, 'src/m.py') == []


def test_a_line_inside_a_multi_line_statement_counts_as_the_statement() -> None:
    head = BASE.replace(b'    return sum(xs)\n',
                        b'    return sum(\n        xs,\n        start=0)\n')
    assert _shown(changed_statements(BASE, head, 'src/m.py')) == [
        (3, 5, 'total', 'return sum(')]


def test_a_compound_statement_counts_its_header_only() -> None:
    head = BASE.replace(b'    return sum(xs)\n',
                        b'    if not xs:\n        return 0\n    return sum(xs)\n')
    assert _shown(changed_statements(BASE, head, 'src/m.py')) == [
        (3, 3, 'total', 'if not xs:'), (4, 4, 'total', 'return 0')]


def test_methods_are_named_with_their_class_and_a_decorator_starts_its_definition() -> None:
    head = BASE.replace(b'    def size(self):\n        return 1\n',
                        b'    @property\n    def size(self):\n        return 2\n')
    assert _shown(changed_statements(BASE, head, 'src/m.py')) == [
        (7, 8, 'Box', '@property'), (9, 9, 'Box.size', 'return 2')]


def test_a_new_file_is_all_of_its_statements_and_one_that_does_not_parse_none() -> None:
    assert [s.line for s in changed_statements(None, BASE, 'src/m.py')] == [1, 3, 6, 7, 8]
    assert statements(b'def broken(:\n', 'src/m.py') == []


def test_declarations_that_run_nothing_are_no_statement() -> None:
    source = (b'def f():\n    global X\n    try:\n        X = 1\n'
              b'    except ValueError:\n        pass\n')
    assert _shown(statements(source, 'src/m.py')) == [
        (1, 1, '<module>', 'def f():'), (4, 4, 'f', 'X = 1'), (6, 6, 'f', 'pass')]
