"""``oracle-guard ci --timings``: the wall and CPU time of each step of the gate.

A step's CPU is split into the gate process's own (``time.process_time``: every thread
of it, the stream's readers included) and its children's (the ``RUSAGE_CHILDREN`` totals
of the children reaped during the step: the test command, the install step, the probe).
The reference run is a child started before the test command and reaped after it: its
CPU is counted when it is reaped, and the wall time it ran beside the test command is
reported as its overlap. Nothing here changes what the gate decides.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field

try:
    import resource
except ImportError:  # pragma: no cover -- Windows: children's CPU is not measurable
    resource = None  # type: ignore[assignment]

# The steps of ``oracle-guard ci``, in the order they are printed.
STEPS = ('change rules', 'preload', 'install step', 'reference tree build',
         'base collection', 'integrity probe before', 'test command', 'integrity probe after', 'audit',
         'reference run', 'base rerun', 'oracle reach', 'mutant runs', 'freeze reruns', 'new-test run', 'report')


def children_cpu() -> float:
    """User + system seconds of every child reaped so far (0 where unmeasurable)."""
    if resource is None:  # pragma: no cover
        return 0.0
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Step:
    name: str
    wall: float = 0.0
    cpu: float = 0.0  # the gate process's own
    children: float = 0.0  # its children's, reaped during the step
    started: float = 0.0
    ended: float = 0.0
    note: str = ''
    ran: bool = False


@dataclass
class Timings:
    steps: dict[str, Step] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    @classmethod
    def of(cls, names: tuple[str, ...]) -> Timings:
        """Steps that will be printed in this order, each ``not run`` unless it ran."""
        return cls({name: Step(name) for name in names})

    def get(self, name: str) -> Step:
        return self.steps.setdefault(name, Step(name))

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[Step]:
        """Time the block; a step entered twice adds up."""
        step = self.get(name)
        wall, cpu, children = time.perf_counter(), time.process_time(), children_cpu()
        step.started = step.started or wall
        try:
            yield step
        finally:
            step.ended = time.perf_counter()
            step.wall += step.ended - wall
            step.cpu += time.process_time() - cpu
            step.children += children_cpu() - children
            step.ran = True

    def overlap(self, a: str, b: str) -> float:
        """Seconds of wall time steps ``a`` and ``b`` ran at the same time."""
        x, y = self.steps.get(a), self.steps.get(b)
        if x is None or y is None or not (x.ran and y.ran):
            return 0.0
        return max(0.0, min(x.ended, y.ended) - max(x.started, y.started))

    def note_overlap(self, a: str, b: str) -> None:
        step = self.steps.get(a)
        if step is not None and step.ran:
            step.note = f' ({self.overlap(a, b):.3f} s of its wall time beside the {b})'

    def lines(self, prog: str = 'oracle-guard ci') -> list[str]:
        out = []
        for step in self.steps.values():
            if not step.ran:
                out.append(f'{prog}: timing: {step.name}: not run{step.note}')
                continue
            out.append(f'{prog}: timing: {step.name}: wall {step.wall:.3f} s, cpu '
                       f'{step.cpu:.3f} s gate + {step.children:.3f} s children{step.note}')
        total = time.perf_counter() - self.started
        cpu = time.process_time()
        out.append(f'{prog}: timing: total: wall {total:.3f} s, cpu {cpu:.3f} s gate + '
                   f'{children_cpu():.3f} s children')
        return out


def watch_exit(pid: int, step: Step) -> None:
    """Set ``step.ended`` when process ``pid`` exits, without reaping it (so its CPU is
    still counted where it is waited for); where the platform cannot wait without
    reaping, the step ends when it is waited for."""
    wnowait = getattr(os, 'WNOWAIT', None)
    waitid = getattr(os, 'waitid', None)
    if wnowait is None or waitid is None:  # pragma: no cover -- not Linux/BSD/macOS
        return

    def wait() -> None:
        try:
            waitid(os.P_PID, pid, os.WEXITED | wnowait)
        except OSError:  # pragma: no cover -- already reaped
            return
        step.ended = time.perf_counter()
        step.ran = True

    threading.Thread(target=wait, daemon=True).start()
