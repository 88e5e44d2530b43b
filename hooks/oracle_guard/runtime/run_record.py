"""The run record: what pytest really did, written by the plugin for ``oracle-guard ci``.

``oracle-guard ci`` sets ``ORACLE_GUARD_RECORD`` to a fresh folder and forces the plugin
on. Every pytest process that loads the plugin then appends JSON lines to a file of its
own in that folder (``record-<pid>.jsonl``; pytest-xdist workers each write one):

* ``start`` as soon as the plugin is loaded, before any conftest is imported, so a
  process that dies during start-up (``SystemExit`` in a conftest) leaves a record that
  never reaches ``finish``;
* ``compiled`` each time pytest's assertion rewriter compiles a module (a test file, a
  conftest), with the sha256 of the bytes it read, sent before the module runs;
* ``collected`` / ``deselected`` / ``collect`` (a skipped or failed collector);
* ``begin`` when a test starts (flushed, so ``os._exit`` inside a test names it);
* ``call``: whether the code object of the test's own function was entered while the
  test was called, which function that was, whether the call raised, how many examples
  a Hypothesis property drew, and what the runtime lock check said at call time;
* ``report`` for every setup/call/teardown report as pytest logged it;
* ``interrupted`` (``pytest.exit``, KeyboardInterrupt) and ``finish`` (the session's end,
  whether the test loop completed, and per test whether the code that ran is the code
  compiled from the test file's source).

The plugin only writes facts; ``gate/audit.py`` judges them. The plugin object that
writes them is ``run_recorder.RunRecorder``; this module holds the record's format and its
reading back (``read_record``), what the gate reads the run with.
"""
from __future__ import annotations

import builtins
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Any


# As source_code's: the builtins as the plugin found them when it loaded serve the record.
__builtins__ = vars(builtins).copy()  # type: ignore[assignment]

RECORD_ENV = 'ORACLE_GUARD_RECORD'
# The checkout the gate runs the tests of: a pytest session started elsewhere (a pytest
# plugin's own suite runs pytester sessions in temporary folders, in process or not) is the
# suite's subject, not the run: it records nothing and gets no canaries.
RUN_ROOT_ENV = 'ORACLE_GUARD_RUN_ROOT'
# ``unix:PATH`` or ``tcp:HOST:PORT``: the socket ``oracle-guard ci`` listens on. Every event
# is sent there as it happens (good news at the next test's begin at the latest: see `routine`),
# so what the process writes later cannot take it back.
STREAM_ENV = 'ORACLE_GUARD_STREAM'
PLUGIN_NAME = 'oracle-guard-record'


def routine(event: dict[str, Any]) -> bool:
    """Good news only: a report that passed, a call that entered the test's own code and
    raised nothing, with nothing for the audit to judge. Only such events may wait in
    the outbox; any other is sent at once (rule 45)."""
    kind = event.get('event')
    if kind == 'report':
        return event.get('outcome') == 'passed' and 'wasxfail' not in event and \
            'crash' not in event
    if kind == 'call':
        return event.get('entered') is True and event.get('raised') is None and \
            not event.get('lock') and not event.get('replaced') and \
            event.get('examples') != 0 and not event.get('discarded_by_src') and \
            not event.get('drawing_replaced')
    return False


def recording_folder() -> str | None:
    folder = os.environ.get(RECORD_ENV)
    return folder if folder and os.path.isdir(folder) and in_run_root() else None


def in_run_root() -> bool:
    """Whether this process runs in the checkout the gate tests (its root or a folder
    inside it), or the gate named none."""
    root = os.environ.get(RUN_ROOT_ENV)
    if not root:
        return True
    try:
        here = os.path.realpath(os.getcwd())
    except OSError:
        return False
    root = os.path.realpath(root)
    return here == root or here.startswith(root.rstrip(os.sep) + os.sep)


# -- reading the record back (the ci process) ---------------------------------------------
@dataclass
class ProcessRecord:
    """One pytest process's record file."""

    file: str
    worker: str | None = None
    configured: bool = False
    finished: bool = False
    loop_completed: bool = False
    shouldfail: bool = False
    exitstatus: int | None = None
    interrupted: list[dict[str, Any]] = field(default_factory=list)
    running: str | None = None  # the test begun last without a teardown report
    switched_off: list[str] = field(default_factory=list)
    collected_here: bool = False
    stopped: str = ''  # why the session stopped early (session.shouldfail / shouldstop)
    problems: list[str] = field(default_factory=list)  # the plugin's session problems
    prefix: str | None = None  # sys.prefix of the process: the environment it ran in
    guard_stopped: list[str] = field(default_factory=list)  # the plugin's own reasons
    # OG737: the files this process compiled, collected tests from and imported (test
    # roots), and per file the functions claiming it that it does not compile to
    compiled: set[str] = field(default_factory=set)
    collected_files: set[str] = field(default_factory=set)
    imported: set[str] = field(default_factory=set)
    foreign: dict[str, list[str]] = field(default_factory=dict)
    # real path -> the module name under which sys.modules held a module the plugin's
    # import hook did not load from it
    impostors: dict[str, str] = field(default_factory=dict)


