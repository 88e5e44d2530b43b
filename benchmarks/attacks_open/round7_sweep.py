"""ATTACKS.md 118: the sweep that stops a fork chain (``Reaper.leftovers``, branch seal105)
against two chains built to outlast a freeze, in this process (no gate run).

    python benchmarks/attacks_open/round7_sweep.py [TRIALS]

* ``subreaper``: the detached root makes itself a child subreaper
  (``prctl(PR_SET_CHILD_SUBREAPER)``) and reaps, while below it every generation forks and
  ends at once: the orphans re-parent to the root, not to the gate, so the gate's own
  ``/proc/<gate>/task/*/children`` lists the root only.
* ``revive``: two detached chains in one process group; every generation sends
  ``SIGCONT`` to the group before it forks, so a member the sweep stopped runs on until it
  is killed.

Per trial: a ``Reaper`` (the gate's child subreaper), the chain started, 0.2 s, one sweep
with a grace of 0.5 s; then 2.5 s in which the chain, if anything of it still ran, would
write its marker (its deadline is 1.2 s after its start, the marker 0.3 s later).
Printed: how often the sweep said nothing (no OG718), how often the chain acted after the
sweep returned, and the sweeps' CPU time (this process; the chain's own CPU is not in it).
The control runs each chain twice with no sweep: it must act. Every chain forks only below
this process and stops when it has exited or at its deadline; its marker is a file in the
temporary folder named by this process's pid.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), 'hooks'))

COMMON = r'''
import ctypes
import os
import signal
import sys
import time

owner, marker = int(sys.argv[1]), sys.argv[2]
deadline = time.monotonic() + 1.2


def alive():
    return os.path.exists('/proc/%d' % owner) and time.monotonic() < deadline


def finish():
    # the chain's "work": done only if something of it still runs after the sweep
    time.sleep(0.3)
    with open(marker, 'w') as f:
        f.write(str(os.getpid()))
    os._exit(0)


if os.fork():
    os._exit(0)  # detached: the owner's (the subreaper's) child now
os.setsid()
'''
SUBREAPER = COMMON + r'''
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans below re-parent here
if os.fork() == 0:
    while alive():  # a generation forks and ends at once; its child re-parents to the root
        if os.fork():
            os._exit(0)
    finish()
while alive():
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pass
finish()
'''
REVIVE = COMMON + r'''
group = os.getpgrp()
if os.fork():
    pass  # two chains from here on, in one process group
while alive():
    try:
        os.killpg(group, signal.SIGCONT)  # wakes what the sweep stopped
    except OSError:
        pass
    if os.fork():
        os._exit(0)
finish()
'''
CHAINS = {'subreaper': SUBREAPER, 'revive': REVIVE}


def trials(name: str, count: int, sweep: bool = True) -> None:
    from oracle_guard.gate.processes import Reaper

    said_nothing = acted = 0
    cpu = 0.0
    for trial in range(count):
        marker = os.path.join(tempfile.gettempdir(),
                              f'round7-118-{os.getpid()}-{name}-{trial}')
        with Reaper() as reaper:
            subprocess.run([sys.executable, '-c', CHAINS[name], str(os.getpid()), marker],
                           check=True)
            time.sleep(0.2)
            before = time.process_time()
            found = reaper.leftovers(reaper.start, 'a step', grace=0.5) if sweep else []
            cpu += time.process_time() - before
            said_nothing += not found
            time.sleep(2.5)
            acted += os.path.exists(marker)
        if os.path.exists(marker):
            os.remove(marker)
    label = name if sweep else f'{name}, no sweep (the control)'
    print(f'== 118 {label}: the sweep said nothing in {said_nothing} of {count} trials; the '
          f'chain acted after the sweep in {acted} of {count}; the sweeps took {cpu:.3f} s '
          'CPU in all (this process)')


if __name__ == '__main__':
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    for chain in CHAINS:
        trials(chain, count)
        trials(chain, 2, sweep=False)
