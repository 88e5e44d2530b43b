"""Processes the gate's steps leave behind: found, stopped before the next step, and said.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import git
from builders.dedupe import adopt_dd
from builders.dedupe import attack
from builders.dedupe import BUG
from builders.dedupe import DD_PYTEST
from builders.dedupe import GOOD
from builders.dedupe import property_failed_in_the_reference_run
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG
from oracle_guard.gate.processes import Reaper

pytestmark = pytest.mark.reference_run


# src holds the reference run up (it tells it apart by python -I) at the first call, so
# that the test command, which starts once the reference run has collected, finds it
# still running.
HOLD_THE_REFERENCE_RUN = 'import sys\nimport time\n\n_held = []\n\n\n' + BUG.replace(
    '    out = sorted(set(xs))\n',
    '    if sys.flags.isolated and not _held:\n        _held.append(time.sleep(3))\n'
    '    out = sorted(set(xs))\n')


# -- the test command signals the reference run ----------------------------------------------
# A unit test module finds the reference pytest process (its --rootdir is the reference
# tree, its parent is the gate that started the test command too) and sends it a signal.
# A run that did not finish is OG734 (rule 44), whatever ended it.
SIGNALLING = '''\
import glob
import os
import signal
import time

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
            return True
    return False


if 'ORACLE_GUARD_STREAM' in os.environ:  # in the gate's test command only
    # The reference run may start after this module is imported on a loaded machine.
    for _ in range(300):
        if _signal_the_reference_run(signal.%s):
            break
        time.sleep(0.1)
'''


# Held until the signal ends it, however slow the machine is to start the test command.
HELD_UNTIL_SIGNALLED = HOLD_THE_REFERENCE_RUN.replace('time.sleep(3)', 'time.sleep(60)')


@pytest.mark.parametrize('signum', ['SIGKILL', 'SIGTERM'])
def test_a_test_command_signalling_the_reference_run_fails_ci(
        dd: CiRepo, signum: str) -> None:  # noqa: F811 -- the fixture
    unit = SIGNALLING % signum + UNIT_TESTS_FOR_THE_BUG.replace('from dd import dedupe\n', '')
    _, ci = attack(dd, {'src/dd/__init__.py': HELD_UNTIL_SIGNALLED, 'tests/test_dd.py': unit},
                   plain_rc=1)
    assert any('reference run: OG702 the run did not finish' in line
               for line in ci.lines('OG734')), ci.out


# -- the install step leaves a helper behind ------------------------------------------
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
        DD_PYTEST, '--install-command', 'python tools/install.py')[1:]]))
    assert ci.rc == 1, ci.out
    assert any('the install step left 1 process(es) running after it ended' in line and
               'warm_cache.py' in line for line in ci.lines('OG718')), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


# -- a daemon the pull request's code detaches to race the new-test run ----------------
# The project asks every new test to fail against the base revision's src (require-fail-to-
# pass, rule 49). The pull request fixes the bug and adds a test that does not test the fix;
# a helper, detached the classic way (fork, setsid, fork again: no parent, no session, no
# process group of the step), waits for the new-test run's tree, which is written after the
# test command and the reference run have ended, to make the new test fail there. Started
# by a test module of the test command, it is re-parented to the gate (a child subreaper on
# Linux) and killed, with OG718, before the evidence runs start; the new test then passes
# against the base (OG736).
DAEMON = r'''
import os
import time


def _children(pid):
    found = []
    try:
        for task in os.listdir('/proc/%d/task' % pid):
            with open('/proc/%d/task/%s/children' % (pid, task)) as f:
                found += f.read().split()
    except OSError:
        pass
    return found


def _race_the_new_test_run(gate):
    """Fail the new test in the new-test run's tree (a child of this gate, in 'new-tests')."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and os.path.exists('/proc/%d' % gate):
        for pid in _children(gate):
            try:
                tree = os.readlink('/proc/%s/cwd' % pid)
            except OSError:
                continue
            if os.path.basename(tree) == 'new-tests':
                path = os.path.join(tree, 'tests', 'test_new.py')
                with open(path, 'rb') as f:
                    original = f.read()
                with open(path, 'wb') as f:  # failing, and put back as it is imported
                    f.write(b'with open(__file__, "wb") as _f:\n    _f.write(%r)\n' % original
                            + original.replace(b'== [1, 2]', b'== [2, 1]'))
                return
        time.sleep(0.01)


