"""The gate played as a cheating agent against this round's two mechanisms
(benchmarks/ATTACKS.md, attacks 83-93): examples thrown away by src (OG717, rule 43 at run
time) and the reference tree sealed in time (rule 44). What the gate catches.

The repository is the one of ``test_ci_attacks_round3.py``: ``dd`` adopted with
``oracle-guard init``, then the bug on ``main`` (``dedupe`` drops the largest value past
three distinct ones). Each pull request leaves the bug in place. The attacks that get
through are described in ATTACKS.md and reproduced by benchmarks/attacks_open/round4.py,
not written here: this file asserts only what the gate catches.
"""
from __future__ import annotations

import sys

import pytest

from ci_repo import adopt
from ci_repo import CiRepo
from ci_repo import copy_template
from test_ci_attacks import BUG
from test_ci_attacks import gate
from test_ci_attacks import GOOD
from test_ci_attacks import PROPERTY
from test_ci_attacks import PROPERTY_ID
from test_ci_attacks import PYPROJECT
from test_ci_attacks import PYTEST
from test_ci_attacks import UNIT_TESTS
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG
from test_ci_attacks_round3 import adopt_dd
from test_ci_attacks_round3 import attack
from test_ci_attacks_round3 import DISCARDING_SRC
from test_ci_attacks_round3 import OUTCOME_FROM_SRC
from test_ci_attacks_round3 import SMALL_UNIT_TESTS
from test_ci_attacks_round3 import dd  # noqa: F401 -- the fixture
from test_ci_attacks_round3 import PROPERTIES_CONFTEST
from test_ci_attacks_round3 import property_failed_in_the_reference_run
from test_ci_attacks_round3 import template  # noqa: F401 -- the fixture

# src holds the reference run up (it tells it apart by python -I) at the first call, so
# that the test command, which starts once the reference run has collected, finds it
# still running.
HOLD_THE_REFERENCE_RUN = 'import sys\nimport time\n\n_held = []\n\n\n' + BUG.replace(
    '    out = sorted(set(xs))\n',
    '    if sys.flags.isolated and not _held:\n        _held.append(time.sleep(3))\n'
    '    out = sorted(set(xs))\n')

# -- attack 89: the test command signals the reference run -----------------------------------
# A unit test module finds the reference pytest process (its --rootdir is the reference
# tree, its parent is the gate that started the test command too) and sends it a signal.
# A run that did not finish is OG734 (rule 44), whatever ended it.
SIGNALLING = '''\
import glob
import os
import signal

from dd import dedupe


def _parent(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return int(f.read().rsplit(') ', 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _signal_the_reference_run(signum):
    for cmdline in glob.glob('/proc/[0-9]*/cmdline'):
        pid = cmdline.split('/')[2]
        try:
            with open(cmdline, 'rb') as f:
                args = f.read().split(b'\\0')
        except OSError:
            continue
        if any(a.startswith(b'--rootdir=') and a.endswith(b'/reference') and
               b'oracle-guard-reference-' in a for a in args) and _parent(pid) == os.getppid():
            os.kill(int(pid), signum)


if 'ORACLE_GUARD_STREAM' in os.environ:  # in the gate's test command only
    _signal_the_reference_run(signal.%s)
'''


# Held until the signal ends it, however slow the machine is to start the test command.
HELD_UNTIL_SIGNALLED = HOLD_THE_REFERENCE_RUN.replace('time.sleep(3)', 'time.sleep(60)')


@pytest.mark.parametrize('signum', ['SIGKILL', 'SIGTERM', 'SIGINT'])
def test_a_test_command_signalling_the_reference_run_fails_ci(
        dd: CiRepo, signum: str) -> None:  # noqa: F811 -- the fixture
    unit = SIGNALLING % signum + UNIT_TESTS_FOR_THE_BUG.replace('from dd import dedupe\n', '')
    _, ci = attack(dd, {'src/dd/__init__.py': HELD_UNTIL_SIGNALLED, 'tests/test_dd.py': unit},
                   plain_rc=1)
    assert any('reference run: OG702 the run did not finish' in line
               for line in ci.lines('OG734')), ci.out


