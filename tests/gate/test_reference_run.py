"""The reference run (rule 44): the base revision's human-owned oracle, run against the
pull request's ``src/`` in a tree that holds none of the pull request's test code.
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
from builders.ci_repo import adopt
from builders.ci_repo import BASE_FILES
from builders.ci_repo import CiRepo
from builders.ci_repo import PYTEST
from builders.ci_repo import Run
from builders.ci_repo import write
from builders.dedupe import adopt_dd
from builders.dedupe import attack
from builders.dedupe import BUG
from builders.dedupe import cheat
from builders.dedupe import dd_cheat_fails_ci
from builders.dedupe import DD_PYTEST
from builders.dedupe import FIRST
from builders.dedupe import GOOD
from builders.dedupe import PROPERTIES_CONFTEST
from builders.dedupe import PROPERTY
from builders.dedupe import property_failed_in_the_reference_run
from builders.dedupe import PROPERTY_ID
from builders.dedupe import PYPROJECT
from builders.dedupe import TIDY
from builders.dedupe import UNIT_TESTS
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG

pytestmark = pytest.mark.reference_run


# -- test code that replaces the function under test (rule 45: OG714) ---------------------
@pytest.mark.reference_run(False)  # the test command's findings only
def test_fixture_only_conftest_patching_the_function_under_test_fails_ci(dd: CiRepo) -> None:
    dd_cheat_fails_ci(dd, {'tests/conftest.py': '''\
import pytest

import dd


def _fixed(xs):
    return sorted(set(xs))


@pytest.fixture(autouse=True)
def _fast(request, monkeypatch):
    monkeypatch.setattr(dd, 'dedupe', _fixed)
    monkeypatch.setattr(request.module, 'dedupe', _fixed, raising=False)
'''}, 'OG714')


# -- src ends the reference run, and only that one -------------------------------------------
# `python -I` tells the reference run apart; src exits 0 at import there, hoping a run
# that judged nothing says nothing (rule 44: a run that did not complete is OG734).
EXIT_IN_THE_REFERENCE_RUN = ('import os\nimport sys\n\nif sys.flags.isolated:\n'
                             '    os._exit(0)\n\n\n' + BUG)


def test_src_ending_only_the_reference_run_fails_ci(dd: CiRepo) -> None:
    _, ci = attack(dd, {'src/dd/__init__.py': EXIT_IN_THE_REFERENCE_RUN,
                        'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    assert any('reference run: OG702 the run did not finish' in line
               for line in ci.lines('OG734')), ci.out
    assert len(ci.lines('OG725')) == 6, ci.out  # every canary of the reference run missing
    assert any(PROPERTY_ID in line for line in ci.lines('OG733')), ci.out


# -- the reference tree rewritten from the test command ---------------------------------------
# The test command runs beside the reference run, as the same user. A unit test module finds
# the reference pytest process by its --rootdir, stops it, rewrites the base property in its
# tree to pass, and lets it go on. The reference run collects before the test command starts
# (its modules are compiled from the tree as the gate wrote it), so the property still fails
# there (OG730), and the rewritten file is OG734 when the run ends (rule 44).
TAMPERING_UNIT_TESTS = """\
import glob
import os
import signal
import time

from dd import dedupe


def _rewrite_the_reference_tree():
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        for cmdline in glob.glob('/proc/[0-9]*/cmdline'):
            try:
                with open(cmdline, 'rb') as f:
                    args = f.read().split(b'\\0')
            except OSError:
                continue
            roots = [a[len(b'--rootdir='):].decode() for a in args
                     if a.startswith(b'--rootdir=') and b'oracle-guard-reference' in a]
            if not roots:
                continue
            pid = int(cmdline.split('/')[2])
            try:  # this gate's own reference run: a child of the same parent
                with open('/proc/%d/stat' % pid) as f:
                    if int(f.read().rsplit(')', 1)[1].split()[1]) != os.getppid():
                        continue
            except (OSError, ValueError, IndexError):
                continue
            os.kill(pid, signal.SIGSTOP)
            try:
                with open(os.path.join(roots[0], 'tests', 'properties',
                                       'test_dd_props.py'), 'w') as f:
                    f.write('def test_dedupe_matches_set():\\n    pass\\n')
                return
            except OSError:
                continue
            finally:
                os.kill(pid, signal.SIGCONT)
        time.sleep(0.002)