@dataclass
class RunRecord:
    processes: list[ProcessRecord] = field(default_factory=list)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodeid -> entry
    deselected: dict[str, str] = field(default_factory=dict)  # nodeid -> path
    collect_problems: list[dict[str, Any]] = field(default_factory=list)
    reports: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    code: dict[str, Any] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    plugin_dists: set[str] = field(default_factory=set)
    roots: set[str] = field(default_factory=set)
    canaries_dropped: dict[str, str] = field(default_factory=dict)  # module file -> why
    # real path -> sha256 of the bytes pytest's rewriter compiled, once per compile
    compiled: dict[str, list[str]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.processes

    def outcome(self, nodeid: str) -> str | None:
        """passed / failed / skipped / xfailed / xpassed, as pytest's summary counts it."""
        phases = self.reports.get(nodeid)
        if not phases:
            return None
        for when in ('setup', 'call', 'teardown'):
            report = phases.get(when)
            if report is None:
                continue
            if report['outcome'] == 'failed':
                return 'failed'
            if report['outcome'] == 'skipped':
                return 'xfailed' if 'wasxfail' in report else 'skipped'
        call = phases.get('call')
        if call is None:
            return None
        return 'xpassed' if 'wasxfail' in call else 'passed'


def parse_events(lines: Iterable[str | bytes]) -> list[dict[str, Any]]:
    """The events of one process's record, in order; a line cut short by a dying
    process (or that is not an event) is left out."""
    events = []
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def record_of(processes: Iterable[tuple[str, Iterable[dict[str, Any]]]]) -> RunRecord:
    """The run record of (name, events) per pytest process: the record files, or the
    streams the gate received."""
    record = RunRecord()
    for name, events in processes:
        process = ProcessRecord(file=name)
        open_tests: dict[str, bool] = {}
        for event in events:
            _apply(record, process, open_tests, event)
        running = [nodeid for nodeid, still in open_tests.items() if still]
        process.running = running[-1] if running else None
        record.processes.append(process)
    return record


def read_record(folder: str) -> RunRecord:
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith('.jsonl'))
    except OSError:
        return RunRecord()
    processes = []
    for name in names:
        with open(os.path.join(folder, name), encoding='utf-8', errors='replace') as f:
            processes.append((name, parse_events(f)))
    return record_of(processes)


def _apply(record: RunRecord, process: ProcessRecord, open_tests: dict[str, bool],
           event: dict[str, Any]) -> None:
    kind = event.get('event')
    if kind == 'start':
        process.prefix = event.get('prefix')
    elif kind == 'configured':
        process.configured = True
        process.worker = event.get('worker')
        process.switched_off = list(event.get('switched_off') or ())
        if event.get('root'):
            record.roots.add(event['root'])
    elif kind == 'collected':
        process.collected_here = True
        for item in event.get('items', ()):
            record.items.setdefault(item['nodeid'], item)
            process.collected_files.add(str(item.get('path')))
    elif kind == 'deselected':
        for item in event.get('items', ()):
            record.deselected[item['nodeid']] = item['path']
    elif kind == 'collect':
        record.collect_problems.append(event)
    elif kind == 'compiled':
        record.compiled.setdefault(str(event.get('path')), []).append(str(event.get('sha256')))
        process.compiled.add(str(event.get('path')))
    elif kind == 'begin':
        open_tests[event['nodeid']] = True
    elif kind == 'report' and not event.get('sub'):
        phases = record.reports.setdefault(event['nodeid'], {})
        known = phases.get(event['when'])
        if known is None or ('markers' in event and 'markers' not in known):
            phases[event['when']] = event
        if event['when'] == 'teardown':
            open_tests[event['nodeid']] = False
    elif kind == 'call':
        record.calls[event['nodeid']] = event
    elif kind == 'interrupted':
        process.interrupted.append(event)
    elif kind == 'canary_dropped':
        record.canaries_dropped.update({str(k): str(v) for k, v in
                                        dict(event.get('modules') or {}).items()})
    elif kind == 'impostors':
        for name, path in dict(event.get('modules') or {}).items():
            process.impostors.setdefault(str(path), str(name))
    elif kind == 'guard-stopped':
        process.guard_stopped.extend(str(p) for p in event.get('problems') or ())
    elif kind == 'finish':
        process.finished = True
        process.loop_completed = bool(event.get('loop_completed'))
        process.shouldfail = bool(event.get('shouldfail'))
        process.exitstatus = event.get('exitstatus')
        process.stopped = str(event.get('stopped') or '')
        process.problems = [str(p) for p in event.get('problems') or ()]
        record.code.update(event.get('code') or {})
        record.modules.update(event.get('modules') or {})
        record.plugin_dists.update(event.get('plugin_dists') or ())
        process.imported.update(str(p) for p in event.get('imported') or ())
        foreign = event.get('foreign')
        if isinstance(foreign, dict):
            process.foreign.update({str(k): [str(n) for n in v][:20] for k, v in
                                    foreign.items() if isinstance(v, list)})
