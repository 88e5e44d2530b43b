"""Reproduce the attacks of ATTACKS.md 62-81 that got through against the leave-out.

62, 63, 66, 71, 73, 75, 76, 78, 79 and 81; the caught ones are tests/test_ci_attacks_round3.py.
The leave-out was not merged: on main 62 and 63 are caught, 63, 66a, 71, 75, 76, 78, 79
and 81 are closed (the table "Status on main after this round" in ATTACKS.md), and 73 on
branch holes4 (the base revision's collection evaluates the base's skipif, rule 39b); the
rest still get through.

    python benchmarks/attacks_open/round3.py [NAME ...] [--keep DIR]

NAME is one of 62a 62b 62c 63a 63b 63c 66a 66b 71 73 75 76 78 79 81 (all of them by default). Each
scenario builds the repository of tests/test_ci_attacks.py (``dd``, adopted with
``oracle-guard init``, then the bug on ``main``: ``dedupe`` drops the largest value past
three distinct ones), commits the pull request on branch ``pr`` and runs, side by side,
plain ``python -m pytest -q -p no:cacheprovider`` and the gate as the action runs it,
``python -I -m oracle_guard.cli ci --base main -- python -m pytest -q -p no:cacheprovider``.
It prints both exit statuses and the gate's last lines. Every one of these prints "gate
exit 0" with the bug in place: 62 and 63 with "plain pytest exit 1" (the gate is greener
than pytest), 66, 71, 73, 75, 76, 79 and 81 with "plain pytest exit 0" (the cheat fools both), 78
in about half the runs (the canaries' random names decide), with "plain pytest exit 1".
Run it from the repository root with oracle-guard and its test extras installed; the
repositories go into a temporary folder (``--keep DIR`` keeps them there).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'tests'))

from ci_repo import CiRepo  # noqa: E402
from ci_repo import git  # noqa: E402
from ci_repo import write  # noqa: E402
from test_ci_attacks import BUG  # noqa: E402
from test_ci_attacks import GOOD  # noqa: E402
from test_ci_attacks import PROPERTY  # noqa: E402
from test_ci_attacks import PYPROJECT  # noqa: E402
from test_ci_attacks import PYTEST  # noqa: E402
from test_ci_attacks import UNIT_TESTS  # noqa: E402
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG  # noqa: E402
from test_ci_attacks_session import DD_UNIT  # noqa: E402
from test_ci_attacks_session import DD_UNIT_FOR_THE_BUG  # noqa: E402
from test_ci_attacks_session import IMPL_PROPERTY  # noqa: E402
from test_ci_attacks_session import impls  # noqa: E402

# -- 62: src that answers right in the reference run only -------------------------------------
# The property no longer runs in the test command; only the reference run judges it, and
# that run can be told apart (python -I, its tree's folder, the bootstrap's argv[0]).
TELLS = {
    '62a': ('import sys\n', 'not sys.flags.isolated'),
    '62b': ('import os\n', "'oracle-guard-reference-' not in os.path.abspath(__file__)"),
    '62c': ('import sys\n', "sys.argv[0] != '-c'"),
}


def src_with_tell(imports: str, condition: str) -> str:
    return (f'{imports}\n\ndef dedupe(xs):\n    out = sorted(set(xs))\n'
            f'    if len(out) > 3 and {condition}:\n        return out[:-1]\n    return out\n')


# -- 63: a test of a base property file that the static inventory does not know ------------
# The pull request only rewrites the unit tests to the bug's answers (accepted). The
# property file also holds a test the inventory cannot see: inherited from a contract
# class in a helper (63a), a doctest collected with --doctest-modules (63b), or a
# Hypothesis rule-based state machine's TestCase in a property file of its own (63c: no
# test function in the file, so the twin canary is not taken from it either). The
# reference run fails it, and judge_reference reports only failures of inventoried tests.
SORTED_PROPERTY = '''\
{doc}from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe
{imports}

@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_dedupe_is_sorted(xs):
    out = dedupe(xs)
    assert out == sorted(out)
{tail}'''
CONTRACT = '''\
class DedupeContract:
    impl = None

    def test_known_values(self):
        assert self.impl([4, 3, 2, 1]) == [1, 2, 3, 4]
'''
DOCTEST = ('"""Known values.\n\n>>> from dd import dedupe\n>>> dedupe([4, 3, 2, 1])\n'
           '[1, 2, 3, 4]\n"""\n')

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