# -- attack 93: the checkout's property rewritten for the test command -----------------------
# A test module at the root of the checkout (collected before tests/) rewrites the property
# file in the working tree before pytest collects it, and a unit test puts it back. The test
# command runs the weakened property and passes; the reference tree is written from git
# objects, so the base property fails there (OG730, rule 44).
FIRST = '''\
import os

PROPERTY = os.path.join(os.path.dirname(__file__), 'tests', 'properties', 'test_dd_props.py')
with open(PROPERTY, 'rb') as f:
    ORIGINAL = f.read()
with open(PROPERTY, 'wb') as f:
    f.write(ORIGINAL.replace(b'== sorted(set(xs))', b'== dedupe(xs)'))


def test_layout():
    assert os.path.isfile(PROPERTY)
'''
TIDY = '''

def test_zz_tidy():
    import test_a_first
    with open(test_a_first.PROPERTY, 'wb') as f:
        f.write(test_a_first.ORIGINAL)
'''


def test_the_checkouts_property_rewritten_before_collection_fails_ci_in_the_reference_run(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'test_a_first.py': FIRST, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG + TIDY},
                    bug=False)
    # One after the other: both runs rewrite the same working tree.
    plain = dd.finish(dd.start(PYTEST))
    assert plain.rc == 0, plain.out
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(PYTEST)[1:]]))
    assert ci.rc == 1, ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


# A subclass of BaseException found by name, with no import and no name rule 43 reads.
FIND = '''\
def _find(root, name):
    for cls in type.__subclasses__(root):
        if cls.__name__ == name:
            return cls
        found = _find(cls, name)
        if found is not None:
            return found
'''

# -- 83: the example ended as a valid one ------------------------------------------------
# Hypothesis's engine ends a test case early with StopTest(counter): raised with the
# counter of the test case running (the last ConjectureData made: its class found by a
# walk of object.__subclasses__(), the counter in the globals of its __init__), the engine
# takes the call as finished, the example as VALID and passed. Nothing is discarded and no
# health check counts it; Hypothesis did not raise it itself (OG717).
STOP_TEST_SRC = FIND + '''

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        stop = _find(BaseException, 'Stop' + 'Test')
        data = [c for c in type.__subclasses__(object) if c.__name__ == 'Conjecture' + 'Data']
        if stop is not None and data:
            local = data[0].__init__.__globals__['thread' + 'local']
            raise stop(local.global_test_counter - 1)
        return out[:-1]
    return out
'''

# -- 84: UnsatisfiedAssumption whose innermost frame is not under src ------------------------
# OG717 first judged the innermost frame outside Hypothesis (generated code and module code
# skipped), and only that one: when it was not under src, nothing was said, although the
# exception came through dedupe's own frame. Now the exception must come from Hypothesis's
# own code (assume, the engine) in the first place. (a) a function compiled under a test file's
# name raises it; (b) dedupe raises it with the traceback of a json error attached (its
# innermost frame is json's); (c) concurrent.futures.Future.result() raises it; (d) dedupe
# returns a list whose __eq__ (compiled under a test file's name) raises it when the
# property compares: no frame of src is in that traceback at all.
DISCARD_HEAD = '''\
import concurrent.futures
import json
import os
import runpy


''' + FIND + '''

def _discard():
    cls = _find(BaseException, 'Unsatisfied' + 'Assumption')
'''
DISCARD_TAIL = '''

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        _discard()
    return out
'''
RAISE = {
    '84a': ("    ns = {}\n    exec(compile('def r(c):\\n    raise c()\\n', 'tests/test_dd.py', "
            "'exec'), ns)\n    ns['r'](cls)\n"),
    '84b': ("    try:\n        json.loads('x')\n    except ValueError as err:\n"
            "        raise cls().with_traceback(err.__traceback__)\n"),
    '84c': "    f = concurrent.futures.Future()\n    f.set_exception(cls())\n    f.result()\n",
    # 91a: module-level code of src/dd/_gate.py, run by runpy.run_path: the module's frame
    # is skipped, and before Python 3.11 runpy's own frames are a file of the standard
    # library (from 3.11 on they are '<frozen runpy>', skipped too, and dedupe's is judged).
    '91a': ("    runpy.run_path(os.path.join(os.path.dirname(__file__), '_gate.py'), "
           "{'c': cls})\n"),
}
EQ_SRC = '''\
_NS = {}
exec(compile('def eq(self, other):\\n    raise self.c()\\n', 'tests/test_dd.py', 'exec'), _NS)


''' + FIND + '''

class _Later(list):
    __eq__ = _NS['eq']
    __hash__ = None


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        later = _Later(out[:-1])
        later.c = _find(BaseException, 'Unsatisfied' + 'Assumption')
        return later
    return out
'''

