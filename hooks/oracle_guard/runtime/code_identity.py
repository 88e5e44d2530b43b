"""Which code ran: a file's real path (looked up once), the functions a test's own function
calls on its way, the classes it derives from, and whether a module's code is the code
compiled from its file's source. The run record's judges of a test call."""
from __future__ import annotations

import builtins
import hashlib
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

from oracle_guard.runtime import source_code
from oracle_guard.runtime.source_code import codes_by_place as _codes_by_place

# As source_code's: the builtins as the plugin found them when it loaded serve the record.
__builtins__ = vars(builtins).copy()  # type: ignore[assignment]


_REAL: dict[str, str] = {}  # file name -> its real path, once per process


def real_path(name: str) -> str:
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
        return real_path(a) == real_path(b)
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


def functions_in(values: list[Any], seen: dict[int, Any], own: set[Any]
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
        # Each value once: two classes that name each other (bidict's ``_inv_cls``) would
        # otherwise put each other back for ever.
        if id(value) in seen or len(seen) > 1_000_000:
            continue
        seen[id(value)] = value
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
