"""The canonical form (``strategy_form``) of a strategy object Hypothesis built, read
without calling it (``live_form``): what the runtime lock check compares with the locked
form at call time."""
from __future__ import annotations

import ast

from oracle_guard.oracle.strategy_form import ALIASES
from oracle_guard.oracle.strategy_form import as_chars
from oracle_guard.oracle.strategy_form import code_form
from oracle_guard.oracle.strategy_form import code_form_of_source
from oracle_guard.oracle.strategy_form import expr
from oracle_guard.oracle.strategy_form import flat_branches
from oracle_guard.oracle.strategy_form import node
from oracle_guard.oracle.strategy_form import PARAMETERS
from oracle_guard.oracle.strategy_form import strategy_composite
from oracle_guard.oracle.strategy_form import TEXT_ALPHABET
from oracle_guard.oracle.strategy_form import TRANSFORMS
from oracle_guard.oracle.strategy_form import unresolved
from oracle_guard.oracle.strategy_form import value_key

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: typing costs import time on the hooks' hot path
    from typing import Any


def live_form(strategy: Any, depth: int = 0) -> Any:
    """The form of a strategy object Hypothesis built (read without calling it)."""
    if depth > 12:
        return unresolved(_repr(strategy), 'nested too deeply')
    kind = type(strategy).__name__
    transforms: list[dict[str, Any]] = []
    base: Any = None
    if kind == 'LazyStrategy':
        base = _lazy_form(strategy, depth)
        transforms = [_transform(step[0], step[1]) for step in
                      getattr(strategy, '_transformations', ()) if step[0] in TRANSFORMS]
    elif kind == 'FilteredStrategy':
        base = live_form(getattr(strategy, 'filtered_strategy', None), depth + 1)
        transforms = [_transform('filter', f) for f in getattr(strategy, 'flat_conditions', ())]
        return _with_transforms(base, transforms)
    elif kind == 'MappedStrategy':
        base = live_form(getattr(strategy, 'mapped_strategy', None), depth + 1)
        return _with_transforms(base, [_transform('map', getattr(strategy, 'pack', None))])
    elif kind == 'FlatMapStrategy':
        inner = getattr(strategy, 'flatmapped_strategy', getattr(strategy, 'base', None))
        base = live_form(inner, depth + 1)
        return _with_transforms(base, [_transform('flatmap', getattr(strategy, 'expand', None))])
    elif kind == 'OneOfStrategy':
        branches: list[Any] = []
        for sub in getattr(strategy, 'original_strategies', ()):
            form = live_form(sub, depth + 1)
            if isinstance(form, dict) and form.get('strategy') == 'one_of' and \
                    not form.get('transforms'):
                branches.extend(form['branches'])
            else:
                branches.append(form)
        base = node('one_of', branches=branches)
    elif kind in ('SampledFromStrategy', 'JustStrategy'):
        elements = [_value(v) for v in getattr(strategy, 'elements', ())]
        if kind == 'JustStrategy' and len(elements) == 1:
            base = node('just', value=elements[0])
        else:
            base = node('sampled_from', elements=elements)
        transforms = [_transform(step[0], step[1]) for step in
                      getattr(strategy, '_transformations', ()) if step[0] in TRANSFORMS]
    elif kind == 'DataStrategy':
        form = node('data')
        form.pop('draws')  # drawn inside the test body: read statically
        return form
    elif kind == 'RecursiveStrategy':
        extend = getattr(strategy, 'extend', None)
        base = node(
            'recursive', base=live_form(getattr(strategy, 'base', None), depth + 1),
            extend=_code_of_callable(extend), max_leaves=getattr(strategy, 'max_leaves', 100),
            min_leaves=getattr(strategy, 'min_leaves', None))
    else:
        return unresolved(_repr(strategy), f'a {kind} is not read at run time')
    return _with_transforms(base, transforms)


def _with_transforms(base: Any, transforms: list[dict[str, Any]]) -> Any:
    if not transforms:
        return base
    if not (isinstance(base, dict) and 'strategy' in base):
        return base
    return {**base, 'transforms': [*base.get('transforms', []), *transforms]}


def _transform(method: str, function: Any) -> dict[str, Any]:
    return {method: _code_of_callable(function)}


def _code_of_callable(function: Any) -> Any:
    """A function's code form at run time, as the static reader would write it."""
    import inspect
    import textwrap

    name = getattr(function, '__name__', None)
    if name is None:
        return expr(_repr(function))
    if name == '<lambda>':
        try:
            from hypothesis.internal.reflection import get_pretty_function_description
            text = get_pretty_function_description(function)
        except Exception:  # noqa: BLE001 -- an older or newer Hypothesis
            text = ''
        form = code_form_of_source(text) if text and '<unknown>' not in text else None
        return form or unresolved('lambda', 'its source is not available at run time')
    module = getattr(function, '__module__', '') or ''
    if module == 'builtins' or module.split('.')[0] == 'hypothesis' or \
            not inspect.isfunction(function):
        # Library code is named, not digested: its source changes with each release.
        return code_form(ast.Name(name, ast.Load()), name)
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return unresolved(name, 'its source is not available at run time')
    form = code_form_of_source(_strip_decorators(source))
    return form or unresolved(name, 'its source does not parse')


