"""The mutants of a changed statement (gate/mutants.py): each operator, one mutant per
statement in the documented order, none for arid code, every other line left in place."""
from __future__ import annotations

import ast
import textwrap

import pytest

from oracle_guard.gate.mutants import mutate

SOURCE = textwrap.dedent('''\
    import logging


    def f(x, y, items):
        """Docstring."""
        if x < 3 and y:
            return x * (y + 1)
        if x == y:
            return not y
        total = 0
        total += x
        logging.info('x is %s', x)
        assert x
        items.append(x)
        return [x]
        ok = x is None
        return 5
        flag = True
        return x
        pass
        return None
        inside = x in items
        kind = list if y else tuple
        if items:
            return 0
    ''').encode()


@pytest.mark.parametrize(('line', 'operator', 'before', 'after'), [
    (6, 'boundary', 'x < 3', 'x <= 3'),
    (7, 'arithmetic', 'x * (y + 1)', 'x / (y + 1)'),
    (8, 'comparison', 'x == y', 'x != y'),
    (9, 'boolean', 'not y', 'y'),
    (10, 'constant', '0', '1'),
    (11, 'arithmetic', 'total += x', 'total -= x'),
    (14, 'statement', 'items.append(x)', 'pass'),
    (15, 'return', '[x]', 'None'),
    (16, 'comparison', 'x is None', 'x is not None'),
    (17, 'constant', '5', '6'),
    (18, 'boolean', 'True', 'False'),
    (19, 'return', 'x', 'None'),
    (22, 'comparison', 'x in items', 'x not in items'),
    (23, 'boolean', 'list if y else tuple', 'list if not y else tuple'),
    (24, 'boolean', 'items', 'not items'),
])
def test_each_operator(line: int, operator: str, before: str, after: str) -> None:
    mutant = mutate(SOURCE, 'src/m.py', line)
    assert mutant is not None
    assert (mutant.operator, mutant.before, mutant.after) == (operator, before, after)
    old, new = SOURCE.decode().splitlines(), mutant.source.decode().splitlines()
    assert len(old) == len(new)  # every other line stays where it was
    assert [n for n, (a, b) in enumerate(zip(old, new), 1) if a != b] == [line]
    ast.parse(mutant.source)


@pytest.mark.parametrize('line', [
    1,  # an import
    4,  # a def header
    5,  # a docstring
    12,  # a logging call
    13,  # an assert
    20,  # pass
    21,  # return None: nothing neutral to return instead
    2,  # a blank line: no statement
])
def test_arid_code_and_no_statement_get_no_mutant(line: int) -> None:
    assert mutate(SOURCE, 'src/m.py', line) is None


def test_the_first_operator_that_applies_wins_in_the_order_given() -> None:
    # line 6 has a boundary, a boolean and a constant: the boundary comes first by default
    assert mutate(SOURCE, 'src/m.py', 6).operator == 'boundary'  # type: ignore[union-attr]
    mutant = mutate(SOURCE, 'src/m.py', 6, operators=('boolean', 'constant'))
    assert mutant is not None
    assert mutant.describe() == 'boolean: `x < 3 and y` -> `x < 3 or y`'
    mutant = mutate(SOURCE, 'src/m.py', 6, operators=('constant', 'boolean'))
    assert mutant is not None and mutant.describe() == 'constant: `3` -> `4`'


def test_a_compound_statement_is_mutated_in_its_header_only() -> None:
    source = b'def g(x):\n    while x > 0:\n        x = x - 1\n    return x\n'
    mutant = mutate(source, 'src/g.py', 2)
    assert mutant is not None
    assert mutant.source == source.replace(b'x > 0', b'x >= 0')


def test_a_module_that_does_not_parse_has_no_mutant() -> None:
    assert mutate(b'def broken(:\n', 'src/m.py', 1) is None
