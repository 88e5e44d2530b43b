"""The record the test process cannot take back (rule 45): the gate's own copy of the run.

Before the test command starts, the gate listens on a local socket (a UNIX socket in its
own temporary folder; TCP on 127.0.0.1 where there is none) and names it in
``ORACLE_GUARD_STREAM``. Every pytest process the plugin runs in (pytest-xdist workers
too: they inherit the environment, not the file descriptors) connects once and sends the
events of the run record as they happen (good news may wait for the next test's begin; a
failure never waits: ``run_record.routine``). What the process writes later, at exit or
into the record files, cannot undo a failure the gate already holds.

The gate judges its copy. A copy that contradicts itself is a forged run (OG720): a test
phase reported with two outcomes (a failure later reported as a pass), events after the
session's finish, a second start, configuration, collection or finish in one stream, a
stream that does not open with its process's start, a collection before the configuration
or a test begun before the collection.
The record files and the JUnit report become cross-checks (OG721): where they say less
failed than the stream did, they were rewritten.

The reference run's test command waits for that run's collection (``wait_for_collection``):
only the first connection the reference process itself made counts (its pid as the kernel
gives it, ``SO_PEERCRED``), which the plugin opens when it loads, before any conftest or
``src`` module is imported. A connection ``src`` opens later is not waited on, and an event
``src`` writes into the plugin's own connection leaves the plugin's own event a second one
in that stream (OG720, rule 45).
"""
from __future__ import annotations

import os
import socket
import struct
import threading
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from oracle_guard.findings import Finding
from oracle_guard.runtime.run_record import parse_events
from oracle_guard.runtime.run_record import record_of
from oracle_guard.runtime.run_record import RunRecord
from oracle_guard.runtime.run_record import STREAM_ENV

# After the test command exited: how long a stream may still be draining (a process the
# tests forked that keeps its copy of the connection open) before the gate stops reading.
DRAIN_SECONDS = 5.0


@dataclass
class Stream:
    """What one connection sent: one pytest process's events, in order."""

    name: str
    lines: list[bytes] = field(default_factory=list)
    ended: bool = False  # the peer closed the connection (or died)
    pid: int | None = None  # the connecting process, as the kernel says (None: not known)

    def events(self) -> list[dict[str, Any]]:
        # Parsed once per length of the stream: the gate reads it for contradictions, then
        # for the record (a stream still being read parses again); readers do not change
        # the events.
        kept = self.__dict__.get('_parsed')
        if kept is None or kept[0] != len(self.lines):
            kept = self.__dict__['_parsed'] = (len(self.lines), parse_events(self.lines))
        return list(kept[1])


class EventListener:
    """The gate's end of the stream; ``with EventListener(folder) as listener:`` around the
    test command, then ``listener.streams`` (also after a forced stop)."""

    def __init__(self, folder: str) -> None:
        self.streams: list[Stream] = []
        self._threads: list[threading.Thread] = []
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()
        try:
            path = os.path.join(folder, 'events.sock')
            self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # type: ignore[attr-defined]
            self._server.bind(path)
            self.address = f'unix:{path}'
        except (AttributeError, OSError):  # no AF_UNIX (Windows), or a path too long for it
            self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._server.bind(('127.0.0.1', 0))
            self.address = f'tcp:127.0.0.1:{self._server.getsockname()[1]}'
        self._server.listen(64)
        self._acceptor = threading.Thread(target=self._accept, daemon=True)

    def env(self) -> dict[str, str]:
        return {STREAM_ENV: self.address}

    def __enter__(self) -> EventListener:
        self._acceptor.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed: the run is over
            with self._lock:
                stream = Stream(f'stream-{len(self.streams) + 1}', pid=peer_pid(conn))
                self.streams.append(stream)
                self._connections.append(conn)
                thread = threading.Thread(target=self._read, args=(conn, stream), daemon=True)
                # Started before close() can see it: joining a thread not yet started raises.
                thread.start()
                self._threads.append(thread)

    @staticmethod
    def _read(conn: socket.socket, stream: Stream) -> None:
        pending = b''
        while True:
            try:
                chunk = conn.recv(65536)
            except OSError:
                chunk = b''
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b'\n')
            stream.lines.extend(lines)
        if pending:
            stream.lines.append(pending)  # cut short; parse_events leaves it out
        stream.ended = True

    def close(self, drain: float = DRAIN_SECONDS) -> None:
        """Stop accepting, give the readers ``drain`` seconds to see their peers close,
        then cut what is still open (its stream ends where it is)."""
        try:
            self._server.close()
        except OSError:  # pragma: no cover
            pass
        with self._lock:
            threads = list(self._threads)
            connections = list(self._connections)
        deadline = time.monotonic() + drain
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
        for thread in threads:
            thread.join(1.0)

    def record(self) -> RunRecord:
        return record_of((s.name, s.events()) for s in self.streams)

    def wait_for_collection(self, pid: int, alive: Any, poll: float = 0.01) -> bool:
        """Block until process ``pid`` has collected (True), or ``alive()`` is false first
        (False). No timeout: a process that never gets there keeps the gate waiting, as it
        would keep its job waiting.

        Only the first connection of ``pid`` counts: the plugin's own, opened when it
        loads, before any conftest or ``src`` module runs (where the kernel cannot say who
        connected, the first connection of all). Its ``collected`` counts after its
        ``configured`` only; a ``begin`` counts too, which is what a pytest-xdist controller
        sends once its workers have collected (rule 45)."""
        configured = b'{"event": "configured"'
        released = (b'{"event": "collected"', b'{"event": "begin"')
        seen = 0
        ready = False
        while True:
            running = alive()
            with self._lock:
                streams = list(self.streams)
            known = any(s.pid is not None for s in streams)
            own = next((s for s in streams if s.pid == pid), None) if known else \
                (streams[0] if streams else None)
            if own is not None:
                lines = own.lines
                end = len(lines)
                for line in lines[seen:end]:
                    if line.startswith(configured):
                        ready = True
                    elif ready and line.startswith(released):
                        return True
                seen = end
            if not running:
                return False
            time.sleep(poll)


