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

The plugin only writes facts; ``gate/audit.py`` judges them. Reading the folder back
is ``read_record``.
"""
from __future__ import annotations

import builtins
import functools
import hashlib
import json
import os
import sys
import types
from collections.abc import Generator
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from oracle_guard.runtime import source_code
from oracle_guard.runtime.drawing_code import DrawingCode
from oracle_guard.runtime.source_code import code_fingerprint
from oracle_guard.runtime.source_code import codes_by_place as _codes_by_place

# As source_code's: the builtins as the plugin found them when it loaded serve the record.
__builtins__ = vars(builtins).copy()  # type: ignore[assignment]

try:  # pytest.hookimpl itself, without importing pytest into the ci process
    from pluggy import HookimplMarker
    hookimpl = HookimplMarker('pytest')
except ImportError:  # pragma: no cover -- the ci process reads records without pytest
    def hookimpl(**_options: Any) -> Any:  # type: ignore[misc,no-redef]
        return lambda function: function

RECORD_ENV = 'ORACLE_GUARD_RECORD'
# ``unix:PATH`` or ``tcp:HOST:PORT``: the socket ``oracle-guard ci`` listens on. Every event
# is sent there as it happens (good news at the next test's begin at the latest: see `routine`),
# so what the process writes later cannot take it back.
STREAM_ENV = 'ORACLE_GUARD_STREAM'
PLUGIN_NAME = 'oracle-guard-record'
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
    return folder if folder and os.path.isdir(folder) else None


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


_REAL: dict[str, str] = {}  # file name -> its real path, once per process
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


def _real(name: str) -> str:
    """``os.path.realpath`` of a file name, looked up once: every test call asks it of
    its code's file and its item's path (it walks the file system each time)."""
    found = _REAL.get(name) if type(name) is str else None
    if found is None:
        found = os.path.normcase(os.path.realpath(name))
        if type(name) is str and len(_REAL) < 100_000:
            _REAL[name] = found
    return found


def same_file(a: str, b: str) -> bool:
    try:
        return _real(a) == _real(b)
    except (OSError, ValueError, TypeError):
        return False


def _functions_called(obj: Any) -> Iterator[Any]:
    """The functions calling ``obj`` goes through, outermost first: bound methods,
    ``functools.wraps`` chains and Hypothesis's ``inner_test`` (what ``@given`` calls per
    example, read again at every call)."""
    current = obj
    for _ in range(32):
        function = getattr(current, '__func__', current)
        # Hypothesis first: its @given wrapper's code claims the test's file and first
        # line (hypothesis.internal.reflection.impersonate), but the test's own code is
        # inner_test.
        handle = getattr(function, 'hypothesis', None)
        inner = getattr(handle, 'inner_test', None)
        if inner is not None and inner is not function:
            current = inner
            continue
        yield function
        wrapped = getattr(function, '__wrapped__', None)
        if wrapped is None or wrapped is function:
            return
        current = wrapped


def own_function(obj: Any, path: str) -> Any:
    """The function defined in the test file that calling ``obj`` should run: the first
    of ``_functions_called`` whose code was compiled from ``path``. None when there is
    none: the object pytest will call is not the test's own function (swapped for one
    defined elsewhere)."""
    for function in _functions_called(obj):
        code = getattr(function, '__code__', None)
        if isinstance(code, types.CodeType) and same_file(code.co_filename, path):
            return function
    return None


def inherited_from(obj: Any, path: str, identity: str) -> tuple[str, int, str] | None:
    """(file, first line, ``Class::function`` identity) of the function a test item runs
    when it is inherited: defined in another class than the item's ``identity`` names, in
    its file (a mixin) or another (``class TestOther(Mixin, test_other.Test)``). A silence
    that decorates it was written, and is judged, there. None for a test of its own class.
    The innermost function of ``_functions_called`` is the one defined."""
    found = None
    for function in _functions_called(obj):
        if isinstance(getattr(function, '__code__', None), types.CodeType):
            found = function
    if found is None:
        return None
    code, qualname = found.__code__, getattr(found, '__qualname__', '')
    if not isinstance(qualname, str) or '<' in qualname:
        return None
    origin = qualname.replace('.', '::')
    if origin == identity.split('[', 1)[0] and same_file(code.co_filename, path):
        return None
    return code.co_filename, code.co_firstlineno, origin


def base_classes(cls: Any) -> list[list[str]]:
    """[file, ``Outer::Inner``] of each class a test class derives from (its MRO after
    itself) that a Python file defines: a class-level marker there is inherited by every
    test of the class, and judged where it is written."""
    found = []
    for base in getattr(cls, '__mro__', ())[1:]:
        module = sys.modules.get(getattr(base, '__module__', '') or '')
        filename = getattr(module, '__file__', None)
        qualname = getattr(base, '__qualname__', '')
        if isinstance(filename, str) and filename.endswith('.py') and \
                isinstance(qualname, str) and '<' not in qualname:
            found.append([filename, qualname.replace('.', '::')])
    return found


def compiled_from_source(path: str, config: Any, rewritten: bool
                         ) -> tuple[str, dict[tuple[str, int], list[types.CodeType]]] | None:
    """(sha256 of the source bytes, code objects) of a test file compiled the way pytest
    imports it: with pytest's assertion rewriting when the module was rewritten."""
    try:
        with open(path, 'rb') as f:
            source = f.read()
    except OSError:
        return None
    digest = hashlib.sha256(source).hexdigest()
    code = None
    if rewritten:
        try:
            from pathlib import Path

            from _pytest.assertion.rewrite import _rewrite_test
            code = _rewrite_test(Path(path), config)[1]
        except Exception:  # noqa: BLE001 -- pytest internals of another version: fall back
            code = None
    if code is None:
        try:
            code = compile(source, path, 'exec', dont_inherit=True)
        except (SyntaxError, ValueError):
            return None
    return digest, _codes_by_place(code)


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
        # started as late as the call allows by _WatchStart
        self.watching: tuple[Any, _CodeWatch, bool] | None = None
        self._is_property: dict[str, bool] = {}  # test file -> among the properties
        # path -> the module code pytest's assertion rewriter compiled from source in this
        # run: the reference the test functions' code is compared with, for free.
        self.fresh_modules: dict[str, types.CodeType] = {}
        self._finished = False  # no event after the session's finish
        self._capture_rewrites()
        import pytest

        # pytest's own Function.runtest, taken before any conftest can rebind it: an item
        # that runs it calls its test through pytest_pyfunc_call (see _WatchStart).
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
        self.drawing = DrawingCode.keep()

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
            config.pluginmanager.register(_WatchStart(self), WATCH_PLUGIN)
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
        counter = _ExampleCounter.install(obj, discards)
        # A property's own function is the inner test the counter calls: a call counted
        # is the proof, and Hypothesis's engine runs unprofiled.
        counted = counter is not None and own is not None and \
            getattr(counter.inner, '__func__', counter.inner) is own
        seen = _CodeWatch(None if counted else watched)
        # Started as late as the call allows: the hooks around it run unprofiled. Code
        # entered before that (an outer hook calling the test itself) is not the test's
        # call: it does not count. A unittest case whose run is unittest's own starts it
        # in its _callTestMethod, after setUp; an item that runs pytest's own
        # Function.runtest, in the innermost pytest_pyfunc_call wrapper (_WatchStart);
        # any other item, in the innermost pytest_runtest_call wrapper.
        case = self._unittest_case(item, obj) if seen.code is not None else None
        if case is not None:
            self.watching = None
            _watch_test_method(case, seen)
        else:
            self.watching = (item, seen, type(item).runtest is self._function_runtest)
        try:
            outcome = yield
        finally:
            seen.stop()
            self.watching = None
            if case is not None:
                _unwatch_test_method(case)
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

    def _discards(self) -> _Discards | None:
        """The judge of discarded examples (rule 43 at run time), one per session; none
        for a project whose ``src`` may use Hypothesis (``src-test-imports``: it ships
        strategies, and their ``assume`` is its own)."""
        cfg = self.cfg
        if cfg is None or any(name.split('.')[0] == 'hypothesis'
                              for name in cfg.src_test_imports):
            return None
        judge = getattr(self, '_discard_judge', None)
        if judge is None:
            judge = self._discard_judge = _Discards(cfg.root, cfg.is_src)
        return judge

    def _drawing_changes(self, obj: Any, discards: _Discards | None,
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
            real = _real(file) if type(file) is str else ''
            if real and source_code.in_scope(real):
                imported.append(real)
                modules.append((real, getattr(module, '__dict__', None)))
        own = {n.get('__name__') for _, n in modules if type(n) is dict}  # their names
        for real, namespace in modules:
            values = list(namespace.values()) if type(namespace) is dict else []
            for function in _functions_in(values, seen, own):
                code = function.__code__
                if judged.setdefault(id(code), code) is not code or \
                        len(judged) > 200_000:
                    continue
                name = code.co_filename
                if type(name) is not str or name.startswith('<'):
                    continue
                where = _real(name)
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


def _functions_in(values: list[Any], seen: dict[int, Any], own: set[Any]
                  ) -> Iterator[types.FunctionType]:
    """The functions a namespace's values hold: functions, the members of the classes
    defined in a module named in ``own`` (their nested classes too), pytest's fixture
    definitions, and along each, what it wraps (``_functions_called``); a Hypothesis
    wrapper, whose code claims the file and line of the function it wraps, is judged by
    that function (``source_code.impersonates``). A value in ``seen`` (held there, so no
    id is reused) is not looked at again."""
    todo = list(values)
    while todo:
        value = todo.pop()
        if seen.setdefault(id(value), value) is not value or len(seen) > 1_000_000:
            continue
        kind = type(value)
        if kind in (staticmethod, classmethod):
            value = value.__func__
        elif kind is property:
            todo.extend(f for f in (value.fget, value.fset, value.fdel) if f is not None)
            continue
        elif kind.__name__ == 'FixtureFunctionDefinition':
            value = getattr(value, '__dict__', {}).get('_fixture_function')
        elif isinstance(value, type):
            members = getattr(value, '__dict__', None)
            if members is not None and members.get('__module__') in own:
                todo.extend(list(members.values()))
            continue
        if not isinstance(value, types.FunctionType):
            continue
        for function in _functions_called(value):
            if isinstance(function, types.FunctionType) and \
                    source_code.impersonates(function) is None:
                yield function


def _is_silence(exc: BaseException) -> bool:
    """pytest.skip / pytest.xfail / unittest.SkipTest: an outcome, not a failure."""
    import unittest

    from _pytest.outcomes import Skipped
    from _pytest.outcomes import XFailed
    return isinstance(exc, (Skipped, XFailed, unittest.SkipTest))


class _CodeWatch:
    """Whether one code object starts executing, seen through ``sys.setprofile``.

    The profiler is removed as soon as the code is entered, so the test body itself runs
    unprofiled; any profiler that was installed before is chained and restored.
    """

    def __init__(self, code: types.CodeType | None) -> None:
        self.code = code
        self.entered = False
        self._previous: Any = None

    def start(self) -> None:
        if self.code is None:
            return
        self._previous = sys.getprofile()
        sys.setprofile(self._profile)

    def _profile(self, frame: Any, event: str, arg: Any) -> Any:
        previous = self._previous
        if previous is not None:
            previous(frame, event, arg)
        if event == 'call' and frame.f_code is self.code:
            self.entered = True
            sys.setprofile(previous)
        return None

    def stop(self) -> None:
        if self.code is not None and sys.getprofile() == self._profile:
            sys.setprofile(self._previous)


WATCH_PLUGIN = 'oracle-guard-record-watch'


def _watch_test_method(case: Any, watch: _CodeWatch) -> None:
    """Start ``watch`` where unittest's ``run`` calls the test method (after setUp), for
    this one instance: an instance attribute in front of the class's ``_callTestMethod``."""
    original = case._callTestMethod

    def call_test_method(method: Any) -> Any:
        watch.start()
        try:
            return original(method)
        finally:
            watch.stop()

    call_test_method._oracle_guard_watch = True  # type: ignore[attr-defined]
    case.__dict__['_callTestMethod'] = call_test_method


def _unwatch_test_method(case: Any) -> None:
    found = case.__dict__.get('_callTestMethod')
    if getattr(found, '_oracle_guard_watch', False):
        del case.__dict__['_callTestMethod']


class _WatchStart:
    """Starts the recorder's watch of a test call as late as the call allows: in the
    innermost ``pytest_runtest_call`` wrapper, or, for an item whose ``runtest`` is
    pytest's own ``Function.runtest`` (which calls the test through
    ``pytest_pyfunc_call``), in the innermost ``pytest_pyfunc_call`` wrapper. Every
    Python call under the watch goes through its profile function, so the hooks around
    the call (capture, logging, the freeze guard) are left out of it. A watch that never
    starts (this plugin blocked, the hook never called) sees nothing entered: the audit
    holds that against the test, never for it."""

    def __init__(self, recorder: RunRecorder) -> None:
        self.recorder = recorder

    def _watch(self, item: Any, direct: bool) -> _CodeWatch | None:
        watching = self.recorder.watching
        if watching is None or watching[0] is not item or watching[2] is not direct:
            return None
        return watching[1]

    def _around(self, item: Any, direct: bool) -> Generator[None]:
        watch = self._watch(item, direct)
        if watch is not None:
            watch.start()
        try:
            yield
        finally:
            if watch is not None:
                watch.stop()

    @hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_call(self, item: Any) -> Generator[None]:
        yield from self._around(item, False)

    @hookimpl(hookwrapper=True, trylast=True)
    def pytest_pyfunc_call(self, pyfuncitem: Any) -> Generator[None]:
        yield from self._around(pyfuncitem, True)


class _ExampleCounter:
    """Counts the calls of a Hypothesis test's inner function during one test call, and
    judges every control exception of Hypothesis that ends one of its test cases (rule 43
    at run time, ``_Discards``): those that come out of the inner test, and those raised
    while Hypothesis draws the test's arguments, before it calls the inner test (a strategy
    built from ``src``: ``st.builds(src_class)``, ``.map(src_function)``). For the draw,
    ``StateForActualGivenExecution.execute_once`` (Hypothesis's run of one test case, draw
    and call, in every Hypothesis 6 release) is wrapped for the time of the call.

    ``.map(f)`` swallows what ``f`` raises: ``MappedStrategy.do_draw`` catches
    ``UnsatisfiedAssumption`` and draws again, up to three times, and only then lets one
    out (its own in Hypothesis before 6.15x, ``f``'s since). A ``src`` function that
    discards only some of the inputs it would answer wrong would almost never be seen by
    the test case's wrapper: Hypothesis retries the draw, so the wrapper sees a discard only
    when three come in a row. So for the time of the call ``do_draw`` hands each draw a ``pack``
    that judges what ``f`` raises before Hypothesis catches it."""

    def __init__(self, handle: Any, inner: Any, explicit: int,
                 discards: _Discards | None = None) -> None:
        self.handle = handle
        self.inner = inner
        self.explicit = explicit
        self.calls = 0
        self.discards = discards
        self.discarded_by_src: dict[str, int] = {}  # 'src/pkg/x.py:12' -> examples
        self._judged: BaseException | None = None  # the last exception judged
        self._state: Any = None  # the class whose execute_once is wrapped, while it is
        self._execute_once: Any = None  # its own
        self._wrapper: Any = None  # what stands in for it
        self._mapped: Any = None  # MappedStrategy, while its do_draw is wrapped
        self._do_draw: Any = None  # its own
        self._draw_wrapper: Any = None
        self._judged_code: Any = None  # the code of the pack wrapper, once one is made

    @classmethod
    def install(cls, obj: Any, discards: _Discards | None = None) -> _ExampleCounter | None:
        function = getattr(obj, '__func__', obj)
        if not getattr(function, 'is_hypothesis_test', False):
            return None
        handle = getattr(function, 'hypothesis', None)
        inner = getattr(handle, 'inner_test', None)
        if inner is None:
            return None
        explicit = len(getattr(function, 'hypothesis_explicit_examples', ()) or ())
        counter = cls(handle, inner, explicit, discards)

        @functools.wraps(inner)
        def counted(*args: Any, **kwargs: Any) -> Any:
            counter.calls += 1
            try:
                return inner(*args, **kwargs)
            except BaseException as exc:
                counter.judge(exc)
                raise

        try:
            handle.inner_test = counted
        except AttributeError:
            return None
        if discards is not None:
            counter._wrap_test_cases()
        return counter

    def judge(self, exc: BaseException) -> None:
        """Count a discard ``src`` is behind, once (the inner test's is seen again as it
        leaves the test case). One that was not ``src``'s where it was first seen is
        judged again further out, where its traceback holds more frames: a discard
        judged as it leaves a draw inside a map, with a ``src`` frame that called that
        draw further out (a ``do_draw`` of ``src``'s would otherwise pass for Hypothesis's)."""
        if exc is self._judged or self.discards is None:
            return
        where = self.discards.by_src(exc)
        if where is not None:
            self._judged = exc
            self.discarded_by_src[where] = self.discarded_by_src.get(where, 0) + 1

    def _wrap_test_cases(self) -> None:
        core = sys.modules.get('hypothesis.core')
        state = getattr(core, 'StateForActualGivenExecution', None)
        original = getattr(state, 'execute_once', None)
        if not callable(original):
            return
        counter = self

        @functools.wraps(original)
        def execute_once(*args: Any, **kwargs: Any) -> Any:
            try:
                return original(*args, **kwargs)
            except BaseException as exc:
                counter.judge(exc)
                # It leaves the test case: holding it would keep the test case's frames
                # (and this counter, through them) alive until the collector finds them.
                counter._judged = None
                raise

        try:
            state.execute_once = execute_once
        except (AttributeError, TypeError):
            return
        self._state, self._execute_once = state, original
        self._wrapper = execute_once
        self._wrap_maps()

    def _wrap_maps(self) -> None:
        module = sys.modules.get('hypothesis.strategies._internal.strategies')
        mapped = getattr(module, 'MappedStrategy', None)
        do_draw = mapped.__dict__.get('do_draw') if isinstance(mapped, type) else None
        if not callable(do_draw):
            return
        counter = self

        @functools.wraps(do_draw)
        def judged_do_draw(strategy: Any, data: Any) -> Any:
            pack = strategy.__dict__.get('pack')
            # Our own wrapper (a nested draw of the same strategy) is known by its code, not
            # by an attribute any callable could carry, which src could set on its own function.
            if not callable(pack) or (type(pack) is types.FunctionType
                                      and pack.__code__ is counter._judged_code):
                return do_draw(strategy, data)

            def judged(*args: Any, **kwargs: Any) -> Any:
                try:
                    return pack(*args, **kwargs)
                except BaseException as exc:
                    counter.judge(exc)
                    raise

            # The map's draw of its inner strategy is under the same ``except`` as its
            # function: what a ``src`` function drawn there raises (``st.builds(f)``, a
            # ``@composite`` or a ``flatmap`` calling it, inside the ``.map``) is judged
            # as it leaves that draw, before the map's retry hides it, through the draw of
            # this data object for the time of the map's own draw.
            inner_draw = data.draw
            namespace = getattr(data, '__dict__', None)
            put = isinstance(namespace, dict)
            own = namespace.get('draw') if put else None  # type: ignore[union-attr]

            def judged_draw(*args: Any, **kwargs: Any) -> Any:
                try:
                    return inner_draw(*args, **kwargs)
                except BaseException as exc:
                    counter.judge(exc)
                    raise

            counter._judged_code = judged.__code__
            strategy.pack = judged
            if put:
                namespace['draw'] = judged_draw  # type: ignore[index]
            try:
                return do_draw(strategy, data)
            finally:
                strategy.pack = pack
                if put and own is None:
                    namespace.pop('draw', None)  # type: ignore[union-attr]
                elif put:
                    namespace['draw'] = own  # type: ignore[index]

        try:
            mapped.do_draw = judged_do_draw
        except (AttributeError, TypeError):
            return
        self._mapped, self._do_draw, self._draw_wrapper = mapped, do_draw, judged_do_draw

    def remove(self) -> None:
        self._judged = None
        try:
            self.handle.inner_test = self.inner
        except AttributeError:
            pass
        state = self._state
        if state is not None and state.__dict__.get('execute_once') is self._wrapper:
            state.execute_once = self._execute_once
        self._state = None
        mapped = self._mapped
        if mapped is not None and mapped.__dict__.get('do_draw') is self._draw_wrapper:
            mapped.do_draw = self._do_draw
        self._mapped = None


class _Discards:
    """Which code threw away a generated example (rule 43 at run time).

    Hypothesis drops an example, or ends it as valid, when its test raises one of its own
    control exceptions: ``UnsatisfiedAssumption`` (what ``assume(False)`` and ``reject()``
    raise), ``StopTest``, ``BackendCannotProceed``. A property may discard its own inputs
    through ``assume``; code under the ``src`` roots that raises one of them hides exactly
    the inputs it would answer wrong (found by a walk of ``BaseException.__subclasses__()``,
    with no import rule 43 reads). So one of these exceptions is judged twice:

    * it must have been raised by Hypothesis's own code: the innermost frame of its
      traceback is in Hypothesis's package (``assume`` itself, the engine). Raised
      anywhere else (the code under test, a frame compiled under another file's name, a
      traceback borrowed from another exception, a C function), it is a discard that did
      not come from Hypothesis;
    * the code that asked Hypothesis for it, the nearest frame above that is code of the
      repository and not module-level code, must not be under ``src``. Frames outside the
      repository (the standard library, installed packages, oracle-guard's own wrappers)
      only call what they were handed: ``functools.singledispatch(assume)(False)`` or an
      ``ExitStack`` callback in ``src`` is ``src``'s call. Generated code
      (``<...>`` file names) counts as the module whose globals it runs in: a ``dedupe``
      that ``src`` compiles under ``"<dd>"`` is ``src``'s. Globals whose
      ``__file__`` says a file outside ``src`` must be that module's own namespace, by
      identity (``_module_globals``); a copy saying a test file is judged against the
      code that made it, since a copy is anybody's to fill.
    """

    CONTROL = ('UnsatisfiedAssumption', 'StopTest', 'BackendCannotProceed')

    def __init__(self, root: str, is_src: Any) -> None:
        self.root = _real(root)
        self.is_src = is_src
        self._hypothesis: str | None = None
        self._rel: dict[str, str | None] = {}  # frame file -> repository path, or None

    def _hypothesis_folder(self) -> str:
        if self._hypothesis is None:
            module = sys.modules.get('hypothesis')
            file = getattr(module, '__file__', None)
            self._hypothesis = os.path.dirname(_real(file)) + os.sep \
                if isinstance(file, str) else '\0'
        return self._hypothesis

    def _repo_path(self, file: str) -> str | None:
        if file not in self._rel:
            real = _real(file)
            self._rel[file] = os.path.relpath(real, self.root).replace(os.sep, '/') \
                if real.startswith(self.root + os.sep) else None
        return self._rel[file]

    def _where(self, code: Any, line: int) -> str:
        file = code.co_filename if isinstance(code.co_filename, str) else '?'
        rel = self._repo_path(file) if not file.startswith('<') else None
        return f'{rel or file}:{line}'

    @staticmethod
    def _module_globals(names: Any, file: str, rel: str | None) -> bool:
        """Whether ``names`` are the globals of the module of ``file``: for a file of the
        repository, a module the plugin's loader or pytest's rewriter ran from it
        (``source_code.LOADED``, by identity); elsewhere, the module of that file
        that ``sys.modules`` holds under the name they give."""
        if rel is not None:
            found = source_code.module_file(names)
            return found is not None and same_file(found, file)
        module = sys.modules.get(names.get('__name__')) if isinstance(
            names.get('__name__'), str) else None
        own = getattr(module, '__file__', None)
        return getattr(module, '__dict__', None) is names and isinstance(own, str) and \
            same_file(own, file)

    def by_src(self, exc: BaseException) -> str | None:
        """Where the discard came from (``path:line``, with why), or None for one that
        Hypothesis raised at the request of code outside ``src``."""
        errors = sys.modules.get('hypothesis.errors')
        control = tuple(c for c in (getattr(errors, name, None) for name in self.CONTROL)
                        if isinstance(c, type))
        if not control or not isinstance(exc, control):
            return None
        frames = []
        globals_of = []
        tb = exc.__traceback__
        while tb is not None:
            frames.append((tb.tb_frame.f_code, tb.tb_lineno))
            globals_of.append(tb.tb_frame.f_globals)
            tb = tb.tb_next
        # frames[0]: the counting wrapper (the inner test's or the test case's)
        frames, globals_of = frames[1:], globals_of[1:]
        hypothesis = self._hypothesis_folder()

        def hypothesis_code(code: Any) -> bool:
            file = code.co_filename
            # Every discard walks its traceback: each file's real path is looked up once.
            return isinstance(file, str) and not file.startswith('<') and \
                _real(file).startswith(hypothesis)

        if not frames or not hypothesis_code(frames[-1][0]):
            real = [(code, line) for code, line in frames
                    if isinstance(code.co_filename, str) and not code.co_filename.startswith('<')
                    and code.co_name != '<module>']
            where = self._where(*(real or frames)[-1]) if frames else 'the test call itself'
            return f'{where} (not raised by Hypothesis)'
        for (code, line), names in zip(reversed(frames), reversed(globals_of)):
            file = code.co_filename
            if code.co_name == '<module>' or hypothesis_code(code):
                continue
            at = f':{line}'
            generated = isinstance(file, str) and file.startswith('<')
            if generated:
                at = f' (compiled as {file}, line {line})'
                file = names.get('__file__')  # generated code: the module it runs in
            if not isinstance(file, str) or file.startswith('<'):
                continue
            rel = self._repo_path(file)
            if rel is not None and self.is_src(rel):
                return rel + at
            if generated and not self._module_globals(names, file, rel):
                # globals that say a file that is not src but are not that module's: a copy
                # made by whoever compiled the code, judged against it
                return f'code compiled as {code.co_filename}, line {line}, in globals that ' \
                    f'say {rel or file} but are not that module\'s'
            if rel is None:  # outside the repository: it calls what it was handed
                continue
            return None
        return None


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