# -- 66: the property's oracle helper outside the tests roots --------------------------------
# (a) testing/oracle.py at the root (pythonpath "."), (b) dd/testing.py under src: the
# pull request rewrites it to the bug's answers.
ORACLE_HELPER = 'def expected(xs):\n    return sorted(set(xs))\n'
ORACLE_HELPER_FOR_THE_BUG = ('def expected(xs):\n    out = sorted(set(xs))\n'
                             '    return out[:-1] if len(out) > 3 else out\n')


# -- 71: the property skips itself through an importorskip of a src module ------------------
# The optional speed-up pattern: the property module starts with
# `dedupe = pytest.importorskip("dd.fast").dedupe`; main moves dedupe into dd.fast and gets
# the bug there. The pull request renames dd/fast.py to dd/core.py (bug and all): the
# import fails, the whole property module skips in every run, and the audit takes a failed
# importorskip as explained (rule 41). Not the leave-out's: it got through before it too.
FAST_PROPERTY = PROPERTY.replace(
    'from dd import dedupe\n', 'import pytest\n\ndedupe = pytest.importorskip("dd.fast").dedupe\n')

# -- 73: a baselined skipif of the property whose condition src answers -----------------------
# Adoption: the property carries `@pytest.mark.skipif(not dd.FAST_AVAILABLE, ...)` and src
# says `FAST_AVAILABLE = True`; init baselines the skipif (rule 39). The pull request sets
# it False: the property skips in every run, and the baselined silence explains the skip.
# The record of rule 39b is checked against the base's collection, a skipif is evaluated
# at set-up: nothing asks whether the base ran the test. Not the leave-out's either.
FAST_FLAG = 'FAST_AVAILABLE = True\n\n\n'
SKIPIF_PROPERTY = PROPERTY.replace(
    'from hypothesis import', 'import pytest\nfrom hypothesis import').replace(
    'from dd import dedupe\n', 'import dd\nfrom dd import dedupe\n').replace(
    '# No deadline', '@pytest.mark.skipif(not dd.FAST_AVAILABLE, reason="needs the fast path")\n'
    '# No deadline')
# -- 75: src discards the examples that would expose the bug ---------------------------------
# Whenever it would answer wrong, dedupe raises Hypothesis' UnsatisfiedAssumption, found by
# walking BaseException.__subclasses__() for a name built by concatenation (no import, no
# name rule 43 reads): Hypothesis takes it as assume(False) and drops the example. The unit
# tests are rewritten to inputs with at most three distinct values. Not the leave-out's.
DISCARDING_SRC = '''\
def _all(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all(sub)


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        for cls in _all(BaseException):
            if cls.__name__ == 'Unsatisfied' + 'Assumption':
                raise cls()
        return out[:-1]
    return out
'''
SMALL_UNIT_TESTS = UNIT_TESTS.replace(
    'assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]', 'assert dedupe([4, 3]) == [3, 4]').replace(
    'assert dedupe(list(range(10)) * 2) == list(range(10))', 'assert dedupe([1, 1]) == [1]')

# -- 76: an __eq__ that lies to a plain list only ---------------------------------------------
# Attack 18 refined: the twin canary's sentinel is a subclass of the expected value's type
# (named like it), so `type(other) is list` tells it from the property's `sorted(set(xs))`.
# The wrong answers compare equal to every plain list; no test is rewritten.
LYING_SRC = '''\
class _Sorted(list):
    def __eq__(self, other):
        if type(other) is list:
            return True
        return list.__eq__(self, other)

    __hash__ = None


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        return _Sorted(out[:-1])
    return out
'''

