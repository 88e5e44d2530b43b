"""Skips and xfails at run time: each one the run reports is explained by a live freeze,
the baseline or an environment condition that held in that run, however the test code
passed it on (rule 14 at run time).
"""

from __future__ import annotations

import os

import pytest

from builders.calc import cheat_fails_ci_naming
from builders.calc import FROZEN_ADD
from builders.ci_repo import adopt
from builders.ci_repo import CiRepo
from builders.ci_repo import git
from builders.ci_repo import PYTEST
from builders.ci_repo import Run
from builders.ci_repo import write
from builders.dedupe import adopt_project
from builders.dedupe import APP_TEST
from builders.dedupe import attack
from builders.dedupe import BUG
from builders.dedupe import cheat
from builders.dedupe import FOUR
from builders.dedupe import gate
from builders.dedupe import gate_pull_request
from builders.dedupe import GOOD
from builders.dedupe import HELPER_UNIT
from builders.dedupe import PROPERTY
from builders.dedupe import property_failed_in_the_reference_run
from builders.dedupe import PROPERTY_ID
from builders.dedupe import pull_request_cheat
from builders.dedupe import PYPROJECT
from builders.dedupe import SMALL
from builders.dedupe import TWO_UNITS
from builders.dedupe import unit_project
from builders.dedupe import UNIT_TESTS
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG
from builders.dedupe import WAYS
from builders.pre_commit import HookRepo
from builders.pre_commit import judge
from builders.repos import Repo
from oracle_guard.commands.baseline import main as baseline


# -- a skip computed in a helper the test file imports ---------------------------------------
# The test file spells no silence word; its helper builds unittest.skip from a computed
# name, which holds no silence word either (rule 14). The hooks point at the helper
# (OG310); the plugin reads the flag at collection and stops the session (OG716).
COMPUTED_HELPER = "import unittest\n\nlater = getattr(unittest, 'sk' + 'ip')\n"


SILENCED = UNIT_TESTS.replace(
    'from dd import dedupe\n', 'from dd import dedupe\nfrom _later import later\n').replace(
    'def test_four', "@later('later')\ndef test_four").replace(
    'def test_many', "@later('later')\ndef test_many")


@pytest.mark.reference_run
def test_skip_computed_in_a_helper_fails_ci(dd: CiRepo) -> None:
    _, ci = attack(dd, {'tests/_later.py': COMPUTED_HELPER, 'tests/test_dd.py': SILENCED},
                   plain_rc=1)
    assert any(line.startswith('tests/_later.py:3:') for line in ci.lines('OG310')), ci.out
    stopped = ci.lines('OG716')
    for name in ('test_four', 'test_many'):
        assert any(f'tests/test_dd.py::{name}: @unittest.skip without a freeze id' in line
                   for line in stopped), ci.out
    assert not ci.lines('OG723') and not ci.lines('OG724'), ci.out  # folded under OG716
    assert property_failed_in_the_reference_run(ci), ci.out


# -- skips passed on by a helper package's star import and a module attribute ---------------
# test_four takes `later` from tests/helpers/__init__.py, which star-imports it from
# tests/helpers/marks.py; test_many uses `_support.hold` through `import _support`. The
# prefilter follows both helpers from a test file with no silence word (rule 14), so the
# hooks name each test (OG301); the star import in a tests __init__.py is test-run
# control (rule 32, OG740); the plugin stops the session (OG716).
PASSED_ON = UNIT_TESTS.replace(
    'from dd import dedupe\n',
    'from dd import dedupe\nfrom helpers import later\nimport _support\n').replace(
    'def test_four', "@later('later')\ndef test_four").replace(
    'def test_many', "@_support.hold('later')\ndef test_many")