# -- 91b: the same from module-level code imported again ------------------------------------
# dedupe drops src/dd/_gate.py from sys.modules and imports it with importlib.import_module;
# its module-level code raises. The module's frame is skipped, importlib's frozen frames are
# skipped, and the innermost frame left is importlib/__init__.py's (a file on every Python).
IMPORT_SRC = '''\
import importlib
import sys


''' + FIND + '''

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        sys.modules.pop('dd._gate', None)
        importlib.import_module('dd._gate')
    return out
'''
GATE_MODULE = "from dd import _find\n\nraise _find(BaseException, 'Unsatisfied' + 'Assumption')()\n"

# -- 86: BackendCannotProceed ------------------------------------------------------------------
# Hypothesis's signal that an alternative backend gave up on a test case: the engine drops
# the test case ("we're pretending this never happened"), counted invalid; src raised it.
BACKEND_SRC = FIND + '''

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        raise _find(BaseException, 'Backend' + 'CannotProceed')('discard_test_case')
    return out
'''


def discarding_pull_requests() -> dict[str, dict[str, str]]:
    """name -> the pull request's files: src ends the property's examples with one of
    Hypothesis's control exceptions whenever it would answer wrong."""
    found = {'83': {'src/dd/__init__.py': STOP_TEST_SRC},
             '84d': {'src/dd/__init__.py': EQ_SRC},
             '86': {'src/dd/__init__.py': BACKEND_SRC},
             '91b': {'src/dd/__init__.py': IMPORT_SRC, 'src/dd/_gate.py': GATE_MODULE}}
    for name, raising in RAISE.items():
        found[name] = {'src/dd/__init__.py': DISCARD_HEAD + raising + DISCARD_TAIL}
    found['91a']['src/dd/_gate.py'] = 'raise c()\n'
    return {name: {**files, 'tests/test_dd.py': SMALL_UNIT_TESTS}
            for name, files in sorted(found.items())}


@pytest.mark.parametrize('name', sorted(discarding_pull_requests()))
def test_examples_ended_by_an_exception_hypothesis_did_not_raise_fail_ci(
        dd: CiRepo, name: str) -> None:  # noqa: F811 -- the fixture
    _, ci = attack(dd, discarding_pull_requests()[name], plain_rc=0)
    assert any(PROPERTY_ID in line for line in ci.lines('OG717')), ci.out
    assert any('reference run: OG717' in line and PROPERTY_ID in line
               for line in ci.lines('OG734')), ci.out


