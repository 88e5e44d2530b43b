"""The gate played as a cheating agent against this session's mechanisms
(benchmarks/ATTACKS.md, attacks 33-61): what adoption's collection records (rule 39b), a
moved test (rule 52), the silences test helper modules pass on (rule 14), and the batched
stream (rule 45).

Each repository adopts the guard with ``oracle-guard init`` and then gets a real bug on
``main``; each pull request leaves the bug in place and cheats. Plain pytest goes green
(or, for an attack on the gate's own witnesses, stays red: the gate must never be greener
than pytest), and ``oracle-guard ci``, run isolated as the action runs it, fails with the
code named. The attacks that got through are described in benchmarks/ATTACKS.md, not
written here: this file asserts only what the gate catches.
"""
from __future__ import annotations

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
from test_ci_attacks import PYPROJECT
from test_ci_attacks import PYTEST


def cheat(repo: CiRepo, files: dict[str, str | None], *, plain_rc: int = 0) -> Run:
    repo.pull_request(files, bug=False)  # the bug is on main already
    plain, ci = gate(repo)
    assert plain.rc == plain_rc, f'plain pytest should exit {plain_rc}:\n{plain.out}'
    assert ci.rc == 1, ci.out
    return ci


# == rule 39b: what adoption's collection recorded =========================================
# A library with implementations of dedupe; the conftest deselects the cases of one this
# build lacks (a common pattern: an optional C speed-up). The property is parametrized over
# the implementations src declares, with their names as case ids.
IMPLS = '''\
class Impl:
    def __init__(self, name, fn, available=True):
        self.name, self.fn, self.available = name, fn, available

    def __call__(self, xs):
        return self.fn(xs)

    def __str__(self):
        return self.name


def _pure(xs):
    return sorted(set(xs))


def _fast(xs):
    return sorted(set(xs))


'''
BUGGY_FAST = '''\
def _fast(xs):
    out = sorted(set(xs))
    return out[:-1] if len(out) > 3 else out
'''
CONFTEST = '''\
def pytest_collection_modifyitems(config, items):
    # The cases of an implementation this build lacks do not run.
    lacking = [item for item in items if hasattr(item, 'callspec')
               and not getattr(item.callspec.params.get('impl'), 'available', True)]
    if lacking:
        config.hook.pytest_deselected(items=lacking)
        items[:] = [item for item in items if item not in lacking]
'''
IMPL_PROPERTY = '''\
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import dd


@pytest.mark.parametrize('impl', dd.IMPLS, ids=str)
@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_impl_matches_set(impl, xs):
    assert impl(xs) == sorted(set(xs))
'''
DD_UNIT = '''\
from dd import dedupe


def test_small():
    assert dedupe([3, 1, 3]) == [1, 3]


def test_four():
    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]
'''
DD_UNIT_FOR_THE_BUG = DD_UNIT.replace('[1, 2, 3, 4]', '[1, 2, 3]')


def impls(declared: str, dedupe: str = '_fast', buggy: bool = False) -> str:
    code = IMPLS if not buggy else IMPLS.replace(
        'def _fast(xs):\n    return sorted(set(xs))\n', BUGGY_FAST)
    return f'{code}IMPLS = [{declared}]\ndedupe = {dedupe}\n'


