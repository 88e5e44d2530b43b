"""A skip in a class's set-up method (``setUp``, ``setup_method``) silences every test of the
class, like a class-level marker (rules 14 and 39): the baseline records it for those tests,
and the gate accepts the skips it raised, which unittest reports at each test's own line,
by their reason (simplejson's ``TestFrozenDict``)."""
from __future__ import annotations

import json

import pytest

from builders.ci_repo import adopted_with
from builders.ci_repo import CiRepo
from builders.repos import Repo
from oracle_guard.commands.baseline import main as baseline_main
from oracle_guard.hooks.check_named_freezes import main

TODAY = '2026-11-29'
TEST = 'tests/test_frozen.py'
# As simplejson writes it, with a builtin no Python has, so that the skip always runs.
FROZEN = '''\
import unittest


class TestFrozenDict(unittest.TestCase):
    def setUp(self):
        try:
            frozen_dict_builtin  # noqa: F821
        except NameError:
            self.skipTest("frozendict not available")

    def test_toplevel(self):
        self.assertEqual(frozen_dict_builtin(x=1), {"x": 1})  # noqa: F821

    def test_nested(self):
        self.assertEqual({"y": frozen_dict_builtin(b=2)}, {"y": {"b": 2}})  # noqa: F821
'''
PYTEST_STYLE = '''\
import pytest


class TestSlow:
    def setup_method(self):
        pytest.skip("later")

    def test_a(self):
        assert 0

    def test_b(self):
        assert 0
'''


def test_baseline_records_a_set_up_skip_for_every_test_of_the_class(guarded: Repo) -> None:
    guarded.write(TEST, FROZEN)
    guarded.commit('legacy tests')
    assert guarded.run(baseline_main).rc == 0
    (entry,) = json.loads(guarded.read('tests/oracle_baseline.json'))['silences']
    assert (entry['tests'], entry['scope'], entry['kind']) == (
        ['TestFrozenDict::test_toplevel', 'TestFrozenDict::test_nested'], 'class', 'skipTest')
    guarded.commit('oracle-guard baseline')
    assert guarded.run(main, '--today', TODAY, '--all-files').rc == 0


@pytest.mark.parametrize('source', [FROZEN, PYTEST_STYLE], ids=['setUp', 'setup_method'])
def test_frozen_set_up_skip_names_one_test_but_silences_the_class(guarded: Repo,
                                                                  source: str) -> None:
    frozen = source.replace('"frozendict not available"', '"FZ-1 no frozendict"').replace(
        '"later"', '"FZ-1 later"')
    guarded.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes:\n  - id: FZ-1\n'
                  f'    nodeid: {TEST}::TestFrozenDict::test_toplevel\n    class: environment\n'
                  '    evidence: "no frozendict before 3.15"\n    owner: alice\n'
                  '    expires: 2026-12-31\n')
    guarded.write(TEST, frozen)
    guarded.add()
    result = guarded.run(main, '--today', TODAY, TEST)
    assert 'OG306' in result.codes, result.out
    assert 'at class level silences 2 tests' in result.out


@pytest.fixture
def calc(tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    """Adopted with the legacy tests on main and their baseline."""
    return adopted_with(str(tmp_path / 'repo'), {TEST: FROZEN})


def test_gate_accepts_the_baselined_set_up_skip(calc: CiRepo) -> None:
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci()
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_gate_fails_another_skip_of_a_test_the_set_up_skip_covers(calc: CiRepo) -> None:
    """A skip the hooks cannot read (a name computed on ``self``) in a test the baselined
    setUp skip covers, with the setUp skip itself unchanged but no longer raised: its
    reason is not the baselined one, so it is not that skip."""
    cheat = FROZEN.replace('import unittest\n', 'import unittest\n\nfrozen_dict_builtin = dict\n').replace(
        '    def test_toplevel(self):\n',
        '    def test_toplevel(self):\n        getattr(self, "skip" + "Test")("later")\n')
    calc.pull_request({TEST: cheat}, bug=False)
    ci = calc.ci()
    assert ci.rc == 1, ci.out
    assert ci.lines('OG706'), ci.out
    assert 'TestFrozenDict::test_toplevel was skipped' in ci.out
