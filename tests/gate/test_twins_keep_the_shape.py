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
