"""The plugin object that writes the run record (``RunRecorder``, registered when
``ORACLE_GUARD_RECORD`` names a folder): the events of one pytest process, written to its
record file and sent to the gate's event stream as they happen. The record's format and its
reading back: ``run_record``."""
from __future__ import annotations

import builtins
import hashlib
import json
import os
import sys
import types
from collections.abc import Generator
from typing import Any

from oracle_guard.runtime import draw_rates
from oracle_guard.runtime import source_code
from oracle_guard.runtime.code_identity import base_classes
from oracle_guard.runtime.code_identity import compiled_from_source
from oracle_guard.runtime.code_identity import functions_in
from oracle_guard.runtime.code_identity import inherited_from
from oracle_guard.runtime.code_identity import own_function
from oracle_guard.runtime.code_identity import real_path
from oracle_guard.runtime.code_watch import CodeWatch
from oracle_guard.runtime.code_watch import unwatch_test_method
from oracle_guard.runtime.code_watch import WATCH_PLUGIN
from oracle_guard.runtime.code_watch import watch_test_method
from oracle_guard.runtime.code_watch import WatchStart
from oracle_guard.runtime.drawing_code import DrawingCode
from oracle_guard.runtime.drawing_code import SRC_ONLY_ENV
from oracle_guard.runtime.example_count import Discards
from oracle_guard.runtime.example_count import ExampleCounter
from oracle_guard.runtime.hook_marker import hookimpl
from oracle_guard.runtime.run_record import routine
from oracle_guard.runtime.run_record import STREAM_ENV
from oracle_guard.runtime.source_code import code_fingerprint
from oracle_guard.runtime.source_code import codes_by_place as _codes_by_place

# As source_code's: the builtins as the plugin found them when it loaded serve the record.
__builtins__ = vars(builtins).copy()  # type: ignore[assignment]


# Markers a skip or xfail outcome may come from.
SILENCE_MARKS = ('skip', 'skipif', 'xfail')


# Plugins whose absence would leave the run unproven.
SWITCHES = ('oracle_guard', 'oracle-guard-record', 'junitxml', 'pytest_oracle_guard')


# Taken when the plugin loads, before any conftest or src/ module runs: code that later
# rebinds json.dumps or json.JSONEncoder cannot rewrite the events it serializes (see _write
# for the socket). One encoder for the session: json.dumps(event, default=str) builds one
# per call.
_encode = json.JSONEncoder(default=str).encode


# At most this many routine events wait to be sent (a test with thousands of subtests).
OUTBOX_LINES = 256


def connect_stream(address: str | None) -> Any:
    """A socket connected to the gate's event stream, or None (no stream asked for, or
    the gate is gone: the gate then sees a stream that never started)."""
    if not address:
        return None
    import socket

    kind, _, where = address.partition(':')
    try:
        if kind == 'unix':
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # type: ignore[attr-defined]
            sock.connect(where)
        elif kind == 'tcp':
            host, _, port = where.rpartition(':')
            sock = socket.create_connection((host, int(port)))
        else:
            return None
    except (OSError, ValueError, AttributeError):
        return None
    return sock


# The recorder of this process's current session: the rewriter's wrapper, installed once per
# process, reports to it.
_RECORDER: Any = None


# pathlib class -> its subclass whose read_bytes keeps what it read (see _reading_path)
_READING: dict[type, type] = {}


def _noted(path: str, data: bytes, code: types.CodeType) -> None:
    """A module of the test roots that Python's import system loaded (``source_code``):
    said to the gate like a compile of pytest's rewriter."""
    recorder = _RECORDER
    if recorder is not None:
        recorder._compiled(path, data, (None, code))


def _reading_path(fn: Any) -> Any:
    """``fn`` as a path whose ``read_bytes`` keeps the bytes it returned (``.seen``): what
    pytest's rewriter parses and compiles, not a second read a racing process could
    answer; None for what is not a ``pathlib.Path``."""
    import pathlib

    kind = type(fn)
    if not isinstance(fn, pathlib.Path):
        return None
    cls = _READING.get(kind)
    if cls is None:
        def read_bytes(self: Any) -> bytes:
            data = kind.read_bytes(self)
            self.seen = data
            return data

        cls = _READING[kind] = type(kind.__name__, (kind,), {'read_bytes': read_bytes,
                                                              'seen': None})
    try:
        return cls(fn)
    except (TypeError, ValueError):
        return None


