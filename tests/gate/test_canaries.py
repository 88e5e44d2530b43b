"""The gate's canaries (rule 45): planted tests that must fail or pass, and twins of
oracle tests that only a lying ``==`` makes pass.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from builders.calc import cheat_works_but_ci_fails
from builders.calc import NEW_TEST
from builders.ci_repo import adopt
from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import PYTEST
from builders.ci_repo import Run
from builders.ci_repo import shared_template
from builders.dedupe import adopt_dd
from builders.dedupe import attack
from builders.dedupe import BUG
from builders.dedupe import BUGGY_FAST
from builders.dedupe import CASE_PROJECT
from builders.dedupe import cheat
from builders.dedupe import dd_cheat_fails_ci
from builders.dedupe import DD_PYTEST
from builders.dedupe import DD_UNIT_FOR_THE_BUG
from builders.dedupe import gate
from builders.dedupe import IMPLS
from builders.dedupe import impls
from builders.dedupe import PROPERTY
from builders.dedupe import PROPERTY_ID
from builders.dedupe import PROPS
from builders.dedupe import PYPROJECT
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG

pytestmark = pytest.mark.reference_run


# -- a lie told only to the expected value's own kind (rule 45: the twin) -----------------
@pytest.mark.reference_run(False)  # the test command's findings only
def test_eq_that_lies_only_to_lists_fails_ci_through_the_twin(dd: CiRepo) -> None:
    # A plain sentinel object is not a list, so this __eq__ told it the truth; the twin's
    # sentinel now has the type of the value it replaces.
    lying = BUG.replace('    return out\n', '    return _Sorted(out)\n').replace(
        'return out[:-1]', 'return _Sorted(out[:-1])')
    ci = dd_cheat_fails_ci(dd, {'src/dd/__init__.py': '''\
class _Sorted(list):
    def __eq__(self, other):
        return isinstance(other, list) or list.__eq__(self, other)

    __hash__ = None


''' + lying}, 'OG724')
    assert any(f'the twin of {PROPERTY_ID}' in line for line in ci.lines('OG724')), ci.out


# -- a session teardown failure that lands on a canary ---------------------------------------
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


# -- an __eq__ that lies on the bug's answers only --------------------------------------------
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


def layout_repo(factory: pytest.TempPathFactory, tmp_path, layout: str) -> CiRepo:  # type: ignore[no-untyped-def]
    """A copy of dd adopted with ``layout``'s files, built once per run."""
    template = shared_template(factory, f'canaries-{layout.replace(" ", "-")}',
                               lambda path: adopt_dd(path, LAYOUTS[layout]))
    return copy_template(template, str(tmp_path / 'repo'))


@pytest.mark.parametrize('layout', sorted(LAYOUTS))
def test_twin_of_a_property_importing_a_sibling_helper_catches_the_lie(
        tmp_path_factory: pytest.TempPathFactory, tmp_path, layout: str) -> None:  # type: ignore[no-untyped-def]
    repo = layout_repo(tmp_path_factory, tmp_path, layout)
    _, ci = attack(repo, {'src/dd/__init__.py': PARTIAL_LIAR.format(tells='True')}, plain_rc=0)
    here, there = twin_lines(ci)
    assert here and there, ci.out
    assert 'twin canaries of' not in ci.out, ci.out  # planted, in both runs


@pytest.mark.parametrize('layout', sorted(LAYOUTS))
def test_honest_pull_request_beside_a_sibling_helper_passes_ci(
        tmp_path_factory: pytest.TempPathFactory, tmp_path, layout: str) -> None:  # type: ignore[no-untyped-def]
    repo = layout_repo(tmp_path_factory, tmp_path, layout)
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
    template = adopt_dd(str(tmp_path / 'template'), project)
    honest = copy_template(template, str(tmp_path / 'honest'))
    honest.pull_request({'src/dd/__init__.py': HONEST_SUBCLASS}, bug=False)
    # The gate alone: nothing here asks what plain pytest says.
    ci = honest.finish(honest.start([sys.executable, '-I', *honest.ci_args(DD_PYTEST)[1:]]))
    assert ci.rc == 0 and 'twin canar' not in ci.out, ci.out
    lying = copy_template(template, str(tmp_path / 'lying'))
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