def daemonize():
    gate = os.getppid()  # this gate only: the test command and the reference run are its children
    first = os.fork()
    if first:
        os.waitpid(first, 0)  # the middle process ends at once
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 4096)  # pytest's files and its connection to the gate stay with it
        _race_the_new_test_run(gate)
    finally:
        os._exit(0)
'''


NEW_TEST = '''\
from dd import dedupe


def test_dedupe_keeps_a_sorted_pair():
    assert dedupe([1, 2]) == [1, 2]
'''


# A test module of the test command (the gate names its stream in the environment); the
# new-test run imports it too, where it does nothing.
DETACHING_TEST = ("import os\n\nimport _daemon\n\n"
                  "if 'ORACLE_GUARD_STREAM' in os.environ and "
                  "os.path.basename(os.getcwd()) != 'new-tests':\n"
                  "    _daemon.daemonize()\n\n\n" + NEW_TEST.replace(
                      'from dd import dedupe\n', 'from dd import dedupe  # noqa: E402\n'))


@pytest.fixture(scope='module')
def strict(tmp_path_factory: pytest.TempPathFactory) -> str:
    """dd adopted, then ``require-fail-to-pass = true`` on main (rule 49)."""
    path = adopt_dd(str(tmp_path_factory.mktemp('strict') / 'repo'))
    pyproject = os.path.join(path, 'pyproject.toml')
    with open(pyproject, encoding='utf-8') as f:
        text = f.read()
    with open(pyproject, 'w', encoding='utf-8') as f:
        f.write(text.replace('[tool.oracle-guard]\n',
                             '[tool.oracle-guard]\nrequire-fail-to-pass = true\n'))
    git(path, 'commit', '-q', '-am', 'new tests must fail without their change')
    return path


def test_a_daemon_racing_the_new_test_run_is_killed_before_it_starts(
        strict: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(strict, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'tests/_daemon.py': DAEMON, 'tests/test_new.py': DETACHING_TEST,
                          'src/dd/__init__.py': GOOD}, plain_rc=0)
    assert any('the test command (or the reference run beside it) left 1 process(es) '
               'running after it ended' in line for line in ci.lines('OG718')), ci.out
    assert any('tests/test_new.py::test_dedupe_keeps_a_sorted_pair passes against the '
               "base revision's src/ too" in line for line in ci.lines('OG736')), ci.out


# -- a daemon src detaches in the reference run before it has collected ----------------
# src (in the reference run only: python -I) detaches the DAEMON above at import, while the
# base's property module imports dd: the helper is re-parented to the gate before the test
# command starts (it waits for the reference run's collection). The test command's leftovers
# and the reference run's are judged against one mark taken before the reference run starts
# (the reference process spared by its pid): the helper is killed before the new-test run
# (OG718), and the new test passes against the base (OG736, rule 49).
DAEMON_SRC = ('import sys\n\nfrom dd import _daemon\n\nif sys.flags.isolated:\n'
              '    _daemon.daemonize()\n\n\n' + GOOD)


def test_a_daemon_the_reference_run_detaches_before_its_collection_is_killed(
        strict: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(strict, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'src/dd/_daemon.py': DAEMON, 'src/dd/__init__.py': DAEMON_SRC,
                          'tests/test_new.py': NEW_TEST}, plain_rc=0)
    assert any('the test command (or the reference run beside it) left 1 process(es) '
               'running after it ended: ' in line and line.endswith('; the gate killed them')
               for line in ci.lines('OG718')), ci.out
    assert any('tests/test_new.py::test_dedupe_keeps_a_sorted_pair passes against the '
               "base revision's src/ too" in line for line in ci.lines('OG736')), ci.out


# -- what still runs when the gate's steps are done ----------------------------------
# A daemon that waits for the gate's exit outlived it: nothing killed the gate's children at
# its end. Now the gate's last sweep (before the verdict) kills every child still running
# and says so (OG718), and leaving the Reaper kills what is left on any other way out.
def _detach(folder: str) -> int:
    """A process detached the shell way (its parent ends at once): the reaper's child now."""
    pidfile = os.path.join(folder, 'pid')
    subprocess.run(['sh', '-c', f'sleep 600 >/dev/null 2>&1 & echo $! > {pidfile}'],
                   check=True)
    with open(pidfile, encoding='utf-8') as f:
        return int(f.read())


def test_what_still_runs_when_the_gates_steps_are_done_is_killed_and_said(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    with Reaper() as reaper:
        assert reaper.active  # Linux: the gate is a child subreaper
        pid = _detach(str(tmp_path))
        found = reaper.leftovers(reaper.start, 'a step of the gate', grace=0.0)
    assert [f.code for f in found] == ['OG718'], found
    # (its command line may still be the shell's: it is named as it is when the gate looks)
    assert f'a step of the gate left 1 process(es) running after it ended: {pid} (' \
        in found[0].message
    assert not os.path.exists(f'/proc/{pid}')  # killed and reaped


def test_leaving_the_reaper_kills_what_a_step_left(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    with Reaper():
        pid = _detach(str(tmp_path))
    assert not os.path.exists(f'/proc/{pid}')


# -- the chain, against the sweep alone -------------------------------------------------
# Detached the classic way (the caller's child forks and ends: the chain's first generation
# is re-parented to the subreaper), in a session of its own whose id it writes to a file;
# then fork, and end at once, until the process named on its command line has gone (or a
# minute has passed). Every generation keeps the session id: a process of the chain still
# running is a process of that session.
CHAIN = r'''
import os
import sys
import time

