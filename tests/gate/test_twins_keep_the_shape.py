"""The twins of the oracle's tests (rule 45): every test whose assertion compares a value is
twinned, within a budget, and each twin compares with the expected value perturbed in its
own type and structure (one element changed, the same length and element types)."""

from __future__ import annotations

import pytest

from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.dedupe import gate
from builders.pairs import adopt_cnt
from builders.pairs import COUNTS_ID
from builders.pairs import LYING_PAIRS
from builders.pairs import SRC
from builders.pairs import UNIT_TESTS
from builders.pairs import UNIT_TESTS_FOR_THE_BUG
from oracle_guard.gate.canaries import SENTINEL
from oracle_guard.gate.canaries import sentinel_values
from oracle_guard.gate.canaries import twin_source

pytestmark = pytest.mark.reference_run


@pytest.fixture(scope='module')
def cnt_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'cnt', lambda path: adopt_cnt(path))


def test_an_eq_that_accepts_any_list_of_int_pairs_fails_ci_through_the_second_tests_twin(
        cnt_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The lie is in the file's second property, and a sentinel one pair longer, or holding
    # a 3-tuple, would be refused by it: only a twin of that test, against a list of as
    # many 2-tuples of ints, sees it.
    repo = copy_template(cnt_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/cnt/__init__.py': LYING_PAIRS,
                       'tests/test_cnt.py': UNIT_TESTS_FOR_THE_BUG}, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    lies = [line for line in ci.lines('OG724')
            if f'the twin of {COUNTS_ID}' in line and 'an __eq__ that lies' in line]
    assert any('reference run:' in line for line in lies), ci.out
    assert any('reference run:' not in line for line in lies), ci.out


def test_the_honest_fix_passes_ci_with_every_test_twinned(
        cnt_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(cnt_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/cnt/__init__.py': SRC, 'tests/test_cnt.py': UNIT_TESTS},
                      bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0 and ci.summary.endswith('0 finding(s); test command exited 0'), ci.out
    assert 'twin canar' not in ci.out, ci.out


def _sentinel() -> type:
    namespace: dict = {}
    exec(SENTINEL.replace('FRESH', 'Fresh') + sentinel_values('s', 'Fresh', False), namespace)
    return namespace['Fresh']


@pytest.mark.parametrize('value', [
    [(1, 2), (3, 4)], [[1], [2, 3]], ('a', 'b'), 'abc', b'xy', {1, 2}, {'a': [1, 2]},
    frozenset({(1, 2)}), 7, 2.5, True,
], ids=repr)
def test_the_sentinel_changes_one_element_and_keeps_the_type_and_structure(value) -> None:  # type: ignore[no-untyped-def]
    shaped = _sentinel().like(value)
    assert type(shaped) is type(value) and shaped != value

    def shape(v):  # type: ignore[no-untyped-def]
        if isinstance(v, (list, tuple)):
            return (type(v), [shape(x) for x in v])
        if isinstance(v, (set, frozenset)):
            return (type(v), sorted(repr(shape(x)) for x in v))
        if isinstance(v, dict):
            return (dict, {k: shape(x) for k, x in v.items()})
        return (type(v), len(v) if isinstance(v, (str, bytes)) else None)

    assert shape(shaped) == shape(value)


def test_every_test_of_a_module_that_compares_a_value_is_twinned_up_to_the_names_given() -> None:
    source = (b'def test_a():\n    assert 1 == 1\n\n\ndef test_b():\n    assert 1 > 0\n\n\n'
              b'def test_c():\n    assert [1] == [1]\n\n\ndef test_d():\n    assert 2 == 2\n')
    twin = twin_source(source, ['test_x', 'test_y', 'test_z'], 'Fresh')
    assert twin is not None and twin[1] == [('test_x', 'test_a'), ('test_y', 'test_c'),
                                            ('test_z', 'test_d')]
    assert twin_source(source, ['test_x'], 'Fresh')[1] == [('test_x', 'test_a')]  # type: ignore[index]


PROPERTY = b'''\
from hypothesis import given, strategies as st


@given(st.integers())
def test_identity(x):
    assert x + 0 == x
'''


def _twin(equal: bool) -> object:
    """The twin of PROPERTY's test, built as the plugin builds it: in a copy of the namespace
    the original module was run in."""
    found = twin_source(PROPERTY, ['test_twin'], 'Fresh', full=1)
    assert found is not None
    code, pairs = found
    namespace: dict = {}
    exec(PROPERTY, namespace)
    twins: dict = dict(namespace)
    exec(code + sentinel_values('s', 'Fresh', equal, [name for name, _ in pairs]), twins)
    return twins['test_twin']


def test_the_twin_that_must_fail_fails_without_shrinking_or_explaining_its_failure() -> None:
    from hypothesis import Phase

    failing = _twin(equal=True)
    used = failing._hypothesis_internal_use_settings  # type: ignore[attr-defined]
    assert Phase.generate in used.phases
    assert Phase.shrink not in used.phases and Phase.explain not in used.phases
    assert used.database is None
    with pytest.raises(AssertionError, match='Fresh differs'):
        failing()  # type: ignore[operator]
    # The twin that must pass keeps the settings its original runs with.
    passing = _twin(equal=False)
    assert Phase.shrink in passing._hypothesis_internal_use_settings.phases  # type: ignore[attr-defined]
    passing()  # type: ignore[operator]