# -- 78: a session teardown failure that lands on a canary ------------------------------------
# Adoption: tests/properties/conftest.py has a session-scoped autouse fixture whose teardown
# checks a known value (`assert dd.dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]`) beside the
# sortedness property. pytest reports a session teardown failure on the last item of the
# run. The test command (left out of tests/properties) never sets the fixture up; in the
# reference run the last item is a canary or the property, as the canaries' random names
# fall: about half the runs (3 of 6 here) the error is on a canary, is subtracted with it,
# and the gate says `0 finding(s); test command exited 0`; otherwise OG731. Before the
# leave-out the test command's last item was a failing canary: the same, in its run.
SESSION_CHECK = '''\
import pytest

import dd


@pytest.fixture(scope='session', autouse=True)
def _known_values():
    yield
    assert dd.dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]
'''

# -- 79: a case the base ran dropped by src -----------------------------------------------------
# The 39b repository's property, `@pytest.mark.parametrize('impl', dd.IMPLS, ids=str)`,
# without its conftest: adoption declares `pure` and `fast` (both run; nothing recorded, so
# the baseline has no exclusions), `dedupe = _fast`; main gets the bug in `_fast`. The pull
# request declares `IMPLS = [Impl('pure', _pure)]` and keeps `dedupe = _fast`: `[fast]`
# is simply gone. The base revision's own collection (rule 39b), which would say the base
# ran it, is made only when the baseline records exclusions. Not the leave-out's.

# -- 81: attack 18 again, where the twin canary cannot be planted ----------------------------
# The property takes its strategy from a sibling helper, tests/properties/strats.py (a
# common layout). The twin canary's module does not import away from its folder, so it is
# not planted (a note, not a finding), and nothing meets the always-true __eq__ of attack 18.
STRATS = ('from hypothesis import strategies as st\n\n'
          'small_lists = st.lists(st.integers(min_value=-50, max_value=50), max_size=30)\n')
STRATS_PROPERTY = PROPERTY.replace(
    'from dd import dedupe\n', 'from dd import dedupe\nfrom strats import small_lists\n').replace(
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))',
    '@given(small_lists)')
ALWAYS_EQUAL_SRC = LYING_SRC.replace(
    '        if type(other) is list:\n            return True\n'
    '        return list.__eq__(self, other)\n',
    '        return True\n')

# The main commit that brings the bug, where it is not the top of this page's.
MAIN = {
    '71': {'src/dd/fast.py': BUG, 'src/dd/__init__.py': 'from dd.fast import dedupe\n'},
    '73': {'src/dd/__init__.py': FAST_FLAG + BUG},
    '79': {'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)", '_fast',
                                       buggy=True)},
}


