"""The gate played as a cheating agent after this round's changes (benchmarks/ATTACKS.md,
attacks 62-82): the call-time lock's health-check discount (rule 23), skips handed over by
helpers (rule 14), the reference run (rule 44). What the gate catches.

The repository is the one of ``test_ci_attacks.py``: ``dd`` adopted with ``oracle-guard
init``, then the bug on ``main`` (``dedupe`` drops the largest value past three distinct
ones), caught by two unit tests and the Hypothesis property. Each pull request leaves the
bug in place. The attacks were first tried against a leave-out of the property files from
the test command, which was not merged (ATTACKS.md says why); the ones that still get
through are described in ATTACKS.md and reproduced by benchmarks/attacks_open/round3.py,
not written here: this file asserts only what the gate catches.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ci_repo import adopt
from ci_repo import CiRepo
from ci_repo import copy_template
from ci_repo import git
from ci_repo import Run
from ci_repo import write
from test_ci_attacks import BUG
from test_ci_attacks import gate
from test_ci_attacks import GOOD
from test_ci_attacks import PROPERTY
from test_ci_attacks import PROPERTY_ID
from test_ci_attacks import PYPROJECT
from test_ci_attacks import UNIT_TESTS
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG
from test_ci_attacks_session import DD_UNIT
from test_ci_attacks_session import DD_UNIT_FOR_THE_BUG
from test_ci_attacks_session import IMPL_PROPERTY
from test_ci_attacks_session import impls

def adopt_dd(path: str, project: dict[str, str] | None = None) -> str:
    """``dd`` (with ``project``'s files) adopted with the README's commands, then the bug
    on main."""
    adopt(path, PYPROJECT, {'src/dd/__init__.py': GOOD, 'tests/test_dd.py': UNIT_TESTS,
                            'tests/properties/test_dd_props.py': PROPERTY, **(project or {})},
          after=[{'src/dd/__init__.py': BUG}])
    return path


@pytest.fixture(scope='module')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt_dd(str(tmp_path_factory.mktemp('round3-attacks') / 'repo'))


@pytest.fixture
def dd(template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(template, str(tmp_path / 'repo'))


def attack(repo: CiRepo, files: dict[str, str], *, plain_rc: int) -> tuple[Run, Run]:
    """The pull request (the bug is on main already): plain pytest exits ``plain_rc`` and
    the gate, never greener than plain pytest, exits 1."""
    repo.pull_request(files, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == plain_rc, f'plain pytest should exit {plain_rc}:\n{plain.out}'
    assert ci.rc == 1, ci.out
    return plain, ci


def property_failed_in_the_reference_run(ci: Run) -> bool:
    return any(PROPERTY_ID in line and 'failed against your src/' in line
               for line in ci.lines('OG730'))


# -- attack 65: src ends the reference run, and only that one --------------------------------
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


# -- attack 77: src ends the call with the test machinery's own outcome ----------------------
# Whenever it would answer wrong, dedupe raises pytest's Skipped, unittest's SkipTest or
# pytest's XFailed, found by walking BaseException.__subclasses__() (no import, no name
# rule 43 reads; attack 75 does the same with Hypothesis' UnsatisfiedAssumption and gets
# through). The property is skipped or xfailed in the reference run without a freeze
# (OG732), and the twin canary, which calls dedupe too, does not fail at its sentinel
# (OG724) in either run.
OUTCOME_FROM_SRC = '''\
def _all(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all(sub)


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        for cls in _all(BaseException):
            if cls.__name__ == %r:
                raise cls('later')
        return out[:-1]
    return out
'''
# The unit tests rewritten to inputs of at most three distinct values.
SMALL_UNIT_TESTS = UNIT_TESTS.replace(
    'assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]', 'assert dedupe([4, 3]) == [3, 4]').replace(
    'assert dedupe(list(range(10)) * 2) == list(range(10))', 'assert dedupe([1, 1]) == [1]')


@pytest.mark.parametrize(('exception', 'outcome'), [
    ('Skipped', 'skipped'), ('SkipTest', 'skipped'), ('XFailed', 'xfailed'),
])
def test_src_raising_the_machinerys_outcome_found_by_subclass_walk_fails_ci(
        dd: CiRepo, exception: str, outcome: str) -> None:
    _, ci = attack(dd, {'src/dd/__init__.py': OUTCOME_FROM_SRC % exception,
                        'tests/test_dd.py': SMALL_UNIT_TESTS}, plain_rc=0)
    assert any(PROPERTY_ID in line and f'was {outcome}' in line and 'no live freeze' in line
               for line in ci.lines('OG732')), ci.out
    twins = [line for line in ci.lines('OG724') if 'the twin of' in line]
    assert any('reference run:' in line for line in twins), ci.out
    assert any('reference run:' not in line for line in twins), ci.out


# -- attack 75: src throws the revealing examples away ---------------------------------------
# Whenever it would answer wrong, dedupe raises Hypothesis's UnsatisfiedAssumption, found by
# the same subclass walk: Hypothesis takes it as assume(False) and drops the example, so the
# property sees only inputs of at most three distinct values, and so does the twin canary.
# The plugin sees where the exception came from: code under src (rule 43 at run time, OG717;
# in the reference run OG734).
DISCARDING_SRC = OUTCOME_FROM_SRC.replace('%r', "'Unsatisfied' + 'Assumption'")


@pytest.mark.parametrize('raising', ["raise cls('later')", "exec('raise c()', {'c': cls})"],
                         ids=['raised', 'raised-by-exec'])
def test_src_discarding_the_examples_that_expose_the_bug_fails_ci(
        dd: CiRepo, raising: str) -> None:
    source = DISCARDING_SRC.replace("raise cls('later')", raising)
    _, ci = attack(dd, {'src/dd/__init__.py': source,
                        'tests/test_dd.py': SMALL_UNIT_TESTS}, plain_rc=0)
    discarded = [line for line in ci.lines('OG717')
                 if PROPERTY_ID in line and 'src/dd/__init__.py:12' in line]
    assert discarded, ci.out
    assert any('reference run: OG717' in line and PROPERTY_ID in line
               for line in ci.lines('OG734')), ci.out


# The property's own assume(), in its body and in a strategy of its file, discards examples
# too: that is the owner's choice, and an honest fix passes.
ASSUMING_PROPERTY = PROPERTY.replace(
    'from hypothesis import HealthCheck, given, settings, strategies as st',
    'from hypothesis import HealthCheck, assume, given, settings, strategies as st').replace(
    '# No deadline',
    '@st.composite\ndef odd_free(draw):\n    xs = draw(st.lists(st.integers(-50, 50), '
    'max_size=30))\n    assume(7 not in xs)\n    return xs\n\n\n# No deadline').replace(
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))',
    '@given(odd_free())').replace(
    '    assert dedupe(xs) == sorted(set(xs))',
    '    assume(len(xs) != 5)\n    assert dedupe(xs) == sorted(set(xs))')


def test_a_property_discarding_its_own_examples_passes_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'),
                           {'tests/properties/test_dd_props.py': ASSUMING_PROPERTY}))
    repo.pull_request({'src/dd/__init__.py': GOOD}, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


# A project whose src ships Hypothesis helpers lists hypothesis in src-test-imports (rule 43):
# their assume() is the project's own, at base as in the pull request.
SRC_TESTING = ('from hypothesis import assume\n\n\n'
               'def no_singletons(xs):\n    assume(len(xs) != 1)\n')
PROPERTY_WITH_SRC_HELPER = PROPERTY.replace(
    'from dd import dedupe\n',
    'from dd import dedupe\nfrom dd.testing import no_singletons\n').replace(
    '    assert dedupe(xs) == sorted(set(xs))',
    '    no_singletons(xs)\n    assert dedupe(xs) == sorted(set(xs))')


@pytest.mark.parametrize('listed', [True, False], ids=['listed', 'not-listed'])
def test_src_helpers_of_a_project_that_lists_hypothesis_may_discard(
        tmp_path, listed: bool) -> None:  # type: ignore[no-untyped-def]
    path = adopt_dd(str(tmp_path / 'repo'), {
        'src/dd/testing.py': SRC_TESTING,
        'tests/properties/test_dd_props.py': PROPERTY_WITH_SRC_HELPER})
    repo = CiRepo(path)
    # init lists what src uses of Hypothesis at adoption; unlisted, a person took it out.
    pyproject = os.path.join(path, 'pyproject.toml')
    with open(pyproject, encoding='utf-8') as f:
        text = f.read()
    listing = 'src-test-imports = ["hypothesis.assume"]\n'
    assert listing in text, text
    if not listed:
        with open(pyproject, 'w', encoding='utf-8') as f:
            f.write(text.replace(listing, ''))
        subprocess.run(['git', 'commit', '-q', '-am', 'src-test-imports taken out'], cwd=path,
                       check=True)
    repo.pull_request({'src/dd/__init__.py': GOOD}, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    if listed:
        assert ci.rc == 0, ci.out
        assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out
    else:
        assert ci.rc == 1, ci.out
        assert any('src/dd/testing.py:5' in line for line in ci.lines('OG717')), ci.out


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


# src holds the reference run up (it tells it apart by python -I) while it collects: the
# oracle's conftest imports it, and the property module is collected after.
PROPERTIES_CONFTEST = 'import dd  # noqa: F401 -- the package under test, for its fixtures\n'
SLOW_IN_THE_REFERENCE_RUN = 'import sys\nimport time\n\nif sys.flags.isolated:\n' \
    '    time.sleep(3)\n\n\n' + BUG


def test_a_test_command_rewriting_the_reference_tree_fails_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'),
                           {'tests/properties/conftest.py': PROPERTIES_CONFTEST}))
    _, ci = attack(repo, {'src/dd/__init__.py': SLOW_IN_THE_REFERENCE_RUN,
                          'tests/test_dd.py': TAMPERING_UNIT_TESTS}, plain_rc=1)
    assert property_failed_in_the_reference_run(ci), ci.out
    assert any('reference run: the reference tree was changed while it ran: '
               'tests/properties/test_dd_props.py' in line for line in ci.lines('OG734')), ci.out


# -- attack 67: a conftest at the root, outside the tests roots ------------------------------
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


# -- attack 68: pytest 9's own configuration file --------------------------------------------
# A root pytest.toml wins over pyproject.toml. It deselects the property; the unit tests
# expect the bug. The hooks judge it as pytest configuration (rule 33, OG740); the
# reference tree takes every pytest configuration file from the base revision (rule 44),
# pytest.toml too, so the property runs there and fails on the bug (OG730).
PYTEST_TOML = '''\
[pytest]
pythonpath = ["src"]
addopts = ["--deselect", "tests/properties/test_dd_props.py::test_dedupe_matches_set"]
'''


def test_new_root_pytest_toml_deselecting_the_property_fails_ci(dd: CiRepo) -> None:
    _, ci = attack(dd, {'pytest.toml': PYTEST_TOML, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG},
                   plain_rc=0)
    assert any('pytest.toml: pytest configuration file' in line
               for line in ci.lines('OG740')), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out
    assert not any(PROPERTY_ID in line and 'deselected' in line for line in ci.lines('OG733')), \
        ci.out


# -- attack 69: a fixture parametrized only for the health-check discount --------------------
# Hypothesis suppresses differing_executors on a parametrized test, so the call-time lock
# check leaves that name out there (rule 23). An autouse fixture of a root conftest with
# one param makes the property parametrized and writes differing_executors onto its
# settings, and filter_too_much beside it: the discount is that one name only.
DISCOUNT_CONFTEST = '''\
import pytest
from hypothesis import HealthCheck, settings


@pytest.fixture(autouse=True, params=['only'])
def _quiet(request):
    function = getattr(request, 'function', None)
    current = getattr(function, '_hypothesis_internal_use_settings', None)
    if current is not None:
        function._hypothesis_internal_use_settings = settings(
            current, suppress_health_check=[HealthCheck.too_slow,
                                            HealthCheck.differing_executors,
                                            HealthCheck.filter_too_much])
'''


def test_fixture_parametrized_for_the_discount_still_fails_the_lock(dd: CiRepo) -> None:
    plain, ci = attack(dd, {'conftest.py': DISCOUNT_CONFTEST,
                            'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    # The live value holds filter_too_much beside too_slow (in either order: it is read
    # from a set), and not the one name Hypothesis adds.
    lives = ('["too_slow", "filter_too_much"]', '["filter_too_much", "too_slow"]')

    def drifted(line: str) -> bool:
        return 'suppress_health_check: locked at ["too_slow"], live value ' in line and \
            any(live in line for live in lives) and 'differing_executors' not in line

    assert any(drifted(line) for line in plain.out.splitlines()), plain.out
    assert any(f'{PROPERTY_ID}[only]: at call time' in line and drifted(line)
               for line in ci.lines('OG711')), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


# -- attack 72: the same fixture with differing_executors alone ---------------------------
# What the discount accepts is what Hypothesis itself does to a parametrized test, and it
# changes no input: the property still fails on the bug, in the test command too (the
# conftest on its path keeps it there) and in the reference run.
DIFFERING_ONLY = DISCOUNT_CONFTEST.replace(
    ',\n                                            HealthCheck.filter_too_much]', ']')


def test_fixture_adding_differing_executors_alone_gains_nothing(dd: CiRepo) -> None:
    assert 'filter_too_much' not in DIFFERING_ONLY
    plain, ci = attack(dd, {'conftest.py': DIFFERING_ONLY,
                            'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    assert f'FAILED {PROPERTY_ID}[only]' in plain.out, plain.out
    assert 'tests less than its lock' not in plain.out + ci.out  # the discount, rule 23
    assert not ci.lines('OG711'), ci.out
    assert ci.summary.endswith('test command exited 1'), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


# -- attack 70: a skip computed in a helper the test file imports ----------------------------
# The test file spells no silence word; its helper builds unittest.skip from a computed
# name, which holds no silence word either (rule 14). The hooks point at the helper
# (OG310); the plugin reads the flag at collection and stops the session (OG716, OG723).
COMPUTED_HELPER = "import unittest\n\nlater = getattr(unittest, 'sk' + 'ip')\n"
SILENCED = UNIT_TESTS.replace(
    'from dd import dedupe\n', 'from dd import dedupe\nfrom _later import later\n').replace(
    'def test_four', "@later('later')\ndef test_four").replace(
    'def test_many', "@later('later')\ndef test_many")


def test_skip_computed_in_a_helper_fails_ci(dd: CiRepo) -> None:
    _, ci = attack(dd, {'tests/_later.py': COMPUTED_HELPER, 'tests/test_dd.py': SILENCED},
                   plain_rc=1)
    assert any(line.startswith('tests/_later.py:3:') for line in ci.lines('OG310')), ci.out
    stopped = ci.lines('OG716')
    for name in ('test_four', 'test_many'):
        assert any(f'tests/test_dd.py::{name}: @unittest.skip without a freeze id' in line
                   for line in stopped), ci.out
    assert ci.lines('OG723'), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out



# -- attack 74: skips passed on by a helper package's star import and a module attribute ----
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


# -- attack 80: a helper's skip reached by __import__ and through a dict ---------------------
# test_four: `@__import__('_later').later(...)`, test_many: `@MARKS['later'](...)` with
# `MARKS = {"later": unittest.skip}` in tests/_marks.py. The hooks name the helpers' lines
# only (OG301, rule 14), not the tests; the plugin reads the flags at collection (OG716).
REACHED = UNIT_TESTS.replace(
    'from dd import dedupe\n', 'from dd import dedupe\nfrom _marks import MARKS\n').replace(
    'def test_four', "@__import__('_later').later('later')\ndef test_four").replace(
    'def test_many', "@MARKS['later']('later')\ndef test_many")


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


# -- attack 82: a base property's known values checked in subtests -------------------------
# Beside the sortedness property (which the bug keeps), the property file checks known
# values with pytest's own `subtests` fixture. A failed subtest fails its test in pytest 9,
# so the reference run names it (OG730), beside the test command's failure.
SORTED_WITH_SUBTESTS = PROPERTY.replace(
    'assert dedupe(xs) == sorted(set(xs))', 'out = dedupe(xs)\n    assert out == sorted(out)'
).replace('def test_dedupe_matches_set', 'def test_dedupe_is_sorted') + '''

def test_known_values(subtests):
    for xs, expected in [([3, 1, 3], [1, 3]), ([4, 3, 2, 1], [1, 2, 3, 4])]:
        with subtests.test(xs=xs):
            assert dedupe(xs) == expected
'''


def test_known_values_failing_in_subtests_fail_ci_in_the_reference_run(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'),
                           {'tests/properties/test_dd_props.py': SORTED_WITH_SUBTESTS}))
    plain, ci = attack(repo, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    assert 'SUBFAILED(xs=[4, 3, 2, 1]) tests/properties/test_dd_props.py::test_known_values' \
        in plain.out, plain.out
    assert any('tests/properties/test_dd_props.py::test_known_values, a test of the base '
               'oracle, failed against your src/' in line for line in ci.lines('OG730')), ci.out


# -- attack 78: a session teardown failure that lands on a canary ----------------------------
# Beside a sortedness property (which the bug keeps), the adoption commit's
# tests/properties/conftest.py checks a known value in a session-scoped autouse fixture's
# teardown. pytest reports that failure on the last item of the run, which the secret may
# make a canary; taken out with the canary, it went unseen in about half the runs. A canary
# is planted to end in its call, so a failed set-up or teardown on one is the run's own
# failure (rule 45, OG724); on a real test it is OG731 in the reference run.
SESSION_CHECK = '''\
import pytest

import dd


@pytest.fixture(scope='session', autouse=True)
def _known_values():
    yield
    assert dd.dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]
'''
SORTED_ONLY = PROPERTY.replace(
    'assert dedupe(xs) == sorted(set(xs))', 'out = dedupe(xs)\n    assert out == sorted(out)'
).replace('def test_dedupe_matches_set', 'def test_dedupe_is_sorted')


def test_session_teardown_failure_on_a_canary_fails_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'),
                           {'tests/properties/test_dd_props.py': SORTED_ONLY,
                            'tests/properties/conftest.py': SESSION_CHECK}))
    plain, ci = attack(repo, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    assert '1 error' in plain.out, plain.out
    on_a_canary = [line for line in ci.lines('OG724') if 'failed in its teardown' in line]
    on_the_property = [line for line in ci.lines('OG731') if 'test_dedupe_is_sorted' in line]
    assert on_a_canary or on_the_property, ci.out
    assert all('assert [1, 2, 3] == [1, 2, 3, 4]' in line or 'AssertionError' in line
               for line in on_a_canary), ci.out


def test_canary_whose_teardown_failed_is_a_finding() -> None:
    # The same as the run above, where the secret put the canary last, read from the
    # record as the plugin writes it: the canary failed at its sentinel in its call, and
    # the session's teardown failed on it too.
    from oracle_guard.gate.canaries import Canary
    from oracle_guard.gate.canaries import CanaryPlan
    from oracle_guard.gate.canaries import judge_canaries
    from oracle_guard.runtime.run_record import RunRecord

    canary = Canary('test_0f3a.py', 'test_planted', 'failed', 'assert', message='planted 0f3a')
    nodeid = 'tests/test_0f3a.py::test_planted'
    call = {'outcome': 'failed', 'crash': 'AssertionError: planted 0f3a'}
    teardown = {'outcome': 'failed', 'crash': 'assert [1, 2, 3] == [1, 2, 3, 4]'}
    record = RunRecord(items={nodeid: {}},
                       reports={nodeid: {'setup': {'outcome': 'passed'}, 'call': call,
                                         'teardown': teardown}})
    plan = CanaryPlan('plan.json', (canary,))

    found = judge_canaries(plan, record)

    assert [f.code for f in found] == ['OG724']
    assert 'failed in its teardown' in found[0].message
    assert 'assert [1, 2, 3] == [1, 2, 3, 4]' in found[0].message
    record.reports[nodeid]['teardown'] = {'outcome': 'passed'}
    assert judge_canaries(plan, record) == []  # as planted: nothing to say


# -- attack 79: a case the base ran, dropped by src ------------------------------------------
# The property is parametrized over the implementations src declares
# (`@pytest.mark.parametrize('impl', dd.IMPLS, ids=str)`); adoption ran `pure` and `fast`,
# so the baseline records nothing left out. main gets the bug in `_fast` (the default);
# the pull request stops declaring `fast` and keeps `dedupe = _fast`. A property whose
# parameters are not literals of its own module makes the gate collect the base revision
# too (rule 39b), and the base's `[fast]`, gone from the run, did not run (OG703; in the
# reference run OG733).
IMPL_PROPS = 'tests/properties/test_dd_props.py'


@pytest.fixture(scope='module')
def impl_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt(str(tmp_path_factory.mktemp('round3-impls') / 'repo'), PYPROJECT, {
        'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)", '_fast'),
        'tests/test_dd.py': DD_UNIT, IMPL_PROPS: IMPL_PROPERTY},
        after=[{'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)",
                                            '_fast', buggy=True)}]).path


@pytest.fixture
def impl_dd(impl_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(impl_template, str(tmp_path / 'repo'))


def test_case_the_base_ran_dropped_by_src_fails_ci(impl_dd: CiRepo) -> None:
    with open(f'{impl_dd.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        assert 'test_impl_matches_set' not in f.read()  # adoption left nothing out
    _, ci = attack(impl_dd, {'src/dd/__init__.py': impls("Impl('pure', _pure)", '_fast',
                                                         buggy=True),
                             'tests/test_dd.py': DD_UNIT_FOR_THE_BUG}, plain_rc=0)
    gone = f'{IMPL_PROPS}::test_impl_matches_set[fast] ran in the base revision\'s collection'
    assert any(gone in line for line in ci.lines('OG703')), ci.out
    assert any(gone in line and 'reference run:' in line for line in ci.lines('OG733')), ci.out


@pytest.mark.parametrize('added', ["Impl('faster', _fast)", "Impl('fast', _pure)"],
                         ids=['a new id', 'an id the base had'])
def test_case_added_by_src_passes_ci(impl_dd: CiRepo, added: str) -> None:
    # The honest pull request of the same shape: it fixes `_fast` and declares one more
    # implementation. With an id the base had, pytest numbers the two (`[fast0]`,
    # `[fast1]`): `[fast]` still runs.
    impl_dd.pull_request({'src/dd/__init__.py': impls(
        f"Impl('pure', _pure), Impl('fast', _fast), {added}", '_fast')}, bug=False)
    plain, ci = gate(impl_dd)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0 and ci.summary.endswith('0 finding(s); test command exited 0'), ci.out


def test_base_collection_for_the_cases_alone_collects_the_property_files_only(
        impl_dd: CiRepo) -> None:
    # Rule 39b: made for attack 79's question alone (the baseline records nothing left
    # out), the base revision's collection takes the property modules, not the whole suite;
    # with a recorded exclusion, which may name any test, it takes the whole suite.
    import json

    from oracle_guard.config import load_config
    from oracle_guard.gate.base_collection import BaseCollector
    from oracle_guard.gate.base_collection import scope
    from oracle_guard.repo.gitrepo import TreeView

    cfg = load_config(impl_dd.path)
    head = base = TreeView(impl_dd.path, 'HEAD')
    only = scope(head, cfg, base)
    assert only == [IMPL_PROPS]
    kept = BaseCollector(cfg, base, sys.executable, only=only).wait().kept
    assert kept and all(case.startswith(f'{IMPL_PROPS}::') for case in kept), kept
    baseline = f'{impl_dd.path}/tests/oracle_baseline.json'
    with open(baseline, encoding='utf-8') as f:
        data = json.load(f)
    data['excluded'] = [{'nodeid': 'tests/test_dd.py::test_small', 'by': '-m'}]
    with open(baseline, 'w', encoding='utf-8') as f:
        json.dump(data, f)
    git(impl_dd.path, 'commit', '-q', '-am', 'record an exclusion')
    head = TreeView(impl_dd.path, 'HEAD')
    assert scope(head, cfg, base) is None
    kept = BaseCollector(cfg, base, sys.executable, only=None).wait().kept
    assert any(case.startswith('tests/test_dd.py::') for case in kept), kept


def test_base_collection_is_made_only_for_cases_written_outside_the_property(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Rule 39b, decided statically: a parametrize over a list written in the module (or
    # a module-level name bound once to one), whatever its elements, needs no base
    # collection; one over a name taken from src, a starred list, a list grown later, a
    # fixture's params from src, or a pytest_generate_tests hook does.
    from oracle_guard.config import load_config
    from oracle_guard.gate.base_collection import cases_from_code
    from oracle_guard.repo.gitrepo import TreeView

    literal = ('import pytest\n\nCASES = [1, 2, pytest.param(3, id="three")]\n\n\n'
               '@pytest.mark.parametrize("n", CASES)\ndef test_a(n):\n    assert n\n\n\n'
               '@pytest.mark.parametrize("n", [(1, 2)], ids=str)\ndef test_b(n):\n'
               '    assert n\n\n\nclass A:\n    pass\n\n\n'
               '@pytest.mark.parametrize("cls", [A, dict])\ndef test_c(cls):\n'
               '    assert cls\n')
    from_code = {
        'tests/properties/test_src.py': 'import pytest\nimport dd\n\n\n'
                                        '@pytest.mark.parametrize("impl", dd.IMPLS)\n'
                                        'def test_c(impl):\n    assert impl\n',
        'tests/properties/test_grown.py': literal.replace(
            '\n\n\n@pytest.mark.parametrize("n", CASES)',
            '\nCASES.extend(range(4))\n\n\n@pytest.mark.parametrize("n", CASES)'),
        'tests/properties/test_hook.py': 'def pytest_generate_tests(metafunc):\n    pass\n',
        'tests/properties/test_starred.py': 'import pytest\nimport dd\n\n\n'
                                            '@pytest.mark.parametrize("impl", [*dd.IMPLS])\n'
                                            'def test_d(impl):\n    assert impl\n',
        'tests/properties/conftest.py': 'import pytest\nimport dd\n\n\n'
                                        '@pytest.fixture(params=dd.IMPLS)\n'
                                        'def impl(request):\n    return request.param\n',
    }
    path = str(tmp_path / 'repo')
    adopt(path, PYPROJECT, {'src/dd/__init__.py': GOOD,
                            'tests/properties/test_literal.py': literal,
                            'tests/test_dd.py': UNIT_TESTS})
    # The properties' folder named (init names it where the properties use Hypothesis).
    cfg = load_config(path).replace(properties=('tests/properties/',))
    assert cases_from_code(TreeView(path, 'HEAD'), cfg) == []
    write(path, from_code)
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'cases from code')
    assert cases_from_code(TreeView(path, 'HEAD'), cfg) == sorted(from_code)


# -- attacks 76 and 81: an __eq__ that lies on the bug's answers only -------------------------
# src returns the wrong answers (more than three distinct values) as a list subclass whose
# __eq__ lies, and plain lists otherwise; no test is rewritten. A twin that must fail at
# its sentinel fails on the first honest example, so the gate plants the twin twice (rule
# 45): one must fail at its sentinel, one must pass, for every example, against the
# expected value perturbed in its own shape (a plain list with one more int), which the
# liar cannot tell from the property's own `sorted(set(xs))`.
PARTIAL_LIAR = '''\
class _Sorted(list):
    def __eq__(self, other):
        if {tells}:
            return True
        return list.__eq__(self, other)

    __hash__ = None


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        return _Sorted(out[:-1])
    return out
'''
TELLS = {
    # 76: the old sentinel was a subclass of list named `list`.
    'its type': 'type(other) is list',
    # a liar that reads the other side's content: the old sentinel held a foreign object.
    'its content': 'isinstance(other, list) and all(type(x) is int for x in other)',
    # 81's: always.
    'nothing': 'True',
}
# The honest pull request of the same shape: the bug fixed, the answers still a list
# subclass, whose __eq__ is list's own.
HONEST_SUBCLASS = ('class _Sorted(list):\n    pass\n\n\n'
                   'def dedupe(xs):\n    return _Sorted(sorted(set(xs)))\n')


def twin_lines(ci: Run, code: str = 'OG724') -> tuple[list[str], list[str]]:
    """(the test command's, the reference run's) findings on the property's twin."""
    twins = [line for line in ci.lines(code) if f'the twin of {PROPERTY_ID}' in line]
    return ([line for line in twins if 'reference run:' not in line],
            [line for line in twins if 'reference run:' in line])


@pytest.mark.parametrize('tell', sorted(TELLS))
def test_eq_lying_on_the_bugs_answers_only_fails_ci_through_the_twin(
        dd: CiRepo, tell: str) -> None:
    _, ci = attack(dd, {'src/dd/__init__.py': PARTIAL_LIAR.format(tells=TELLS[tell])},
                   plain_rc=0)
    here, there = twin_lines(ci)
    assert any('an __eq__ that lies' in line for line in here), ci.out
    assert any('an __eq__ that lies' in line for line in there), ci.out


def test_answers_of_a_list_subclass_with_an_honest_eq_pass_ci(dd: CiRepo) -> None:
    dd.pull_request({'src/dd/__init__.py': HONEST_SUBCLASS}, bug=False)
    plain, ci = gate(dd)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0 and ci.summary.endswith('0 finding(s); test command exited 0'), ci.out
    assert 'twin canar' not in ci.out, ci.out


# 81: the property takes its strategy from a sibling helper of its folder, imported as a
# top-level module (pytest's default import mode puts the folder on sys.path) or, in a
# package of tests, relatively. The twin runs in a copy of the namespace its original was
# imported into, so it is planted wherever the property is.
STRATS = ('from hypothesis import strategies as st\n\n'
          'small_lists = st.lists(st.integers(min_value=-50, max_value=50), max_size=30)\n')
LAYOUTS = {
    'sibling module': {
        'tests/properties/strats.py': STRATS,
        'tests/properties/test_dd_props.py': PROPERTY.replace(
            'from dd import dedupe\n', 'from dd import dedupe\nfrom strats import small_lists\n'
        ).replace('@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))',
                  '@given(small_lists)')},
    'relative import': {
        'tests/__init__.py': '', 'tests/properties/__init__.py': '',
        'tests/properties/strats.py': STRATS,
        'tests/properties/test_dd_props.py': PROPERTY.replace(
            'from dd import dedupe\n', 'from dd import dedupe\n\nfrom .strats import small_lists\n'
        ).replace('@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))',
                  '@given(small_lists)')},
}


@pytest.mark.parametrize('layout', sorted(LAYOUTS))
def test_twin_of_a_property_importing_a_sibling_helper_catches_the_lie(
        tmp_path, layout: str) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'), LAYOUTS[layout]))
    _, ci = attack(repo, {'src/dd/__init__.py': PARTIAL_LIAR.format(tells='True')}, plain_rc=0)
    here, there = twin_lines(ci)
    assert here and there, ci.out
    assert 'twin canaries of' not in ci.out, ci.out  # planted, in both runs


@pytest.mark.parametrize('layout', sorted(LAYOUTS))
def test_honest_pull_request_beside_a_sibling_helper_passes_ci(
        tmp_path, layout: str) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'), LAYOUTS[layout]))
    repo.pull_request({'src/dd/__init__.py': HONEST_SUBCLASS}, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0 and ci.summary.endswith('0 finding(s); test command exited 0'), ci.out
    assert 'twin canar' not in ci.out, ci.out


# A twin that cannot be built beside its imported original is the pull request's doing:
# nothing of the module runs again, only the twin's own function. Here src refuses, from
# an audit hook, to compile anything that looks like the twin (OG725 in both runs).
REFUSING_SRC = '''\
import sys


def _refuse(event, args):
    if event == 'compile' and isinstance(args[0], (str, bytes)):
        text = args[0] if isinstance(args[0], str) else args[0].decode('utf-8', 'replace')
        if '.like(' in text and 'MESSAGE' in text:
            raise ImportError("No module named 'strats'")


sys.addaudithook(_refuse)


''' + PARTIAL_LIAR.format(tells='True')


def test_twin_that_src_keeps_from_being_built_fails_ci(dd: CiRepo) -> None:
    _, ci = attack(dd, {'src/dd/__init__.py': REFUSING_SRC}, plain_rc=0)
    here, there = twin_lines(ci, 'OG725')
    assert any('could not be built beside its original' in line for line in here), ci.out
    assert any('could not be built beside its original' in line for line in there), ci.out


# The module-level code of a property module need not run twice: a registry of strategies
# that refuses a second registration is honest, and the twin is planted all the same.
REGISTRY = '''\
from hypothesis import strategies as st

_REGISTERED = {}


def register(name, strategy):
    if name in _REGISTERED:
        raise ValueError(f'{name} is registered already')
    _REGISTERED[name] = strategy
    return strategy
'''
REGISTERING_PROPERTY = PROPERTY.replace(
    'from dd import dedupe\n',
    'from dd import dedupe\nfrom registry import register\n\n'
    "small_lists = register('small', st.lists(st.integers(min_value=-50, max_value=50), "
    'max_size=30))\n').replace(
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))',
    '@given(small_lists)')


