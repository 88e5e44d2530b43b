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
A child that forked and ended between the gate's listing and its read of the child's state
counts as still running (a fork chain, whose every generation forks and ends at once, is
only ever seen so): a sweep ends early only after several empty looks in a row, and past
the grace it stops (``SIGSTOP``) each child as soon as it is listed, with its descendants,
before it kills them, so that no generation forks after it was seen.
The test command and the reference run beside it are judged against one mark, taken
before the reference run starts (the reference process itself, still running, and the
base collection beside them are spared by pid): what the reference run detaches while it
collects is not in any later mark. When the gate's steps are done, every child still
running is killed and is a finding too, before the verdict is written; what the gate
kills as it ends any other way (bad input, an internal error) is said after it:

OG718 a process the install step, the test command or the reference run started was still
      running after the step ended (and its grace), or any child of the gate still ran
      when its steps were done; the gate killed it

Elsewhere (no ``prctl``) nothing is re-parented to the gate and nothing is judged: another
user or a container is the complete answer (docs/threat-model.md).
"""
from __future__ import annotations

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
# A sweep ends only after this many looks in a row found no child of the step at all (rule
# 45): one look can miss a process that forks and ends between the listing and the read.
QUIET_LOOKS = 3
LOOK_SECONDS = 0.02  # between two looks
# How long the gate goes on freezing and killing what keeps forking before it gives up
# (and says so: the finding is made either way).
KILL_SECONDS = 10.0


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
    step)`` after it. What the Reaper's own last sweep kills on the way out is in
    ``reaper.late`` (OG718, said after the verdict)."""

    def __init__(self) -> None:
        self.active = False
        self._previous = 0
        self.start: frozenset[tuple[int, str]] = frozenset()  # the children at entry
        self.late: list[Finding] = []
        self.own: set[int] = set()  # the gate's own steps (a reference run), by pid

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
            # outlives it (the verdict's own sweep is ``leftovers(reaper.start, ...)``), and
            # what is killed here is said too (``late``), never killed in silence. The
            # gate's own steps still running (bad input met while the reference run runs)
            # are ended first and are no finding; what they started is one.
            for pid in sorted(self.own):
                if any(c[0] == pid for c in children()):
                    _signal(pid, signal.SIGKILL)
                    try:
                        os.waitpid(pid, 0)
                    except OSError:
                        pass
            self.late = self.leftovers(self.start, 'a step of the gate (found as the gate '
                                       'ended)', grace=0.0)
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
        freeze and kill what still runs (and what it started); OG718 names them. The pids
        in ``spare`` (a step of the gate's own still running beside: the reference run)
        are neither waited for nor killed; what they detached is.

        A child that has ended (a zombie the gate reaps) or that is gone between the listing
        and the read counts as something still running: a fork chain, whose every
        generation forks and ends at once, is such a child at almost every instant
        (rule 45). So the sweep ends early only after ``QUIET_LOOKS`` empty looks in a row;
        past the grace every listed child is stopped (``SIGSTOP``) at once, with what it
        started, before anything else is read of it, then killed."""
        if not self.active:
            return []
        marked: dict[int, str | None] = {pid: start for pid, start in mark}
        marked.update({pid: None for pid in spare if pid is not None})
        deadline = time.monotonic() + grace
        quiet = 0
        while time.monotonic() < deadline:
            running, ended = _look(marked)
            if running or ended:
                quiet = 0
            else:
                quiet += 1
                if quiet >= QUIET_LOOKS:
                    return []  # nothing left: the step's honest stragglers have ended
            time.sleep(LOOK_SECONDS)
        return self._kill(marked, step)

    def _kill(self, marked: dict[int, str | None], step: str) -> list[Finding]:
        """Past the grace: freeze every child of the step as soon as it is listed, with its
        descendants, then kill them; until ``QUIET_LOOKS`` looks in a row find none."""
        described: list[tuple[int, str]] = []
        killed: set[int] = set()
        ended = 0
        quiet = 0
        give_up = time.monotonic() + KILL_SECONDS
        while quiet < QUIET_LOOKS:
            if time.monotonic() >= give_up:
                break
            listed = _new_children(marked)
            for pid in listed:  # at once: a stopped process cannot fork again
                _signal(pid, signal.SIGSTOP)
            frozen = _freeze_below(listed)
            alive = []
            for pid in [*listed, *frozen]:
                stat = _stat(pid)
                if stat is None or stat[0] in ('Z', 'X'):
                    threads = _threads(pid) if stat is not None else 0
                    if stat is not None:
                        # a leader whose other threads still run shows as a zombie too:
                        # they end with it, and then it can be reaped
                        _signal(pid, signal.SIGKILL)
                        _reap(pid)
                    if pid not in killed and threads > 1:
                        described.append((pid, 'its first thread ended, the others ran on'))
                    elif pid not in killed:
                        ended += 1  # ended between the listing and the read: it ran
                    killed.add(pid)
                    continue
                if pid not in killed:
                    described.append((pid, _command(pid)))
                    killed.add(pid)
                alive.append(pid)
            for pid in alive:
                _signal(pid, signal.SIGKILL)
            for pid in listed:  # its own children are the gate's now: the next look's
                if pid in alive:
                    try:
                        os.waitpid(pid, 0)
                    except OSError:
                        pass
            if listed or frozen:
                quiet = 0
            else:
                quiet += 1
                time.sleep(LOOK_SECONDS)
        count = len(described) + ended
        if not count:
            return []
        parts = [_grouped(described)] if described else []
        if ended:
            parts.append(f'{ended} that had forked and ended by the time the gate read them '
                         '(a fork chain)')
        gave_up = quiet < QUIET_LOOKS
        return [Finding('.', 1, 1, 'OG718', f'{step} left {count} process(es) '
                        f'running after it ended: {" and ".join(parts)}; '
                        + (f'the gate was still killing them after {KILL_SECONDS:.0f} s'
                           if gave_up else 'the gate killed them'),
                        'a pull request\'s code may not leave processes behind (a detached '
                        'helper can rewrite the gate\'s files while the next step runs): '
                        'end what the install step or the tests start')]


def _grouped(described: list[tuple[int, str]]) -> str:
    """``pid, pid and N more (command)`` for each command line, in the order seen."""
    by_command: dict[str, list[int]] = {}
    for pid, command in described:
        by_command.setdefault(command, []).append(pid)
    shown = []
    for command, pids in list(by_command.items())[:5]:
        named = ', '.join(map(str, pids[:3])) + (f' and {len(pids) - 3} more'
                                                 if len(pids) > 3 else '')
        shown.append(f'{named} ({command})')
    rest = sum(len(p) for p in list(by_command.values())[5:])
    return ', '.join(shown) + (f' and {rest} more' if rest else '')


def children() -> set[tuple[int, str]]:
    """(pid, start time) of every child of this process, zombies included."""
    found = set()
    for pid in _listed(os.getpid()):
        start = _stat(pid)
        if start is not None:
            found.add((pid, start[1]))
    return found


def _listed(parent: int) -> list[int]:
    """The pids ``/proc/PARENT/task/*/children`` names (a re-parented child is a child of
    one of the threads)."""
    pids: list[int] = []
    try:
        tasks = os.listdir(f'/proc/{parent}/task')
    except OSError:
        return pids
    for task in tasks:
        try:
            with open(f'/proc/{parent}/task/{task}/children') as f:
                pids.extend(int(p) for p in f.read().split())
        except (OSError, ValueError):
            continue
    return pids


def _new_children(marked: dict[int, str | None]) -> list[int]:
    """The gate's children that are not in ``marked`` (pid -> start time; None: any), by
    pid first, so that nothing but a marked one's start time is read before a new one can
    be stopped."""
    found = []
    for pid in dict.fromkeys(_listed(os.getpid())):
        if pid in marked:
            start = marked[pid]
            if start is None:
                continue
            stat = _stat(pid)
            if stat is None or stat[1] == start:
                continue  # the marked process (reaped by its own waiter, or still there)
        found.append(pid)
    return found


def _look(marked: dict[int, str | None]) -> tuple[set[tuple[int, str]], int]:
    """One look: the new children still running, and how many had ended (reaped here) or
    were gone by the time their ``stat`` was read."""
    running = set()
    ended = 0
    for pid in _new_children(marked):
        stat = _stat(pid)
        if stat is None:
            ended += 1
        elif stat[0] in ('Z', 'X'):
            _reap(pid)
            ended += 1
        else:
            running.add((pid, stat[1]))
    return running, ended


def _freeze_below(pids: Iterable[int]) -> list[int]:
    """Stop every descendant of the (stopped) ``pids``; the ones stopped, parents first."""
    frozen: list[int] = []
    todo = list(pids)
    seen = set(todo)
    while todo:
        pid = todo.pop()
        for child in _listed(pid):
            if child not in seen:
                seen.add(child)
                _signal(child, signal.SIGSTOP)
                frozen.append(child)
                todo.append(child)
    return frozen


def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f'/proc/{pid}/task'))
    except OSError:
        return 0


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except OSError:
        pass


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


def _command(pid: int) -> str:
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f:
            args = [a.decode('utf-8', 'replace') for a in f.read().split(b'\0') if a]
    except OSError:
        return '?'
    if not args:
        return 'its command line gone: it was ending'
    # Paths by their last part: the script's name is what tells a reader what it was.
    text = ' '.join(os.path.basename(a.rstrip('/')) if '/' in a else a for a in args)
    text = ' '.join(text.split())  # one line: a `-c` script's newlines would break the finding
    return text[:160] + ('...' if len(text) > 160 else '')