owner, sidfile = int(sys.argv[1]), sys.argv[2]
if os.fork():
    os._exit(0)
os.setsid()
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
with open(sidfile + '.part', 'w') as f:
    f.write(str(os.getpid()))
os.rename(sidfile + '.part', sidfile)
deadline = time.monotonic() + 60
generation = 0
while True:
    if os.fork():
        os._exit(0)  # the parent ends at once; its child is re-parented to the subreaper
    generation += 1
    if generation % 256 == 0 and (not os.path.exists('/proc/%d' % owner) or
                                  time.monotonic() > deadline):
        os._exit(0)
'''


def start_chain(folder: str) -> int:
    """Start the chain under this process; its session id once it forks."""
    sidfile = os.path.join(folder, 'chain-sid')
    subprocess.run([sys.executable, '-c', CHAIN, str(os.getpid()), sidfile], check=True)
    for _ in range(3000):  # until the chain has written it (at most a minute)
        if os.path.exists(sidfile):
            with open(sidfile, encoding='utf-8') as f:
                return int(f.read())
        time.sleep(0.02)
    raise AssertionError('the chain did not start')


def running_in_session(sid: int) -> list[int]:
    """The processes of session ``sid`` that have not ended."""
    found = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open(f'/proc/{name}/stat', 'rb') as f:
                fields = f.read().rsplit(b')', 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] not in (b'Z', b'X'):
            found.append(int(name))
    return found


@pytest.fixture
def reaper():  # type: ignore[no-untyped-def]
    with Reaper() as reaper:
        if not reaper.active:  # pragma: no cover -- the suite runs on Linux
            raise AssertionError('no child subreaper on this system')
        yield reaper


@pytest.mark.parametrize('grace', [0.5, 0.0], ids=['with-grace', 'no-grace'])
def test_a_fork_chain_is_found_and_stopped_by_the_sweep(
        reaper: Reaper, tmp_path, grace: float) -> None:  # type: ignore[no-untyped-def]
    # Rule 45 (OG718): the old sweep found nothing in 6 of 6 trials and the chain did its
    # work after it.
    sid = start_chain(str(tmp_path))
    found = reaper.leftovers(reaper.start, 'a step of the gate', grace=grace)
    assert [f.code for f in found] == ['OG718'], found
    assert found[0].message.startswith('a step of the gate left '), found[0].message
    assert found[0].message.endswith('; the gate killed them'), found[0].message
    assert running_in_session(sid) == []  # stopped when the sweep returns, not later


def test_leaving_the_reaper_says_what_it_kills(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Rule 45: the Reaper's own sweep on the way out kills a chain that outlived every
    # reported sweep, and says so (``late``: the gate prints it and fails).
    with Reaper() as reaper:
        sid = start_chain(str(tmp_path))
    assert [f.code for f in reaper.late] == ['OG718'], reaper.late
    assert running_in_session(sid) == []


# Seen while closing 105: a process whose first thread ends (``pthread_exit``) while its
# others run on shows as a zombie in ``/proc/PID/stat``; the old sweep took it for ended.
FIRST_THREAD_ENDS = r'''
import ctypes
import os
import sys
import threading
import time