_COULD_NOT_IMPORT = "could not import '"


def _imported(reason: str) -> bool:
    """Whether the module a skip's reason says could not be imported is loaded in this
    process: then its import did not fail here, and the reason explains nothing (the
    audit's importorskip explanation, rule 41)."""
    start = reason.find(_COULD_NOT_IMPORT)
    if start < 0:
        return False
    name = reason[start + len(_COULD_NOT_IMPORT):].split("'", 1)[0]
    return bool(name) and sys.modules.get(name) is not None


def switch_offs(config: Any) -> list[str]:
    """``-p no:oracle_guard`` (or no:junitxml) wherever pytest reads options from: the
    run goes on with the plugin forced on, but the attempt is worth a finding."""
    import shlex

    sources = [('the command line', list(config.invocation_params.args))]
    try:
        sources.append(('addopts', list(config.getini('addopts'))))
    except (ValueError, TypeError):
        pass
    try:
        sources.append(('PYTEST_ADDOPTS', shlex.split(os.environ.get('PYTEST_ADDOPTS', ''))))
    except ValueError:
        pass
    found = []
    for where, args in sources:
        for at, arg in enumerate(args):
            value = args[at + 1] if arg == '-p' and at + 1 < len(args) else (
                arg[2:] if arg.startswith('-p') else '')
            name = value.strip()[3:] if value.strip().startswith('no:') else ''
            if name in SWITCHES:
                found.append(f'-p no:{name} in {where}')
    return found


