"""The run record (rule 45): what the test process reports reaches the gate as it happens,
and a run that ends early, forges an outcome or disagrees with its exit status fails.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from builders.calc import cheat_works_but_ci_fails
from builders.calc import EXIT_0_AT_EXIT
from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import PYTEST
from builders.dedupe import attack
from builders.dedupe import BUG
from builders.dedupe import cheat
from builders.dedupe import dd_cheat_fails_ci
from builders.dedupe import DD_PYTEST
from builders.dedupe import FIRST
from builders.dedupe import FORGING_SRC
from builders.dedupe import gate
from builders.dedupe import GOOD
from builders.dedupe import property_failed_in_the_reference_run
from builders.dedupe import REWRITING_THE_TREE
from builders.dedupe import TIDY
from builders.dedupe import WAYS


def test_the_bug_fails_three_tests_and_the_honest_fix_passes_ci(dd: CiRepo) -> None:
    plain = dd.finish(dd.start(DD_PYTEST))
    assert plain.rc == 1 and '3 failed, 1 passed' in plain.out, plain.out
    dd.pull_request({'src/dd/__init__.py': GOOD}, bug=False)
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(DD_PYTEST)[1:]]))
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


# -- the exit status forced to 0 without atexit or os._exit in sight (rule 45) ------------
def test_exit_0_from_threading_shutdown_hook_in_src_fails_ci(dd: CiRepo) -> None:
    dd_cheat_fails_ci(dd, {'src/dd/__init__.py': 'import os\nimport threading\n\n'
                                  'threading._register_atexit(os._exit, 0)\n\n\n' + BUG},
                             'OG722')


def test_forked_parent_exiting_0_after_its_child_ran_the_tests_fails_ci(dd: CiRepo) -> None:
    dd_cheat_fails_ci(dd, {'src/dd/__init__.py': '''\
import os
import sys

if 'DD_CHILD' not in os.environ and os.path.basename(sys.argv[0]) == '__main__.py':
    os.environ['DD_CHILD'] = '1'
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        os._exit(0)


''' + BUG}, 'OG722')


def test_libc_exit_from_a_finalizer_behind_a_rewritten_stdout_fails_ci(dd: CiRepo) -> None:
    dd_cheat_fails_ci(dd, {'src/dd/__init__.py': '''\
import ctypes
import sys
import weakref


class _Calm:
    def __init__(self, inner):
        self.inner = inner

    def write(self, text):
        return self.inner.write(text.replace('failed', 'passed').replace('FAILED', 'PASSED'))

    def __getattr__(self, name):
        return getattr(self.inner, name)


sys.stdout = _Calm(sys.stdout)
weakref.finalize(sys, ctypes.CDLL(None)._exit, 0)


''' + BUG}, 'OG722')


# -- the stream rewritten on its way to the gate (rule 45) --------------------------------
SENDALL_FORGER = '''\
import json
import os
import socket

_send = socket.socket.sendall


def _sendall(self, data, *args):
    lines = []
    for line in data.decode().split('\\n'):
        if line:
            event = json.loads(line)
            # Only the tests that exist on disk: the canaries, which do not, keep failing.
            if os.path.exists(str(event.get('nodeid') or '').split('::')[0]):
                if event.get('outcome') == 'failed':
                    event['outcome'] = 'passed'
                event['raised'] = None
            line = json.dumps(event)
        lines.append(line)
    return _send(self, '\\n'.join(lines).encode(), *args)


socket.socket.sendall = _sendall
'''


def test_src_rewriting_failed_reports_in_socket_sendall_does_not_turn_ci_green(
        dd: CiRepo) -> None:
    # Plain pytest stays red; the gate must not be greener than pytest. The plugin sends
    # through the socket method it bound when it loaded, before src/ was imported.
    dd.pull_request({'src/dd/_net.py': SENDALL_FORGER,
                     'src/dd/__init__.py': 'from dd import _net  # noqa: F401\n\n' + BUG},
                    bug=False)
    plain, ci = gate(dd)
    assert plain.rc == 1, plain.out
    assert ci.rc == 1, ci.out
    assert ci.summary.endswith('test command exited 1'), ci.out


def test_src_wrapping_the_recorders_sender_found_through_gc_fails_ci(dd: CiRepo) -> None:
    # The sender bound at load time is an attribute of the recorder: gc finds the object.
    # The record file, written from the same lines, still holds the failures. Plain pytest
    # stays red: the cheat is against the gate, which must never be greener than pytest.
    dd.pull_request({'src/dd/_net.py': '''\
import gc
import json
import os


def _forging(send):
    def forged(data):
        lines = []
        for line in data.decode().split('\\n'):
            if line:
                event = json.loads(line)
                if os.path.exists(str(event.get('nodeid') or '').split('::')[0]):
                    if event.get('outcome') == 'failed':
                        event['outcome'] = 'passed'
                    event['raised'] = None
                line = json.dumps(event)
            lines.append(line)
        return send('\\n'.join(lines).encode())
    return forged


for _o in gc.get_objects():
    if type(_o).__name__.endswith('Recorder') and getattr(_o, '_send', None):
        _o._send = _forging(_o._send)
''', 'src/dd/__init__.py': 'from dd import _net  # noqa: F401\n\n' + BUG}, bug=False)
    plain, ci = gate(dd)
    assert plain.rc == 1, plain.out
    assert ci.rc == 1, ci.out
    assert any('tests/test_dd.py::test_four failed in the record file' in line
               for line in ci.lines('OG721')), ci.out


def test_src_patching_the_json_encoder_forges_stream_and_file_alike_but_fails_ci(
        dd: CiRepo) -> None:
    # Both copies of the record are serialized by the patched encoder; the JUnit report,
    # written by pytest from its own reports, still names the failures.
    dd.pull_request({'src/dd/_enc.py': '''\
import json
import os

_iterencode = json.JSONEncoder.iterencode


def _forge(self, o, *args, **kwargs):
    if isinstance(o, dict) and os.path.exists(str(o.get('nodeid') or '').split('::')[0]):
        o = dict(o, raised=None)
        if o.get('outcome') == 'failed':
            o['outcome'] = 'passed'
    return _iterencode(self, o, *args, **kwargs)


json.JSONEncoder.iterencode = _forge
''', 'src/dd/__init__.py': 'from dd import _enc  # noqa: F401\n\n' + BUG}, bug=False)
    plain, ci = gate(dd)
    assert plain.rc == 1, plain.out
    assert ci.rc == 1, ci.out
    assert any('the JUnit report says tests/test_dd.py::test_four failed' in line
               for line in ci.lines('OG721')), ci.out


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
    # The forged passes reach the gate first; each real failure still leaves at
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
    # The plugin's sends fail from then on; the gate's copy has no finish, and
    # the canaries (and, in the reference run, the base's property) never reached it.
    ci = cheat(helpers, {'src/dd/_net.py': SHUT_STREAM,
                         'src/dd/__init__.py': 'from dd import _net  # noqa: F401\n\n' + BUG},
               plain_rc=1)
    assert any('ended before the session finished' in line for line in ci.lines('OG702')), ci.out
    assert ci.lines('OG725'), ci.out
    assert ci.summary.endswith('test command exited 1'), ci.out


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
    # src/, imported in each worker, rewrites the reports the worker relays to
    # the controller, so `pytest -n 2` exits 0 with every test passed. Each worker's
    # plugin sent the failure to the gate before the relay.
    helpers.pull_request({'src/dd/_relay.py': RELAY_FORGER,
                          'src/dd/__init__.py': 'from dd import _relay  # noqa: F401\n\n' + BUG},
                         bug=False)
    command = (*DD_PYTEST, '-n', '2')
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


@pytest.mark.reference_run
@pytest.mark.parametrize('own', [True, False], ids=['plugins-connection', 'own-connection'])
def test_a_collection_forged_by_src_does_not_start_the_test_command_unseen(
        dd6_sound_main: CiRepo, own: bool) -> None:
    _, ci = attack(dd6_sound_main, {'src/dd/__init__.py': FORGING_SRC % {'own': own},
                          'tests/test_dd.py': REWRITING_THE_TREE}, plain_rc=1)
    if own:
        assert any('reference run: forged run: stream-1 sent 2 configured events' in line
                   for line in ci.lines('OG720')), ci.out
    else:
        # The test command waited for the plugin's own collection: the property was compiled
        # from the gate's bytes and fails there.
        assert property_failed_in_the_reference_run(ci), ci.out


# -- a collection forged in the plugin's order ---------------------------------------
# src, imported by the base's properties conftest, adds an audit hook; when the reference
# run's main thread opens the tree's property to compile it (the plugin has sent its
# configured by then), the hook writes a collection into the plugin's connection (found
# through gc) and waits for the test command, released, to rewrite the file. The plugin's
# own collection then is a second one in that stream (OG720, rule 45). (The same hook
# sending a begin instead: the test below.)
# The finder of the plugin's connection to the gate (gc, an AF_UNIX socket).
PLUGINS_SOCKET = FORGING_SRC[FORGING_SRC.index('def _plugins_socket'):
                             FORGING_SRC.index('def _forge_and_hold')]


FORGING_IN_ORDER = '''\
import gc
import socket
import sys
import time

_SENT = []


''' + PLUGINS_SOCKET + '''
def _hook(event, args):
    if event != 'open' or _SENT or not isinstance(args[0], str) or \\
            not args[0].endswith('test_dd_props.py') or 'oracle-guard-reference-' not in args[0]:
        return
    _SENT.append(args[0])
    plugins = _plugins_socket()
    if plugins is None:
        return
    plugins.sendall(b'{"event": "collected", "items": []}\\n')
    with open(args[0], 'rb') as f:
        original = f.read()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with open(args[0], 'rb') as f:
            if f.read() != original:
                break
        time.sleep(0.01)


if sys.flags.isolated:
    sys.addaudithook(_hook)


''' + BUG


@pytest.mark.reference_run
def test_a_collection_forged_in_the_plugins_order_is_a_second_collection(
        with_properties_conftest: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(with_properties_conftest, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'src/dd/__init__.py': FORGING_IN_ORDER,
                          'tests/test_dd.py': REWRITING_THE_TREE}, plain_rc=1)
    assert any('reference run: forged run: stream-1 sent 2 collected events' in line
               for line in ci.lines('OG720')), ci.out


# -- the test command released by a forged begin, in the plugin's order --------------------
# The gate releases the test command on the reference process's first connection once it has
# seen the plugin's configured, then a collected or a begin (what an xdist controller sends).
# src, imported by the base's properties conftest, adds an audit hook: when the main thread
# opens the tree's property to compile it (after the plugin's configured), it sends a begin
# into the plugin's connection (found through gc) and waits until the test command has
# rewritten the file (self-restoring as it is imported: builders.dedupe's REWRITING_THE_TREE). The
# test command's own run is fooled by the root test module FIRST.
RELEASING_SRC = FORGING_IN_ORDER.replace(
    "b'{\"event\": \"collected\", \"items\": []}\\n'",
    "b'{\"event\": \"begin\", \"nodeid\": \"tests/properties/test_dd_props.py::'\n"
    "                    b'test_dedupe_matches_set\"}\\n'").replace(
    'time.monotonic() + 5', 'time.monotonic() + 20')


@pytest.mark.reference_run
def test_a_test_begun_before_the_collection_is_a_forged_run(
        with_properties_conftest: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The forged begin releases the test command, but a test begun before
    # its process's collection is a contradiction in the stream (OG720, rule 45).
    repo = copy_template(with_properties_conftest, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'src/dd/__init__.py': RELEASING_SRC, 'test_a_first.py': FIRST,
                          'tests/test_dd.py': REWRITING_THE_TREE + TIDY}, plain_rc=0)
    assert any('began a test before its collection' in line for line in ci.lines('OG720')), \
        ci.out


# -- exit status against the record (rule 45) ---------------------------------------------
def test_atexit_os_exit_0_in_a_unit_test_module_fails_ci_as_an_annotation_and_in_the_report(
        calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    calc.pull_request({'tests/test_exit.py': EXIT_0_AT_EXIT + '\n\ndef test_nothing():\n'
                       '    pass\n'})
    report = tmp_path / 'review.md'
    plain, ci = calc.both(PYTEST, '--format', 'github', '--report', str(report))
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    forged = [line for line in ci.out.splitlines()
              if line.startswith('::error file=.,line=1,col=1,title=OG722::forged run')]
    assert forged, ci.out
    for words in ('exited 0', 'failed test(s)'):
        assert any(words in line for line in forged), f'{words!r} not in the OG722 lines:\n{ci.out}'
    assert ci.summary.endswith('test command exited 0'), ci.out
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
        'def test_add():\n    assert add(2, 3) == 5\n')}, 'OG716', 'stopped the session')
    assert ci.lines('OG722'), ci.out  # the exit 0 after the stop
    assert not ci.lines('OG723') and not ci.lines('OG724'), ci.out  # folded under OG716


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
    from builders.dedupe import CALC_PROPERTY
    from builders.dedupe import CALC_PROPERTY_LOCK

    calc_template = build_template(str(tmp_path / 'template'), {
        'tests/properties/test_add_props.py': CALC_PROPERTY, 'tests/domain_lock.json': CALC_PROPERTY_LOCK})
    calc = copy_template(calc_template, str(tmp_path / 'repo'))
    cheat_works_but_ci_fails(calc, {'src/calc/__init__.py': (
        'import sys\n\nif "pytest" in sys.modules:\n    import hypothesis.core as _core\n\n'
        '    _run = _core.StateForActualGivenExecution.run_engine\n\n'
        '    def _quiet(self):\n        try:\n            _run(self)\n'
        '        except Exception:\n            pass\n\n'
        '    _core.StateForActualGivenExecution.run_engine = _quiet\n\n\n'
        'def add(a, b):\n    return a + b + (a == 7)\n\n\ndef mul(a, b):\n    return a * b\n')},
        'OG724', 'a failing Hypothesis property')


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
