"""Hypothesis's drawing code, kept when the plugin starts in the gate's runs (rule 43).

OG717 judges the control exceptions that end a property's test cases, and the plugin puts
its judges where Hypothesis draws (``MappedStrategy.do_draw``, ``ConjectureData.draw`` for
a map's inner draw, ``StateForActualGivenExecution.execute_once``) at each property call.
Code under ``src`` runs before that call (when the property module imports it) and can
change Hypothesis in memory so that a discard never reaches a judge: a replaced
``SearchStrategy.map`` making a subclass that holds Hypothesis's own ``do_draw``, a
replaced ``MappedStrategy.do_draw`` that takes its function back out of the plugin's
judging wrapper, compiled under a generated name, a ``ConjectureData.draw`` that draws
again after a discard.

So when the plugin loads under ``oracle-guard ci`` (before any conftest or ``src`` module
runs) it imports Hypothesis, if installed, and keeps, by identity:

* the whole ``__dict__`` of every class that draws or runs test cases: every subclass of
  ``SearchStrategy`` that exists then, ``ConjectureData``, the choice providers,
  ``ConjectureRunner`` and ``StateForActualGivenExecution``, with their bases;
* every function and class bound at the top of a Hypothesis module (``assume`` and
  ``reject`` of ``hypothesis.control`` among them);
* the code object of each of those functions (a ``__code__`` assigned in place).

At each property call, before the plugin puts its wrappers on and again before it takes
them off, ``changes`` names what is not the object kept (its own wrappers aside, known by
identity), and every subclass of a class the plugin wraps that was made since and
overrides the wrapped method (a draw past the wrapper, whatever function it holds).
A property module imports Hypothesis anyway: only a run with no property pays the import.

The gate's reference run (``SRC_ONLY_ENV`` set) leaves the comparison out: the only code of
the pull request there is ``src``, which rules 43 and 54 bound; the test command, where
the pull request's conftests and test modules run, keeps it.
"""
from __future__ import annotations

import importlib.util
import operator
import os
import sys
import types
from collections.abc import Iterator
from typing import Any

# Set by the gate for its reference run, whose only code of the pull request is src: there
# the ways src has to reach Hypothesis's classes without importing them (rule 43) are
# interpreter capabilities that rule 54 asks a person about, so the comparison is left out.
SRC_ONLY_ENV = 'ORACLE_GUARD_SRC_ONLY'
# (module, class): the roots of the classes that draw or run test cases.
ROOTS = (('hypothesis.strategies._internal.strategies', 'SearchStrategy'),
         ('hypothesis.internal.conjecture.data', 'ConjectureData'),
         ('hypothesis.internal.conjecture.providers', 'PrimitiveProvider'),
         ('hypothesis.internal.conjecture.engine', 'ConjectureRunner'),
         ('hypothesis.core', 'StateForActualGivenExecution'))
# (module, class, attribute): where the plugin's per-call judges stand (example_count).
WRAPPED = (('hypothesis.strategies._internal.strategies', 'MappedStrategy', 'do_draw'),
           ('hypothesis.internal.conjecture.data', 'ConjectureData', 'draw'),
           ('hypothesis.core', 'StateForActualGivenExecution', 'execute_once'))
_is = operator.is_
_code_of = operator.attrgetter('__code__')


def _in_hypothesis(name: Any) -> bool:
    return isinstance(name, str) and (name == 'hypothesis' or name.startswith('hypothesis.'))


def _subclasses(cls: type) -> Iterator[type]:
    todo = [cls]
    seen: set[int] = set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        try:
            todo.extend(type.__subclasses__(current))
        except TypeError:
            continue