@pytest.mark.reference_run
def test_skips_passed_on_by_a_helper_package_and_a_module_attribute_fail_ci(
        dd: CiRepo) -> None:
    _, ci = attack(dd, {'tests/helpers/__init__.py': 'from .marks import *\n',
                        'tests/helpers/marks.py': 'import unittest\n\nlater = unittest.skip\n',
                        'tests/_support.py': 'from unittest import skip as hold\n',
                        'tests/test_dd.py': PASSED_ON}, plain_rc=1)
    named = ci.lines('OG301')
    assert any(line.startswith('tests/helpers/marks.py:3:') for line in named), ci.out
    assert any(line.startswith('tests/test_dd.py:10:') for line in named), ci.out  # test_four
    assert any(line.startswith('tests/test_dd.py:15:') for line in named), ci.out  # test_many
    assert any(line.startswith('tests/helpers/__init__.py:1:') and 'star import' in line
               for line in ci.lines('OG740')), ci.out
    assert len(ci.lines('OG716')) == 2, ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


# -- a helper's skip reached by __import__ and through a dict --------------------------------
# test_four: `@__import__('_later').later(...)`, test_many: `@MARKS['later'](...)` with
# `MARKS = {"later": unittest.skip}` in tests/_marks.py. The hooks name the helpers' lines
# only (OG301, rule 14), not the tests; the plugin reads the flags at collection (OG716).
REACHED = UNIT_TESTS.replace(
    'from dd import dedupe\n', 'from dd import dedupe\nfrom _marks import MARKS\n').replace(
    'def test_four', "@__import__('_later').later('later')\ndef test_four").replace(
    'def test_many', "@MARKS['later']('later')\ndef test_many")


@pytest.mark.reference_run
def test_skips_reached_by_dunder_import_and_a_dict_fail_ci(dd: CiRepo) -> None:
    _, ci = attack(dd, {'tests/_later.py': 'import unittest\n\nlater = unittest.skip\n',
                        'tests/_marks.py': 'import unittest\n\nMARKS = {"later": unittest.skip}\n',
                        'tests/test_dd.py': REACHED}, plain_rc=1)
    named = ci.lines('OG301')
    assert any(line.startswith('tests/_later.py:3:') for line in named), ci.out
    assert any(line.startswith('tests/_marks.py:3:') for line in named), ci.out
    stopped = ci.lines('OG716')
    for name in ('test_four', 'test_many'):
        assert any(f'tests/test_dd.py::{name}: @unittest.skip without a freeze id' in line
                   for line in stopped), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


HELPERS = {
    # a chain of two helpers (test_chain)
    'tests/_chain1.py': 'from _chain2 import todo  # noqa: F401\n',
    'tests/_chain2.py': 'import unittest\n\ntodo = unittest.skip\n',
    # a star import of a helper that star-imports unittest
    'tests/_star.py': 'from unittest import *  # noqa: F401,F403\n',
    # a helper outside the tests roots (importable: `python -m pytest` puts the checkout
    # first on sys.path)
    'testing/__init__.py': '',
    'testing/harness.py': 'import unittest\n\nlater = unittest.skip\n',
    # a conditional re-export: the branch that runs is the skip
    'tests/_cond.py': ('import unittest\n\nif True:\n    maybe = unittest.skip\nelse:\n'
                       '    def maybe(reason):\n        return lambda f: f\n'),
    # importlib with a literal name
    'tests/_viaimp.py': "import importlib\n\nlater = importlib.import_module('unittest').skip\n",
    # an alias of an alias
    'tests/_alias.py': 'import unittest as u\n\n_s = u.skip\nlater = _s\n',
    # a fixture-only conftest that also passes a skip on
    'tests/conftest.py': 'from unittest import skip as later  # noqa: F401\n',
    # a function that returns the mark
    'tests/_wrap.py': ('import pytest\n\n\ndef later(reason):\n'
                       '    return pytest.mark.skip(reason=reason)\n'),
    # a mark bound to a name in the helper
    'tests/_mark.py': "import pytest\n\nlater = pytest.mark.skip(reason='later')\n",
    # an imperative skip inside a helper function outside the tests roots
    'testing/bail.py': "import pytest\n\n\ndef bail():\n    pytest.skip('later')\n",
    # PEP 562: the helper module's __getattr__ hands out the skip
    'tests/_getattr.py': ('def __getattr__(name):\n    import unittest\n\n'
                          '    return unittest.skip\n'),
    # a class attribute
    'tests/_cls.py': 'import unittest\n\n\nclass H:\n    later = unittest.skip\n',
}


