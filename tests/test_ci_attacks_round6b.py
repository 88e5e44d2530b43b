"""The attacks of round 6 that got past the gate (benchmarks/ATTACKS.md, 103, 103b, 105,
105b, 105c), now caught: a fork chain the sweeps missed (OG718, rule 45) and the entry
points the install step writes into the test environment (OG738, rule 46).

A fork chain: a detached process whose every generation forks and ends at once, so that
each child is re-parented to the gate (a child subreaper on Linux) and forks again. A sweep
that lists the gate's children and then reads each one's state found, at almost every look,
only a generation that had ended already; one empty look ended it with nothing to say. The
sweep now counts such a child as still running, ends early only after several empty looks
in a row, and past its grace stops each child as soon as it is listed, then kills it.

The sweep is played in-process first (this process is the subreaper, as the gate is), with
chains that fork only under this test's process and end when it has gone; one gate scenario
plays the chain at every step boundary of a real ``oracle-guard ci`` run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from ci_repo import copy_template
from oracle_guard.gate.processes import Reaper
from test_ci_attacks import GOOD
from test_ci_attacks import PYTEST
from test_ci_attacks_round3 import adopt_dd

# -- 105: the chain, against the sweep alone -------------------------------------------------
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
    # work after it (ATTACKS.md, 105sweep).
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


def _detach(script: str) -> None:
    subprocess.run(['sh', '-c', f'({script}) >/dev/null 2>&1 &'], check=True)


def test_an_honest_straggler_that_ends_within_the_grace_is_no_finding(
        reaper: Reaper) -> None:
    # The control: a process a step detaches that ends on its own within the grace (here
    # one that has ended already, a zombie of the subreaper, and one still running a short
    # while) is reaped, not reported.
    _detach('true')
    _detach('sleep 0.3')
    assert reaper.leftovers(reaper.start, 'a step of the gate') == []
    assert reaper.leftovers(reaper.start, 'a step of the gate', grace=0.0) == []


# -- 105, 105b, 105c: the chain at every step boundary of the gate ---------------------------
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


@pytest.fixture(scope='module')
def dd_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt_dd(str(tmp_path_factory.mktemp('round6b') / 'repo'))


def test_a_fork_chain_is_stopped_at_every_step_boundary_of_the_gate(
        dd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(dd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/dd/_chain.py': CHAIN_MODULE, 'src/dd/__init__.py': CHAIN_SRC,
                       'tools/install.py': CHAIN_INSTALL, 'tests/test_chain.py': CHAIN_TEST},
                      bug=False)
    plain = repo.finish(repo.start(PYTEST))
    assert plain.rc == 0, plain.out  # no gate above it: no chain, the bug fixed
    gate = repo.start([sys.executable, '-I', *repo.ci_args(
        PYTEST, '--install-command', 'python tools/install.py')[1:]])
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
    assert ci.summary.startswith('oracle-guard ci: 2 finding(s);'), ci.out  # nothing else
