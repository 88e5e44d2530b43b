"""Reading whole strategies from source (domain lock version 2), without importing anything.

``StrategyReader.form(node)`` turns a strategy expression into its canonical form
(``strategy_form``): nested strategies, defaults made explicit, ``|`` as ``one_of``,
``.filter/.map/.flatmap`` as code digests, ``@composite`` functions (their body's
digest and the strategies they draw), functions that return a strategy, and names
imported from helper modules under the tests roots: the import is followed, so a
narrowed helper narrows every property that uses it. What cannot be read becomes an
``unresolved`` node, which the hook reports as checked at run time.
"""
from __future__ import annotations

import ast
import posixpath
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs import time on the hooks' hot path
    from typing import Any
    from typing import Callable
    from typing import Mapping

    # (importing path, imported module name, relative level) -> (path, syntax tree)
    ModuleSource = Callable[[str, str, int], 'tuple[str, ast.Module] | None']

from oracle_guard.oracle.domain_lock import is_unverifiable
from oracle_guard.reading.module_values import ModuleReader
from oracle_guard.oracle.strategy_form import ALIASES
from oracle_guard.oracle.strategy_form import code_form
from oracle_guard.oracle.strategy_form import expr
from oracle_guard.oracle.strategy_form import flat_branches
from oracle_guard.oracle.strategy_form import is_unresolved
from oracle_guard.oracle.strategy_form import node
from oracle_guard.oracle.strategy_form import PARAMETERS
from oracle_guard.oracle.strategy_form import POSITIONAL
from oracle_guard.oracle.strategy_form import strategy_composite
from oracle_guard.oracle.strategy_form import TEXT_ALPHABET
from oracle_guard.oracle.strategy_form import TRANSFORMS
from oracle_guard.oracle.strategy_form import unresolved

STRATEGIES = 'hypothesis.strategies.'
COMPOSITE = 'hypothesis.strategies.composite'
_MAX_DEPTH = 40  # forms nest through helpers, composites and recursive bases
_MAX_RANGE = 10_000
_NO_LOCALS: Mapping[str, Any] = {}
_UNKNOWN = object()  # a parameter whose value the call does not say


def module_candidates(importer: str, module: str, level: int, roots: list[str]) -> list[str]:
    """Repository paths a test module's ``import`` may mean, most specific first.

    ``from .strategies import x`` is relative to the importing package; an absolute
    ``strategies`` or ``tests.strategies`` may be found from the importer's folder (pytest
    puts a test file's folder on sys.path), its parents, a tests root or the repository root.
    """
    parts = module.split('.') if module else []
    if level:
        base = posixpath.dirname(importer)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        stems = [posixpath.join(base, *parts)] if parts else []
    else:
        folders = []
        here = posixpath.dirname(importer)
        while True:
            folders.append(here)
            if not here:
                break
            here = posixpath.dirname(here)
        folders += [r.rstrip('/') for r in roots]
        stems = [posixpath.join(f, *parts) if f else posixpath.join(*parts)
                 for f in dict.fromkeys(folders)] if parts else []
    found = []
    for stem in stems:
        found += [f'{stem}.py', f'{stem}/__init__.py']
    return found


def _canonical(name: str) -> str:
    for private in ('hypothesis.strategies._internal.core.', 'hypothesis.strategies._internal.'):
        if name.startswith(private):
            return STRATEGIES + name.rsplit('.', 1)[-1]
    return name