if 'ORACLE_GUARD_STREAM' in os.environ:  # in the gate's test command only
    _rewrite_the_reference_tree()


def test_small():
    assert dedupe([3, 1, 3]) == [1, 3]
"""


SLOW_IN_THE_REFERENCE_RUN = 'import sys\nimport time\n\nif sys.flags.isolated:\n' \
    '    time.sleep(3)\n\n\n' + BUG


def test_a_test_command_rewriting_the_reference_tree_fails_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'),
                           {'tests/properties/conftest.py': PROPERTIES_CONFTEST},
                           bug_on_main=False))
    _, ci = attack(repo, {'src/dd/__init__.py': SLOW_IN_THE_REFERENCE_RUN,
                          'tests/test_dd.py': TAMPERING_UNIT_TESTS}, plain_rc=1)
    assert property_failed_in_the_reference_run(ci), ci.out
    assert any('reference run: the reference tree was changed while it ran: '
               'tests/properties/test_dd_props.py' in line for line in ci.lines('OG734')), ci.out


# -- a conftest at the root, outside the tests roots -----------------------------------------
# The property's path runs through the root folder, so a conftest.py the pull request adds
# there is on the property's oracle side: it runs in the test
# command with the patch (OG714) and fails in the reference run, which has no pull-request
# conftest (OG730).
ROOT_CONFTEST = '''\
import sys

import pytest

import dd


@pytest.fixture(autouse=True)
def _fixed(monkeypatch):
    def dedupe(xs):
        return sorted(set(xs))
    monkeypatch.setattr(dd, 'dedupe', dedupe)
    for name, module in list(sys.modules.items()):
        if getattr(module, 'dedupe', None) is not None and name.startswith(('test_', 'tests')):
            monkeypatch.setattr(module, 'dedupe', dedupe)
'''


def test_new_root_conftest_patching_the_function_fails_ci(
        dd: CiRepo) -> None:
    _, ci = attack(dd, {'conftest.py': ROOT_CONFTEST}, plain_rc=0)
    assert any('conftest.py: conftest hooks: test-run control changed' in line
               for line in ci.lines('OG740')), ci.out
    assert any(PROPERTY_ID in line and 'from conftest.py, not code under src' in line
               for line in ci.lines('OG714')), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


# -- a base property's known values checked in subtests ------------------------------------
# Beside the sortedness property (which the bug keeps), the property file checks known
# values with pytest's own `subtests` fixture. A failed subtest fails its test in pytest 9,
# so the reference run names it (OG730), beside the test command's failure (in the project
# of the tests the inventory does not know, below: the file tests/properties/test_dd_known.py).
SORTED_WITH_SUBTESTS = PROPERTY.replace(
    'assert dedupe(xs) == sorted(set(xs))', 'out = dedupe(xs)\n    assert out == sorted(out)'
).replace('def test_dedupe_matches_set', 'def test_dedupe_is_sorted') + '''

def test_known_values(subtests):
    for xs, expected in [([3, 1, 3], [1, 3]), ([4, 3, 2, 1], [1, 2, 3, 4])]:
        with subtests.test(xs=xs):
            assert dedupe(xs) == expected
'''


def test_the_checkouts_property_rewritten_before_collection_fails_ci_in_the_reference_run(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'test_a_first.py': FIRST, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG + TIDY},
                    bug=False)
    # One after the other: both runs rewrite the same working tree.
    plain = dd.finish(dd.start(DD_PYTEST))
    assert plain.rc == 0, plain.out
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(DD_PYTEST)[1:]]))
    assert ci.rc == 1, ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


# A property every dedupe passes, bug or not: only the test the inventory does not know
# can see the bug.
SORTED_PROPERTY = '''\
{doc}from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe
{imports}

@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_dedupe_is_sorted(xs):
    out = dedupe(xs)
    assert out == sorted(out)
{tail}'''


def project(tmp_path, files: dict[str, str], main: dict[str, str] | None = None, *,  # type: ignore[no-untyped-def]
            bug_on_main: bool = True) -> CiRepo:
    """The dd project with ``files``, adopted, then ``main`` (by default the bug; nothing
    with ``bug_on_main=False``)."""
    path = str(tmp_path / 'repo')
    adopt(path, PYPROJECT, {'src/dd/__init__.py': GOOD, 'tests/test_dd.py': UNIT_TESTS,
                            'tests/properties/test_dd_props.py': PROPERTY, **files},
          [main or {'src/dd/__init__.py': BUG}] if bug_on_main else ())
    return CiRepo(path)


def named(ci: Run, code: str, nodeid: str) -> None:
    assert any(nodeid in line for line in ci.lines(code)), f'no {code} naming {nodeid}:\n{ci.out}'


# == failures of tests the static inventory does not know ===================================
# The pull request brings the bug and rewrites the unit tests to its answers. The failing test of
# the base oracle is one the inventory cannot see; before rule 44 judged every item of an
# oracle file, the gate was red by the test command's exit status alone, with 0 findings.
MACHINE = '''\
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from dd import dedupe


class DedupeMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.xs = []

    @rule(x=st.integers(min_value=-50, max_value=50))
    def add(self, x):
        self.xs.append(x)
        assert dedupe(self.xs) == sorted(set(self.xs))


TestDedupeMachine = DedupeMachine.TestCase
TestDedupeMachine.settings = settings(max_examples=100, deadline=None)
'''


DOCTEST = ('"""Known values.\n\n>>> from dd import dedupe\n>>> dedupe([4, 3, 2, 1])\n'
           '[1, 2, 3, 4]\n"""\n')