owner = int(sys.argv[1])
if os.fork():
    os._exit(0)  # detached: the subreaper's child now


def run_on():
    while os.path.exists('/proc/%d' % owner):
        time.sleep(0.05)


threading.Thread(target=run_on).start()
ctypes.CDLL(None).pthread_exit(None)
'''


def test_a_process_whose_first_thread_ended_is_still_running(
        reaper: Reaper) -> None:
    subprocess.run([sys.executable, '-c', FIRST_THREAD_ENDS, str(os.getpid())], check=True)
    found = reaper.leftovers(reaper.start, 'a step of the gate', grace=0.2)
    assert [f.code for f in found] == ['OG718'], found
    assert '(its first thread ended, the others ran on); the gate killed them' in \
        found[0].message, found[0].message
    assert reaper.mark() == reaper.start  # killed and reaped


def _detach_script(script: str) -> None:
    subprocess.run(['sh', '-c', f'({script}) >/dev/null 2>&1 &'], check=True)


def test_an_honest_straggler_that_ends_within_the_grace_is_no_finding(
        reaper: Reaper) -> None:
    # The control: a process a step detaches that ends on its own within the grace (here
    # one that has ended already, a zombie of the subreaper, and one still running a short
    # while) is reaped, not reported.
    _detach_script('true')
    _detach_script('sleep 0.3')
    assert reaper.leftovers(reaper.start, 'a step of the gate') == []
    assert reaper.leftovers(reaper.start, 'a step of the gate', grace=0.0) == []


# -- the chain at every step boundary of the gate ---------------------------
# The pull request fixes the bug (nothing else to catch) and starts a chain in every step its
# code runs in: the install step (``tools/install.py``, standing for a ``setup.py`` that
# ``pip install -e .`` runs: 105c), a test module of the test command (105, 105b), and src in
# the reference run (``python -I``: 97's trigger). Each chain finds its gate among its
# parents, writes its session id into a folder named by the gate's pid, and forks until
# that gate has gone. Each step's sweep finds its chain and stops it: OG718.
CHAIN_MODULE = r'''import os
import tempfile
import time


def _gate():
    """The parent (the gate runs the test command and the reference run), or the shell's
    parent (the install command runs in a shell)."""
    pid = os.getppid()
    with open('/proc/%d/comm' % pid) as f:
        if f.read().strip() in ('sh', 'dash', 'bash'):
            with open('/proc/%d/stat' % pid, 'rb') as g:
                pid = int(g.read().rsplit(b')', 1)[1].split()[1])
    with open('/proc/%d/cmdline' % pid, 'rb') as f:
        return pid if b'\0ci\0' in f.read() else None  # not under a gate: plain pytest


def start(label):
    gate = _gate()
    if gate is None:
        return
    first = os.fork()
    if first:
        os.waitpid(first, 0)  # the first generation forks and ends at once
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 4096)
        folder = os.path.join(tempfile.gettempdir(), 'og-chains-%d' % gate)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, label), 'w') as f:
            f.write(str(os.getpid()))
        deadline = time.monotonic() + 60
        generation = 0
        while True:
            if os.fork():
                os._exit(0)  # the parent ends at once; its child re-parents to the gate
            generation += 1
            if generation % 256 == 0 and (not os.path.exists('/proc/%d' % gate) or
                                          time.monotonic() > deadline):
                break
    finally:
        os._exit(0)