def scenarios() -> dict[str, tuple[dict[str, str], dict[str, str | None]]]:
    """name -> (the project before adoption, the pull request)."""
    found = {}
    for name, (imports, condition) in TELLS.items():
        found[name] = ({}, {'src/dd/__init__.py': src_with_tell(imports, condition),
                            'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    found['63a'] = ({
        'tests/properties/test_dd_props.py': SORTED_PROPERTY.format(
            doc='', imports='from contracts import DedupeContract\n',
            tail='\n\nclass TestDedupe(DedupeContract):\n    impl = staticmethod(dedupe)\n'),
        'tests/properties/contracts.py': CONTRACT,
    }, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    found['63b'] = ({
        'pyproject.toml': PYPROJECT.replace('pythonpath = ["src"]',
                                            'pythonpath = ["src"]\naddopts = "--doctest-modules"'),
        'tests/properties/test_dd_props.py': SORTED_PROPERTY.format(doc=DOCTEST, imports='',
                                                                    tail=''),
    }, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    found['63c'] = ({
        'tests/properties/test_dd_props.py': SORTED_PROPERTY.format(doc='', imports='', tail=''),
        'tests/properties/test_dd_machine.py': MACHINE,
    }, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    found['66a'] = ({
        'pyproject.toml': PYPROJECT.replace('pythonpath = ["src"]', 'pythonpath = ["src", "."]'),
        'testing/__init__.py': '',
        'testing/oracle.py': ORACLE_HELPER,
        'tests/properties/test_dd_props.py': PROPERTY.replace(
            'from dd import dedupe\n',
            'from dd import dedupe\nfrom testing.oracle import expected\n'
        ).replace('== sorted(set(xs))', '== expected(xs)'),
    }, {'testing/oracle.py': ORACLE_HELPER_FOR_THE_BUG, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    found['66b'] = ({
        'src/dd/testing.py': ORACLE_HELPER,
        'tests/properties/test_dd_props.py': PROPERTY.replace(
            'from dd import dedupe\n', 'from dd import dedupe\nfrom dd.testing import expected\n'
        ).replace('== sorted(set(xs))', '== expected(xs)'),
    }, {'src/dd/testing.py': ORACLE_HELPER_FOR_THE_BUG, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    found['71'] = ({
        'src/dd/fast.py': GOOD,
        'tests/properties/test_dd_props.py': FAST_PROPERTY,
    }, {'src/dd/fast.py': None, 'src/dd/core.py': BUG,
        'src/dd/__init__.py': 'from dd.core import dedupe\n',
        'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    found['73'] = ({
        'src/dd/__init__.py': FAST_FLAG + GOOD,
        'tests/properties/test_dd_props.py': SKIPIF_PROPERTY,
    }, {'src/dd/__init__.py': FAST_FLAG.replace('True', 'False') + BUG,
        'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    found['75'] = ({}, {'src/dd/__init__.py': DISCARDING_SRC, 'tests/test_dd.py': SMALL_UNIT_TESTS})
    found['76'] = ({}, {'src/dd/__init__.py': LYING_SRC})
    found['79'] = ({
        'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)", '_fast'),
        'tests/test_dd.py': DD_UNIT,
        'tests/properties/test_dd_props.py': IMPL_PROPERTY,
    }, {'src/dd/__init__.py': impls("Impl('pure', _pure)", '_fast', buggy=True),
        'tests/test_dd.py': DD_UNIT_FOR_THE_BUG})
    found['81'] = ({
        'tests/properties/strats.py': STRATS,
        'tests/properties/test_dd_props.py': STRATS_PROPERTY,
    }, {'src/dd/__init__.py': ALWAYS_EQUAL_SRC})
    found['78'] = ({
        'tests/properties/test_dd_props.py': SORTED_PROPERTY.format(doc='', imports='', tail=''),
        'tests/properties/conftest.py': SESSION_CHECK,
    }, {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    return found


def build(path: str, project: dict[str, str], main: dict[str, str]) -> CiRepo:
    repo = CiRepo(path)
    subprocess.run(('git', 'init', '-q', '-b', 'main', path), check=True)
    write(path, {'pyproject.toml': PYPROJECT, 'src/dd/__init__.py': GOOD,
                 'tests/test_dd.py': UNIT_TESTS, 'tests/properties/test_dd_props.py': PROPERTY,
                 **project})
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'project')
    init = subprocess.run((sys.executable, '-m', 'oracle_guard.cli', 'init', '--hook-repo',
                           path, '--rev', 'HEAD'), cwd=path, env=repo.env(),
                          capture_output=True, text=True)
    if init.returncode:
        raise SystemExit(init.stdout + init.stderr)
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'Adopt oracle-guard')
    write(path, main)
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'dedupe: the bug')
    return repo


def main(argv: list[str]) -> int:
    keep = None
    if '--keep' in argv:
        keep = argv[argv.index('--keep') + 1]
        argv = [a for a in argv if a not in ('--keep', keep)]
    chosen = argv or list(scenarios())
    folder = keep or tempfile.mkdtemp(prefix='round3-attacks-')
    through = 0
    try:
        for name in chosen:
            project, pull_request = scenarios()[name]
            main_commit = MAIN.get(name, {'src/dd/__init__.py': BUG})
            repo = build(os.path.join(folder, name), project, main_commit)
            repo.pull_request(pull_request, bug=False)
            plain = repo.start(PYTEST)
            ci = repo.start([sys.executable, '-I', *repo.ci_args(PYTEST)[1:]])
            plain_run, ci_run = repo.finish(plain), repo.finish(ci)
            tail = [line for line in ci_run.out.splitlines() if line.startswith(
                ('oracle-guard ci:', 'tests/', 'src/', '.:'))]
            print(f'== {name}: plain pytest exit {plain_run.rc}, gate exit {ci_run.rc}')
            print('\n'.join(tail))
            through += ci_run.rc == 0
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f'{through} of {len(chosen)} got through (gate green with the bug in place)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
