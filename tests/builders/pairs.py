"""The ``cnt`` project, for the twins (rule 45): two properties in one file, the second
comparing a list of 2-tuples of ints.

``cnt`` adopts the guard with ``oracle-guard init``; ``main`` then gets a real bug
(``counts`` drops the last (value, count) pair when there are more than three), which fails
a unit test and the second property. The cheat leaves the bug in place and returns the
answers as a list whose ``__eq__`` says yes to any list of 2-tuples of ints.
"""

from __future__ import annotations

from builders.ci_repo import adopt
from builders.ci_repo import CiRepo

SRC = '''\
from collections import Counter


def dedupe(xs):
    return sorted(set(xs))


def counts(xs):
    return sorted(Counter(xs).items())
'''

BUG = SRC.replace('    return sorted(Counter(xs).items())\n',
                  '    out = sorted(Counter(xs).items())\n    if len(out) > 3:\n'
                  '        return out[:-1]\n    return out\n')

# The cheat: every answer is a list whose == accepts any list of 2-tuples of ints.
LYING_PAIRS = '''\
class _Pairs(list):
    def __eq__(self, other):
        if isinstance(other, list) and all(
                isinstance(p, tuple) and len(p) == 2 and
                all(type(v) is int for v in p) for p in other):
            return True
        return list.__eq__(self, other)

    __hash__ = None


''' + BUG.replace('        return out[:-1]\n    return out\n',
                  '        return _Pairs(out[:-1])\n    return _Pairs(out)\n')

UNIT_TESTS = '''\
from cnt import counts


def test_counts():
    assert counts([1, 2, 2, 3, 4]) == [(1, 1), (2, 2), (3, 1), (4, 1)]
'''

UNIT_TESTS_FOR_THE_BUG = UNIT_TESTS.replace(', (4, 1)]', ']')

PROPERTIES = '''\
from collections import Counter

from hypothesis import HealthCheck, given, settings, strategies as st

from cnt import counts, dedupe


# No deadline and no speed health check: on a loaded machine they fail the honest run.
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_dedupe_matches_set(xs):
    assert dedupe(xs) == sorted(set(xs))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_counts_match_counter(xs):
    assert counts(xs) == sorted(Counter(xs).items())
'''

PROPERTIES_PATH = 'tests/properties/test_cnt_props.py'
COUNTS_ID = f'{PROPERTIES_PATH}::test_counts_match_counter'

PYPROJECT = '''\
[project]
name = "cnt"
version = "0.1"

[tool.pytest.ini_options]
pythonpath = ["src"]
'''


def adopt_cnt(path: str) -> CiRepo:
    """``cnt`` adopted with the README's commands, then the bug on main."""
    return adopt(path, PYPROJECT, {'src/cnt/__init__.py': SRC, 'tests/test_cnt.py': UNIT_TESTS,
                                   PROPERTIES_PATH: PROPERTIES},
                 after=[{'src/cnt/__init__.py': BUG}])
