"""Whether a test's own code object was entered while the test was called: a watch through
``sys.setprofile``, started as late as the call allows (the run record's ``call`` event)."""
from __future__ import annotations

import builtins
import sys
import types
from collections.abc import Generator
from typing import Any

from oracle_guard.runtime.hook_marker import hookimpl

# As source_code's: the builtins as the plugin found them when it loaded serve the record.
__builtins__ = vars(builtins).copy()  # type: ignore[assignment]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from oracle_guard.runtime.run_recorder import RunRecorder


class CodeWatch:
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


def watch_test_method(case: Any, watch: CodeWatch) -> None:
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


def unwatch_test_method(case: Any) -> None:
    found = case.__dict__.get('_callTestMethod')
    if getattr(found, '_oracle_guard_watch', False):
        del case.__dict__['_callTestMethod']


class WatchStart:
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

    def _watch(self, item: Any, direct: bool) -> CodeWatch | None:
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
