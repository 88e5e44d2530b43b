"""The sealed gate (rules 45 and 46): cheats that beat an audit of evidence the test process
writes itself, each on a repository whose pull request carries a real bug.

Plain ``python -m pytest`` exits 0 (the cheat works); ``oracle-guard ci`` fails with the
named code. The honest counterparts at the end pass.
"""
from __future__ import annotations

import json
import os
import sys
import textwrap

import pytest

from ci_repo import build_template
from ci_repo import CiRepo
from ci_repo import copy_template
from ci_repo import PYTEST
from ci_repo import Run

# An honest pull request: a new unit test, no bug.
NEW_TEST = {'tests/test_mul_zero.py': 'from calc import mul\n\n\ndef test_mul_zero():\n'
                                      '    assert mul(0, 5) == 0\n'}
EXIT_0_AT_EXIT = 'import atexit\nimport os\n\natexit.register(os._exit, 0)\n'


@pytest.fixture(scope='session')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_template(str(tmp_path_factory.mktemp('sealed-template') / 'repo'))


@pytest.fixture
def calc(template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(template, str(tmp_path / 'repo'))


def cheat_works_but_ci_fails(calc: CiRepo, files: dict, code: str, *words: str,  # type: ignore[type-arg]
                             bug: bool = True) -> Run:
    calc.pull_request(files, bug=bug)
    plain, ci = calc.both(PYTEST)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    lines = ci.lines(code)
    assert lines, f'no {code} in:\n{ci.out}'
    for word in words:
        assert any(word in line for line in lines), f'{word!r} not in the {code} lines:\n{ci.out}'
    return ci


# -- exit status against the record (rule 45) ---------------------------------------------
def test_atexit_os_exit_0_in_a_unit_test_module_fails_ci(calc: CiRepo) -> None:
    ci = cheat_works_but_ci_fails(calc, {'tests/test_exit.py': EXIT_0_AT_EXIT +
                                         '\n\ndef test_nothing():\n    pass\n'},
                                  'OG722', 'exited 0', 'failed test(s)')
    assert ci.summary.endswith('test command exited 0'), ci.out


def test_a_forged_run_is_a_github_annotation_and_a_line_in_the_review_report(
        calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    calc.pull_request({'tests/test_exit.py': EXIT_0_AT_EXIT + '\n\ndef test_nothing():\n'
                       '    pass\n'})
    report = tmp_path / 'review.md'
    ci = calc.ci(PYTEST, '--format', 'github', '--report', str(report))
    assert ci.rc == 1, ci.out
    assert any(line.startswith('::error file=.,line=1,col=1,title=OG722::forged run')
               for line in ci.out.splitlines()), ci.out
    assert '* `OG722` forged run: the test command exited 0' in report.read_text()


def test_atexit_os_exit_0_in_src_only_under_pytest_fails_ci(calc: CiRepo) -> None:
    buggy = ('import sys\n\nif "pytest" in sys.modules:\n    import atexit, os\n'
             '    atexit.register(os._exit, 0)\n\n\ndef add(a, b):\n    total = a + b\n'
             '    return total + 1 if total == 5 else total\n\n\ndef mul(a, b):\n'
             '    return a * b\n')
    cheat_works_but_ci_fails(calc, {'src/calc/__init__.py': buggy}, 'OG722', 'exited 0')


def test_hidden_skip_mark_and_exit_0_is_a_stopped_session_not_an_excuse(calc: CiRepo) -> None:
    # No silence word in the file, so no hook parses it; the plugin stops the session
    # before any test runs, and the exit at interpreter exit hides that too.
    ci = cheat_works_but_ci_fails(calc, {'tests/test_calc.py': (
        'import atexit, os\n\nimport pytest\n\nfrom calc import add\n\n'
        'pytestmark = getattr(pytest.mark, "s" + "kip")\natexit.register(os._exit, 0)\n\n\n'
        'def test_add():\n    assert add(2, 3) == 5\n')}, 'OG723', 'stopped before its tests ran')
    assert any('never ran' in line for line in ci.lines('OG724')), ci.out  # nor did a canary


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


def test_lying_eq_returned_by_the_function_under_test_fails_ci_through_the_twin(
        calc: CiRepo) -> None:
    buggy = ('class _Sum(int):\n    def __eq__(self, other):\n        return True\n\n'
             '    __hash__ = int.__hash__\n\n\ndef add(a, b):\n    total = a + b\n'
             '    return _Sum(total + 1 if total == 5 else total)\n\n\ndef mul(a, b):\n'
             '    return a * b\n')
    cheat_works_but_ci_fails(calc, {'src/calc/__init__.py': buggy}, 'OG724',
                             'the twin of tests/properties/test_add_props.py::test_add_commutes',
                             'passed')


def test_root_conftest_reporting_every_outcome_as_passed_fails_ci(calc: CiRepo) -> None:
    # SWE-bench issue 631: a patch made only of this conftest is scored "resolved" there.
    cheat_works_but_ci_fails(calc, {'conftest.py': '''\
        import pytest


        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = 'passed'
            report.longrepr = None
        '''}, 'OG724', 'a plain failing assert', 'passed')


def test_hypothesis_engine_patched_to_swallow_a_failure_fails_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from test_ci_audit import PROPERTY
    from test_ci_audit import PROPERTY_LOCK

    template = build_template(str(tmp_path / 'template'), {
        'tests/properties/test_add_props.py': PROPERTY, 'tests/domain_lock.json': PROPERTY_LOCK})
    calc = copy_template(template, str(tmp_path / 'repo'))
    cheat_works_but_ci_fails(calc, {'src/calc/__init__.py': (
        'import sys\n\nif "pytest" in sys.modules:\n    import hypothesis.core as _core\n\n'
        '    _run = _core.StateForActualGivenExecution.run_engine\n\n'
        '    def _quiet(self):\n        try:\n            _run(self)\n'
        '        except Exception:\n            pass\n\n'
        '    _core.StateForActualGivenExecution.run_engine = _quiet\n\n\n'
        'def add(a, b):\n    return a + b + (a == 7)\n\n\ndef mul(a, b):\n    return a * b\n')},
        'OG724', 'a failing Hypothesis property')


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


# -- the stream and its cross-checks (rule 45) --------------------------------------------
def test_record_and_junit_rewritten_at_exit_fail_ci(calc: CiRepo) -> None:
    buggy = '''\
import sys

if "pytest" in sys.modules:
    import atexit, os

    def _tidy():
        folder = os.environ.get("ORACLE_GUARD_RECORD")
        for name in os.listdir(folder) if folder else ():
            path = os.path.join(folder, name)
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(text.replace('"failed"', '"passed"'))
        for arg in sys.argv:
            if arg.startswith("--junitxml="):
                with open(arg.split("=", 1)[1], "w") as f:
                    f.write('<testsuites><testsuite failures="0" errors="0" tests="1">'
                            '</testsuite></testsuites>')
        os._exit(0)

    atexit.register(_tidy)


def add(a, b):
    total = a + b
    return total + 1 if total == 5 else total


def mul(a, b):
    return a * b
'''
    ci = cheat_works_but_ci_fails(calc, {'src/calc/__init__.py': buggy}, 'OG721',
                                  'the record file', 'JUnit')
    assert ci.lines('OG722'), ci.out


def test_events_sent_to_the_gate_by_the_pull_request_fail_ci(calc: CiRepo) -> None:
    ci = cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
        import json
        import os
        import socket


        def pytest_sessionfinish(session):
            address = os.environ.get('ORACLE_GUARD_STREAM', '')
            if address.startswith('unix:'):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(address[5:])
                event = {'event': 'report', 'nodeid': 'tests/test_calc.py::test_add',
                         'when': 'call', 'outcome': 'passed'}
                sock.sendall(json.dumps(event).encode() + b'\\n')
                sock.close()
            os._exit(0)
        '''}, 'OG720', 'tests/test_calc.py::test_add', 'failed', 'passed')
    assert ci.lines('OG722'), ci.out


def test_a_failure_leaves_the_process_before_a_forger_can_rewrite_what_waits(
        calc: CiRepo) -> None:
    """Passes may wait to be sent with the next test's begin; a failure never waits. A
    conftest hook running after the recorder's, at the first failed report, rewrites every
    line the recorder still holds (to send, and for its file) into passes and exits 0: the
    gate already holds the failure (rule 45)."""
    ci = cheat_works_but_ci_fails(calc, {'tests/conftest.py': '''\
        import os

        import pytest

        CONFIG = []


        def pytest_configure(config):
            CONFIG.append(config)


        @pytest.hookimpl(trylast=True)
        def pytest_runtest_logreport(report):
            if not report.failed:
                return
            recorder = CONFIG[0].pluginmanager.get_plugin('oracle-guard-record')
            for name in ('_outbox', '_pending'):
                lines = getattr(recorder, name, None)
                if isinstance(lines, list):
                    lines[:] = [line.replace('"failed"', '"passed"') for line in lines]
            os._exit(0)
        '''}, 'OG722', 'exited 0', 'failed test(s)')
    assert ci.summary.endswith('test command exited 0'), ci.out


def test_only_good_news_may_wait_to_be_sent() -> None:
    from oracle_guard.runtime.run_record import routine

    assert routine(report('passed'))
    assert routine({'event': 'call', 'nodeid': 'n', 'entered': True, 'raised': None,
                    'examples': 3})
    for waits_not in (report('failed'), report('skipped'),
                      {**report('passed'), 'wasxfail': 'FZ-1'},  # an xpass is judged
                      {'event': 'call', 'nodeid': 'n', 'entered': False, 'raised': None},
                      {'event': 'call', 'nodeid': 'n', 'entered': True, 'raised': 'Error'},
                      {'event': 'call', 'nodeid': 'n', 'entered': True, 'raised': None,
                       'examples': 0},
                      {'event': 'call', 'nodeid': 'n', 'entered': True, 'raised': None,
                       'lock': ['drift']},
                      {'event': 'call', 'nodeid': 'n', 'entered': True, 'raised': None,
                       'replaced': ['add']},
                      {'event': 'begin', 'nodeid': 'n'}, START, FINISH,
                      {'event': 'interrupted'}, {'event': 'collect', 'outcome': 'failed'}):
        assert not routine(waits_not), waits_not


# -- isolation -----------------------------------------------------------------------------
def test_root_oracle_guard_package_shadowing_the_plugin_fails_ci(calc: CiRepo) -> None:
    # python -m pytest puts the checkout first on sys.path: -p oracle_guard imports this.
    calc.pull_request({'oracle_guard/__init__.py': '',
                       'oracle_guard/runtime/__init__.py': '',
                       'oracle_guard/runtime/pytest_plugin.py': EXIT_0_AT_EXIT})
    # The gate itself runs isolated (-I), as the action runs it: the checkout is not on
    # its sys.path. (Without -I, `python -m oracle_guard.cli` would import this package.)
    ci = calc.finish(calc.start([sys.executable, '-I', *calc.ci_args()[1:]]))
    assert ci.rc == 1, ci.out
    assert [line.split(':')[0] for line in ci.lines('OG729')] == ['oracle_guard/__init__.py'], \
        ci.out  # the package; its modules are not findings of their own
    assert ci.lines('OG701'), ci.out  # the shadowing plugin recorded nothing


def test_a_test_folder_named_pluggy_is_not_a_shadowing_module(calc: CiRepo) -> None:
    # No __init__.py: a namespace folder, which never wins over the installed package.
    calc.pull_request({'tests/pluggy/test_more.py': 'def test_more():\n    pass\n'},
                      bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 0, ci.out


def test_gate_run_from_the_repository_root_leaves_the_checkout_off_its_path(calc: CiRepo) -> None:
    # A root yaml.py would be what the gate imports to read the ledger, after the tests ran.
    calc.pull_request({**NEW_TEST, 'yaml.py': 'import os\n\nos._exit(0)\n'})
    ci = calc.ci(PYTEST)  # python -m oracle_guard.cli from the repository root
    assert ci.summary.startswith('oracle-guard ci: '), ci.out
    assert 'the checkout was on the gate\'s sys.path' in ci.out, ci.out


# -- bad input -----------------------------------------------------------------------------
def test_a_test_command_that_is_not_pytest_is_exit_2(calc: CiRepo) -> None:
    calc.pull_request(NEW_TEST, bug=False)
    ci = calc.ci([sys.executable, '-c', 'pass'])
    assert ci.rc == 2, ci.out
    assert 'must run pytest' in ci.out, ci.out


def test_a_test_environment_that_cannot_be_inspected_is_exit_2(calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    calc.pull_request(NEW_TEST, bug=False)
    ci = calc.ci(PYTEST, '--test-python', str(tmp_path / 'no-such-python'))
    assert ci.rc == 2, ci.out
    assert 'cannot inspect the test environment' in ci.out, ci.out
    assert 'Traceback' not in ci.out


def test_an_install_step_that_fails_is_exit_2(calc: CiRepo) -> None:
    calc.pull_request(NEW_TEST, bug=False)
    ci = calc.ci(PYTEST, '--install-command', 'exit 3')
    assert ci.rc == 2, ci.out
    assert "'exit 3' exited 3" in ci.out, ci.out


# -- honest counterparts -------------------------------------------------------------------
def test_project_whose_src_is_a_pytest_plugin_passes_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plugin = ('import pytest\n\n\n@pytest.fixture\ndef five():\n    return {}\n\n\n'
              'def pytest_report_header(config):\n    return "calc plugin"\n')
    template = build_template(str(tmp_path / 'template'), {
        'src/calc/plugin.py': plugin.format(5), 'conftest.py': 'pytest_plugins = ["calc.plugin"]\n'})
    calc = copy_template(template, str(tmp_path / 'repo'))
    calc.pull_request({
        'src/calc/plugin.py': plugin.format('2 + 3'),
        'tests/test_plugin.py': 'from calc import add\n\n\ndef test_five(five):\n'
                                '    assert add(2, 3) == five\n',
    }, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 0, ci.out


def test_project_with_its_own_test_naming_passes_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # python_functions without test_*: the canaries are collected all the same.
    from ci_repo import BASE_FILES

    config = textwrap.dedent(BASE_FILES['pyproject.toml']).replace(
        'pythonpath = ["src"]', 'pythonpath = ["src"]\npython_functions = ["check_*", "test_add*"]')
    template = build_template(str(tmp_path / 'template'), {
        'pyproject.toml': config,
        'tests/test_calc.py': 'from calc import add\n\n\ndef check_add():\n'
                              '    assert add(2, 3) == 5\n'})
    calc = copy_template(template, str(tmp_path / 'repo'))
    calc.pull_request({'tests/test_checks.py': 'from calc import mul\n\n\ndef check_mul():\n'
                       '    assert mul(2, 2) == 4\n'}, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 0, ci.out


def twin_repo(tmp_path, test_module: str, **extra: str) -> CiRepo:  # type: ignore[no-untyped-def]
    """A repository whose one unit-test module (the twin's original) is ``test_module``,
    and a pull request that adds an honest unit test."""
    # The property has no `==` to twin: the twin comes from the unit-test module.
    template = build_template(str(tmp_path / 'template'), {
        'tests/test_calc.py': test_module, **extra,
        'tests/properties/test_add_props.py': 'from calc import add\n\n\n'
                                              'def test_add_grows():\n'
                                              '    assert add(2, 3) > 2\n'})
    calc = copy_template(template, str(tmp_path / 'repo'))
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


# -- the stream's own contradictions (rule 45), on streams as the gate receives them -------
def stream_of(*events: dict) -> object:  # type: ignore[type-arg]
    import json

    from oracle_guard.gate.stream import Stream

    return Stream('stream-1', [json.dumps(e).encode() for e in events], ended=True)


START = {'event': 'start', 'pid': 1}
FINISH = {'event': 'finish', 'exitstatus': 0, 'loop_completed': True}


def report(outcome: str, nodeid: str = 'tests/test_calc.py::test_add') -> dict:  # type: ignore[type-arg]
    return {'event': 'report', 'nodeid': nodeid, 'when': 'call', 'outcome': outcome}


def test_events_after_the_session_finished_are_a_forged_run() -> None:
    from oracle_guard.gate.stream import contradictions

    found = contradictions([stream_of(START, FINISH, report('passed'))])
    assert [f.code for f in found] == ['OG720']
    assert 'after its session finished' in found[0].message


def test_a_second_session_in_one_process_is_a_forged_run() -> None:
    from oracle_guard.gate.stream import contradictions

    found = contradictions([stream_of(START, FINISH, START, FINISH)])
    assert 'OG720' in [f.code for f in found]


def test_one_outcome_per_phase_across_processes_is_honest() -> None:
    from oracle_guard.gate.stream import contradictions

    # pytest-xdist: the worker and the controller both report the same outcome.
    assert contradictions([stream_of(START, report('failed'), FINISH),
                           stream_of(START, report('failed'), FINISH)]) == []
    found = contradictions([stream_of(START, report('failed'), FINISH),
                            stream_of(START, report('passed'), FINISH)])
    assert [f.code for f in found] == ['OG720']


CONFIGURED = {'event': 'configured', 'worker': None}
COLLECTED = {'event': 'collected', 'items': []}


@pytest.mark.parametrize(('events', 'told'), [
    ((CONFIGURED, COLLECTED, FINISH), 'opened with a configured event'),
    ((START, CONFIGURED, COLLECTED, COLLECTED, FINISH), 'sent 2 collected events'),
    ((START, CONFIGURED, CONFIGURED, COLLECTED, FINISH), 'sent 2 configured events'),
    ((START, COLLECTED, CONFIGURED, FINISH), 'its collection before its configuration'),
    ((START, CONFIGURED, {'event': 'begin', 'nodeid': 'tests/test_calc.py::test_add'},
      COLLECTED, FINISH), 'began a test before its collection'),
])
def test_events_the_plugin_cannot_have_sent_in_that_order_are_a_forged_run(
        events: tuple, told: str) -> None:  # type: ignore[type-arg]
    from oracle_guard.gate.stream import contradictions

    found = contradictions([stream_of(*events)])
    assert [f.code for f in found] == ['OG720'], found
    assert told in found[0].message


def test_the_plugins_own_order_is_honest_for_a_worker_and_an_xdist_controller() -> None:
    from oracle_guard.gate.stream import contradictions

    begin = {'event': 'begin', 'nodeid': 'tests/test_calc.py::test_add'}
    worker = stream_of(START, CONFIGURED, COLLECTED, begin, report('passed'), FINISH)
    controller = stream_of(START, CONFIGURED, begin, report('passed'), FINISH)  # no collection
    assert contradictions([worker, controller]) == []


def test_the_reference_run_waits_on_its_processs_first_connection_only(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Rule 45: a second connection of the same process (what src could open) sending a
    collection does not release the wait; the plugin's own connection does, after its
    configuration."""
    import socket
    import time

    from oracle_guard.gate.stream import EventListener

    def line(event: dict) -> bytes:  # type: ignore[type-arg]
        return json.dumps(event).encode() + b'\n'

    with EventListener(str(tmp_path)) as listener:
        path = listener.address[len('unix:'):]
        first = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        first.connect(path)
        first.sendall(line(START))
        second = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        second.connect(path)
        second.sendall(line(START) + line(CONFIGURED) + line(COLLECTED))
        while sum(len(s.lines) for s in listener.streams) < 4:  # both read by the gate
            time.sleep(0.01)
        # Looked at once (the process has ended): the second connection's collection is
        # not the plugin's.
        assert listener.wait_for_collection(os.getpid(), lambda: False) is False
        first.sendall(line(CONFIGURED) + line(COLLECTED))
        assert listener.wait_for_collection(os.getpid(), lambda: True) is True
        first.close()
        second.close()