def peer_pid(conn: socket.socket) -> int | None:
    """The pid of the process that connected, from the kernel (Linux ``SO_PEERCRED``); None
    where it cannot say (TCP, other systems)."""
    option = getattr(socket, 'SO_PEERCRED', None)
    if option is None or conn.family != getattr(socket, 'AF_UNIX', None):
        return None
    try:
        pid, _, _ = struct.unpack('3i', conn.getsockopt(socket.SOL_SOCKET, option,
                                                        struct.calcsize('3i')))
    except (OSError, struct.error):
        return None
    return pid or None


# -- contradictions in the gate's copy -------------------------------------------------------
def contradictions(streams: Iterable[Stream]) -> list[Finding]:
    """OG720: what no honest run sends."""
    findings: list[Finding] = []
    outcomes: dict[tuple[str, str], dict[str, str]] = {}  # (nodeid, when) -> outcome -> where

    def forged(message: str) -> None:
        findings.append(Finding('.', 1, 1, 'OG720', f'forged run: {message}',
                                'remove what rewrites the test run\'s outcomes; the gate keeps '
                                'what the run reported as it happened'))

    for stream in streams:
        events = stream.events()
        starts = [e for e in events if e.get('event') == 'start']
        finishes = [i for i, e in enumerate(events) if e.get('event') == 'finish']
        if len(starts) > 1 or len(finishes) > 1:
            forged(f'{stream.name} started {len(starts)} and finished {len(finishes)} '
                   'sessions in one process')
        forged_order = out_of_order(events)
        if forged_order:
            forged(f'{stream.name} {forged_order}')
        if finishes and finishes[0] < len(events) - 1:
            late = events[finishes[0] + 1]
            what = f'{late.get("event")} {late.get("nodeid", "")}'.strip()
            forged(f'{stream.name} sent events after its session finished (the first: {what})')
        for event in events:
            if event.get('event') != 'report' or event.get('sub') or \
                    event.get('outcome') == 'rerun':
                continue
            key = (str(event.get('nodeid')), str(event.get('when')))
            outcomes.setdefault(key, {}).setdefault(str(event.get('outcome')), stream.name)
    for (nodeid, when), seen in sorted(outcomes.items()):
        if len(seen) > 1:
            told = ', '.join(f'{outcome} ({where})' for outcome, where in sorted(seen.items()))
            forged(f'the {when} of {nodeid} was reported as {told}')
    return findings


# The plugin sends each of these once per process, in this order: a second one, or one
# before the event it follows, was not sent by the plugin.
ONCE = ('start', 'configured', 'collected')