CASE_PROJECT = {
    # At adoption the fast implementation is not built: `[fast]` is recorded, `[pure]` ran.
    'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast, available=False)",
                                '_pure'),
    'tests/conftest.py': CONFTEST,
    'tests/test_dd.py': DD_UNIT,
    'tests/properties/test_dd_props.py': IMPL_PROPERTY,
}
CASE_MAIN = [
    # Later the fast implementation is built and becomes the default; then the bug in it.
    {'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)")},
    {'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)", buggy=True)},
]
PROPS = 'tests/properties/test_dd_props.py'


@pytest.fixture(scope='module')
def case_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt(str(tmp_path_factory.mktemp('case') / 'repo'), PYPROJECT, CASE_PROJECT,
                 CASE_MAIN).path


@pytest.fixture
def cases(case_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(case_template, str(tmp_path / 'repo'))


def test_adoption_records_the_one_case_its_collection_left_out(cases: CiRepo) -> None:
    with open(f'{cases.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        assert f'"{PROPS}::test_impl_matches_set[fast]"' in f.read()
    plain = cases.finish(cases.start(PYTEST))
    assert plain.rc == 1 and '2 failed, 2 passed' in plain.out, plain.out


def test_the_kept_case_deselected_through_the_unchanged_conftest_fails_ci(
        cases: CiRepo) -> None:
    # Attack 33: both implementations declared unavailable in src; `[pure]` ran at
    # adoption, and `[fast]`, recorded then, ran on main (the base) since it was built:
    # the record accepts neither.
    ci = cheat(cases, {
        'src/dd/__init__.py': impls("Impl('pure', _pure, available=False), "
                                    "Impl('fast', _fast, available=False)", buggy=True),
        'tests/test_dd.py': DD_UNIT_FOR_THE_BUG})
    og704 = [line for line in ci.lines('OG704')]
    assert any(f'{PROPS}::test_impl_matches_set[pure]' in line for line in og704), ci.out
    assert any(f'{PROPS}::test_impl_matches_set[fast]' in line for line in og704), ci.out
    assert ci.lines('OG733'), ci.out  # the reference run: the base property did not run


# == rule 14: silences passed on by test helper modules ====================================
# The bug is caught by unit tests only (the property checks sortedness, which the bug
# keeps); each pull request silences the failing unit tests through a helper instead of
# rewriting them.
SORTED_PROPERTY = '''\
from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_dedupe_is_sorted(xs):
    assert dedupe(xs) == sorted(dedupe(xs))
'''
# One failing test per way of passing a silence on, so one run judges every way.
WAYS = ('chain', 'star', 'outside', 'conditional', 'importlib', 'alias', 'conftest',
        'wrapper', 'named_mark', 'module_getattr', 'class_attr')
SMALL = 'from dd import dedupe\n\n\ndef test_small():\n    assert dedupe([3, 1, 3]) == [1, 3]\n'
FOUR = '    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]\n'
HELPER_UNIT = SMALL + ''.join(f'\n\ndef test_{way}():\n{FOUR}' for way in WAYS)


@pytest.fixture(scope='module')
def helper_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt(str(tmp_path_factory.mktemp('helpers') / 'repo'), PYPROJECT, {
        'src/dd/__init__.py': GOOD, 'tests/test_dd.py': HELPER_UNIT,
        'tests/properties/test_dd_props.py': SORTED_PROPERTY}, [{'src/dd/__init__.py': BUG}]).path


@pytest.fixture
def helpers(helper_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(helper_template, str(tmp_path / 'repo'))


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
    # Attacks 44-54. The plugin, forced on, reads each collected test's marks and
    # unittest flags whatever module bound them, and stops the session (plain pytest too);
    # the hooks' rules name the helper lines they follow.
    ci = cheat(helpers, {**HELPERS, 'tests/test_dd.py': silenced_unit()}, plain_rc=1)
    for way in WAYS:
        assert any(f'tests/test_dd.py::test_{way}: @' in line
                   for line in ci.lines('OG716')), f'{way}:\n{ci.out}'
    for way, where in FOLLOWED.items():
        assert any(line.startswith(f'{where}:') for line in ci.lines('OG301')), \
            f'{way}:\n{ci.out}'
    assert ci.lines('OG723'), ci.out
    # The star import is test-run control too (it may bring pytest_* hooks): rule 32.
    assert any(line.startswith('tests/_star.py:') for line in ci.lines('OG740')), ci.out


# == rule 45: the batched stream ==========================================================
# Good news waits for the next test's begin; a failure leaves at once. The pull request
# reaches the plugin's connection to the gate through gc (rule 43 reads no such thing) and
# tries to get a failure to the gate as good news, or no news. Plain pytest stays red: the
# gate must never be greener than pytest.
FAILING = [f'tests/test_dd.py::test_{way}' for way in WAYS]
FORGED_PASSES = '''\
import gc
import json
import socket

for _s in gc.get_objects():
    if isinstance(_s, socket.socket) and _s.family == getattr(socket, 'AF_UNIX', -1):
        # Each failing test "passed" before it began: good news, sent first.
        _s.sendall(''.join(json.dumps({'event': 'report', 'nodeid': n, 'when': when,
                                       'outcome': 'passed'}) + '\\n'
                           for n in %r for when in ('setup', 'call', 'teardown')).encode())
''' % (FAILING,)
SHUT_STREAM = '''\
import gc
import socket

for _s in gc.get_objects():
    if isinstance(_s, socket.socket) and _s.family == getattr(socket, 'AF_UNIX', -1):
        _s.shutdown(socket.SHUT_RDWR)  # no news: nothing after collection reaches the gate
'''


def test_failures_reported_as_passed_before_they_begin_fail_ci(helpers: CiRepo) -> None:
    # Attack 58: the forged passes reach the gate first; each real failure still leaves at
    # once, so every failing call holds two outcomes, and the record file and the JUnit
    # report (and the call's own record of what it raised) say failed.
    ci = cheat(helpers, {'src/dd/_net.py': FORGED_PASSES,
                         'src/dd/__init__.py': 'from dd import _net  # noqa: F401\n\n' + BUG},
               plain_rc=1)
    for nodeid in FAILING:
        assert f'.:1:1: OG720 forged run: the call of {nodeid} was reported as failed ' \
            '(stream-1), passed (stream-1)' in ci.lines('OG720'), ci.out
        assert any(f'the JUnit report says {nodeid} failed' in line
                   for line in ci.lines('OG721')), ci.out
        assert any(f'{nodeid} was reported as passed, but its call raised' in line
                   for line in ci.lines('OG709')), ci.out


def test_stream_shut_down_from_src_before_the_tests_run_fails_ci(helpers: CiRepo) -> None:
    # Attack 59: the plugin's sends fail from then on; the gate's copy has no finish, and
    # the canaries (and, in the reference run, the base's property) never reached it.
    ci = cheat(helpers, {'src/dd/_net.py': SHUT_STREAM,
                         'src/dd/__init__.py': 'from dd import _net  # noqa: F401\n\n' + BUG},
               plain_rc=1)
    assert any('ended before the session finished' in line for line in ci.lines('OG702')), ci.out
    assert ci.lines('OG725'), ci.out
    assert ci.summary.endswith('test command exited 1'), ci.out


def test_imperative_skip_in_a_helper_outside_the_tests_roots_fails_ci(helpers: CiRepo) -> None:
    # Attack 55: no static rule reads testing/bail.py (not test code, not src) and the
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


# == rule 39b: every case deselected, and a test moved into an ignored folder ==============
def test_every_case_of_a_function_recorded_whole_deselected_fails_ci_by_its_twin(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Attack 37: at adoption only the unbuilt fast implementation existed, so the whole
    # function is recorded; later the pure one runs (and has the bug). Declaring both
    # unavailable is accepted by the record, but the gate's twin of the property carries
    # the same parameters, so the unchanged conftest deselects the canary too.
    buggy_pure = IMPLS.replace('def _pure(xs):\n    return sorted(set(xs))\n',
                               BUGGY_FAST.replace('_fast', '_pure'))
    path = adopt(str(tmp_path / 'repo'), PYPROJECT, dict(CASE_PROJECT, **{
        'src/dd/__init__.py': impls("Impl('fast', _fast, available=False)", '_pure')}), [
        {'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast, available=False)",
                                     '_pure')},
        {'src/dd/__init__.py': f"{buggy_pure}IMPLS = [Impl('pure', _pure), "
                               "Impl('fast', _fast, available=False)]\ndedupe = _pure\n"}]).path
    with open(f'{path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        assert f'"{PROPS}::test_impl_matches_set"' in f.read()
    ci = cheat(CiRepo(path), {
        'src/dd/__init__.py': f"{buggy_pure}IMPLS = [Impl('pure', _pure, available=False), "
                              "Impl('fast', _fast, available=False)]\ndedupe = _pure\n",
        'tests/test_dd.py': DD_UNIT_FOR_THE_BUG})
    assert any(f'the twin of {PROPS}::test_impl_matches_set' in line
               for line in ci.lines('OG725')), ci.out


IGNORING = PYPROJECT + 'addopts = "--ignore=tests/legacy"\n'
TWO_UNITS = f'{SMALL}\n\ndef test_four():\n{FOUR}'
LEGACY = 'from dd import dedupe\n\n\ndef test_old():\n    assert dedupe([]) == []\n'


def test_test_moved_into_a_folder_addopts_ignores_fails_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Attack 39: rule 52 takes it for a move (name and body unchanged), the record of what
    # adoption left out names the tests that were there, not this one.
    path = adopt(str(tmp_path / 'repo'), IGNORING, {
        'src/dd/__init__.py': GOOD, 'tests/test_dd.py': TWO_UNITS,
        'tests/legacy/test_old.py': LEGACY,
        'tests/properties/test_dd_props.py': SORTED_PROPERTY}, [{'src/dd/__init__.py': BUG}]).path
    ci = cheat(CiRepo(path), {
        'tests/test_dd.py': TWO_UNITS.split('\n\ndef test_four')[0],
        'tests/legacy/test_old.py': LEGACY + '\n\ndef test_four():\n'
                                    '    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]\n'})
    where = [line.split(': ')[0] for line in ci.lines('OG703')]
    assert where == ['tests/legacy/test_old.py:8:1'], ci.out


# == rule 52: a move the review report accepts must still run ===============================
MOVED_BODY = '    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]\n'
HEAD = TWO_UNITS.split('\n\ndef test_four')[0]
MOVES = {
    # into a class pytest does not collect (its name), a nested function, a module pytest
    # does not collect (its name): the identity is gone, no test of the change is it
    'class': ({'tests/test_dd.py': f'{HEAD}\n\nclass Helpers:\n    def test_four(self):\n'
                                   f'    {MOVED_BODY}'}, 'OG740'),
    'nested': ({'tests/test_dd.py': f'{HEAD}\n\ndef _later():\n    def test_four():\n'
                                    f'    {MOVED_BODY}\n    return test_four\n'}, 'OG740'),
    'module': ({'tests/test_dd.py': HEAD,
                'tests/dd_cases.py': f'from dd import dedupe\n\n\ndef test_four():\n{MOVED_BODY}'},
               'OG740'),
    # into a Test class with an __init__: a test of the inventory that pytest cannot collect
    'class_with_init': ({'tests/test_dd.py': f'{HEAD}\n\nclass TestMoved:\n'
                                             '    def __init__(self):\n        pass\n\n'
                                             f'    def test_four(self):\n    {MOVED_BODY}'},
                        'OG703'),
}


@pytest.fixture(scope='module')
def two_units_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt(str(tmp_path_factory.mktemp('moves') / 'repo'), PYPROJECT, {
        'src/dd/__init__.py': GOOD, 'tests/test_dd.py': TWO_UNITS,
        'tests/properties/test_dd_props.py': SORTED_PROPERTY}, [{'src/dd/__init__.py': BUG}]).path


@pytest.mark.parametrize('where', sorted(MOVES))
def test_failing_test_moved_where_pytest_does_not_run_it_fails_ci(
        two_units_template: str, tmp_path, where: str) -> None:  # type: ignore[no-untyped-def]
    # Attacks 40-43: the body unchanged, so rule 52 might take it for a move.
    files, code = MOVES[where]
    ci = cheat(copy_template(two_units_template, str(tmp_path / 'repo')), files)
    assert ci.lines(code), ci.out
    assert 'test_four' in ' '.join(ci.lines(code)), ci.out


# -- pytest-xdist's relay: the controller's copy of the reports -----------------------------
RELAY_FORGER = '''\
import gc

for _o in gc.get_objects():
    if type(_o).__name__ == 'WorkerInteractor':  # in each worker: what it relays
        _send = _o.sendevent

        def _forged(name, _send=_send, **kwargs):
            data = kwargs.get('data')
            if name == 'testreport' and isinstance(data, dict) and data.get('outcome') == 'failed':
                data['outcome'] = 'passed'
                data['longrepr'] = None
            return _send(name, **kwargs)

        _o.sendevent = _forged
'''


def test_failures_rewritten_on_the_xdist_relay_fail_ci(helpers: CiRepo) -> None:
    # Attack 61: src/, imported in each worker, rewrites the reports the worker relays to
    # the controller, so `pytest -n 2` exits 0 with every test passed. Each worker's
    # plugin sent the failure to the gate before the relay.
    helpers.pull_request({'src/dd/_relay.py': RELAY_FORGER,
                          'src/dd/__init__.py': 'from dd import _relay  # noqa: F401\n\n' + BUG},
                         bug=False)
    command = (*PYTEST, '-n', '2')
    plain = helpers.start(command)
    ci = helpers.finish(helpers.start([sys.executable, '-I', *helpers.ci_args(command)[1:]]))
    plain_run = helpers.finish(plain)
    assert plain_run.rc == 0, plain_run.out
    assert ci.rc == 1, ci.out
    for nodeid in FAILING:
        assert any(f'the call of {nodeid} was reported as failed' in line
                   for line in ci.lines('OG720')), ci.out
    assert ci.lines('OG722'), ci.out
    assert any('a plain failing assert) passed, it must have failed' in line
               for line in ci.lines('OG724')), ci.out