'''


CHAIN_INSTALL = ("import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.getcwd(), 'src'))\n"
                 "from dd import _chain  # noqa: E402\n\n_chain.start('install')\n")


CHAIN_SRC = ('import sys\n\nfrom dd import _chain\n\nif sys.flags.isolated:\n'
             "    _chain.start('reference')\n\n\n" + GOOD)


CHAIN_TEST = ("import os\n\nfrom dd import _chain\n\n"
              "if 'ORACLE_GUARD_STREAM' in os.environ:\n"
              "    _chain.start('test-' + os.path.basename(os.getcwd()))\n\n\n"
              "def test_nothing_to_see():\n    assert True\n")


def test_a_fork_chain_is_stopped_at_every_step_boundary_of_the_gate(
        dd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(dd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/dd/_chain.py': CHAIN_MODULE, 'src/dd/__init__.py': CHAIN_SRC,
                       'tools/install.py': CHAIN_INSTALL, 'tests/test_chain.py': CHAIN_TEST},
                      bug=False)
    plain = repo.finish(repo.start(DD_PYTEST))
    assert plain.rc == 0, plain.out  # no gate above it: no chain, the bug fixed
    gate = repo.start([sys.executable, '-I', *repo.ci_args(
        DD_PYTEST, '--install-command', 'python tools/install.py')[1:]])
    ci = repo.finish(gate)
    folder = os.path.join(tempfile.gettempdir(), f'og-chains-{gate.pid}')
    try:
        sids = {}
        for label in os.listdir(folder):
            with open(os.path.join(folder, label), encoding='utf-8') as f:
                sids[label] = int(f.read())
        running = {label: running_in_session(sid) for label, sid in sids.items()}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert ci.rc == 1, ci.out
    # Every step the chain was started in played it, and no chain outlived its sweep.
    assert {'install', 'reference', f'test-{os.path.basename(repo.path)}'} <= set(sids), \
        (sids, ci.out)
    assert all(not pids for pids in running.values()), running
    found = ci.lines('OG718')
    assert any('the install step left ' in line and 'the gate killed them' in line
               for line in found), ci.out
    assert any('the test command (or the reference run beside it) left ' in line and
               'the gate killed them' in line for line in found), ci.out
    assert not any('a step of the gate' in line for line in found), ci.out  # none left
    # Nothing else, but what rule 54 asks a person about: the chain's own os._exit,
    # os.dup2 and sys.flags in src (OG741).
    assert ci.lines('OG741'), ci.out
    others = [line for line in ci.out.splitlines() if ': OG' in line and ': OG741 ' not in line]
    assert len(others) == 2, ci.out


def test_a_chain_the_gate_kills_on_its_way_out_is_said(
        dd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The install step starts the chain and fails: the gate stops there (exit 2, bad
    # input), before any step's sweep; leaving the Reaper kills the chain and says so.
    repo = copy_template(dd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/dd/_chain.py': CHAIN_MODULE,
                       'tools/install.py': CHAIN_INSTALL + 'raise SystemExit(1)\n'}, bug=False)
    gate = repo.start([sys.executable, '-I', *repo.ci_args(
        DD_PYTEST, '--install-command', 'python tools/install.py')[1:]])
    ci = repo.finish(gate)
    folder = os.path.join(tempfile.gettempdir(), f'og-chains-{gate.pid}')
    try:
        with open(os.path.join(folder, 'install'), encoding='utf-8') as f:
            sid = int(f.read())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert ci.rc == 2, ci.out
    assert "'python tools/install.py' exited 1" in ci.out, ci.out
    assert any('a step of the gate (found as the gate ended) left ' in line
               for line in ci.lines('OG718')), ci.out
    assert running_in_session(sid) == []