DECORATED = {
    'chain': ('from _chain1 import todo', "@todo('later')"),
    'star': ('from _star import *  # noqa: F403', "@skip('later')  # noqa: F405"),
    'outside': ('from testing.harness import later as outside', "@outside('later')"),
    'conditional': ('from _cond import maybe', "@maybe('later')"),
    'importlib': ('from _viaimp import later as imp_later', "@imp_later('later')"),
    'alias': ('from _alias import later as alias_later', "@alias_later('later')"),
    'conftest': ('from conftest import later as conftest_later', "@conftest_later('later')"),
    'wrapper': ('from _wrap import later as wrap_later', "@wrap_later('later')"),
    'named_mark': ('from _mark import later as mark_later', '@mark_later'),
    'module_getattr': ('from _getattr import later as getattr_later',
                       "@getattr_later('later')"),
    'class_attr': ('from _cls import H', "@H.later('later')"),
}


def silenced_unit() -> str:
    text = HELPER_UNIT
    imports = '\n'.join(imp for imp, _ in DECORATED.values())
    text = text.replace('from dd import dedupe\n', f'from dd import dedupe\n{imports}\n', 1)
    for way, (_, decorator) in DECORATED.items():
        text = text.replace(f'\ndef test_{way}():', f'\n{decorator}\ndef test_{way}():')
    return text


# Followed by the scanner: check-named-freezes names the helper's line, the test's too
# where the name resolves to a runner name there.
FOLLOWED = {'chain': 'tests/_chain2.py:3', 'conditional': 'tests/_cond.py:4',
            'importlib': 'tests/_viaimp.py:3', 'alias': 'tests/_alias.py:4',
            'wrapper': 'tests/_wrap.py:5', 'named_mark': 'tests/_mark.py:3',
            'module_getattr': 'tests/_getattr.py:4'}


def test_every_skip_passed_on_by_a_helper_fails_ci(helpers: CiRepo) -> None:
    # The plugin, forced on, reads each collected test's marks and
    # unittest flags whatever module bound them, and stops the session (plain pytest too);
    # the hooks' rules name the helper lines they follow.
    ci = cheat(helpers, {**HELPERS, 'tests/test_dd.py': silenced_unit()}, plain_rc=1)
    for way in WAYS:
        assert any(f'tests/test_dd.py::test_{way}: @' in line
                   for line in ci.lines('OG716')), f'{way}:\n{ci.out}'
    for way, where in FOLLOWED.items():
        assert any(line.startswith(f'{where}:') for line in ci.lines('OG301')), \
            f'{way}:\n{ci.out}'
    assert not ci.lines('OG723') and not ci.lines('OG724'), ci.out  # folded under OG716
    # The star import is test-run control too (it may bring pytest_* hooks): rule 32.
    assert any(line.startswith('tests/_star.py:') for line in ci.lines('OG740')), ci.out


def test_imperative_skip_in_a_helper_outside_the_tests_roots_fails_ci(helpers: CiRepo) -> None:
    # No static rule reads testing/bail.py (not test code, not src) and the
    # plugin sees no mark at collection; plain pytest goes green. The audit sees the skip.
    unit = f'{SMALL}\n\ndef test_bail():\n{FOUR}'
    write(helpers.path, {'tests/test_dd.py': unit})
    git(helpers.path, 'commit', '-q', '-am', 'one failing test')
    ci = cheat(helpers, {
        'testing/__init__.py': '', 'testing/bail.py': HELPERS['testing/bail.py'],
        'tests/test_dd.py': unit.replace('from dd import dedupe\n',
                                         'from dd import dedupe\nfrom testing.bail import bail\n')
        .replace('def test_bail():\n', 'def test_bail():\n    bail()\n')})
    assert [line.split(': ')[0] for line in ci.lines('OG706')] == ['tests/test_dd.py:9:1'], ci.out
    assert 'tests/test_dd.py::test_bail was skipped' in ci.out, ci.out


# -- a baselined skipif whose condition src answers -------------------------------------
# Adoption: the property carries `@pytest.mark.skipif(not dd.FAST_AVAILABLE, ...)` and src
# says `FAST_AVAILABLE = True`; init baselines the skipif (rule 39). The pull request sets
# it False: the property skips in every run, and the baselined silence explained the skip.
# The base revision's own collection (rule 39b) now evaluates the skipif against the base's
# src: the base ran the property, so the baseline explains no skip of it (OG706 in the test
# command, OG732 in the reference run). A skipif that held at base too is still explained.
FAST_FLAG = 'FAST_AVAILABLE = True\n\n\n'


