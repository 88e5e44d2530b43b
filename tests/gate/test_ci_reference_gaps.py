"""Gaps of the sealed reference run (rule 44) that an adversarial review found
(benchmarks/ATTACKS.md, attacks 63, 66 and 71), each closed.

Each repository adopts the guard with ``oracle-guard init`` and then gets the real bug of
``tests/test_ci_attacks.py`` on ``main`` (``dedupe`` drops the largest value past three
distinct ones); each pull request leaves the bug in place. Plain pytest is run beside
``oracle-guard ci`` (run isolated, as the action runs it): the gate must fail, and name
the test of the base oracle that failed or the file whose change needs approval.
"""
from __future__ import annotations

import sys

from ci_repo import adopt
from ci_repo import CiRepo
from ci_repo import Run
from test_ci_attacks import BUG
from test_ci_attacks import GOOD
from test_ci_attacks import PROPERTY
from test_ci_attacks import PYPROJECT
from test_ci_attacks import PYTEST
from test_ci_attacks import UNIT_TESTS
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG
from test_ci_attacks_session import cheat

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


def project(tmp_path, files: dict[str, str], main: dict[str, str] | None = None) -> CiRepo:  # type: ignore[no-untyped-def]
    """The dd project with ``files``, adopted, then ``main`` (by default the bug)."""
    path = str(tmp_path / 'repo')
    adopt(path, PYPROJECT, {'src/dd/__init__.py': GOOD, 'tests/test_dd.py': UNIT_TESTS,
                            'tests/properties/test_dd_props.py': PROPERTY, **files},
          [main or {'src/dd/__init__.py': BUG}])
    return CiRepo(path)


def named(ci: Run, code: str, nodeid: str) -> None:
    assert any(nodeid in line for line in ci.lines(code)), f'no {code} naming {nodeid}:\n{ci.out}'


# == attack 63: failures of tests the static inventory does not know ========================
# The pull request only rewrites the unit tests to the bug's answers. The failing test of
# the base oracle is one the inventory cannot see; before rule 44 judged every item of an
# oracle file, the gate was red by the test command's exit status alone, with 0 findings.
def test_failing_test_inherited_from_a_contract_helper_is_named_by_the_reference_run(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = project(tmp_path, {
        'tests/properties/test_dd_props.py': SORTED_PROPERTY.format(
            doc='', imports='from contracts import DedupeContract\n',
            tail='\n\nclass TestDedupe(DedupeContract):\n    impl = staticmethod(dedupe)\n'),
        'tests/properties/contracts.py': (
            'class DedupeContract:\n    impl = None\n\n    def test_known_values(self):\n'
            '        assert self.impl([4, 3, 2, 1]) == [1, 2, 3, 4]\n'),
    })
    ci = cheat(repo, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    named(ci, 'OG730', 'tests/properties/test_dd_props.py::TestDedupe::test_known_values')


def test_failing_doctest_of_a_property_module_is_named_by_the_reference_run(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    doctest = ('"""Known values.\n\n>>> from dd import dedupe\n>>> dedupe([4, 3, 2, 1])\n'
               '[1, 2, 3, 4]\n"""\n')
    repo = project(tmp_path, {
        'pyproject.toml': PYPROJECT.replace(
            'pythonpath = ["src"]', 'pythonpath = ["src"]\naddopts = "--doctest-modules"'),
        'tests/properties/test_dd_props.py': SORTED_PROPERTY.format(doc=doctest, imports='',
                                                                    tail=''),
    })
    ci = cheat(repo, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    named(ci, 'OG730', 'tests/properties/test_dd_props.py::test_dd_props')


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


def test_failing_state_machine_of_a_file_without_test_functions_is_named_by_the_reference_run(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The machine's file holds no test function the inventory knows: it runs in the
    # reference run all the same, and its TestCase's failure is the base oracle's.
    repo = project(tmp_path, {
        'tests/properties/test_dd_props.py': SORTED_PROPERTY.format(doc='', imports='',
                                                                    tail=''),
        'tests/properties/test_dd_machine.py': MACHINE,
    })
    ci = cheat(repo, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    named(ci, 'OG730', 'tests/properties/test_dd_machine.py::TestDedupeMachine::runTest')


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


# == attack 71: a property that skips itself through an importorskip of a src module =========
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


# == attack 66: the property's oracle helper outside the tests roots =========================
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
        PYTEST, '--oracle-approved', '--report', str(report))[1:]]))
    assert approved.rc == 0, approved.out
    text = report.read_text(encoding='utf-8')
    assert 'Oracle helpers edited' in text and '`testing/oracle.py`: modified' in text, text