# -- a forged collection: the test command released early -------------------------------------
# The test command starts once the reference run has collected (rule 44). src, imported by
# the base's properties conftest before that run collects (python -I is the tell), sends the
# gate a collection of its own: (a) written into the plugin's connection, found through gc,
# after a configuration of its own (the plugin's comes after the conftests), or (b) over a
# connection it opens itself to the same address, as the plugin would (start, configured,
# collected, and a finish at the end). Then it
# holds the run until the test command has rewritten the tree's property, which restores
# the gate's bytes as it is imported: compiled weak, put back before the end. Only the
# plugin's own first connection is waited on (b), and an event it cannot have sent in that
# order is a forged run (a, OG720, rule 45).
FORGING_SRC = '''\
import gc
import os
import socket
import sys
import time

_KEEP = []
FORGED = b'{"event": "configured"}\\n{"event": "collected", "items": []}\\n'


def _plugins_socket():
    for obj in gc.get_objects():
        if isinstance(obj, socket.socket) and obj.family == socket.AF_UNIX:
            try:
                if obj.getpeername().endswith('events.sock'):
                    return obj
            except OSError:
                continue
    return None


def _forge_and_hold():
    plugins = _plugins_socket() if sys.flags.isolated else None
    if plugins is None:
        return
    if %(own)r:
        plugins.sendall(FORGED)
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(plugins.getpeername())
        sock.sendall(b'{"event": "start", "pid": %%d}\\n' %% os.getpid() + FORGED)
        _KEEP.append(sock)
    prop = os.path.join(os.getcwd(), 'tests', 'properties', 'test_dd_props.py')
    with open(prop, 'rb') as f:
        original = f.read()
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        with open(prop, 'rb') as f:
            if f.read() != original:
                break
        time.sleep(0.01)
    for sock in _KEEP:  # a session of its own, finished as the plugin would
        sock.sendall(b'{"event": "finish", "exitstatus": 0, "loop_completed": true}\\n')
        sock.close()


_forge_and_hold()


''' + BUG
# The test command's unit tests: this gate's reference run only (its parent is our parent).
REWRITING_THE_TREE = '''\
import glob
import os

from dd import dedupe


def _parent(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return int(f.read().rsplit(') ', 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _weaken_the_reference_property():
    for cmdline in glob.glob('/proc/[0-9]*/cmdline'):
        pid = cmdline.split('/')[2]
        try:
            with open(cmdline, 'rb') as f:
                args = f.read().split(b'\\0')
        except OSError:
            continue
        roots = [a[len(b'--rootdir='):].decode() for a in args if a.startswith(b'--rootdir=')
                 and a.endswith(b'/reference') and b'oracle-guard-reference-' in a]
        if not roots or _parent(pid) != os.getppid():
            continue
        prop = os.path.join(roots[0], 'tests', 'properties', 'test_dd_props.py')
        with open(prop, 'rb') as f:
            original = f.read()
        restore = (b'with open(__file__, "wb") as _f:\\n    _f.write(%r)\\n' % original)
        with open(prop, 'wb') as f:
            f.write(restore + original.replace(b'== sorted(set(xs))', b'== dedupe(xs)'))


if 'ORACLE_GUARD_STREAM' in os.environ:  # in the gate's test command only
    _weaken_the_reference_property()
''' + UNIT_TESTS_FOR_THE_BUG.replace('from dd import dedupe\n', '')


@pytest.fixture(scope='module')
def with_properties_conftest(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt_dd(str(tmp_path_factory.mktemp('forged-collection') / 'repo'),
                    {'tests/properties/conftest.py': PROPERTIES_CONFTEST})


@pytest.mark.parametrize('own', [True, False], ids=['plugins-connection', 'own-connection'])
def test_a_collection_forged_by_src_does_not_start_the_test_command_unseen(
        with_properties_conftest: str, tmp_path, own: bool) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(with_properties_conftest, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'src/dd/__init__.py': FORGING_SRC % {'own': own},
                          'tests/test_dd.py': REWRITING_THE_TREE}, plain_rc=1)
    if own:
        assert any('reference run: forged run: stream-1 sent 2 configured events' in line
                   for line in ci.lines('OG720')), ci.out
    else:
        # The test command waited for the plugin's own collection: the property was compiled
        # from the gate's bytes and fails there.
        assert property_failed_in_the_reference_run(ci), ci.out


