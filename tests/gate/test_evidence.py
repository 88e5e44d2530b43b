"""The evidence runs in the reference tree: a new freeze is rerun to see it flip (rule 48),
and new tests next to a ``src/`` change are run against the base ``src/`` (rule 49).
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from builders.calc import freeze
from builders.calc import green_then_ci
from builders.calc import on_main
from builders.calc import ORACLE
from builders.calc import REFACTORED_ADD
from builders.calc import reference_codes
from builders.ci_repo import BASE_FILES
from builders.ci_repo import CiRepo
from builders.dedupe import DD_PYTEST
from builders.dedupe import frozen_ledger

pytestmark = pytest.mark.reference_run


# -- the flip a freeze needs, forged by src in the reruns (rule 48) ---------------------
# The three failing tests frozen as order-dependent, the budget raised: an oracle change that
# needs a person's approval, who reads the freeze's measured evidence in the review report.
# src answers right in every other rerun (the rerun loads oracle_guard.runtime.unfrozen; a
# counter in the gate's temporary folder, beside the rerun's tree), so each frozen test
# "passed 3 and failed 2 of 5 reruns": a flake, not a bug. A person approved the oracle change (--oracle-approved),
# but the ledger and src changed together: rule 11 (OG201, and OG515 for the budget).
FLIPPING_SRC = '''\
import os
import sys


def _in_a_rerun():
    return any(name.startswith('oracle_guard.') and name.endswith('.unfrozen')
               for name in list(sys.modules))


def _flip():
    path = os.path.join(os.path.dirname(os.getcwd()), 'dd-flip')  # beside the rerun's tree
    try:
        with open(path) as f:
            count = int(f.read() or 0)
    except (OSError, ValueError):
        count = 0
    with open(path, 'w') as f:
        f.write(str(count + 1))
    return count % 2 == 0


_RIGHT = _in_a_rerun() and _flip()


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3 and not _RIGHT:
        return out[:-1]
    return out
'''


def test_a_flip_forged_by_src_for_approved_freezes_fails_ci_by_rule_11(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'src/dd/__init__.py': FLIPPING_SRC,
                     'tests/freeze_ledger.yaml': frozen_ledger()}, bug=False)
    plain = dd.finish(dd.start(DD_PYTEST))
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(DD_PYTEST, '--oracle-approved')[1:]]))
    assert plain.rc == 0, plain.out  # the three failing tests frozen
    assert ci.rc == 1, ci.out
    assert any('src/dd/__init__.py' in line for line in ci.lines('OG201')), ci.out
    assert any('budget raised from 0 to 3' in line for line in ci.lines('OG515')), ci.out


FIXED_ADD = REFACTORED_ADD


# -- rule 48: a freeze needs a measured flip -----------------------------------------------
# A second bug, in mul, that only the unit test test_mul[2] catches: freezing that test
# is all a cheat needs to turn plain pytest green.
BUGGY_MUL = REFACTORED_ADD.replace('return a * b', 'return a * b + (a == 2 and b == 1)')


def test_freeze_on_a_test_that_fails_every_time_fails_ci(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'src/calc/__init__.py': BUGGY_MUL,
                       'tests/freeze_ledger.yaml': freeze('tests/test_calc.py::test_mul')},
                      bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert ci.rc == 1
    lines = ci.lines('OG735')
    assert lines and 'tests/test_calc.py::test_mul' in lines[0], ci.out
    assert 'passed in none of 3 reruns against your src/ (failed, failed, failed)' in lines[0]
    assert lines[0].startswith('tests/freeze_ledger.yaml:')
    assert 'passed 0 of 3: failed, failed, failed (broken, not flaky)' in report


FLIPPING_TEST = '''\
    import os

    COUNTER = os.path.join(os.path.dirname(__file__), '.flip-count')


    def test_flips():
        # Passes on every other run: a test whose outcome really flips.
        count = int(open(COUNTER).read()) if os.path.exists(COUNTER) else 0
        with open(COUNTER, 'w') as f:
            f.write(str(count + 1))
        assert count % 2 == 0
    '''


def test_freeze_on_a_test_that_really_flips_passes_with_its_evidence(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'tests/test_flip.py': FLIPPING_TEST,
                       'tests/freeze_ledger.yaml': freeze('tests/test_flip.py::test_flips',
                                                          'time-dependent')}, bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert reference_codes(ci) == [], ci.out
    assert ('FZ-1 (tests/test_flip.py::test_flips, time-dependent): passed 2 and failed 1 of '
            '3 reruns: passed, failed, passed (a measured flip)') in report
    # The rerun tree holds the pull request's test, but the conftest on its path is the base's.
    section = report.split('### Freeze evidence', 1)[1].split('###', 1)[0]
    base_line = next(line for line in section.splitlines() if 'other files from base' in line)
    assert '`tests/conftest.py`' in base_line, section


def test_freeze_marker_in_the_test_file_does_not_hide_the_rerun_outcome(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({
        'src/calc/__init__.py': BUGGY_MUL,
        'tests/test_calc.py': textwrap.dedent(BASE_FILES['tests/test_calc.py']).replace(
            "@pytest.mark.parametrize('a', [1, 2])",
            "@pytest.mark.skip(reason='FZ-1')\n@pytest.mark.parametrize('a', [1, 2])"),
        'tests/freeze_ledger.yaml': freeze('tests/test_calc.py::test_mul'),
    }, bug=False)
    ci, _ = green_then_ci(oracle_calc)
    assert any('(failed, failed, failed)' in line for line in ci.lines('OG735')), ci.out


# -- rule 49: new tests must test the change ----------------------------------------------
NEW_TEST = '''\
    from calc import add


    def test_add_five():
        assert add(2, 3) == 5
    '''


def test_new_or_changed_test_that_passes_on_the_old_src_is_listed(oracle_calc: CiRepo) -> None:
    changed_mul = textwrap.dedent(BASE_FILES['tests/test_calc.py']).replace(
        'assert mul(a, 1) == a', 'assert mul(a, 1) == a == mul(1, a)')
    oracle_calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD, 'tests/test_new.py': NEW_TEST,
                       'tests/test_calc.py': changed_mul}, bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert ci.rc == 0, ci.out
    assert '`tests/test_new.py::test_add_five`: passes without your change' in report
    assert '`tests/test_calc.py::test_mul`: passes without your change' in report
    assert 'tests/test_calc.py::test_add`' not in report  # unchanged: not run there


def test_new_test_passing_on_the_old_src_fails_with_require_fail_to_pass(oracle_calc: CiRepo) -> None:
    on_main(oracle_calc, {'pyproject.toml': ORACLE['pyproject.toml'] + 'require-fail-to-pass = true\n'})
    oracle_calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD,
                       'tests/test_new.py': NEW_TEST}, bug=False)
    ci, _ = green_then_ci(oracle_calc)
    assert ci.rc == 1
    lines = ci.lines('OG736')
    assert lines and lines[0].startswith('tests/test_new.py:4:'), ci.out
    assert 'tests/test_new.py::test_add_five passes against the base revision' in lines[0]


def test_real_fix_with_a_test_that_fails_on_the_old_src_is_not_listed(oracle_calc: CiRepo) -> None:
    on_main(oracle_calc, {'src/calc/__init__.py': textwrap.dedent('''\
        def add(a, b):
            total = a + b
            return total + 1 if total == 5 else total


        def mul(a, b):
            return a * b
        ''')})
    on_main(oracle_calc, {'pyproject.toml': ORACLE['pyproject.toml'] + 'require-fail-to-pass = true\n'})
    oracle_calc.pull_request({'src/calc/__init__.py': FIXED_ADD, 'tests/test_new.py': NEW_TEST},
                      bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert ci.rc == 0, ci.out
    assert '`tests/test_new.py::test_add_five`: passes without' not in report
    assert 'none of the 1 new or changed test(s) passes without your change' in report


# The tree of the new-test run keeps the digests of what the gate wrote, as the reference
# tree does (rule 44): a file of it changed when its run ends is OG734.
REWRITING_NEW_TEST = '''\
    import os

    from calc import add


    def test_add_five():
        if os.path.basename(os.getcwd()) == 'new-tests':  # the gate's tree of the new tests
            with open(__file__, 'a') as f:
                f.write('\\n# rewritten while it ran\\n')
        assert add(2, 3) == 5
    '''


def test_new_test_rewriting_its_tree_fails_ci(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD,
                       'tests/test_new.py': REWRITING_NEW_TEST}, bug=False)
    ci, _ = green_then_ci(oracle_calc)
    assert ci.rc == 1, ci.out
    assert any('new-test run (rule 49): the tree of the new tests was changed while it ran: '
               'tests/test_new.py' in line for line in ci.lines('OG734')), ci.out


def test_new_test_without_a_src_change_is_not_run_against_the_base(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'tests/test_new.py': NEW_TEST}, bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert ci.rc == 0, ci.out
    assert 'New tests against the base src' not in report