class StrategyReader:
    """Forms of the strategy expressions of one module (and the helpers it imports)."""

    def __init__(self, path: str, tree: ast.Module, modules: ModuleSource | None = None,
                 cache: dict[str, StrategyReader | None] | None = None) -> None:
        self.path = path
        self.values = ModuleReader(tree)
        self.modules = modules
        self.cache = cache if cache is not None else {}
        self.cache.setdefault(path, self)
        self.used: set[str] = set()  # helper modules a form was read from
        self.functions: dict[str, list[ast.AST]] = {}
        self.imports: dict[str, tuple[str, str, int]] = {}  # name -> (module, attr, level)
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(stmt.name, []).append(stmt)
            elif isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if alias.name != '*':
                        self.imports[alias.asname or alias.name] = (
                            stmt.module or '', alias.name, stmt.level)
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname:
                        self.imports[alias.asname] = (alias.name, '', 0)
                    else:
                        top = alias.name.split('.')[0]
                        self.imports[top] = (top, '', 0)

    # -- names -----------------------------------------------------------------------------
    def _callee(self, func: ast.AST) -> str:
        return _canonical(self.values.resolve(func))

    def _helper(self, module: str, level: int) -> StrategyReader | None:
        if self.modules is None or (not level and module.split('.')[0] == 'hypothesis'):
            return None
        key = f'{self.path}|{level}|{module}'
        if key in self.cache:
            return self.cache[key]
        self.cache[key] = None  # an import cycle reads as unresolved
        found = self.modules(self.path, module, level)
        reader = None
        if found is not None:
            path, tree = found
            reader = self.cache.get(path) or StrategyReader(path, tree, self.modules, self.cache)
        self.cache[key] = reader
        return reader

    def _imported(self, name: str, attrs: list[str]) -> tuple[StrategyReader, str] | None:
        """The helper module and the name in it that ``name.attrs`` refers to."""
        if name not in self.imports:
            return None
        module, attr, level = self.imports[name]
        if attr:
            reader = self._helper(module, level)
            if reader is not None and not attrs:
                return reader, attr
            # `from tests import strategies` then strategies.codes
            module = f'{module}.{attr}' if module else attr
        reader = self._helper(module, level) if attrs else None
        while reader is None and len(attrs) > 1:
            module, attrs = f'{module}.{attrs[0]}', attrs[1:]
            reader = self._helper(module, level)
        if reader is None or len(attrs) != 1:
            return None
        return reader, attrs[0]

    def _follow(self, target: ast.AST) -> tuple[StrategyReader, str] | None:
        """A Name or dotted Attribute naming something in a helper module."""
        attrs: list[str] = []
        while isinstance(target, ast.Attribute):
            attrs.insert(0, target.attr)
            target = target.value
        if not isinstance(target, ast.Name) or target.id in self.values.bindings or \
                target.id in self.functions:
            return None
        found = self._imported(target.id, attrs)
        if found is not None:
            self.used.add(found[0].path)
            self.used.update(found[0].used)
        return found

    # -- forms -----------------------------------------------------------------------------
    def form(self, node_: ast.AST | None, depth: int = 0, local: Mapping[str, Any] = _NO_LOCALS
             ) -> Any:
        if node_ is None:
            return unresolved('...', 'inferred from the type hints at run time')
        text = _text(node_)
        if depth > _MAX_DEPTH:
            return unresolved(text, 'strategies nested too deeply')
        if isinstance(node_, ast.Call) and isinstance(node_.func, ast.Attribute) and \
                node_.func.attr in TRANSFORMS and not self._callee(node_.func).startswith(
                    STRATEGIES):
            base = self.form(node_.func.value, depth + 1, local)
            if len(node_.args) != 1 or node_.keywords:
                return unresolved(text, f'.{node_.func.attr}() takes one function')
            step = {node_.func.attr: self.code(node_.args[0], depth)}
            if isinstance(base, dict) and 'strategy' in base:
                return {**base, 'transforms': [*base.get('transforms', []), step]}
            return base
        if isinstance(node_, ast.BinOp) and isinstance(node_.op, ast.BitOr):
            left = self.form(node_.left, depth + 1, local)
            right = self.form(node_.right, depth + 1, local)
            return node('one_of', branches=flat_branches([left, right]))
        if isinstance(node_, ast.Name):
            if node_.id in local:
                value = local[node_.id]
                if isinstance(value, dict) and 'strategy' in value:
                    return value
                return unresolved(text, f'{node_.id} is a parameter, known only at run time')
            bound = self.values.binding(node_.id)
            if bound is not None:
                return self.form(bound, depth + 1, local)
            if node_.id in self.values.bindings:
                return unresolved(text, f'{node_.id} is bound more than once')
        if isinstance(node_, (ast.Name, ast.Attribute)):
            found = self._follow(node_)
            if found is not None:
                reader, name = found
                return reader.form_of_name(name, depth + 1)
            return unresolved(text, f'{text} is not a module-level strategy or an import '
                                    'from the tests (a local variable, a package import)')
        if not isinstance(node_, ast.Call):
            return unresolved(text, 'not a strategy expression')
        return self._call(node_, depth, local)

    def form_of_name(self, name: str, depth: int) -> Any:
        bound = self.values.binding(name)
        if bound is not None:
            return self.form(bound, depth)
        return unresolved(name, f'{name} is not a module-level strategy of {self.path}')

    def _call(self, call: ast.Call, depth: int, local: Mapping[str, Any]) -> Any:
        text = _text(call)
        dotted = self._callee(call.func)
        if dotted.startswith(STRATEGIES):
            return self._strategy(dotted[len(STRATEGIES):], call, depth, local)
        function = self._function(call.func)
        if function is not None:
            reader, definition = function
            return reader._function_form(definition, call, self, depth, local)
        return unresolved(text, f'{_text(call.func)}() is not a strategy oracle-guard can read')

    def _function(self, func: ast.AST) -> tuple[StrategyReader, ast.AST] | None:
        if isinstance(func, ast.Name) and func.id in self.functions:
            defs = self.functions[func.id]
            return (self, defs[0]) if len(defs) == 1 and func.id not in \
                self.values.bindings else None
        found = self._follow(func)
        if found is None:
            return None
        reader, name = found
        defs = reader.functions.get(name, [])
        return (reader, defs[0]) if len(defs) == 1 and name not in reader.values.bindings \
            else None

    def _function_form(self, definition: Any, call: ast.Call, caller: StrategyReader,
                       depth: int, local: Mapping[str, Any]) -> Any:
        """A @composite strategy, or a plain function returning one strategy expression."""
        composite = any(self._callee(d) == COMPOSITE for d in definition.decorator_list)
        args = [caller._argument(a, depth, local) for a in call.args]
        kwargs = {k.arg or '**': caller._argument(k.value, depth, local)
                  for k in call.keywords}
        params = self._bind(definition, args[::1], kwargs, composite)
        if composite:
            draw = definition.args.args[0].arg if definition.args.args else 'draw'
            draws = []
            for sub in sorted((n for n in ast.walk(definition) if isinstance(n, ast.Call) and
                               isinstance(n.func, ast.Name) and n.func.id == draw and n.args),
                              key=lambda n: (n.lineno, n.col_offset)):
                draws.append(self.form(sub.args[0], depth + 1, params))
            arguments = {k: (unresolved(k, 'a parameter with no value in this call')
                             if v is _UNKNOWN else v) for k, v in params.items()}
            return strategy_composite(definition.name, code_form(definition), arguments,
                                      draws)
        body = [s for s in definition.body if not (
            isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            if definition.decorator_list:
                return unresolved(_text(call), f'{definition.name} is decorated')
            return self.form(body[0].value, depth + 1, params)
        return unresolved(_text(call), f'{definition.name}() is more than one return of a '
                                       'strategy')

    def _bind(self, definition: Any, args: list[Any], kwargs: dict[str, Any],
              composite: bool) -> dict[str, Any]:
        """Parameter -> the value this call gives it (or its literal default)."""
        spec = definition.args
        positional = [a.arg for a in [*spec.posonlyargs, *spec.args]]
        if composite:
            positional = positional[1:]  # draw
        defaults = dict(zip(positional[::-1], [self._argument(d, 1, _NO_LOCALS) for d in
                                                spec.defaults[::-1]]))
        for arg, default in zip(spec.kwonlyargs, spec.kw_defaults):
            if default is not None:
                defaults[arg.arg] = self._argument(default, 1, _NO_LOCALS)
        bound: dict[str, Any] = {}
        for name in [*positional, *(a.arg for a in spec.kwonlyargs)]:
            bound[name] = defaults.get(name, _UNKNOWN)
        for name, value in zip(positional, args):
            bound[name] = value
        for name, value in kwargs.items():
            if name in bound:
                bound[name] = value
        for extra in (spec.vararg, spec.kwarg):
            if extra is not None:
                bound[extra.arg] = _UNKNOWN
        return {k: (_UNKNOWN if is_unresolved(v) else v) for k, v in bound.items()}

    def _argument(self, arg: ast.AST, depth: int, local: Mapping[str, Any]) -> Any:
        """An argument of a helper call: a literal, else a strategy form."""
        value = self.values.value(arg)
        if not is_unverifiable(value):
            return value
        return self.form(arg, depth + 1, local)

    def code(self, fn: ast.AST, depth: int = 0) -> Any:
        """The code form of a function argument (.filter/.map, recursive's extend)."""
        if isinstance(fn, ast.Lambda):
            return code_form(fn)
        if isinstance(fn, ast.Name) and fn.id in self.functions and \
                len(self.functions[fn.id]) == 1:
            return code_form(self.functions[fn.id][0])
        if isinstance(fn, ast.Name) and self.values.binding(fn.id) is not None and depth < 4:
            return self.code(self.values.binding(fn.id), depth + 1)  # type: ignore[arg-type]
        if isinstance(fn, (ast.Name, ast.Attribute)):
            found = self._follow(fn)
            if found is not None:
                reader, name = found
                defs = reader.functions.get(name, [])
                if len(defs) == 1:
                    return code_form(defs[0])
            # a builtin or a library function: named, not digested
            name = fn.id if isinstance(fn, ast.Name) else fn.attr
            return code_form(ast.Name(name, ast.Load()), name)
        return unresolved(_text(fn), 'not a function oracle-guard can read')

    # -- public strategies -------------------------------------------------------------------
    def _strategy(self, name: str, call: ast.Call, depth: int, local: Mapping[str, Any]) -> Any:
        text = _text(call)
        if any(k.arg is None for k in call.keywords) or \
                any(isinstance(a, ast.Starred) for a in call.args):
            return unresolved(text, '*args/**kwargs cannot be read')
        if name == 'one_of':
            items = call.args
            if len(items) == 1 and isinstance(items[0], (ast.List, ast.Tuple)):
                items = items[0].elts
            return node('one_of', branches=flat_branches([self.form(a, depth + 1, local)
                                                  for a in items]))
        if name == 'tuples':
            return node('tuples', args=[self.form(a, depth + 1, local) for a in call.args])
        if name == 'builds':
            if not call.args:
                return unresolved(text, 'builds() without a target')
            return node('builds', target=expr(_text(call.args[0])),
                        args=[self.form(a, depth + 1, local) for a in call.args[1:]],
                        kwargs={k.arg: self.form(k.value, depth + 1, local)
                                for k in sorted(call.keywords, key=lambda k: k.arg or '')})
        if name not in PARAMETERS:
            return unresolved(text, f'{name}() is not a strategy oracle-guard reads statically')
        given: dict[str, ast.AST] = dict(zip(POSITIONAL.get(name, ()), call.args))
        if len(call.args) > len(POSITIONAL.get(name, ())):
            return unresolved(text, f'{name}() with more positional arguments than it takes')
        for kw in call.keywords:
            given[ALIASES.get(name, {}).get(kw.arg, kw.arg)] = kw.value  # type: ignore[arg-type]
        kinds = {p: k for p, _, k in PARAMETERS[name]}
        params: dict[str, Any] = {}
        for param, arg in given.items():
            params[param] = self._parameter(kinds.get(param, 'exact'), arg, depth, local)
        if name == 'text' and 'alphabet' not in params:
            params['alphabet'] = TEXT_ALPHABET
        return node(name, **params)

    def _parameter(self, kind: str, arg: ast.AST, depth: int, local: Mapping[str, Any]) -> Any:
        text = _text(arg)
        if kind == 'strategy':
            return self.form(arg, depth + 1, local)
        if kind == 'code':
            return self.code(arg)
        if kind == 'mapping':
            if isinstance(arg, ast.Constant) and arg.value is None:
                return None
            if isinstance(arg, ast.Name) and self.values.binding(arg.id) is not None:
                return self._parameter(kind, self.values.binding(arg.id), depth + 1, local)  # type: ignore[arg-type]
            if not isinstance(arg, ast.Dict) or any(k is None for k in arg.keys):
                return unresolved(text, 'not a literal dict of strategies')
            mapping = {}
            for key, value in zip(arg.keys, arg.values):
                literal = self.values.value(key)  # type: ignore[arg-type]
                label = literal if isinstance(literal, str) else _text(key)  # type: ignore[arg-type]
                mapping[label] = self.form(value, depth + 1, local)
            return mapping
        if kind == 'alphabet':
            return self._alphabet(arg, depth, local)
        if kind == 'elements':
            return self._elements(arg)
        if isinstance(arg, ast.Lambda):
            return code_form(arg)
        if isinstance(arg, ast.Name) and arg.id in local:
            value = local[arg.id]
            if value is _UNKNOWN or isinstance(value, dict):
                return unresolved(text, f'{arg.id} is a parameter, known only at run time')
            return value
        value = self.values.value(arg)
        if is_unverifiable(value):
            if isinstance(arg, ast.Call) and not any(
                    isinstance(n, ast.Name) and n.id in local for n in ast.walk(arg)):
                return expr(text)  # date(1970, 1, 1): compared as written
            if kind in ('min', 'max', 'size_min', 'flag', 'narrowing_flag'):
                return unresolved(text, value.why)
            return expr(text)
        return value

    def _alphabet(self, arg: ast.AST, depth: int, local: Mapping[str, Any]) -> Any:
        value = self.values.value(arg)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return ''.join(value) if all(len(v) == 1 for v in value) else value
        if isinstance(arg, ast.Set):
            items = [self.values.value(e) for e in arg.elts]
            if all(isinstance(v, str) and len(v) == 1 for v in items):
                return ''.join(sorted(items))
        if isinstance(arg, ast.Constant) and arg.value is None:
            return None
        return self.form(arg, depth + 1, local)

    def _elements(self, arg: ast.AST) -> Any:
        """sampled_from's elements: a literal sequence, a string, a range; else unresolved."""
        if isinstance(arg, ast.Name) and self.values.binding(arg.id) is not None:
            bound = self.values.binding(arg.id)
            if isinstance(bound, (ast.List, ast.Tuple, ast.Constant, ast.Call)):
                return self._elements(bound)  # type: ignore[arg-type]
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and \
                arg.func.id == 'range' and 'range' not in self.values.bindings:
            bounds = [self.values.value(a) for a in arg.args]
            if bounds and all(isinstance(b, int) and not isinstance(b, bool) for b in bounds) \
                    and len(bounds) <= 3:
                try:
                    values = range(*bounds)
                except ValueError:
                    values = range(0)
                if len(values) <= _MAX_RANGE:
                    return list(values)
        value = self.values.value(arg)
        if isinstance(value, str):
            return list(value)
        if isinstance(value, list):
            return value
        if isinstance(arg, (ast.List, ast.Tuple)):
            return [self.values.value(e) if not is_unverifiable(self.values.value(e))
                    else expr(_text(e)) for e in arg.elts]
        return unresolved(_text(arg), 'the elements are not a literal sequence')


def data_draws(reader: StrategyReader, func: ast.AST, param: str) -> list[Any]:
    """What a test body draws through ``data.draw(...)`` (st.data()), in source order."""
    draws = []
    calls = [n for n in ast.walk(func) if isinstance(n, ast.Call) and
             isinstance(n.func, ast.Attribute) and n.func.attr == 'draw' and
             isinstance(n.func.value, ast.Name) and n.func.value.id == param and n.args]
    for call in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
        draws.append(reader.form(call.args[0], 1))
    return draws


def _text(node_: ast.AST) -> str:
    try:
        text = ast.unparse(node_)
    except Exception:  # noqa: BLE001 -- only for display
        return '<expression>'
    return text if len(text) <= 120 else text[:117] + '...'