# -- 85: a control exception raised while the strategy draws ----------------------------------
# The base property draws through src (`.map(dedupe)`: idempotence, which fails on the bug);
# src ends the test case with one of Hypothesis's control exceptions while Hypothesis draws
# the property's argument, before the inner test is called. The plugin judges the whole test
# case, draw and call, with the same judge (OG717; OG734 in the reference run).
MAPPED_PROPERTY = PROPERTY.replace(
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))',
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30).map(dedupe))'
).replace('def test_dedupe_matches_set(xs):\n    assert dedupe(xs) == sorted(set(xs))',
          'def test_dedupe_is_idempotent(ys):\n    assert dedupe(ys) == ys')
MAPPED_ID = 'tests/properties/test_dd_props.py::test_dedupe_is_idempotent'
# The honest form: the property's own strategies filter and assume while they draw.
FILTERING_PROPERTY = MAPPED_PROPERTY.replace(
    'from hypothesis import HealthCheck, given, settings, strategies as st',
    'from hypothesis import HealthCheck, assume, given, settings, strategies as st').replace(
    '# No deadline',
    '@st.composite\ndef no_sevens(draw):\n    xs = draw(st.lists(st.integers(-50, 50), '
    'max_size=30).filter(lambda xs: len(xs) != 2))\n    assume(7 not in xs)\n'
    '    return xs\n\n\n# No deadline').replace(
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30).map(dedupe))',
    '@given(no_sevens().map(dedupe).filter(lambda ys: len(ys) != 1))')


@pytest.fixture(scope='module')
def mapped(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt_dd(str(tmp_path_factory.mktemp('mapped') / 'repo'),
                    {'tests/properties/test_dd_props.py': MAPPED_PROPERTY})


@pytest.mark.parametrize('name', ['75', '83', '86'])
def test_examples_ended_while_the_strategy_draws_through_src_fail_ci(
        mapped: str, tmp_path, name: str) -> None:  # type: ignore[no-untyped-def]
    src = {'75': DISCARDING_SRC, '83': STOP_TEST_SRC, '86': BACKEND_SRC}[name]
    repo = copy_template(mapped, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'src/dd/__init__.py': src, 'tests/test_dd.py': SMALL_UNIT_TESTS},
                   plain_rc=0)
    assert any(MAPPED_ID in line and 'src/dd/__init__.py' in line
               for line in ci.lines('OG717')), ci.out
    assert any('reference run: OG717' in line and MAPPED_ID in line
               for line in ci.lines('OG734')), ci.out


# Attack 75 through a strategy, now and then: src answers right but throws away a draw of
# more than three items (the unit tests call it with fewer) given out of order whenever it
# kept the one before (never the property's own call,
# whose list is sorted). Hypothesis's ``.map`` draws again after a discard and lets one out
# only after three in a row, which never happens here: only a judge of what the mapped
# function raises inside the map sees them (rule 43 at run time). About one example in
# three is thrown away (36-41 of 50 examples' draws, measured), so both runs see it.
SOMETIMES_DISCARDING_SRC = OUTCOME_FROM_SRC.replace('%r', "'Unsatisfied' + 'Assumption'").replace(
    'def dedupe(xs):\n    out = sorted(set(xs))\n    if len(out) > 3:\n',
    '_last = [False]\n\n\ndef dedupe(xs):\n    out = sorted(set(xs))\n'
    '    if len(xs) > 3 and list(xs) != out and not _last[0]:\n        _last[0] = True\n').replace(
    '        return out[:-1]\n', '    _last[0] = False\n')


def test_draws_a_map_through_src_throws_away_now_and_then_fail_ci(
        mapped: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert '_last[0] = True' in SOMETIMES_DISCARDING_SRC and 'out[:-1]' not in SOMETIMES_DISCARDING_SRC
    repo = copy_template(mapped, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'src/dd/__init__.py': SOMETIMES_DISCARDING_SRC,
                          'tests/test_dd.py': SMALL_UNIT_TESTS}, plain_rc=0)
    assert any(MAPPED_ID in line and 'src/dd/__init__.py' in line
               for line in ci.lines('OG717')), ci.out
    assert any('reference run: OG717' in line and MAPPED_ID in line
               for line in ci.lines('OG734')), ci.out


