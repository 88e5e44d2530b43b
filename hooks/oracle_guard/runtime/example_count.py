"""The examples a Hypothesis test drew during one call, and the judge of each control
exception that ended one of them (rule 43 at run time): what the run record's ``call`` event
says of a property."""
from __future__ import annotations

import builtins
import functools
import os
import sys
import types
from typing import Any

from oracle_guard.runtime import source_code
from oracle_guard.runtime.code_identity import real_path
from oracle_guard.runtime.code_identity import same_file

# As source_code's: the builtins as the plugin found them when it loaded serve the record.
__builtins__ = vars(builtins).copy()  # type: ignore[assignment]


class ExampleCounter:
    """Counts the calls of a Hypothesis test's inner function during one test call, and
    judges every control exception of Hypothesis that ends one of its test cases (rule 43
    at run time, ``Discards``): those that come out of the inner test, and those raised
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
                 discards: Discards | None = None) -> None:
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
    def install(cls, obj: Any, discards: Discards | None = None) -> ExampleCounter | None:
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


class Discards:
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
        self.root = real_path(root)
        self.is_src = is_src
        self._hypothesis: str | None = None
        self._rel: dict[str, str | None] = {}  # frame file -> repository path, or None

    def _hypothesis_folder(self) -> str:
        if self._hypothesis is None:
            module = sys.modules.get('hypothesis')
            file = getattr(module, '__file__', None)
            self._hypothesis = os.path.dirname(real_path(file)) + os.sep \
                if isinstance(file, str) else '\0'
        return self._hypothesis

    def _repo_path(self, file: str) -> str | None:
        if file not in self._rel:
            real = real_path(file)
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
                real_path(file).startswith(hypothesis)

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
