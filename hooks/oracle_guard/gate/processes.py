"""Processes a step of the gate leaves behind (rule 45).

The install step, the test command and the reference run execute the pull request's code
as the gate's own user. A process one of them detaches (``start_new_session``, a double
fork) outlives the step: it could rewrite the reference tree before the reference run
compiles it and put it back after, or the checkout's files while the test command collects
them. On Linux the gate makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``):
an orphaned descendant is re-parented to the gate, not to init, however it detached. When a
step has ended, every child of the gate that was not there before it is a leftover; a short
grace lets an honest straggler end on its own (a pytest-xdist worker, a coverage
subprocess), and what still runs then is killed, with its own children, and is a finding.
The test command and the reference run beside it are judged against one mark, taken
before the reference run starts (the reference process itself, still running, and the
base collection beside them are spared by pid): what the reference run detaches while it
collects is not in any later mark. When the gate's steps are done, every child still
running is killed and is a finding too, before the verdict is written:

OG718 a process the install step, the test command or the reference run started was still
      running after the step ended (and its grace), or any child of the gate still ran
      when its steps were done; the gate killed it

Elsewhere (no ``prctl``) nothing is re-parented to the gate and nothing is judged: another
user or a container is the complete answer (docs/ci.md).
"""
from __future__ import annotations

import glob
import os
import signal
import sys
import time
from collections.abc import Iterable

from oracle_guard.findings import Finding

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
# How long a step's leftovers may take to end on their own before they are killed.
GRACE_SECONDS = 2.0
# Rounds of killing: each round's children re-parent theirs to the gate.
ROUNDS = 50


def _prctl() -> object | None:
    if not sys.platform.startswith('linux'):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):  # pragma: no cover -- no libc to load
        return None


class Reaper:
    """``with Reaper() as reaper:`` around the gate: the gate is a child subreaper inside
    (as it was before outside); ``reaper.mark()`` before a step, ``reaper.leftovers(mark,
    step)`` after it."""

    def __init__(self) -> None:
        self.active = False
        self._previous = 0
        self.start: frozenset[tuple[int, str]] = frozenset()  # the children at entry

    def __enter__(self) -> Reaper:
        prctl = _prctl()
        if prctl is None:
            return self
        import ctypes

        previous = ctypes.c_int(0)
        if prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(previous), 0, 0, 0) == 0:  # type: ignore[operator]
            self._previous = previous.value
        self.active = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0  # type: ignore[operator]
        self.start = self.mark()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.active:
            # However the gate ends (bad input, an internal error): nothing a step started
            # outlives it (the verdict's own sweep is ``leftovers(reaper.start, ...)``).
            self.leftovers(self.start, 'the gate', grace=0.0)
            prctl = _prctl()
            if prctl is not None:
                prctl(PR_SET_CHILD_SUBREAPER, self._previous, 0, 0, 0)  # type: ignore[operator]
            self.active = False

    def mark(self) -> frozenset[tuple[int, str]]:
        """The gate's children now (pid, start time): what a step's leftovers are not."""
        return frozenset(children()) if self.active else frozenset()

    def leftovers(self, mark: frozenset[tuple[int, str]], step: str,
                  grace: float = GRACE_SECONDS, spare: Iterable[int | None] = ()
                  ) -> list[Finding]:
        """Wait up to ``grace`` for the children that appeared since ``mark`` to end, then
        kill what still runs (and what it started); OG718 names them. The pids in
        ``spare`` (a step of the gate's own still running beside: the reference run) are
        neither waited for nor killed; what they detached is."""
        if not self.active:
            return []
        kept = {pid for pid in spare if pid is not None}
        mark = frozenset(mark | {c for c in children() if c[0] in kept})
        deadline = time.monotonic() + grace
        while True:
            running = _reap_ended({c for c in children() if c not in mark})
            if not running or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        if not running:
            return []
        described = [f'{pid} ({_command(pid)})' for pid, _ in sorted(running)]
        for _ in range(ROUNDS):
            for pid, _start in running:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            for pid, _start in running:
                try:
                    os.waitpid(pid, 0)
                except OSError:
                    pass
            # What the killed ones started is the gate's now.
            running = _reap_ended({c for c in children() if c not in mark})
            if not running:
                break
        shown = ', '.join(described[:5]) + (f' and {len(described) - 5} more'
                                            if len(described) > 5 else '')
        return [Finding('.', 1, 1, 'OG718', f'{step} left {len(described)} process(es) '
                        f'running after it ended: {shown}; the gate killed them',
                        'a pull request\'s code may not leave processes behind (a detached '
                        'helper can rewrite the gate\'s files while the next step runs): '
                        'end what the install step or the tests start')]


def children() -> set[tuple[int, str]]:
    """(pid, start time) of every child of this process, zombies included."""
    found = set()
    for path in glob.glob(f'/proc/{os.getpid()}/task/*/children'):
        try:
            with open(path) as f:
                pids = [int(p) for p in f.read().split()]
        except (OSError, ValueError):
            continue
        for pid in pids:
            start = _stat(pid)
            if start is not None:
                found.add((pid, start[1]))
    return found


def _stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) of a process, from ``/proc/PID/stat``."""
    try:
        with open(f'/proc/{pid}/stat', 'rb') as f:
            fields = f.read().rsplit(b')', 1)[1].split()
    except (OSError, IndexError):
        return None
    try:
        return fields[0].decode(), fields[19].decode()
    except IndexError:
        return None


def _reap_ended(pids: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """Reap the ones that have ended (zombies: the gate's children by re-parenting, which
    no ``subprocess`` object waits for); the ones still running."""
    running = set()
    for pid, start in pids:
        stat = _stat(pid)
        if stat is None or stat[1] != start:
            continue
        if stat[0] in ('Z', 'X'):
            try:
                os.waitpid(pid, os.WNOHANG)
            except OSError:
                pass
            continue
        running.add((pid, start))
    return running


def _command(pid: int) -> str:
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f:
            args = [a.decode('utf-8', 'replace') for a in f.read().split(b'\0') if a]
    except OSError:
        return '?'
    # Paths by their last part: the script's name is what tells a reader what it was.
    text = ' '.join(os.path.basename(a.rstrip('/')) if '/' in a else a for a in args)
    text = ' '.join(text.split())  # one line: a `-c` script's newlines would break the finding
    return text[:160] + ('...' if len(text) > 160 else '')