def out_of_order(events: list[dict[str, Any]]) -> str:
    """What in one stream the plugin cannot have sent in that order ('' when nothing):
    every stream opens with its process's start, configures before it collects, collects
    before it begins a test, and configures and collects at most once."""
    kinds = [str(e.get('event')) for e in events]
    if not kinds:
        return ''
    if kinds[0] != 'start':
        return f'opened with a {kinds[0]} event, not its process\'s start'
    for kind in ONCE[1:]:
        count = kinds.count(kind)
        if count > 1:
            return f'sent {count} {kind} events in one process'
    if 'collected' in kinds and kinds.index('collected') < (
            kinds.index('configured') if 'configured' in kinds else len(kinds)):
        return 'sent its collection before its configuration'
    # A process that collects begins its tests after; only a pytest-xdist controller,
    # which never collects itself, begins tests its workers collected.
    if 'collected' in kinds and 'begin' in kinds and \
            kinds.index('begin') < kinds.index('collected'):
        return 'began a test before its collection'
    return ''


# -- cross-checks --------------------------------------------------------------------------
def failed_tests(record: RunRecord, leave_out: Any = None) -> list[str]:
    return sorted(n for n in record.reports if record.outcome(n) == 'failed' and
                  not (leave_out and leave_out(n)))


def junit_failures(path: str) -> int | None:
    """failures + errors the JUnit report counts, or None when it cannot be read."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    suites = [root] if root.tag == 'testsuite' else list(root.iter('testsuite'))
    total = 0
    for suite in suites:
        for name in ('failures', 'errors'):
            try:
                total += int(suite.get(name, '0'))
            except ValueError:
                return None
    return total


def junit_failed_cases(path: str) -> set[tuple[str, str]]:
    """(classname, name) of every test case the JUnit report holds a failure or error for."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return set()
    return {(case.get('classname', ''), case.get('name', '')) for case in root.iter('testcase')
            if case.find('failure') is not None or case.find('error') is not None}


def junit_address(nodeid: str) -> tuple[str, str]:
    """A node id as pytest's JUnit report names it (``_pytest.junitxml.mangle_test_address``)."""
    path, bracket, params = nodeid.partition('[')
    names = path.split('::')
    names[0] = names[0].replace('/', '.')
    names[0] = names[0][:-3] if names[0].endswith('.py') else names[0]
    names[-1] += bracket + params
    return '.'.join(names[:-1]), names[-1]


def cross_checks(stream: RunRecord, files: RunRecord, junit: str | None) -> list[Finding]:
    """OG721: the record files and the JUnit report may say more failed than the stream, never
    less; and the record files (the same lines the stream got) never say otherwise."""
    findings: list[Finding] = []
    hint = ('remove what rewrites the run record or the JUnit report; the gate judges what '
            'the run reported as it happened')
    if not files.empty:
        for nodeid in failed_tests(stream):
            told = files.outcome(nodeid)
            if told is not None and told != 'failed':
                findings.append(Finding(
                    '.', 1, 1, 'OG721', f'forged run: {nodeid} failed, but the record file '
                    f'written by the test process says {told}', hint))
        # The other way round: both copies are written from one serialized line, so a
        # failure only the file holds was rewritten on its way to the gate (a patched
        # socket or a wrapped sender; the canaries, spared, cannot show it).
        for nodeid in failed_tests(files):
            sent = stream.outcome(nodeid)
            if sent is not None and sent != 'failed':
                findings.append(Finding(
                    '.', 1, 1, 'OG721', f'forged run: {nodeid} failed in the record file '
                    f'written by the test process, but the gate received {sent}', hint))
    if junit and os.path.isfile(junit):
        # pytest writes the report from the same reports: a test it says failed, which
        # reached the gate as passed, was rewritten before it was sent (json patched).
        failed_cases = junit_failed_cases(junit)
        for nodeid in sorted(stream.reports):
            if stream.outcome(nodeid) == 'passed' and junit_address(nodeid) in failed_cases:
                findings.append(Finding(
                    '.', 1, 1, 'OG721', f'forged run: the JUnit report says {nodeid} failed, '
                    'but the gate received it as passed', hint))
        counted = junit_failures(junit)
        failed = len(failed_tests(stream))
        if counted is not None and counted < failed:
            findings.append(Finding(
                '.', 1, 1, 'OG721', f'forged run: {failed} test(s) failed, but the JUnit '
                f'report counts {counted} failure(s) and error(s)', hint))
    return findings