def _strip_decorators(source: str) -> str:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    if tree.body and isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        tree.body[0].decorator_list = []
        return ast.unparse(tree.body[0])
    return source


def _repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 -- a user object with a broken __repr__
        text = f'<{type(value).__name__}>'
    return text if len(text) <= 200 else text[:197] + '...'


def _value(value: Any, depth: int = 0) -> Any:
    """A parameter value as JSON: strategies as forms, literals as themselves."""
    if hasattr(value, 'do_draw') or type(value).__name__.endswith('Strategy'):
        return live_form(value, depth + 1)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float('inf'), float('-inf')) \
            else expr(repr(value))
    if isinstance(value, (list, tuple)) and depth < 8:
        return [_value(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)) and depth < 8:
        items = [_value(v, depth + 1) for v in value]
        return sorted(items, key=value_key)
    if isinstance(value, type) or callable(value):
        return expr(getattr(value, '__qualname__', getattr(value, '__name__', _repr(value))))
    return expr(_repr(value))


def _lazy_form(strategy: Any, depth: int) -> Any:
    """``integers(0, 1)`` as Hypothesis stored the call: function, args, kwargs."""
    import inspect

    function = getattr(strategy, 'function', None)
    args = getattr(strategy, '_LazyStrategy__args', None)
    kwargs = getattr(strategy, '_LazyStrategy__kwargs', None)
    name = getattr(function, '__name__', '')
    if function is None or args is None or kwargs is None:
        return unresolved(_repr(strategy), 'Hypothesis stored this strategy in an unknown way')
    if name == 'one_of':
        flat = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) \
            else list(args)
        return node('one_of', branches=flat_branches([_value(a, depth) for a in flat]))
    if name == 'tuples':
        return node('tuples', args=[_value(a, depth) for a in args])
    if name == 'builds':
        target = args[0] if args else kwargs.get('target')
        return node(
            'builds', target=_value(target, depth), args=[_value(a, depth) for a in args[1:]],
            kwargs={k: _value(v, depth) for k, v in sorted(kwargs.items())})
    if name not in PARAMETERS:
        composite = _composite_form(strategy, function, args, kwargs, depth)
        if composite is not None:
            return composite
        return unresolved(_repr(strategy), f'{name or "this strategy"} is not a strategy '
                                           'oracle-guard knows')
    try:
        signature = inspect.signature(function)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return unresolved(_repr(strategy), 'its arguments do not match its signature')
    # Parameters not passed (or passed as the very default object, as older releases
    # store them) take this module's defaults, which node() fills in, not the installed
    # Hypothesis's: text()'s default alphabet differs between releases.
    params = {}
    known = {p for p, _, _ in PARAMETERS[name]}
    for param, value in bound.arguments.items():
        declared = signature.parameters.get(param)
        if declared is not None and value is declared.default and \
                not isinstance(value, (int, float, str, bool, type(None))):
            continue
        param = ALIASES.get(name, {}).get(param, param)
        if param in known:
            if value is None and param in params:
                continue  # a deprecated alias left unset
            params[param] = _value(value, depth)
        elif value is not None and value is not False:
            params[param] = _value(value, depth)  # a parameter newer than this table
    if name == 'text' and 'alphabet' not in params:
        params['alphabet'] = TEXT_ALPHABET
    if name == 'text' and isinstance(params.get('alphabet'), list):
        chars = as_chars(params['alphabet'])
        if chars is not None:
            params['alphabet'] = chars
    if name == 'fixed_dictionaries':
        for param in ('mapping', 'optional'):
            value = bound.arguments.get(param)
            if isinstance(value, dict):
                params[param] = {str(k): _value(v, depth) for k, v in value.items()}
    return node(name, **params)


def _composite_form(strategy: Any, function: Any, args: Any, kwargs: Any, depth: int
                    ) -> Any:
    """A @composite strategy: building it (as Hypothesis does before the first draw) runs
    no user code and gives the ``CompositeStrategy`` holding the user's function."""
    try:
        built = strategy.wrapped_strategy
    except Exception:  # noqa: BLE001 -- a user function that fails to build
        return None
    definition = getattr(built, 'definition', None)
    if type(built).__name__ != 'CompositeStrategy' or definition is None:
        return None
    import inspect
    try:
        signature = inspect.signature(definition)
        parameters = list(signature.parameters.values())
        bound = signature.replace(parameters=parameters[1:]).bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = {k: _value(v, depth) for k, v in bound.arguments.items()}
    except (TypeError, ValueError):
        arguments = {'*': unresolved(_repr(strategy), 'its arguments cannot be bound')}
    return strategy_composite(getattr(definition, '__name__', '?'),
                              _code_of_callable(definition), arguments, None)