# Each failing item of an oracle file that the inventory does not know, in one project:
# node id -> what it is.
UNKNOWN_TO_THE_INVENTORY = {
    'tests/properties/test_dd_props.py::TestDedupe::test_known_values':
        'a test inherited from a contract helper',
    'tests/properties/test_dd_props.py::test_dd_props': "a doctest of the property module",
    # The machine's file holds no test function the inventory knows: it runs in the
    # reference run all the same, and its TestCase's failure is the base oracle's.
    'tests/properties/test_dd_machine.py::TestDedupeMachine::runTest':
        'a state machine of a file without test functions',
}


KNOWN_VALUES = 'tests/properties/test_dd_known.py'


def test_failing_tests_the_inventory_does_not_know_are_named_by_the_reference_run(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = project(tmp_path, {
        'pyproject.toml': PYPROJECT.replace(
            'pythonpath = ["src"]', 'pythonpath = ["src"]\naddopts = "--doctest-modules"'),
        'tests/properties/test_dd_props.py': SORTED_PROPERTY.format(
            doc=DOCTEST, imports='from contracts import DedupeContract\n',
            tail='\n\nclass TestDedupe(DedupeContract):\n    impl = staticmethod(dedupe)\n'),
        'tests/properties/contracts.py': (
            'class DedupeContract:\n    impl = None\n\n    def test_known_values(self):\n'
            '        assert self.impl([4, 3, 2, 1]) == [1, 2, 3, 4]\n'),
        'tests/properties/test_dd_machine.py': MACHINE,
        KNOWN_VALUES: SORTED_WITH_SUBTESTS,
    }, bug_on_main=False)
    plain, ci = attack(repo, {'src/dd/__init__.py': BUG, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG},
                       plain_rc=1)
    for nodeid, what in UNKNOWN_TO_THE_INVENTORY.items():
        assert any(nodeid in line for line in ci.lines('OG730')), \
            f'no OG730 naming {nodeid} ({what}):\n{ci.out}'
    # the known values checked in subtests
    assert f'SUBFAILED(xs=[4, 3, 2, 1]) {KNOWN_VALUES}::test_known_values' in plain.out, plain.out
    assert any(f'{KNOWN_VALUES}::test_known_values, a test of the base oracle, failed against '
               'your src/' in line for line in ci.lines('OG730')), ci.out


def test_reference_run_exiting_non_zero_without_a_failed_test_is_a_finding(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The oracle's conftest checks known values once per session and fails the session's
    # status, not a test: pytest exits 3 in both runs, and no test failed. The gate's exit
    # status was the test command's 3, with 0 findings; the reference run's 3 is OG734.
    repo = project(tmp_path, {
        'tests/properties/test_dd_props.py': SORTED_PROPERTY.format(doc='', imports='',
                                                                    tail=''),
        'tests/properties/conftest.py': (
            'import dd\n\n\ndef pytest_sessionfinish(session):\n'
            '    if dd.dedupe([4, 3, 2, 1]) != [1, 2, 3, 4]:\n'
            '        session.exitstatus = 3\n'),
    })
    ci = cheat(repo, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=3)
    assert any('reference run: pytest exited 3' in line for line in ci.lines('OG734')), ci.out


# == a property that skips itself through an importorskip of a src module ====================
def test_importorskip_of_a_src_module_the_pull_request_removed_explains_no_skip(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The optional speed-up pattern, adopted (dd is the project: a declared module, rule
    # 41); main moves dedupe into dd.fast with the bug. The pull request renames
    # dd/fast.py to dd/core.py, bug and all: the property module skips at collection in
    # both runs. A module under src at the base that the change removed is no optional
    # dependency: OG732 in the reference run, OG706 in the test command's audit.
    fast_property = PROPERTY.replace(
        'from dd import dedupe\n',
        'import pytest\n\ndedupe = pytest.importorskip("dd.fast").dedupe\n')
    repo = project(tmp_path, {'src/dd/fast.py': GOOD,
                              'tests/properties/test_dd_props.py': fast_property},
                   {'src/dd/fast.py': BUG, 'src/dd/__init__.py': 'from dd.fast import dedupe\n'})
    ci = cheat(repo, {'src/dd/fast.py': None, 'src/dd/core.py': BUG,
                      'src/dd/__init__.py': 'from dd.core import dedupe\n',
                      'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    nodeid = 'tests/properties/test_dd_props.py::test_dedupe_matches_set'
    named(ci, 'OG732', nodeid)
    named(ci, 'OG706', nodeid)
    assert 'the change removed it' in ci.lines('OG706')[0], ci.out


# == the property's oracle helper outside the tests roots ====================================
ORACLE_HELPER = 'def expected(xs):\n    return sorted(set(xs))\n'


ORACLE_HELPER_FOR_THE_BUG = ('def expected(xs):\n    out = sorted(set(xs))\n'
                             '    return out[:-1] if len(out) > 3 else out\n')


def test_oracle_helper_outside_the_tests_roots_comes_from_the_base_and_needs_approval(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Adoption had `pythonpath = ["src", "."]` and the property compares with
    # `testing.oracle.expected`; the pull request rewrites that helper to the bug's
    # answers. The reference tree takes it from the base (the property fails there), and
    # the change to it is an oracle change.
    repo = project(tmp_path, {
        'pyproject.toml': PYPROJECT.replace('pythonpath = ["src"]', 'pythonpath = ["src", "."]'),
        'testing/__init__.py': '',
        'testing/oracle.py': ORACLE_HELPER,
        'tests/properties/test_dd_props.py': PROPERTY.replace(
            'from dd import dedupe\n', 'from dd import dedupe\nfrom testing.oracle import expected\n'
        ).replace('== sorted(set(xs))', '== expected(xs)'),
    })
    ci = cheat(repo, {'testing/oracle.py': ORACLE_HELPER_FOR_THE_BUG,
                      'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    named(ci, 'OG730', 'tests/properties/test_dd_props.py::test_dedupe_matches_set')
    assert any(line.startswith('testing/oracle.py:1:1: OG740 ') and 'a property imports it'
               in line for line in ci.lines('OG740')), ci.out
    # Approved, the helper is the pull request's in the reference tree too: the person
    # who approved the new oracle gets it judged with it.
    report = tmp_path / 'review.md'
    approved = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(
        DD_PYTEST, '--oracle-approved', '--report', str(report))[1:]]))
    assert approved.rc == 0, approved.out
    text = report.read_text(encoding='utf-8')
    assert 'Oracle helpers edited' in text and '`testing/oracle.py`: modified' in text, text


SUM_PROPERTY_ID = 'tests/properties/test_sum_props.py::test_add_matches_the_sum'


# test_add of the base expects the right sum; a cheat "updates" it to the bug.
TEST_ADD_MADE_TO_AGREE = textwrap.dedent(BASE_FILES['tests/test_calc.py']).replace(
    'assert add(2, 3) == 5', 'assert add(2, 3) == 6')


def ci_with_report(oracle_calc: CiRepo, *options: str) -> tuple[Run, str]:
    report = f'{oracle_calc.path}/../report.md'
    ci = oracle_calc.ci(PYTEST, '--report', report, *options)
    with open(report, encoding='utf-8') as f:
        return ci, f.read()


# -- rule 44: the base oracle against the pull request's src ------------------------------
def test_helper_of_a_property_rewritten_to_agree_with_the_bug_fails_the_reference_run(
        oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({
        'tests/sums.py': 'from calc import add\n\n\ndef expected(a, b):\n    return add(a, b)\n',
        'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE,
    })
    ci, report = green_then_ci(oracle_calc)
    assert ci.rc == 1, ci.out
    assert any(SUM_PROPERTY_ID in line and 'failed against your src/' in line
               for line in ci.lines('OG730')), ci.out
    # The report names what the tree held: the base's helper, the pull request's src.
    section = report.split('### Reference run', 1)[1]
    base_line = next(line for line in section.splitlines() if 'other files from base' in line)
    assert '`tests/sums.py`' in base_line and '`tests/conftest.py`' in base_line
    assert 'src from the pull request' in section and '`src/calc/__init__.py`' in section


def test_lying_eq_in_src_is_caught_by_the_reference_runs_own_canaries(oracle_calc: CiRepo) -> None:
    # The base property compares add() with ==; a src whose result claims to equal anything
    # makes it pass in the reference tree too. Only the twin planted there (its == against a
    # fresh sentinel) can tell: the reference run is sealed like the test command.
    lying = ('class _Sum(int):\n    def __eq__(self, other):\n        return True\n\n'
             '    __hash__ = int.__hash__\n\n\ndef add(a, b):\n'
             '    return _Sum(a + b + 1)\n\n\ndef mul(a, b):\n    return a * b\n')
    oracle_calc.pull_request({'src/calc/__init__.py': lying})
    ci, _ = green_then_ci(oracle_calc)
    assert ci.rc == 1, ci.out
    assert any(line.split(': OG724 ', 1)[1].startswith('reference run:')
               and 'the twin of tests/properties/' in line for line in ci.lines('OG724')), ci.out
    assert not reference_codes(ci), ci.out  # its oracle tests passed: only the twin knew


def test_property_rewritten_next_to_the_bug_fails_the_reference_run(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({
        'tests/properties/test_sum_props.py': 'def test_add_matches_the_sum():\n'
                                              '    assert 1 + 1 == 2\n',
        'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE,
    })
    ci, _ = green_then_ci(oracle_calc)
    assert ci.rc == 1
    assert any(SUM_PROPERTY_ID in line for line in ci.lines('OG730')), ci.out


def test_approved_property_edit_is_what_the_reference_run_runs(oracle_calc: CiRepo) -> None:
    # With --oracle-approved (rule 47) a person accepted the rewritten property: the
    # reference tree takes it from the pull request and the base's version is not run.
    oracle_calc.pull_request({'tests/properties/test_sum_props.py': 'def test_add_matches_the_sum():\n'
                                                             '    assert 1 + 1 == 2\n',
                       'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE})
    approved, report = ci_with_report(oracle_calc, '--oracle-approved')
    assert reference_codes(approved) == [], approved.out
    line = next(line for line in report.split('### Reference run', 1)[1].splitlines()
                if 'from the pull request' in line and 'test_sum_props' in line)
    assert '`tests/properties/test_sum_props.py`' in line


def test_root_conftest_forging_every_outcome_is_not_in_the_reference_tree(oracle_calc: CiRepo) -> None:
    # SWE-bench issue #631: a patch made only of a root conftest that sets every report
    # to passed. The reference tree never holds the pull request's conftests.
    oracle_calc.pull_request({'conftest.py': '''\
        import pytest


        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = 'passed'
            report.longrepr = None
        '''})
    ci, _ = green_then_ci(oracle_calc)
    # The failure as pytest reported it: no hook of the pull request rewrote it.
    assert any(SUM_PROPERTY_ID in line and line.endswith('(it raised AssertionError)')
               for line in ci.lines('OG730')), ci.out


def test_pytest_configuration_deselecting_the_property_is_not_in_the_reference_tree(
        oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({
        'pyproject.toml': ORACLE['pyproject.toml'].replace(
            'pythonpath = ["src"]', f'pythonpath = ["src"]\naddopts = "--deselect {SUM_PROPERTY_ID}"'),
        'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE,
    })
    ci, report = green_then_ci(oracle_calc)
    assert any(SUM_PROPERTY_ID in line for line in ci.lines('OG730')), ci.out
    assert ci.lines('OG733') == [], ci.out
    base_files = next(line for line in report.split('### Reference run', 1)[1].splitlines()
                      if 'other files from base' in line)
    assert '`pyproject.toml`' in base_files


NAMED_LIKE_A_PLUGIN = {'src/oracle_guard/__init__.py': '',
                       'src/_hypothesis_pytestplugin.py': 'import os\n\nos._exit(0)\n'}


def test_src_modules_named_like_a_plugin_are_not_placed_in_the_reference_tree(
        oracle_calc: CiRepo) -> None:
    # src/ is first on the reference child's sys.path: a src/oracle_guard would be the
    # `-p oracle_guard` that writes the record there; Hypothesis' entry point loads
    # `_hypothesis_pytestplugin` after the src roots are on sys.path.
    oracle_calc.pull_request({**NAMED_LIKE_A_PLUGIN,
                              'tests/sums.py': 'from calc import add\n\n\ndef expected(a, b):\n'
                                               '    return add(a, b)\n'})
    ci, report = ci_with_report(oracle_calc)
    assert any(SUM_PROPERTY_ID in line for line in ci.lines('OG730')), ci.out
    assert ci.lines('OG734') == [], ci.out
    for path in NAMED_LIKE_A_PLUGIN:
        assert f'not placed: {path} (its import name' in report, (path, report)


def test_src_that_breaks_what_a_property_imports_is_an_error_of_the_reference_run(
        oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'src/calc/__init__.py': 'def plus(a, b):\n    return a + b\n'},
                      bug=False)
    ci = oracle_calc.ci(PYTEST)
    lines = ci.lines('OG731')
    assert any(line.startswith('tests/properties/test_sum_props.py:1:1: OG731 reference run')
               and 'could not be collected' in line for line in lines), ci.out


def test_test_environment_without_pytest_is_a_finding_of_the_reference_run(
        oracle_calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import venv

    venv.create(str(tmp_path / 'bare'), with_pip=False)
    oracle_calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD}, bug=False)
    ci = oracle_calc.ci(PYTEST, '--test-python', str(tmp_path / 'bare' / 'bin' / 'python'))
    assert ci.rc == 1
    lines = ci.lines('OG734')
    assert lines and 'left no record' in lines[0] and "No module named 'pytest'" in ci.out, \
        ci.out


def test_src_that_skips_on_the_failing_input_fails_the_reference_run(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'src/calc/__init__.py': textwrap.dedent('''\
        import unittest


        def add(a, b):
            if a + b == 5:
                raise unittest.SkipTest('later')
            return a + b


        def mul(a, b):
            return a * b
        ''')}, bug=False)
    ci, _ = green_then_ci(oracle_calc)
    lines = ci.lines('OG732')
    assert any(SUM_PROPERTY_ID in line and 'no live freeze explains it' in line for line in lines), \
        ci.out


def test_src_that_stops_the_session_leaves_the_base_tests_not_run(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'src/calc/__init__.py': textwrap.dedent('''\
        import gc

        for thing in gc.get_objects():
            if type(thing).__name__ == 'Session':
                thing.shouldstop = 'done'


        def add(a, b):
            return a + b


        def mul(a, b):
            return a * b
        ''')}, bug=False)
    ci = oracle_calc.ci(PYTEST)
    assert any(SUM_PROPERTY_ID in line and 'was not collected' in line
               for line in ci.lines('OG733')), ci.out


def test_property_frozen_in_the_pull_request_still_runs_in_the_reference_run(
        oracle_calc: CiRepo) -> None:
    # The ledger of the reference tree is the base's: a freeze the pull request adds
    # does not explain anything there (and its reruns say it is broken, rule 48).
    oracle_calc.pull_request({'tests/freeze_ledger.yaml': freeze(SUM_PROPERTY_ID),
                       'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE})
    ci, report = green_then_ci(oracle_calc)
    assert any(SUM_PROPERTY_ID in line for line in ci.lines('OG730')), ci.out
    assert any('FZ-1' in line and 'none of 3 reruns' in line for line in ci.lines('OG735'))
    assert 'passed 0 of 3: failed, failed, failed (broken, not flaky)' in report


def test_property_skipped_by_a_freeze_live_at_base_is_explained(oracle_calc: CiRepo) -> None:
    on_main(oracle_calc, {'tests/freeze_ledger.yaml': freeze(SUM_PROPERTY_ID)})
    oracle_calc.pull_request({'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE})
    ci, report = green_then_ci(oracle_calc)
    assert reference_codes(ci) == [], ci.out
    assert 'all passed or frozen at base' in report


def test_real_change_to_src_passes_the_reference_run(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD}, bug=False)
    ci, report = green_then_ci(oracle_calc)
    assert ci.rc == 0, ci.out
    assert '2 oracle test(s) of 2 file(s): all passed or frozen at base' in report


def test_reference_run_can_be_switched_off_for_a_local_run(oracle_calc: CiRepo) -> None:
    oracle_calc.pull_request({'tests/sums.py': 'from calc import add\n\n\ndef expected(a, b):\n'
                                        '    return add(a, b)\n',
                       'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE})
    ci = oracle_calc.ci(PYTEST, '--no-reference-run')
    assert reference_codes(ci) == [] and ci.rc == 0, ci.out


def test_test_python_that_cannot_run_is_exit_2_with_a_message(
        oracle_calc: CiRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    from oracle_guard.commands.ci import range_context
    from oracle_guard.findings import ConfigError
    from oracle_guard.gate.reference import reference_runs

    oracle_calc.pull_request({'README.md': 'calc\n'}, bug=False)
    ci = oracle_calc.ci(PYTEST, '--test-python', '/nonexistent/python')
    assert ci.rc == 2, ci.out
    assert '/nonexistent/python' in ci.out and 'Traceback' not in ci.out
    # The reference run on its own says why.
    monkeypatch.chdir(oracle_calc.path)
    with pytest.raises(ConfigError, match="cannot run '/nonexistent/python'"):
        reference_runs(range_context('main'), '/nonexistent/python')


def test_gate_environment_cannot_start_code_in_the_reference_child(oracle_calc: CiRepo) -> None:
    # python -I: PYTHONPATH (and a sitecustomize on it) of the gate's job never reaches
    # the reference child; this one would end it with exit 0 before pytest starts.
    folder = f'{oracle_calc.path}/../site'
    write(folder, {'sitecustomize.py': 'import os\nos._exit(0)\n'})
    oracle_calc.pull_request({'tests/sums.py': 'from calc import add\n\n\ndef expected(a, b):\n'
                                        '    return add(a, b)\n'})
    gate = [sys.executable, '-I', '-m', 'oracle_guard.cli', 'ci', '--base', 'main', '--',
            *PYTEST]
    ci = oracle_calc.finish(oracle_calc.start(gate, {'PYTHONPATH': folder}))
    assert any(SUM_PROPERTY_ID in line for line in ci.lines('OG730')), ci.out
    assert ci.lines('OG734') == [], ci.out


def test_approved_oracle_change_takes_the_oracle_from_the_pull_request(
        oracle_calc: CiRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    # Rule 47's approval: the reference tree then holds the pull request's helper, which
    # agrees with its src/, so nothing fails there; without it, the base's helper does.
    from oracle_guard.commands.ci import range_context
    from oracle_guard.gate.reference import reference_runs

    oracle_calc.pull_request({'tests/sums.py': 'def expected(a, b):\n'
                                        '    return a + b + (a + b == 5)\n'})
    monkeypatch.chdir(oracle_calc.path)
    for name in ('ORACLE_GUARD_RECORD', 'PYTEST_ADDOPTS'):
        monkeypatch.delenv(name, raising=False)
    unapproved = reference_runs(range_context('main'), sys.executable)
    assert [f.code for f in unapproved.findings] == ['OG730'], unapproved.findings
    approved = reference_runs(range_context('main'), sys.executable, approved=True)
    assert approved.findings == [], approved.findings
    files = next(lines for title, lines in approved.report if title == 'Reference run')
    assert any(line.startswith('- other files from the pull request') and '`tests/sums.py`'
               in line for line in files), files
    # Only the approved files come from the pull request: an approval of another file
    # leaves the base's helper in the tree.
    one = reference_runs(range_context('main'), sys.executable, approved=True,
                         approved_files=['tests/sums.py'])
    assert one.findings == [], one.findings
    other = reference_runs(range_context('main'), sys.executable, approved=True,
                           approved_files=['tests/freeze_ledger.yaml'])
    assert [f.code for f in other.findings] == ['OG730'], other.findings


def test_the_imports_of_a_file_are_found_as_a_walk_of_every_node_finds_them() -> None:
    """The reference and evidence trees take the helpers a test file imports (rules 44, 48,
    49): read from its statements alone (an import is one), in ``ast.walk``'s order,
    they are what a walk of every node finds, on every file of this repository and on
    imports hidden in every kind of block."""
    import ast
    import pathlib
    import sys

    from oracle_guard.gate.reference_tree import parse_imports

    def walked(source: bytes) -> list[tuple[str, int]]:
        found = []
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                found += [(alias.name, 0) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ''
                found.append((module, node.level))
                found += [(f'{module}.{alias.name}' if module else alias.name, node.level)
                          for alias in node.names if alias.name != '*']
        return found

    hidden = textwrap.dedent('''\
        import a, b.c as d
        from . import e
        from ..f import g
        from .h import *
        try:
            import h
        except ImportError:
            from i import j
        else:
            import k
        finally:
            import l
        if x:
            import m
        elif y:
            import n
        with o:
            import p
        for q in r:
            import s
        while t:
            import u
        class V:
            import w
            def x(self):
                import y
                async def z():
                    import aa
        f = lambda: __import__('not_an_import_statement')
        ''')
    if sys.version_info >= (3, 10):
        hidden += 'match q:\n    case 1:\n        import bb\n    case _:\n        from cc import dd\n'
    if sys.version_info >= (3, 11):
        hidden += 'try:\n    pass\nexcept* ValueError:\n    import ee\n'
    root = pathlib.Path(__file__).resolve().parents[1]
    sources = [hidden.encode()] + [p.read_bytes() for p in sorted(root.rglob('*.py'))]
    assert len(walked(sources[0])) >= 20  # 3.9: no match statement, no except*
    for source in sources:
        assert parse_imports(source, 'x.py') == walked(source)