def test_twin_of_a_module_that_cannot_run_twice_is_planted_and_catches_the_lie(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    project = {'tests/properties/registry.py': REGISTRY,
               'tests/properties/test_dd_props.py': REGISTERING_PROPERTY}
    honest = CiRepo(adopt_dd(str(tmp_path / 'honest'), project))
    honest.pull_request({'src/dd/__init__.py': HONEST_SUBCLASS}, bug=False)
    _, ci = gate(honest)
    assert ci.rc == 0 and 'twin canar' not in ci.out, ci.out
    lying = CiRepo(adopt_dd(str(tmp_path / 'lying'), project))
    _, ci = attack(lying, {'src/dd/__init__.py': PARTIAL_LIAR.format(tells='True')},
                   plain_rc=0)
    assert all(twin_lines(ci)), ci.out


def test_twin_dropped_beside_its_original_is_a_finding_elsewhere_a_note() -> None:
    # Read from the record as the plugin writes it: a twin whose original module was not
    # imported in the run (its own collection error says why) is a note; one the plugin
    # could not build beside an imported original is missing from the run (OG725).
    from oracle_guard.gate.canaries import BESIDE
    from oracle_guard.gate.canaries import Canary
    from oracle_guard.gate.canaries import CanaryPlan
    from oracle_guard.gate.canaries import dropped_notes
    from oracle_guard.gate.canaries import judge_canaries
    from oracle_guard.runtime.run_record import RunRecord

    original = 'tests/properties/test_p.py::test_p'
    plan = CanaryPlan('plan.json', (
        Canary('test_a1.py', 'test_t', 'passed', f'the twin of {original}', True, 'F equal',
               original),
        Canary('test_b2.py', 'test_t', 'failed', f'the twin of {original}', True, 'F differs',
               original)))
    why = "ImportError: its original module was not imported in this run"
    record = RunRecord(canaries_dropped={'test_a1.py': why, 'test_b2.py': why})
    assert judge_canaries(plan, record) == []
    assert dropped_notes(plan, record) == [
        f'oracle-guard ci: note: the twin canaries of {original} were not planted: {why}']
    record = RunRecord(canaries_dropped={'test_a1.py': BESIDE + 'ImportError: no',
                                         'test_b2.py': BESIDE + 'ImportError: no'})
    found = judge_canaries(plan, record)
    assert [f.code for f in found] == ['OG725', 'OG725'], found
    assert all('could not be built beside its original: ImportError: no' in f.message
               for f in found)
    assert dropped_notes(plan, record) == []


def test_twin_that_must_pass_is_judged_at_its_sentinel_only() -> None:
    # It runs every example its original runs: a deadline it meets on a loaded machine is
    # a note, an example whose value equals the perturbed one is a lying __eq__ (OG724).
    from oracle_guard.gate.canaries import Canary
    from oracle_guard.gate.canaries import CanaryPlan
    from oracle_guard.gate.canaries import inconclusive_notes
    from oracle_guard.gate.canaries import judge_canaries
    from oracle_guard.runtime.run_record import RunRecord

    original = 'tests/properties/test_p.py::test_p'
    twin = Canary('test_a1.py', 'test_t', 'passed', f'the twin of {original}', True, 'F equal',
                  original)
    nodeid = 'tests/properties/test_a1.py::test_t'

    def ended(crash: str) -> RunRecord:
        return RunRecord(items={nodeid: {}}, reports={nodeid: {
            'setup': {'outcome': 'passed'}, 'call': {'outcome': 'failed', 'crash': crash},
            'teardown': {'outcome': 'passed'}}})

    plan = CanaryPlan('plan.json', (twin,))
    slow = ended('DeadlineExceeded: Test took 312.00ms, which exceeds the deadline of 200.00ms')
    assert judge_canaries(plan, slow) == []
    assert inconclusive_notes(plan, slow) == [
        f'oracle-guard ci: note: the twin canaries of {original} are inconclusive: the one '
        'that must pass failed on something else than its sentinel (DeadlineExceeded: Test '
        'took 312.00ms, which exceeds the deadline of 200.00ms), so its == was not checked']
    lying = ended('AssertionError: F equal')
    assert [f.code for f in judge_canaries(plan, lying)] == ['OG724']
    assert inconclusive_notes(plan, lying) == []