# == rule 39b: every case deselected, and a test moved into an ignored folder ==============
@pytest.mark.reference_run(False)  # the test command's findings only
def test_every_case_of_a_function_recorded_whole_deselected_fails_ci_by_its_twin(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # At adoption only the unbuilt fast implementation existed, so the whole
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


# -- canaries (rule 45) -------------------------------------------------------------------
RUNTEST_WRAPPER = '''\
def _swallow(runtest):
    def wrapped(self):
        try:
            runtest(self)
        except AssertionError:
            pass
    return wrapped
'''


@pytest.mark.reference_run(False)  # the test command's findings only
@pytest.mark.parametrize('where', ['src helper', 'unit test module', 'autouse fixture'])
def test_runtest_wrapped_in_try_except_fails_ci_through_the_canaries(calc: CiRepo,
                                                                      where: str) -> None:
    if where == 'src helper':
        files = {'src/calc/_speed.py': 'import sys\n\nif "_pytest.python" in sys.modules:\n'
                 '    import _pytest.python as p\n\n' + textwrap.indent(RUNTEST_WRAPPER, '    ')
                 + '\n    p.Function.runtest = _swallow(p.Function.runtest)\n',
                 'src/calc/__init__.py': 'from calc import _speed  # noqa: F401\n\n\n'
                 'def add(a, b):\n    total = a + b\n    return total + 1 if total == 5 else '
                 'total\n\n\ndef mul(a, b):\n    return a * b\n'}
    elif where == 'unit test module':
        files = {'tests/test_aaa.py': 'import importlib\n\n' + RUNTEST_WRAPPER +
                 '\n\n_p = importlib.import_module("_py" "test" ".python")\n'
                 '_p.Function.runtest = _swallow(_p.Function.runtest)\n\n\n'
                 'def test_ok():\n    pass\n'}
    else:
        files = {'tests/conftest.py': 'import pytest\n\n' + RUNTEST_WRAPPER +
                 '\n\n@pytest.fixture(autouse=True)\ndef _speed(request, monkeypatch):\n'
                 '    kind = type(request.node)\n'
                 '    monkeypatch.setattr(kind, "runtest", _swallow(kind.runtest))\n'}
    cheat_works_but_ci_fails(calc, files, 'OG724', 'a plain failing assert')


def test_runtest_wrapper_under_xdist_fails_ci_through_the_workers_streams(calc: CiRepo) -> None:
    # execnet does not pass file descriptors on: each worker connects to the socket the
    # environment names, and the canaries it ran reach the gate from there.
    calc.pull_request({'tests/conftest.py': 'import pytest\n\n' + RUNTEST_WRAPPER +
                       '\n\n@pytest.fixture(autouse=True)\ndef _speed(request, monkeypatch):\n'
                       '    kind = type(request.node)\n'
                       '    monkeypatch.setattr(kind, "runtest", _swallow(kind.runtest))\n'})
    ci = calc.ci((*PYTEST, '-n', '2'))
    assert ci.rc == 1, ci.out
    assert any('a plain failing assert' in line for line in ci.lines('OG724')), ci.out
    assert not ci.lines('OG725'), ci.out  # every canary was collected in the workers


@pytest.mark.reference_run(False)  # the test command's findings only
def test_lying_eq_returned_by_the_function_under_test_fails_ci_through_the_twin(
        calc: CiRepo) -> None:
    buggy = ('class _Sum(int):\n    def __eq__(self, other):\n        return True\n\n'
             '    __hash__ = int.__hash__\n\n\ndef add(a, b):\n    total = a + b\n'
             '    return _Sum(total + 1 if total == 5 else total)\n\n\ndef mul(a, b):\n'
             '    return a * b\n')
    cheat_works_but_ci_fails(calc, {'src/calc/__init__.py': buggy}, 'OG724',
                             'the twin of tests/properties/test_add_props.py::test_add_commutes',
                             'passed')


def test_canaries_stay_out_of_the_tree_and_the_report(calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    calc.pull_request(NEW_TEST, bug=False)
    report = tmp_path / 'review.md'
    # With pytest's cache on: the failed canaries are not left in .pytest_cache.
    with_cache = [a for a in PYTEST if a != 'no:cacheprovider']
    with_cache.remove('-p')
    ci = calc.ci(with_cache, '--report', str(report))
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out
    text = report.read_text()
    assert 'test_calc.py::test_add' not in text
    assert 'its 4 canaries ended as planted' in text, text
    status = os.popen(f'git -C {calc.path} status --porcelain --ignored').read()
    assert status.split() == ['!!', '.pytest_cache/'], status
    cache = os.path.join(calc.path, '.pytest_cache', 'v', 'cache')
    with open(os.path.join(cache, 'nodeids'), encoding='utf-8') as f:
        nodeids = json.load(f)
    assert 'tests/test_calc.py::test_add' in nodeids  # the cache was written
    assert all(os.path.isfile(os.path.join(calc.path, n.split('::')[0])) for n in nodeids), \
        nodeids  # and holds no canary
    assert not os.path.exists(os.path.join(cache, 'lastfailed'))  # nothing real failed


def twin_repo(tmp_path, test_module: str, **extra: str) -> CiRepo:  # type: ignore[no-untyped-def]
    """A repository whose one unit-test module (the twin's original) is ``test_module``,
    and a pull request that adds an honest unit test."""
    # The property has no `==` to twin: the twin comes from the unit-test module.
    calc_template = build_template(str(tmp_path / 'template'), {
        'tests/test_calc.py': test_module, **extra,
        'tests/properties/test_add_props.py': 'from calc import add\n\n\n'
                                              'def test_add_grows():\n'
                                              '    assert add(2, 3) > 2\n'})
    calc = copy_template(calc_template, str(tmp_path / 'repo'))
    calc.pull_request(NEW_TEST, bug=False)
    return calc


def test_twin_of_a_module_that_reads_data_beside_it_passes_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The twin is imported from the gate's folder, with __file__ where it is collected.
    calc = twin_repo(tmp_path, 'import os\n\nfrom calc import add\n\n'
                     'HERE = os.path.dirname(__file__)\n'
                     'with open(os.path.join(HERE, "data", "five.txt")) as f:\n'
                     '    FIVE = int(f.read())\n\n\n'
                     'def test_add_five():\n    assert add(2, 3) == FIVE\n',
                     **{'tests/data/five.txt': '5\n'})
    ci = calc.ci(PYTEST, '--report', str(tmp_path / 'review.md'))
    assert ci.rc == 0, ci.out
    assert 'twin canary' not in ci.out, ci.out  # it was planted, and failed as planted
    assert 'its 4 canaries ended as planted' in (tmp_path / 'review.md').read_text()


def test_twin_of_a_module_whose_data_is_found_through_its_spec_passes_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The twin runs in a copy of the namespace its original was imported into: the
    # module-level code that found the data through the module's spec is not run again.
    calc = twin_repo(tmp_path, 'from calc import add\n\n'
                     'ROWS = open(__spec__.origin.replace(".py", ".csv")).read()\n\n\n'
                     'def test_add_named():\n    assert add(2, 3) == 5\n',
                     **{'tests/test_calc.csv': '2,3,5\n'})
    ci = calc.ci(PYTEST, '--report', str(tmp_path / 'review.md'))
    assert ci.rc == 0, ci.out
    assert 'twin canar' not in ci.out, ci.out  # planted, and ended as planted
    assert 'its 4 canaries ended as planted' in (tmp_path / 'review.md').read_text()


BAG = '''\
class Bag:
    def __init__(self, items):
        self.items = sorted(items)

    def __eq__(self, other):
        if type(other) is not Bag:  # pyrsistent's PBag refuses other types like this
            raise TypeError("Can only compare Bag with Bags")
        return self.items == other.items
'''


def test_twin_whose_value_refuses_the_sentinel_is_inconclusive_not_forged(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # An honest __eq__ that raises for a foreign type fails the twin before its sentinel.
    calc = twin_repo(tmp_path, 'from bag import Bag\n\n\n'
                     'def test_bag_ignores_order():\n    assert Bag([2, 1]) == Bag([1, 2])\n',
                     **{'src/bag.py': BAG})
    ci = calc.ci(PYTEST)
    assert ci.rc == 0, ci.out
    assert 'OG724' not in ci.out, ci.out
    assert 'the twin canaries of tests/test_calc.py::test_bag_ignores_order are inconclusive: ' \
        'the compared value refused the sentinel (TypeError' in ci.out, ci.out


def test_real_failure_keeps_exit_1_with_the_canaries_subtracted(calc: CiRepo) -> None:
    calc.pull_request({})
    ci = calc.ci(PYTEST)
    assert ci.rc == 1, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 1', ci.out