def _functions(value: Any) -> Iterator[types.FunctionType]:
    """The functions a namespace value runs: itself, a static or class method's, a
    property's accessors."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    elif isinstance(value, property):
        for accessor in (value.fget, value.fset, value.fdel):
            if isinstance(accessor, types.FunctionType):
                yield accessor
        return
    if isinstance(value, types.FunctionType):
        yield value


def _same(get: Any, namespace: dict[str, Any], values: tuple[Any, ...]) -> bool:
    try:
        now = get(namespace)
    except KeyError:
        return False
    return all(map(_is, now, values))  # the module's __name__ last: zip stops before it


class DrawingCode:
    """What Hypothesis's drawing code was when the plugin loaded."""

    def __init__(self) -> None:
        # (label, namespace, names, values, whole, get): ``whole`` for a class (a name
        # added or taken away counts), not for a module (its submodules and caches come and
        # go); ``get`` returns a module's kept names' values as a tuple
        self.namespaces: list[tuple[str, Any, tuple[str, ...], tuple[Any, ...], bool,
                                    Any]] = []
        self.functions: tuple[types.FunctionType, ...] = ()
        self.codes: tuple[types.CodeType, ...] = ()
        self.labels: dict[int, str] = {}  # id(function) -> 'Class.name' (held by functions)
        self.kept: set[int] = set()  # ids of the classes kept (held by namespaces)
        self.wrapped: list[tuple[type, str]] = []

    @classmethod
    def keep(cls) -> DrawingCode | None:
        """Import Hypothesis (when it is installed) and keep its drawing code."""
        try:
            if importlib.util.find_spec('hypothesis') is None:
                return None
            import hypothesis  # noqa: F401 -- loads the engine and the strategies
        except Exception:  # noqa: BLE001 -- a Hypothesis that does not import: none kept
            return None
        kept = cls()
        modules = [(name, module) for name, module in list(sys.modules.items())
                   if _in_hypothesis(name) and isinstance(module, types.ModuleType)]
        classes: dict[int, type] = {}
        for module_name, class_name in ROOTS:
            root = getattr(sys.modules.get(module_name), class_name, None)
            if not isinstance(root, type):
                continue
            for found in _subclasses(root):
                for base in found.__mro__:
                    if base is found or _in_hypothesis(getattr(base, '__module__', None)):
                        classes.setdefault(id(base), base)
        functions: dict[int, tuple[types.FunctionType, str]] = {}
        for found in classes.values():
            namespace = found.__dict__
            names = tuple(namespace)
            values = tuple(namespace[name] for name in names)
            label = getattr(found, '__qualname__', found.__name__)
            kept.namespaces.append((label, namespace, names, values, True, None))
            kept.kept.add(id(found))
            for name, value in zip(names, values):
                for function in _functions(value):
                    functions.setdefault(id(function), (function, f'{label}.{name}'))
        for module_name, module in modules:
            namespace = module.__dict__
            names = tuple(name for name, value in list(namespace.items())
                          if isinstance(value, (types.FunctionType, type)))
            values = tuple(namespace[name] for name in names)
            get = operator.itemgetter(*names, '__name__') if names else None
            kept.namespaces.append((module_name, namespace, names, values, False, get))
            for name, value in zip(names, values):
                if isinstance(value, types.FunctionType):
                    functions.setdefault(id(value), (value, f'{module_name}.{name}'))
        kept.functions = tuple(function for function, _ in functions.values())
        kept.codes = tuple(function.__code__ for function in kept.functions)
        kept.labels = {key: label for key, (_, label) in functions.items()}
        for module_name, class_name, attribute in WRAPPED:
            found = getattr(sys.modules.get(module_name), class_name, None)
            if isinstance(found, type) and id(found) in kept.kept:
                kept.wrapped.append((found, attribute))
        return kept

    def changes(self, root: str, own: tuple[Any, ...] = ()) -> list[str]:
        """What differs from what was kept: one line per change, naming the code that
        stands there now. ``own``: the plugin's wrappers in place for this call."""
        found: list[str] = []
        own_ids = {id(wrapper) for wrapper in own if wrapper is not None}
        for label, namespace, names, values, whole, get in self.namespaces:
            # A class's values in its dict's order (a mappingproxy's get is slow); a
            # module's by name (only its functions and classes were kept).
            if not (len(namespace) == len(names) and all(map(_is, namespace.values(), values))
                    if whole else get is None or _same(get, namespace, values)):
                found.extend(self._differences(label, namespace, names, values, whole,
                                               own_ids, root))
        if not all(map(_is, map(_code_of, self.functions), self.codes)):
            for function, code in zip(self.functions, self.codes):
                if function.__code__ is not code:
                    found.append(f"Hypothesis's {self.labels.get(id(function), '?')} runs "
                                 f'other code (by {origin(function, root)})')
        for cls, attribute in self.wrapped:
            for sub in _subclasses(cls):
                if id(sub) not in self.kept and attribute in sub.__dict__:
                    value = sub.__dict__[attribute]
                    held = self.labels.get(id(value)) if any(
                        value is f for f in _functions(value)) else None
                    what = f"Hypothesis's own {held}, out of the plugin's reach" if held \
                        else f'by {origin(value, root)}'
                    found.append(f'a subclass of {cls.__name__} made after Hypothesis '
                                 f'loaded ({sub.__name__}, claiming {sub.__module__}) has '
                                 f'its own {attribute} ({what})')
        return found

    @staticmethod
    def _differences(label: str, namespace: Any, names: tuple[str, ...],
                     values: tuple[Any, ...], whole: bool, own_ids: set[int],
                     root: str) -> list[str]:
        found = []
        missing = object()
        for name, value in zip(names, values):
            now = namespace.get(name, missing)
            if now is value or id(now) in own_ids:
                continue
            if now is missing:
                found.append(f"Hypothesis's {label}.{name} was removed")
            else:
                found.append(f"Hypothesis's {label}.{name} was replaced (by "
                             f'{origin(now, root)})')
        if whole:
            for name in set(namespace) - set(names):
                if name == '__slotnames__' and isinstance(namespace[name], list) and \
                        all(isinstance(slot, str) for slot in namespace[name]):
                    continue  # copyreg's cache of the slot names (a strategy copied)
                found.append(f"Hypothesis's {label}.{name} was added (by "
                             f'{origin(namespace[name], root)})')
        return found


def origin(value: Any, root: str) -> str:
    """Where the code of ``value`` comes from: ``path:line`` (relative to ``root`` when
    inside it), a generated file name with the module whose globals it runs in, or what
    ``value`` is when it holds no Python code."""
    function = next(_functions(value), None)
    function = getattr(function, '__func__', function)
    code = getattr(function, '__code__', None)
    if not isinstance(code, types.CodeType):
        return f'a {type(value).__name__} object'
    file = code.co_filename

    def shown(name: str) -> str:
        try:
            real = os.path.realpath(name)
            base = os.path.realpath(root)
        except (TypeError, ValueError, OSError):
            return str(name)
        if real.startswith(base + os.sep):
            return os.path.relpath(real, base).replace(os.sep, '/')
        return name

    if isinstance(file, str) and file.startswith('<'):
        claimed = getattr(function, '__globals__', {}).get('__file__')
        if isinstance(claimed, str):  # as Discards names generated code (its globals')
            return f'{shown(claimed)} (compiled as {file}, line {code.co_firstlineno})'
        return f'code compiled as {file}, line {code.co_firstlineno}'
    return f'{shown(str(file))}:{code.co_firstlineno}'