class RunRecorder:
    """The plugin object that writes the record; registered when ``ORACLE_GUARD_RECORD``
    names a folder (see ``pytest_plugin.pytest_addoption``)."""

    def __init__(self, folder: str) -> None:
        self.path = os.path.join(folder, f'record-{os.getpid()}.jsonl')
        self._file = open(self.path, 'a', encoding='utf-8')  # noqa: SIM115 -- lives all session
        self._stream = connect_stream(os.environ.get(STREAM_ENV))
        # The socket's own method, bound now: a later `socket.socket.sendall = ...` (a
        # src/ module rewriting failed reports on their way to the gate) does not reach it.
        self._send = self._stream.sendall if self._stream is not None else None
        self._pending: list[str] = []  # lines for the record file, written at flushes
        self._outbox: list[str] = []  # routine lines not yet sent (see _write)
        self.config: Any = None
        self.cfg: Any = None  # [tool.oracle-guard] for the runtime lock check, if any
        self.markers: dict[str, list[list[str]]] = {}
        self.unittest_kinds: dict[str, str] = {}
        # nodeid -> (own function's code object, path, rewritten): verified at the end
        self.ran_code: dict[str, tuple[types.CodeType, str, bool]] = {}
        self.loop_completed = False
        # (item, its watch, started at pytest_pyfunc_call): armed by pytest_runtest_call,
        # started as late as the call allows by WatchStart
        self.watching: tuple[Any, CodeWatch, bool] | None = None
        self._is_property: dict[str, bool] = {}  # test file -> among the properties
        # path -> the module code pytest's assertion rewriter compiled from source in this
        # run: the reference the test functions' code is compared with, for free.
        self.fresh_modules: dict[str, types.CodeType] = {}
        self._finished = False  # no event after the session's finish
        self._capture_rewrites()
        import pytest

        # pytest's own Function.runtest, taken before any conftest can rebind it: an item
        # that runs it calls its test through pytest_pyfunc_call (see WatchStart).
        self._function_runtest = pytest.Function.runtest
        import unittest

        # unittest's own TestCase.__call__ and run, taken as early: a case that runs them
        # calls its test method through its _callTestMethod (see _unittest_case).
        self._unittest_run = (unittest.TestCase.__call__, unittest.TestCase.run)

        from oracle_guard import __version__
        self._write({'event': 'start', 'pid': os.getpid(),
                     'worker': os.environ.get('PYTEST_XDIST_WORKER'),
                     'pytest': pytest.__version__, 'plugin': __version__,
                     'python': sys.version.split()[0], 'prefix': sys.prefix,
                     'plugin_file': __file__}, flush=True)
        # Hypothesis's drawing code as it is before any conftest or src module runs: what
        # OG717's judges stand on (rule 43; drawing_code). After the start event: importing
        # Hypothesis can make pytest's rewriter compile its modules (a cache not written
        # yet), and each compile is an event, which may not open the stream (OG720).
        self.drawing = None if os.environ.get(SRC_ONLY_ENV) else DrawingCode.keep()

    def _capture_rewrites(self) -> None:
        """Keep the code objects pytest's assertion rewriter compiles from the test files
        (before any conftest is imported): a module pytest rewrites in this run needs no
        second compile at the end. Modules read from pytest's bytecode cache are compiled
        again by ``compiled_from_source`` (a cache file can be forged).

        Each compile is also said to the gate at once, with the sha256 of the very bytes
        the rewriter read (a ``compiled`` event, before the module runs): a test file
        rewritten before its compile and put back by its own first lines (rules 44, 45:
        OG737) shows there, though its bytes are the gate's again when the run ends."""
        global _RECORDER
        _RECORDER = self
        # Neither pytest's cache of rewritten modules nor Python's __pycache__ is trusted
        # for the test roots: every module there is compiled from the bytes read, and said
        # (rule 45; a planted cache sends no compile at all).
        source_code.install(_noted)
        try:
            from _pytest.assertion import rewrite
        except ImportError:  # pragma: no cover
            return
        original = getattr(rewrite, '_rewrite_test', None)
        if original is None or getattr(original, '_oracle_guard', False):
            return

        def rewrite_test(fn: Any, config: Any) -> Any:
            reading = _reading_path(fn)
            result = original(fn if reading is None else reading, config)
            recorder = _RECORDER
            if recorder is not None:
                recorder._compiled(fn, getattr(reading, 'seen', None), result)
            return result

        rewrite_test._oracle_guard = True  # type: ignore[attr-defined]
        rewrite_test.__name__ = rewrite_test.__qualname__ = original.__name__
        rewrite_test.__doc__ = original.__doc__
        rewrite._rewrite_test = rewrite_test

    def _compiled(self, fn: Any, data: bytes | None, result: Any) -> None:
        """One module the rewriter compiled: its code kept, its bytes' digest sent."""
        if self._finished:
            return  # the code check's own compiles at the end
        try:
            path = os.path.realpath(str(fn))
        except (TypeError, ValueError, OSError):
            return
        try:
            code = result[1]
        except (TypeError, IndexError):
            code = None
        if isinstance(code, types.CodeType):
            self.fresh_modules[path] = code
            source_code.COMPILED[path] = code
        if data is None:  # a pytest whose rewriter reads otherwise: the bytes again, at once
            try:
                with open(path, 'rb') as f:
                    data = f.read()
            except OSError:
                return
        self._write({'event': 'compiled', 'path': path,
                     'sha256': hashlib.sha256(data).hexdigest()})

    # -- writing ---------------------------------------------------------------------
    def _write(self, event: dict[str, Any], flush: bool = False) -> None:
        line = _encode(event)
        self._pending.append(line)
        if self._stream is not None:
            # Good news may wait for the next test's begin (one send per test, not one
            # per report): all a forger can do to a waiting pass or entered call is drop
            # it, and a test without its outcome is a finding. Everything else (a
            # failure, a skip, a call that did not enter the test, the session's start
            # and end) leaves now, with what waited before it, before the hook returns:
            # a failure the gate has received stays received.
            self._outbox.append(line)
            if flush or len(self._outbox) >= OUTBOX_LINES or not routine(event):
                self._send_outbox()
        if flush:
            self._flush()

    def _send_outbox(self) -> None:
        data = ('\n'.join(self._outbox) + '\n').encode('utf-8')
        self._outbox.clear()
        try:
            self._send(data)
        except OSError:
            self._stream = None

    def _flush(self) -> None:
        if self._pending:
            self._file.write('\n'.join(self._pending) + '\n')
            self._pending.clear()
        self._file.flush()

    # -- pytest hooks ------------------------------------------------------------------
    def pytest_configure(self, config: Any) -> None:
        self.config = config
        if not config.pluginmanager.has_plugin(WATCH_PLUGIN):
            config.pluginmanager.register(WatchStart(self), WATCH_PLUGIN)
        from oracle_guard.runtime import canary_items

        canary_items.register_canary_plugins(config)
        worker = getattr(config, 'workerinput', {}).get('workerid')
        from oracle_guard.config import load_config
        from oracle_guard.findings import ConfigError
        from oracle_guard.config import find_root
        root = find_root(str(config.rootpath))
        try:
            cfg = load_config(root)
            self.cfg = cfg if cfg.has_table else None
        except ConfigError:
            self.cfg = None  # the guard's own session check reports it
        self._write({'event': 'configured', 'worker': worker, 'rootdir': str(config.rootpath),
                     'root': root, 'switched_off': switch_offs(config)}, flush=True)

    @hookimpl(tryfirst=True)
    def pytest_load_initial_conftests(self, early_config: Any) -> None:
        """The test roots, known before the first conftest is imported: the modules there
        are compiled from source (``source_code``), the ones under ``src`` are not."""
        from oracle_guard.config import find_root
        from oracle_guard.config import load_config
        from oracle_guard.findings import ConfigError

        root = find_root(str(early_config.rootpath))
        try:
            is_src = load_config(root).is_src
        except ConfigError:
            is_src = None  # the guard's own session check reports it
        source_code.set_scope(root, is_src)

    def pytest_collectreport(self, report: Any) -> None:
        if report.outcome != 'passed':
            reason = report.longrepr[2] if report.skipped and isinstance(
                report.longrepr, tuple) else str(report.longrepr)[-500:]
            event = {'event': 'collect', 'nodeid': report.nodeid,
                     'path': str(getattr(report, 'fspath', '') or ''),
                     'outcome': report.outcome, 'reason': reason}
            if report.skipped and isinstance(report.longrepr, tuple):
                event['where'] = [str(report.longrepr[0]), report.longrepr[1]]
                if _imported(str(reason)):
                    event['imported'] = True
            self._write(event)

    def pytest_deselected(self, items: Any) -> None:
        self._write({'event': 'deselected',
                     'items': [{'nodeid': i.nodeid, 'path': str(i.path)} for i in items]})

    @staticmethod
    def _item_entry(item: Any) -> dict[str, Any]:
        entry = {'nodeid': item.nodeid, 'path': str(item.path),
                 'name': getattr(item, 'originalname', None) or item.name,
                 'type': type(item).__name__}
        if getattr(item, 'cls', None) is not None:  # only a class inherits tests
            inherited = inherited_from(getattr(item, 'obj', None), str(item.path),
                                       item.nodeid.split('::', 1)[-1])
            if inherited is not None:
                entry['inherited'] = list(inherited)
            bases = base_classes(item.cls)
            if bases:
                entry['bases'] = bases
        return entry

    @hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
        # Before any other hook sees the list: what it does to tests, it does to canaries.
        from oracle_guard.runtime import canary_items

        _, dropped = canary_items.plant(session, items, os.environ.get(canary_items.CANARY_ENV))
        if dropped:
            self._write({'event': 'canary_dropped', 'modules': dropped}, flush=True)

    def pytest_collection_finish(self, session: Any) -> None:
        # After every pytest_collection_modifyitems: what will really be run.
        self._write({'event': 'collected',
                     'items': [self._item_entry(item) for item in session.items]}, flush=True)
        self._impostors('collection')

    def _impostors(self, when: str) -> None:
        """Modules under the test roots' module names that the plugin's import hook did
        not load (``source_code.impostors``): said at once (rule 45, OG737)."""
        found = source_code.impostors()
        if found:
            self._write({'event': 'impostors', 'when': when,
                         'modules': dict(sorted(found.items())[:20])}, flush=True)

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        # Flushed: if the process dies inside this test, the record names it.
        self._write({'event': 'begin', 'nodeid': nodeid}, flush=True)

    @staticmethod
    def _marks(item: Any) -> list[list[str]]:
        return [[m.name, repr(m.args)[:300], repr(m.kwargs)[:300]]
                for m in item.iter_markers() if m.name in SILENCE_MARKS]

    def _unittest_kind(self, item: Any) -> str | None:
        holders = (getattr(item, 'obj', None), getattr(item, 'cls', None))
        if any(getattr(holder, '__unittest_skip__', False) for holder in holders):
            return 'unittest-skip'
        if any(getattr(holder, '__unittest_expecting_failure__', False) for holder in holders):
            return 'expectedFailure'
        return None

    @hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: Any) -> Generator[None]:
        """Outermost around the call: watch whether the test's own code is entered."""
        import pytest

        if not isinstance(item, pytest.Function):
            yield
            return
        path = str(item.path)
        obj = item.obj
        own = own_function(obj, path)
        watched = getattr(own, '__code__', None) if own is not None else None
        event: dict[str, Any] = {'event': 'call', 'nodeid': item.nodeid, 'entered': False,
                                 'own': None, 'raised': None}
        if watched is not None:
            event['own'] = [watched.co_name, watched.co_firstlineno]
            module = getattr(item, 'module', None)
            loader = getattr(getattr(module, '__spec__', None), 'loader', None)
            self.ran_code[item.nodeid] = (watched, path,
                                          type(loader).__name__ == 'AssertionRewritingHook')
        self._impostors(item.nodeid)
        lock_problems = self._lock_problems(item, obj)
        if lock_problems:
            event['lock'] = lock_problems
        replaced = self._replaced_names(item)
        if replaced:
            event['replaced'] = replaced
        discards = self._discards()
        # Before the plugin's own wrappers go on, so what src changed at import is seen as src's.
        drawing = self._drawing_changes(obj, discards)
        counter = ExampleCounter.install(obj, discards)
        # A property's own function is the inner test the counter calls: a call counted
        # is the proof, and Hypothesis's engine runs unprofiled.
        counted = counter is not None and own is not None and \
            getattr(counter.inner, '__func__', counter.inner) is own
        seen = CodeWatch(None if counted else watched)
        # Started as late as the call allows: the hooks around it run unprofiled. Code
        # entered before that (an outer hook calling the test itself) is not the test's
        # call: it does not count. A unittest case whose run is unittest's own starts it
        # in its _callTestMethod, after setUp; an item that runs pytest's own
        # Function.runtest, in the innermost pytest_pyfunc_call wrapper (WatchStart);
        # any other item, in the innermost pytest_runtest_call wrapper.
        case = self._unittest_case(item, obj) if seen.code is not None else None
        if case is not None:
            self.watching = None
            watch_test_method(case, seen)
        else:
            self.watching = (item, seen, type(item).runtest is self._function_runtest)
        try:
            outcome = yield
        finally:
            seen.stop()
            self.watching = None
            if case is not None:
                unwatch_test_method(case)
            if counter is not None:
                # Again with the wrappers on (known by identity): what changed during the call.
                drawing += [change for change in self._drawing_changes(
                    obj, discards, (counter._wrapper, counter._draw_wrapper))
                    if change not in drawing]
                counter.remove()
        if counted:
            event['entered'] = counter.calls > 0 and getattr(own, '__code__', None) is watched
        else:
            event['entered'] = seen.entered
        excinfo = outcome.excinfo
        if excinfo is not None and not _is_silence(excinfo[1]):
            event['raised'] = excinfo[0].__name__
        elif getattr(item, '_excinfo', None):  # unittest collects failures itself
            event['raised'] = 'unittest failure'
        if counter is not None:
            event['examples'] = counter.calls
            event['explicit'] = counter.explicit
            if counter.discarded_by_src:
                event['discarded_by_src'] = dict(sorted(counter.discarded_by_src.items())[:5])
        drawn = draw_rates.taken(item)  # rule 55: the share of draws its filters rejected
        if drawn is not None:
            event['draws'] = drawn
        if drawing:
            event['drawing_replaced'] = drawing[:20]
        self._write(event)

    def _unittest_case(self, item: Any, obj: Any) -> Any:
        """The ``unittest.TestCase`` instance a unittest item runs, when its class runs
        unittest's own ``__call__`` and ``run`` (which call ``_callTestMethod``) and the
        item runs that very instance; None otherwise."""
        case = getattr(obj, '__self__', None)
        if case is None or getattr(item, 'instance', None) is not case or \
                type(getattr(case, '__dict__', None)) is not dict:
            return None
        kind = type(case)
        call, run = self._unittest_run
        if getattr(kind, '__call__', None) is not call or getattr(kind, 'run', None) is not run \
                or not callable(getattr(case, '_callTestMethod', None)):
            return None
        return case

    def _discards(self) -> Discards | None:
        """The judge of discarded examples (rule 43 at run time), one per session; none
        for a project whose ``src`` may use Hypothesis (``src-test-imports``: it ships
        strategies, and their ``assume`` is its own)."""
        cfg = self.cfg
        if cfg is None or any(name.split('.')[0] == 'hypothesis'
                              for name in cfg.src_test_imports):
            return None
        judge = getattr(self, '_discard_judge', None)
        if judge is None:
            judge = self._discard_judge = Discards(cfg.root, cfg.is_src)
        return judge

    def _drawing_changes(self, obj: Any, discards: Discards | None,
                         own: tuple[Any, ...] = ()) -> list[str]:
        """For a Hypothesis test judged for discards: what of Hypothesis's drawing code
        is not what the plugin kept when it loaded (``own``: its wrappers now in place)."""
        if self.drawing is None or discards is None or \
                not getattr(getattr(obj, '__func__', obj), 'is_hypothesis_test', False):
            return []
        try:
            return self.drawing.changes(discards.root, own)
        except Exception as exc:  # noqa: BLE001 -- what cannot be compared is a finding
            return [f"Hypothesis's drawing code could not be compared: {exc!r}"]

    def _lock_problems(self, item: Any, obj: Any) -> list[str]:
        """What the plugin's lock check found at collection (it fails the test), then the
        check again at call time: settings swapped after collection."""
        if self.cfg is None or not getattr(obj, 'is_hypothesis_test', False):
            return []
        guard = self.config.pluginmanager.get_plugin('oracle-guard') if self.config else None
        found = list(getattr(guard, 'lock_failures_of', lambda _item: ())(item))
        try:
            from oracle_guard.runtime import lock_runtime
            return list(dict.fromkeys(found + lock_runtime.check_call(self.cfg, item, obj)))
        except Exception as exc:  # noqa: BLE001 -- a lock that cannot be read is a finding
            return found + [f'{item.nodeid}: the lock could not be checked at call time: {exc}']

    def _replaced_names(self, item: Any) -> list[str]:
        """For a property (a test under the properties folder), after its fixtures ran:
        the names it calls through that no longer mean what its source binds."""
        if self.cfg is None:
            return []
        path = str(item.path)
        is_property = self._is_property.get(path)
        if is_property is None:  # once per test file: realpath walks the file system
            real = os.path.realpath(path)
            rel = os.path.relpath(real, os.path.realpath(self.cfg.root)).replace(os.sep, '/')
            is_property = self._is_property[path] = \
                not rel.startswith('../') and self.cfg.is_property(rel)
        if not is_property:
            return []
        from oracle_guard.runtime.property_namespace import replaced_names
        try:
            return replaced_names(getattr(item, 'module', None), str(item.path), self.cfg)
        except Exception as exc:  # noqa: BLE001 -- what cannot be checked is a finding
            return [f'the names it calls could not be checked: {exc!r}']

    @hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: Any, call: Any) -> Generator[None]:
        outcome = yield
        report = outcome.get_result()
        if report.skipped or hasattr(report, 'wasxfail'):
            self.markers[item.nodeid] = self._marks(item)
            kind = self._unittest_kind(item)
            if kind:
                self.unittest_kinds[item.nodeid] = kind

    def pytest_runtest_logreport(self, report: Any) -> None:
        event: dict[str, Any] = {'event': 'report', 'nodeid': report.nodeid,
                                 'when': report.when, 'outcome': report.outcome}
        if type(report).__name__ == 'SubtestReport':
            event['sub'] = True  # one of several reports of the call: not its outcome
        if report.failed:
            crash = getattr(getattr(report, 'longrepr', None), 'reprcrash', None)
            if crash is not None:
                event['crash'] = str(getattr(crash, 'message', ''))[:300]
        if hasattr(report, 'wasxfail'):
            event['wasxfail'] = str(report.wasxfail)
        if report.skipped or hasattr(report, 'wasxfail'):
            longrepr = report.longrepr
            if isinstance(longrepr, tuple) and len(longrepr) == 3:
                event['where'] = [str(longrepr[0]), longrepr[1]]
                event['reason'] = str(longrepr[2])
                if _imported(event['reason']):
                    event['imported'] = True
            elif hasattr(report, 'wasxfail'):
                event['reason'] = str(report.wasxfail)
            if report.nodeid in self.markers:
                event['markers'] = self.markers[report.nodeid]
            if report.nodeid in self.unittest_kinds:
                event['unittest'] = self.unittest_kinds[report.nodeid]
        self._write(event)

    def guard_stopped(self, problems: list[str]) -> None:
        """The oracle-guard plugin itself is about to stop the session (problems found at
        collection): said in the record, so the audit names the guard's reason and never
        blames the pull request for an early exit (rule 45)."""
        self._write({'event': 'guard-stopped', 'problems': [str(p)[:500] for p in problems[:50]]},
                    flush=True)

    def pytest_keyboard_interrupt(self, excinfo: Any) -> None:
        value = excinfo.value
        self._write({'event': 'interrupted', 'what': type(value).__name__,
                     'message': str(getattr(value, 'msg', value))[:500],
                     'returncode': getattr(value, 'returncode', None)}, flush=True)

    @hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: Any) -> Generator[None]:
        outcome = yield
        if outcome.excinfo is None:
            self.loop_completed = True

    @hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
        self._finished = True  # the compiles of the code check below are not the run's
        self._impostors('finish')
        imported, foreign = self._imported_code()
        code = self._verify_code()
        guard = self.config.pluginmanager.get_plugin('oracle-guard') if self.config else None
        self._write({'event': 'finish', 'exitstatus': int(exitstatus),
                     'loop_completed': self.loop_completed,
                     'shouldfail': bool(session.shouldfail),
                     'stopped': str(session.shouldfail or session.shouldstop or '')[:500],
                     'problems': [str(p)[:500] for p in getattr(guard, 'problems', ())][:20],
                     'shouldstop': bool(session.shouldstop),
                     'code': code, 'modules': self._modules(),
                     'imported': imported, 'foreign': foreign,
                     'plugin_dists': self._plugin_dists()}, flush=True)

    def pytest_unconfigure(self, config: Any) -> None:
        self._flush()
        self._file.close()
        if self._stream is not None and self._outbox:
            self._send_outbox()
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    # -- the checks made at the end ----------------------------------------------------
    def _verify_code(self) -> dict[str, Any]:
        """Per test: was the code that ran compiled from the test file's source?"""
        compiled: dict[tuple[str, bool], Any] = {}
        verdicts: dict[str, Any] = {}
        # (id(code), path, rewritten) -> its verdict: the cases of one parametrized test
        # share their code (held by ran_code, so no id is reused), and so their verdict.
        judged: dict[tuple[int, str, bool], Any] = {}
        for nodeid, (code, path, rewritten) in self.ran_code.items():
            same_code = (id(code), path, rewritten)
            if same_code in judged:
                verdicts[nodeid] = judged[same_code]
                continue
            ran = code_fingerprint(code)
            verdict = None
            for mode in (rewritten, not rewritten):
                key = (path, mode)
                if key not in compiled:
                    fresh = self.fresh_modules.get(os.path.realpath(path)) if mode else None
                    compiled[key] = (None, _codes_by_place(fresh)) if fresh is not None \
                        else compiled_from_source(path, self.config, mode)
                found = compiled[key]
                if found is None:
                    continue
                digest, places = found
                candidates = places.get((code.co_name, code.co_firstlineno), ())
                verdict = {'source': digest, 'same': any(
                    c is code or code_fingerprint(c) == ran for c in candidates)}
                if verdict['same']:
                    break
            verdicts[nodeid] = judged[same_code] = verdict
        return verdicts

    def _imported_code(self) -> tuple[list[str], dict[str, list[str]]]:
        """The modules of the test roots this process imported (real paths: each needs a
        ``compiled`` event), and per file the functions that claim it whose code it does
        not compile to: a module run from a forged cache holds code its bytes do not
        (rule 45, OG737). Every function of their namespaces is judged, with the members
        of the classes they define (not of src's: bounded by what the tests imported, not
        by the objects they made) and what a decorator wraps; code compiled for another
        file of the test roots is judged against that file."""
        imported: list[str] = []
        foreign: dict[str, set[str]] = {}
        judged: dict[int, types.CodeType] = {}
        seen: dict[int, Any] = {}  # the values judged already (a star import repeats them)
        modules = []  # (real path, namespace) of each module of the test roots
        for module in list(sys.modules.values()):
            file = getattr(module, '__file__', None)
            real = real_path(file) if type(file) is str else ''
            if real and source_code.in_scope(real):
                imported.append(real)
                modules.append((real, getattr(module, '__dict__', None)))
        own = {n.get('__name__') for _, n in modules if type(n) is dict}  # their names
        for real, namespace in modules:
            values = list(namespace.values()) if type(namespace) is dict else []
            for function in functions_in(values, seen, own):
                code = function.__code__
                if judged.setdefault(id(code), code) is not code or \
                        len(judged) > 200_000:
                    continue
                name = code.co_filename
                if type(name) is not str or name.startswith('<'):
                    continue
                where = real_path(name)
                if where != real and not source_code.in_scope(where):
                    continue
                if not source_code.from_source(code, where):
                    foreign.setdefault(where, set()).add(
                        f'{code.co_name} at line {code.co_firstlineno}')
        return sorted(set(imported)), {path: sorted(names)[:20]
                                       for path, names in sorted(foreign.items())}

    def _plugin_dists(self) -> list[str]:
        """Where the metadata of every plugin pytest loaded through an entry point lives:
        a ``*.dist-info`` committed into the repository is loaded from the working folder."""
        found = []
        try:
            pairs = self.config.pluginmanager.list_plugin_distinfo()
        except Exception:  # noqa: BLE001 -- a pluggy without it: nothing to list
            return found
        for _plugin, dist in pairs:
            inner = getattr(dist, '_dist', dist)
            path = getattr(inner, '_path', None)
            if path is not None:
                found.append(os.path.realpath(str(path)))
        return sorted(set(found))

    def _modules(self) -> dict[str, str]:
        """Top-level modules imported from inside the repository, and from where: a
        package under the test roots that shadows the one under ``src`` shows here."""
        root = os.path.realpath(self.cfg.root if self.cfg is not None else (
            str(self.config.rootpath) if self.config is not None else os.getcwd()))
        found = {}
        for name, module in list(sys.modules.items()):
            if '.' in name:
                continue
            file = getattr(module, '__file__', None)
            if not isinstance(file, str):
                continue
            real = os.path.realpath(file)
            if real.startswith(root + os.sep):
                found[name] = os.path.relpath(real, root).replace(os.sep, '/')
        return found


def _is_silence(exc: BaseException) -> bool:
    """pytest.skip / pytest.xfail / unittest.SkipTest: an outcome, not a failure."""
    import unittest

    from _pytest.outcomes import Skipped
    from _pytest.outcomes import XFailed
    return isinstance(exc, (Skipped, XFailed, unittest.SkipTest))
