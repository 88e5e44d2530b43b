"""What the human-owned oracle judges of a change: the reach of the base revision's property
tests into the src lines the pull request changed, and the mutants of the reached lines they
cannot tell apart (rules 57, 58).

The calc project's oracle: ``add(a, b)`` is the sum for ``a, b`` in ``range(6)``, and
commutes for ``a, b`` in ``range(5)``; no property calls ``mul``.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from builders.calc import green_then_ci
from builders.calc import on_main
from builders.calc import ORACLE
from builders.ci_repo import CiRepo
from builders.ci_repo import PYTEST

pytestmark = pytest.mark.reference_run

# A fix in mul, which no property calls: the oracle runs none of it.
FIXED_MUL = '''\
def add(a, b):
    return a + b


def mul(a, b):
    if a == 0 or b == 0:
        return 0
    return a * b
'''
# add right on the property's inputs only: the special case's bound can move, and the
# property cannot tell (a mutant survives); the wrong branch is never run.
SPECIAL_CASED_ADD = '''\
def add(a, b):
    if a < 6 and b < 6:
        return a + b
    return a * b


def mul(a, b):
    return a * b
'''


def _configure(repo: CiRepo, extra: str) -> None:
    """The oracle side's configuration (main): the mutants' budget and what it requires."""
    on_main(repo, {'pyproject.toml': textwrap.dedent(ORACLE['pyproject.toml']).replace(
        'mutant-budget = 0\n', '') + extra})


def test_a_fix_in_a_function_no_property_calls_is_reached_by_none_of_its_lines(
        oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'src/calc/__init__.py': FIXED_MUL}, bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert ci.rc == 0, ci.out
    line = ('oracle-guard ci: oracle reach: 0 of 2 changed src lines run by the human-owned '
            'tests; mutants: 0 of 0 killed')
    assert line in ci.out.splitlines(), ci.out
    assert ci.out.splitlines().index(line) < len(ci.out.splitlines()) - 1  # before the summary
    assert '### What the oracle judges of this change' in report
    assert '`src/calc/__init__.py` `mul`: line 6-7 (`if a == 0 or b == 0:`)' in report, report
    assert '- no mutant run: mutant-budget = 0' in report  # the scenarios' configuration


def test_special_cased_inputs_leave_a_surviving_mutant_in_the_report(
        oracle_calc: CiRepo) -> None:
    _configure(oracle_calc, 'mutant-budget = 120\n')
    oracle_calc.pull_request({'src/calc/__init__.py': SPECIAL_CASED_ADD}, bug=False)
    ci, report = green_then_ci(oracle_calc, '--timings')
    assert ci.rc == 0, ci.out
    assert ('oracle-guard ci: oracle reach: 2 of 3 changed src lines run by the human-owned '
            'tests; mutants: 1 of 2 killed') in ci.out, ci.out
    assert '`src/calc/__init__.py` `add`: line 4 (`return a * b`)' in report, report
    assert ('survived: `src/calc/__init__.py:2` boundary: `a < 6` -> `a <= 6` (ran '
            '`tests/properties/test_add_props.py::test_add_commutes`, '
            '`tests/properties/test_sum_props.py::test_add_matches_the_sum`)') in report, report
    assert 'mutant runs' in ci.out  # a step of --timings


def test_the_required_percents_make_both_findings(oracle_calc: CiRepo) -> None:
    _configure(oracle_calc, 'mutant-budget = 120\nrequire-oracle-reach = 100\n'
                            'require-mutants-killed = 100\n')
    oracle_calc.pull_request({'src/calc/__init__.py': SPECIAL_CASED_ADD}, bug=False)
    ci, _ = green_then_ci(oracle_calc)
    assert ci.rc == 1, ci.out
    reach = ci.lines('OG744')
    assert reach and reach[0].startswith('src/calc/__init__.py:4:'), ci.out
    assert 'run 2 of the 3 src lines' in reach[0]
    killed = ci.lines('OG745')
    assert killed and killed[0].startswith('src/calc/__init__.py:2:'), ci.out
    assert 'kill 1 of 2 mutants' in killed[0] and '`a < 6` -> `a <= 6`' in killed[0]


def test_a_change_outside_src_has_no_reach_line_and_no_finding(oracle_calc: CiRepo) -> None:
    _configure(oracle_calc, 'require-oracle-reach = 100\nrequire-mutants-killed = 100\n')
    oracle_calc.pull_request({'docs/usage.md': 'How to add.\n'}, bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert ci.rc == 0, ci.out
    assert 'oracle reach' not in ci.out
    assert 'What the oracle judges' not in report


def test_the_projects_own_coverage_in_addopts_leaves_reach_and_mutants_right(
        oracle_calc: CiRepo) -> None:
    # pytest-cov (a test dependency) in every pytest run of the project, with a percent the
    # whole suite reaches (83) and the oracle's two tests alone do not (4 of 6 statements),
    # and warnings as errors
    pyproject = textwrap.dedent(ORACLE['pyproject.toml']).replace(
        'mutant-budget = 0\n', 'mutant-budget = 120\n').replace(
        'pythonpath = ["src"]\n', 'pythonpath = ["src"]\naddopts = "--cov=calc '
        '--cov-report=term-missing --cov-fail-under=80"\nfilterwarnings = ["error"]\n')
    on_main(oracle_calc, {'pyproject.toml': pyproject})
    oracle_calc.pull_request({'src/calc/__init__.py': SPECIAL_CASED_ADD}, bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert ci.rc == 0, ci.out
    # the test command keeps the project's coverage
    assert 'Required test coverage of 80% reached. Total coverage: 83.33%' in ci.out, ci.out
    # the reference run measured the reach (the project's coverage did not pause it), and
    # its --cov-fail-under killed no mutant
    assert ('oracle-guard ci: oracle reach: 2 of 3 changed src lines run by the human-owned '
            'tests; mutants: 1 of 2 killed') in ci.out, ci.out
    assert '`src/calc/__init__.py` `add`: line 4 (`return a * b`)' in report, report
    assert 'survived: `src/calc/__init__.py:2` boundary: `a < 6` -> `a <= 6`' in report, report
    assert '- 2 oracle test(s) of 2 file(s): all passed or frozen at base' in report, report


def test_a_committed_coverage_file_the_projects_cov_append_would_rewrite_stays_as_written(
        oracle_calc: CiRepo) -> None:
    # wcwidth's shape: `--cov --cov-append` in addopts and a `.coverage` data file committed
    # (a repository without a .gitignore). The reference tree holds it as a non-test file
    # of the pull request; the project's coverage, on in the gate's run, would rewrite it
    # there (OG734: the reference tree was changed while it ran).
    pyproject = textwrap.dedent(ORACLE['pyproject.toml']).replace(
        'pythonpath = ["src"]\n', 'pythonpath = ["src"]\naddopts = "--cov=calc --cov-append"\n')
    on_main(oracle_calc, {'pyproject.toml': pyproject})
    plain = oracle_calc.finish(oracle_calc.start(PYTEST))
    assert plain.rc == 0, plain.out
    assert os.path.isfile(os.path.join(oracle_calc.path, '.coverage'))
    on_main(oracle_calc, {})  # the data file the run wrote, committed
    oracle_calc.pull_request({'src/calc/__init__.py': SPECIAL_CASED_ADD}, bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert not [line for line in ci.out.splitlines() if ': OG' in line], ci.out
    assert ci.rc == 0, ci.out
    assert '- 2 oracle test(s) of 2 file(s): all passed or frozen at base' in report, report