SKIPIF_PROPERTY = PROPERTY.replace(
    'from hypothesis import', 'import pytest\nfrom hypothesis import').replace(
    'from dd import dedupe\n', 'import dd\nfrom dd import dedupe\n').replace(
    '# No deadline', '@pytest.mark.skipif(not dd.FAST_AVAILABLE, reason="needs the fast path")\n'
    '# No deadline')


def adopted_with_flag(path: str, flag: bool) -> CiRepo:
    flag_line = FAST_FLAG.replace('True', str(flag))
    return adopt(path, PYPROJECT, {
        'src/dd/__init__.py': flag_line + GOOD, 'tests/test_dd.py': UNIT_TESTS,
        'tests/properties/test_dd_props.py': SKIPIF_PROPERTY},
        after=[{'src/dd/__init__.py': flag_line + BUG}])


@pytest.mark.reference_run
def test_a_baselined_skipif_whose_condition_src_flips_fails_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = adopted_with_flag(str(tmp_path / 'repo'), True)
    _, ci = attack(repo, {'src/dd/__init__.py': FAST_FLAG.replace('True', 'False') + BUG,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    assert any(PROPERTY_ID in line and 'the base revision, which ran it' in line
               for line in ci.lines('OG706')), ci.out
    assert any(PROPERTY_ID in line and 'reference run' in line
               for line in ci.lines('OG732')), ci.out


def test_a_baselined_skipif_that_held_at_base_too_still_explains_the_skip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = adopted_with_flag(str(tmp_path / 'repo'), False)
    repo.pull_request({'src/dd/__init__.py': FAST_FLAG.replace('True', 'False') + GOOD},
                      bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


# hypothesis and a module nobody installs are declared test dependencies (rule 41).
DECLARING = PYPROJECT.replace(
    '[tool.pytest', '[project.optional-dependencies]\n'
    'test = ["pytest", "hypothesis", "nowhere-installed-og"]\n\n[tool.pytest')


def og706_tests(ci: Run) -> list[str]:
    return sorted(line.split(' was skipped')[0].rsplit(' ', 1)[-1]
                  for line in ci.lines('OG706'))


# == rule 41: importorskip's words explain a skip only where importorskip raised it =========
BAIL = ("import pytest\n\n\ndef bail():\n"
        "    pytest.skip(\"could not import 'hypothesis': No module named 'hypothesis'\")\n")


IMPORTING = ('import pytest\nfrom dd import dedupe\n{imports}\n'
             'pytest.importorskip("hypothesis")\n')


def test_importorskip_words_from_a_helper_outside_the_tests_roots_fail_ci(tmp_path) -> None:
    # The module-level importorskip of a declared dependency imports fine; the
    # skip comes from testing/bail.py with importorskip's words. pytest reports it at the
    # helper's line, and hypothesis is loaded: the declared import explains nothing.
    repo = adopt_project(str(tmp_path / 'repo'), unit_project(), [{'src/dd/__init__.py': BUG}],
                 DECLARING)
    unit = TWO_UNITS.replace('from dd import dedupe\n',
                             IMPORTING.format(imports='from testing.bail import bail\n'))
    ci = pull_request_cheat(repo, {'testing/__init__.py': '', 'testing/bail.py': BAIL,
                      'tests/test_dd.py': unit.replace('def test_four():\n',
                                                       'def test_four():\n    bail()\n')})
    assert og706_tests(ci) == ['tests/test_dd.py::test_four'], ci.out


NEED = ("import pytest\n\n\ndef need(module):\n"
        "    pytest.skip(f'could not import {module!r}: No module named {module!r}')\n")


def test_importorskip_words_from_a_baselined_helper_fail_ci(tmp_path) -> None:
    # The helper is test code from before adoption, its skip baselined; the pull
    # request edits only the test module. The skip is reported at tests/_support.py, not at
    # an importorskip of the test's module, and hypothesis imported.
    repo = adopt_project(str(tmp_path / 'repo'), unit_project(**{'tests/_support.py': NEED}),
                 [{'src/dd/__init__.py': BUG}], DECLARING)
    with open(f'{repo.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        assert '"tests/_support.py"' in f.read()
    unit = TWO_UNITS.replace('from dd import dedupe\n',
                             IMPORTING.format(imports='from _support import need\n'))
    ci = pull_request_cheat(repo, {'tests/test_dd.py': unit.replace(
        'def test_four():\n', 'def test_four():\n    need("hypothesis")\n')})
    assert og706_tests(ci) == ['tests/test_dd.py::test_four'], ci.out


LATER = "import pytest\n\n\ndef later(why):\n    pytest.skip(f'later: {why}')\n"


def test_new_call_of_a_baselined_helper_skip_fails_ci(tmp_path) -> None:
    # The baselined helper skips with words of its own, so the
    # audit's importorskip check has nothing to say; the call in test_four is new since
    # the base, and the baseline records the calls that existed (rule 39): OG301.
    repo = adopt_project(str(tmp_path / 'repo'), unit_project(**{'tests/_support.py': LATER}),
                 [{'src/dd/__init__.py': BUG}])
    unit = TWO_UNITS.replace('from dd import dedupe\n',
                             'from dd import dedupe\nfrom _support import later\n')
    ci = pull_request_cheat(repo, {'tests/test_dd.py': unit.replace(
        'def test_four():\n', 'def test_four():\n    later("flaky")\n')})
    assert any(line.startswith('tests/test_dd.py:') and 'calls tests/_support.py::later' in line
               for line in ci.lines('OG301')), ci.out


def test_importorskip_of_a_declared_module_that_is_missing_passes_ci(tmp_path) -> None:
    # The honest counterpart: a new test importorskips a declared dependency this
    # environment lacks, in its own body; pytest reports the skip at that call.
    repo = adopt_project(str(tmp_path / 'repo'), unit_project(), [], DECLARING)
    unit = TWO_UNITS + ('\n\ndef test_extra():\n'
                        '    pytest.importorskip("nowhere_installed_og")\n' + FOUR)
    plain, ci = gate_pull_request(repo, {'tests/test_dd.py': 'import pytest\n' + unit})
    assert plain.rc == 0 and '1 skipped' in plain.out, plain.out
    assert ci.rc == 0, ci.out


# == rule 39: a baselined silence follows a moved file only onto a test new there ==========
LEGACY_SKIP = ('import pytest\nfrom dd import dedupe\n\n\n'
               '@pytest.mark.skip(reason="legacy, never fixed")\ndef test_four():\n'
               '    assert len(dedupe([4, 3, 2, 1])) >= 0\n')


def test_baselined_skip_moved_onto_a_test_that_ran_fails_ci(tmp_path) -> None:
    # The legacy file is deleted and its skipped test_four "moved" over the
    # running (failing) tests/test_dd.py::test_four. The entry's file is gone, so rule 39
    # let it match anywhere; test_four existed at the base without it: OG323.
    repo = adopt_project(str(tmp_path / 'repo'), unit_project(**{'tests/test_legacy.py': LEGACY_SKIP}),
                 [{'src/dd/__init__.py': BUG}])
    moved = 'import pytest\n' + SMALL + '\n\n' + LEGACY_SKIP.split('\n\n\n', 1)[1]
    ci = pull_request_cheat(repo, {'tests/test_legacy.py': None, 'tests/test_dd.py': moved})
    assert [line.split(': ')[0] for line in ci.lines('OG323')] == ['tests/test_dd.py:9:2'], \
        ci.out
    assert 'tests/test_legacy.py' in ci.lines('OG323')[0], ci.out


def test_baselined_skip_moved_with_its_file_passes_ci(tmp_path) -> None:
    # The honest counterpart: the legacy file renamed, its baselined skip with it.
    repo = adopt_project(str(tmp_path / 'repo'), unit_project(**{'tests/test_legacy.py': LEGACY_SKIP}),
                 [])
    plain, ci = gate_pull_request(repo, {'tests/test_legacy.py': None,
                                    'tests/test_archive.py': LEGACY_SKIP})
    assert plain.rc == 0 and '1 skipped' in plain.out, plain.out
    assert ci.rc == 0, ci.out


# The same in every mode of the hooks (rule 50), on the guarded repository of conftest.py.
APP_LEGACY = ('import pytest\n\n\n@pytest.mark.skip(reason="legacy")\ndef test_parse():\n'
              '    assert True\n')


def _adopted_with_legacy(repo: Repo) -> None:
    """The root commit (adoption) holds tests/test_legacy.py and the baseline of its skip:
    history mode judges no commit before the change."""
    repo.write('tests/test_legacy.py', APP_LEGACY)
    assert repo.run(baseline).rc == 0
    repo.add()
    root = repo.git('rev-list', '--max-parents=0', 'HEAD').strip()
    repo.git('reset', '-q', '--soft', root)
    repo.git('commit', '-q', '--amend', '--no-verify', '-m', 'adopt the guard')
    assert b'tests/test_legacy.py' in repo.read('tests/oracle_baseline.json')


def test_baselined_skip_moved_onto_a_test_that_ran_fails_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _adopted_with_legacy(user)
    ran = user.read(APP_TEST).decode()

    def move(repo: Repo) -> None:
        repo.rm('tests/test_legacy.py')
        repo.write(APP_TEST, 'import pytest\n' + ran.replace(
            'def test_parse', '@pytest.mark.skip(reason="legacy")\ndef test_parse'))

    result = judge(mode, user, hook_repo, move)
    assert result.rc == 1, result.out
    assert result.has('OG323', APP_TEST), result.out


def test_baselined_skip_moved_to_a_new_file_passes_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _adopted_with_legacy(user)

    def move(repo: Repo) -> None:
        repo.rm('tests/test_legacy.py')
        repo.write('tests/test_archive.py', APP_LEGACY)

    result = judge(mode, user, hook_repo, move)
    assert result.rc == 0, result.out


# -- the run itself ------------------------------------------------------------------------
def test_autouse_fixture_skipping_through_a_computed_name_fails_ci(calc: CiRepo) -> None:
    ci = cheat_fails_ci_naming(calc, {'tests/conftest.py': '''\
        import pytest


        @pytest.fixture(autouse=True)
        def _later(request):
            if 'add' in request.node.name:
                getattr(pytest, ''.join(['s', 'k', 'i', 'p']))('flaky on CI')
        '''}, 'OG706', 'tests/test_calc.py::test_add', 'AddCase::test_add_unit')
    assert 'test command exited 0' in ci.summary


def test_skip_exception_re_exported_from_a_helper_outside_tests_fails_ci(calc: CiRepo) -> None:
    cheat_fails_ci_naming(calc, {
        'tools/__init__.py': '',
        'tools/outcomes.py': 'from _pytest.outcomes import Skipped as Done\n',
        'tests/conftest.py': '''\
            import pytest

            from tools.outcomes import Done


            @pytest.fixture(autouse=True)
            def _done(request):
                if 'add' in request.node.name:
                    raise Done('not today')
            ''',
    }, 'OG706', 'tests/test_calc.py::test_add')


def test_frozen_test_with_a_live_ledger_row_passes_ci(calc: CiRepo) -> None:
    calc.pull_request({'tests/freeze_ledger.yaml': FROZEN_ADD}, bug=False)
    report = os.path.join(calc.path, '..', 'review.md')
    summary = os.path.join(calc.path, '..', 'step-summary.md')
    with open(summary, 'w', encoding='utf-8') as f:
        f.write('# earlier step\n')
    # A freeze row added is an oracle change: a person approves it (rule 47).
    ci = calc.ci(PYTEST, '--today', '2098-12-01', '--report', report, '--oracle-approved',
                 env={'GITHUB_STEP_SUMMARY': summary})
    assert ci.rc == 0, ci.out
    with open(report, encoding='utf-8') as f:
        text = f.read()
    assert '### Freeze rows added' in text
    assert '| FZ-1 | tests/test_calc.py::test_add | order-dependent | alice | 2099-01-01 |' in text
    with open(summary, encoding='utf-8') as f:
        assert f.read() == '# earlier step\n' + text