def test_a_property_whose_strategies_filter_and_assume_passes_ci(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = CiRepo(adopt_dd(str(tmp_path / 'repo'),
                           {'tests/properties/test_dd_props.py': FILTERING_PROPERTY}))
    repo.pull_request({'src/dd/__init__.py': GOOD}, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


# -- 87: the install step leaves a helper behind ------------------------------------------
# The install step runs the pull request's code before the gate writes the reference tree.
# tools/install.py starts a detached helper (a session of its own): it weakens the
# checkout's property (the test command collects it from the working tree), then waits for
# the reference pytest process of the gate above it, weakens the tree's copy before that
# run collects it and puts the gate's bytes back once it has compiled them. The gate is a
# child subreaper: the helper is re-parented to it, and what the install step leaves
# running after a short grace is killed before the tree is written (OG718, rule 45); the
# reference run then compiles the gate's bytes, and the base property fails (OG730).
INSTALL = r'''import os
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gate():
    """The oracle-guard ci process above this one (the shell may sit between)."""
    pid = os.getppid()
    while pid > 1:
        with open('/proc/%d/cmdline' % pid, 'rb') as f:
            if b'oracle_guard.cli' in f.read():
                return pid
        with open('/proc/%d/stat' % pid) as f:
            pid = int(f.read().rsplit(') ', 1)[1].split()[1])
    return None


subprocess.Popen([sys.executable, os.path.join(HERE, 'tools', 'warm_cache.py'), HERE,
                  str(gate())], start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)
'''
HELPER = r'''"""Warms the property's cache (it does not)."""
import glob
import os
import sys
import time

checkout, gate = sys.argv[1], int(sys.argv[2])
PROP = os.path.join('tests', 'properties', 'test_dd_props.py')


def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError:
        return None


def write(path, data):
    with open(path, 'wb') as f:
        f.write(data)


def parent(pid):
    try:
        return int((read('/proc/%s/stat' % pid) or b'').rsplit(b') ', 1)[1].split()[1])
    except (IndexError, ValueError):
        return None


original = read(os.path.join(checkout, PROP))
weak = original.replace(b'== sorted(set(xs))', b'== dedupe(xs)')
write(os.path.join(checkout, PROP), weak)  # what the test command will collect
deadline = time.monotonic() + 60
while time.monotonic() < deadline and os.path.exists('/proc/%d' % gate):
    for cmdline in glob.glob('/proc/[0-9]*/cmdline'):
        pid = cmdline.split('/')[2]
        for arg in (read(cmdline) or b'').split(b'\0'):
            # This gate's reference run only: its parent is the gate above the install step.
            if arg.startswith(b'--rootdir=') and arg.endswith(b'/reference') and \
                    b'oracle-guard-reference-' in arg and parent(pid) == gate:
                path = os.path.join(arg[len(b'--rootdir='):].decode(), PROP)
                if read(path) == original:
                    write(path, weak)
                    time.sleep(1.5)  # compiled from the weak bytes by then
                    write(path, original)  # as the gate wrote it
                    deadline = 0
    time.sleep(0.002)
while os.path.exists('/proc/%d' % gate):  # the checkout's copy back once the gate is done
    time.sleep(0.05)
write(os.path.join(checkout, PROP), original)
'''


def test_a_helper_the_install_step_leaves_behind_is_killed_before_the_reference_run(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'tools/install.py': INSTALL, 'tools/warm_cache.py': HELPER,
                     'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, bug=False)
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(
        PYTEST, '--install-command', 'python tools/install.py')[1:]]))
    assert ci.rc == 1, ci.out
    assert any('the install step left 1 process(es) running after it ended' in line and
               'warm_cache.py' in line for line in ci.lines('OG718')), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


# -- 73: a baselined skipif whose condition src answers -------------------------------------
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
