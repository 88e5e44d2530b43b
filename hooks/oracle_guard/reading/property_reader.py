"""Reading Hypothesis properties statically: settings, seeds, strategies and profiles.

Never imports hypothesis: everything is read from the syntax tree, through the
scanner's ``ImportAliases`` (so ``import hypothesis.strategies as s`` or
``from hypothesis import settings as cfg`` resolve like their public spellings).
A value that is not a literal, a module constant or a simple expression of those is
``Unverifiable``: the check reports it instead of trusting it.
"""
from __future__ import annotations

import ast
import datetime
import re
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from oracle_guard.oracle.domain_lock import HYPOTHESIS_DEFAULTS
from oracle_guard.oracle.domain_lock import PHASES
from oracle_guard.oracle.domain_lock import Unverifiable
from oracle_guard.oracle.domain_lock import is_unverifiable
from oracle_guard.reading.module_values import is_number
from oracle_guard.reading.module_values import MAX_DEPTH
from oracle_guard.reading.module_values import ModuleReader
from oracle_guard.reading.module_values import unparse
from oracle_guard.reading.module_body import module_statements
from oracle_guard.reading.scanner import test_functions

GIVEN = 'hypothesis.given'
SETTINGS = 'hypothesis.settings'
SEED = 'hypothesis.seed'
STRATEGIES = 'hypothesis.strategies.'
HEALTH_CHECKS = ('data_too_large', 'filter_too_much', 'too_slow', 'return_value',
                 'large_base_example', 'not_a_test_method', 'function_scoped_fixture',
                 'differing_executors', 'nested_given')
# Built-in profiles (hypothesis/_settings.py): "default" is loaded at import; "ci"
# is registered and loaded when a CI environment is detected.
BUILTIN_PROFILES: dict[str, dict[str, Any]] = {
    'default': dict(HYPOTHESIS_DEFAULTS),
    'ci': {**HYPOTHESIS_DEFAULTS, 'derandomize': True, 'deadline_ms': None, 'database': False,
           'suppress_health_check': ['too_slow']},
}
# strategy -> (positional parameter names, lock fields it takes)
_SIZED = ('min_size', 'max_size')
_BOUNDED = ('min_value', 'max_value')
STRATEGY_SIGNATURES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    'text': (('alphabet',), ('alphabet', *_SIZED)),
    'binary': ((), _SIZED),
    'lists': (('elements',), _SIZED),
    'sets': (('elements',), _SIZED),
    'frozensets': (('elements',), _SIZED),
    'iterables': (('elements',), _SIZED),
    'dictionaries': (('keys', 'values'), _SIZED),
    'integers': (_BOUNDED, _BOUNDED),
    'floats': (_BOUNDED, _BOUNDED),
    'decimals': (_BOUNDED, _BOUNDED),
    'fractions': (_BOUNDED, _BOUNDED),
    'from_regex': (('regex',), ('alphabet',)),
}
FIELD_DEFAULTS: dict[str, Any] = {'min_size': 0, 'max_size': None, 'min_value': None,
                                  'max_value': None}
TEXT_DEFAULT_ALPHABET = "characters(codec='utf-8')"
_ENV_NAME = 'HYPOTHESIS_PROFILE'


@dataclass(frozen=True)
class Located:
    """A live value and where the source says it."""

    value: Any
    line: int
    col: int


@dataclass
class PropertyTest:
    path: str
    identity: str
    line: int
    col: int
    settings: dict[str, Located] = field(default_factory=dict)  # set on the test itself
    # The profile an explicit @settings(parent=...) inherits from; None = the ambient one.
    parent: str | Unverifiable | None = None
    strategies: dict[str, dict[str, Any]] = field(default_factory=dict)
    written: dict[str, tuple[str, ...]] = field(default_factory=dict)  # fields spelled out
    strategy_lines: dict[str, int] = field(default_factory=dict)
    filters: int = 0
    filter_line: int = 0
    # Lock version 2: the whole strategy of each argument (strategy_form), and where.
    forms: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Profile:
    name: str
    path: str
    line: int
    col: int
    values: dict[str, Any]
    parent: str | Unverifiable | None = None


@dataclass(frozen=True)
class ProfileSelection:
    """A place that makes a profile the active one."""

    name: str | Unverifiable
    path: str
    line: int
    col: int
    how: str
    unconditional: bool = False


@dataclass
class ProfileSources:
    profiles: list[Profile] = field(default_factory=list)
    selections: list[ProfileSelection] = field(default_factory=list)
    env_names: list[str] = field(default_factory=list)  # HYPOTHESIS_PROFILE values seen


def _enum_names(reader: ModuleReader, node: ast.AST, enum: str, every: tuple[str, ...]) -> Any:
    """[Phase.generate, ...] -> ['generate', ...]; list(Phase) -> every name."""
    if isinstance(node, ast.Name) and reader.binding(node.id) is not None:
        return _enum_names(reader, reader.binding(node.id), enum, every)  # type: ignore[arg-type]
    if isinstance(node, ast.Call) and not node.keywords and len(node.args) == 1 and \
            isinstance(node.func, ast.Name) and node.func.id in ('list', 'tuple', 'set') and \
            reader.resolve(node.args[0]) == enum:
        return list(every)
    if isinstance(node, ast.Call) and reader.callee(node) == f'{enum}.all':
        return list(every)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        names = []
        for elt in node.elts:
            dotted = reader.resolve(elt)
            if not dotted.startswith(f'{enum}.'):
                return Unverifiable(f'{unparse(elt)} is not a {enum.rsplit(".", 1)[-1]}')
            names.append(dotted.rsplit('.', 1)[1])
        return names
    return Unverifiable(f'{unparse(node)} is not a literal list')


def settings_value(reader: ModuleReader, name: str, node: ast.AST) -> tuple[str, Any] | None:
    """(lock field, live value) of one ``settings(name=node)`` keyword, or None."""
    if name in ('max_examples', 'derandomize'):
        return name, reader.value(node)
    if name == 'deadline':
        value = reader.value(node)
        if isinstance(value, datetime.timedelta):
            value = value.total_seconds() * 1000
            value = int(value) if value == int(value) else value
        elif value is not None and not is_unverifiable(value) and not is_number(value):
            value = Unverifiable(f'deadline={unparse(node)} is not a duration')
        return 'deadline_ms', value
    if name == 'database':
        if isinstance(node, ast.Constant) and node.value is None:
            return 'database', False
        value = reader.value(node)
        if value is None:
            return 'database', False
        if isinstance(node, ast.Name) and is_unverifiable(value):
            return 'database', value
        return 'database', True
    if name == 'phases':
        return 'phases', _enum_names(reader, node, 'hypothesis.Phase', PHASES)
    if name == 'suppress_health_check':
        return 'suppress_health_check', _enum_names(
            reader, node, 'hypothesis.HealthCheck', HEALTH_CHECKS)
    return None


def _canonical_hypothesis(name: str) -> str:
    # `from hypothesis._settings import settings` and friends are the public objects.
    for private in ('hypothesis._settings.', 'hypothesis.core.', 'hypothesis.control.'):
        if name.startswith(private):
            return 'hypothesis.' + name[len(private):]
    if name.startswith('hypothesis.strategies._internal.'):
        return STRATEGIES + name.rsplit('.', 1)[-1]
    return name


def _settings_call(reader: ModuleReader, node: ast.AST, depth: int = 0) -> ast.Call | None:
    """The ``settings(...)`` call a decorator applies, through module-level names."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(node, ast.Call) and _canonical_hypothesis(reader.callee(node)) == SETTINGS:
        return node
    if isinstance(node, ast.Name):
        bound = reader.binding(node.id)
        if bound is not None:
            return _settings_call(reader, bound, depth + 1)
    return None


def _profile_reference(reader: ModuleReader, node: ast.AST) -> str | Unverifiable | None:
    """``settings.get_profile('ci')`` -> 'ci'; a settings(...) parent -> None (its values)."""
    if isinstance(node, ast.Call) and \
            _canonical_hypothesis(reader.callee(node)) == f'{SETTINGS}.get_profile' and node.args:
        name = reader.value(node.args[0])
        return name if isinstance(name, str) else Unverifiable(
            f'profile name {unparse(node.args[0])} is not a literal')
    return Unverifiable(f'parent {unparse(node)} is not a registered profile')


def read_settings(reader: ModuleReader, call: ast.Call, depth: int = 0
                  ) -> tuple[dict[str, Located], str | Unverifiable | None]:
    """Fields a ``settings(...)`` call sets, and the profile it inherits the rest from."""
    values: dict[str, Located] = {}
    parent: str | Unverifiable | None = None
    parent_node = call.args[0] if call.args else None
    for kw in call.keywords:
        if kw.arg is None:
            parent = Unverifiable('settings(**...) cannot be read')
            continue
        if kw.arg == 'parent':
            parent_node = kw.value
            continue
        read = settings_value(reader, kw.arg, kw.value)
        if read is not None:
            values[read[0]] = Located(read[1], kw.value.lineno, kw.value.col_offset + 1)
    if parent_node is not None and not (
            isinstance(parent_node, ast.Constant) and parent_node.value is None):
        inner = _settings_call(reader, parent_node, depth + 1)
        if inner is not None and depth < MAX_DEPTH:
            inherited, parent = read_settings(reader, inner, depth + 1)
            values = {**inherited, **values}
        else:
            parent = _profile_reference(reader, parent_node)
    return values, parent


# -- strategies --------------------------------------------------------------------------

# A .map()/.flatmap() can shrink what a test draws as much as a filter can
# (``st.binary(max_size=1024).map(lambda b: b[:1])``), and no static reading can say by
# how much. So each counts against the entry's "filters" allowance (OG604) like a
# .filter(): a person approves it in the lock. The bounds of the strategy underneath are
# still compared, so a transformation can only narrow what the lock lets through.
TRANSFORMS = ('filter', 'map', 'flatmap')


def _count_filters(reader: ModuleReader, node: ast.AST, depth: int = 0) -> int:
    if depth > MAX_DEPTH:
        return 0
    count = 0
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                sub.func.attr in TRANSFORMS:
            count += 1
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            bound = reader.binding(sub.id)
            if bound is not None and not isinstance(bound, ast.Constant):
                count += _count_filters(reader, bound, depth + 1)
    return count


def read_strategy(reader: ModuleReader, node: ast.AST | None, depth: int = 0
                  ) -> tuple[dict[str, Any], tuple[str, ...]]:
    """(lock fields -> live values, fields spelled out in the source) of one strategy.

    Fields the strategy does not take are absent: comparing them is unverifiable.
    """
    if node is None:
        return {}, ()
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in ('filter', 'map'):
        node = node.func.value
    if depth > MAX_DEPTH:
        return {}, ()
    if isinstance(node, ast.Name):
        bound = reader.binding(node.id)
        return read_strategy(reader, bound, depth + 1) if bound is not None else ({}, ())
    if not isinstance(node, ast.Call):
        return {}, ()
    dotted = _canonical_hypothesis(reader.callee(node))
    if not dotted.startswith(STRATEGIES):
        return {}, ()
    signature = STRATEGY_SIGNATURES.get(dotted[len(STRATEGIES):])
    if signature is None:
        return {}, ()
    positional, taken = signature
    given: dict[str, ast.AST] = dict(zip(positional, node.args))
    for kw in node.keywords:
        if kw.arg is None:
            return {name: Unverifiable('**kwargs cannot be read') for name in taken}, ()
        given[kw.arg] = kw.value
    fields: dict[str, Any] = {}
    for name in taken:
        if name not in given:
            fields[name] = TEXT_DEFAULT_ALPHABET if name == 'alphabet' and \
                dotted.endswith('.text') else FIELD_DEFAULTS.get(name)
        elif name == 'alphabet':
            fields[name] = _alphabet(reader, given[name])
        else:
            value = reader.value(given[name])
            if value is not None and not is_number(value) and not is_unverifiable(value):
                value = Unverifiable(f'{name}={unparse(given[name])} is not a number')
            fields[name] = value
    return fields, tuple(n for n in taken if n in given)


def _alphabet(reader: ModuleReader, node: ast.AST, depth: int = 0) -> Any:
    """A literal alphabet as its string; any other alphabet as its source expression."""
    value = reader.value(node)
    if isinstance(value, str):
        return value
    if isinstance(node, ast.Name):
        bound = reader.binding(node.id)
        if bound is not None and depth < MAX_DEPTH:
            return _alphabet(reader, bound, depth + 1)
        return value
    if isinstance(node, ast.Call):
        return normalize_expression(unparse(node))
    return value


def normalize_expression(text: str) -> str:
    """``st.characters(codec="ascii")`` -> ``characters(codec='ascii')``: module prefixes go."""
    try:
        tree = ast.parse(text, mode='eval')
    except SyntaxError:
        return text
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, (ast.Name, ast.Attribute)):
            node.func = ast.Name(node.func.attr, ast.Load())
    return ast.unparse(tree)


def _given_arguments(call: ast.Call, func: ast.AST) -> dict[str, ast.AST | None]:
    """@given's strategies by argument name (positional ones bind from the right)."""
    args = func.args  # type: ignore[attr-defined]
    if len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and \
            call.args[0].value is Ellipsis and not call.keywords:
        names = [a.arg for a in [*args.args, *args.kwonlyargs]]
        if names and names[0] in ('self', 'cls'):
            names = names[1:]
        return {n: None for n in names}  # inferred from type hints
    result: dict[str, ast.AST | None] = {}
    if call.args:
        names = [a.arg for a in args.args]
        for name, node in zip(names[::-1], call.args[::-1]):
            result[name] = node
        for extra in call.args[len(names):]:
            result[f'<argument {unparse(extra)}>'] = extra
    for kw in call.keywords:
        result[kw.arg if kw.arg else '**'] = kw.value
    return dict(sorted(result.items()))


def _applied_decorator(reader: ModuleReader, node: ast.AST) -> ast.AST:
    """What a decorator name stands for: ``tiny = given(...)`` makes ``@tiny`` that call."""
    for _ in range(MAX_DEPTH):
        if not isinstance(node, ast.Name):
            break
        bound = reader.binding(node.id)
        if bound is None:
            break
        node = bound
    return node


def _is_given(reader: ModuleReader, node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and _canonical_hypothesis(reader.callee(node)) == GIVEN


def _binds_given(reader: ModuleReader, name: str) -> bool:
    return any(_is_given(reader, v) for v in reader.bindings.get(name, ()))


_DISCARDS = ('hypothesis.assume', 'hypothesis.reject')
# Raising it by hand discards the example exactly as assume(False) does.
_UNSATISFIED = ('hypothesis.errors.UnsatisfiedAssumption',)


def _assume_calls(reader: ModuleReader, func: ast.AST) -> list[ast.AST]:
    """Every place the test body discards an example: assume(), reject(), and a raw
    ``raise UnsatisfiedAssumption`` (rows 23 and 27: a filter by another name)."""
    found: list[ast.AST] = []
    for stmt in func.body:  # type: ignore[attr-defined]
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and \
                    _canonical_hypothesis(reader.callee(node)) in _DISCARDS:
                found.append(node)
            elif isinstance(node, ast.Raise) and node.exc is not None:
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if reader.resolve(raised) in _UNSATISFIED:
                    found.append(node)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]


STATE_MACHINES = ('hypothesis.stateful.RuleBasedStateMachine', 'hypothesis.stateful.StateMachine')


def state_machines(tree: ast.Module) -> list[tuple[str, ast.ClassDef, ast.AST]]:
    """(test identity, machine class, where its test case is bound) for every Hypothesis
    state machine the module runs as a test: ``TestX = Machine.TestCase`` at module level
    or ``class TestX(Machine.TestCase)``. pytest collects the unittest case's ``runTest``.
    """
    reader = ModuleReader(tree)
    machines: dict[str, ast.ClassDef] = {}
    for node in module_statements(tree.body):
        if isinstance(node, ast.ClassDef) and any(
                reader.resolve(base) in STATE_MACHINES or
                (isinstance(base, ast.Name) and base.id in machines) for base in node.bases):
            machines[node.name] = node
    found = []
    for node in module_statements(tree.body):
        value, names = None, []
        if isinstance(node, ast.Assign):
            value = node.value
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.ClassDef):
            value = next((b for b in node.bases if isinstance(b, ast.Attribute)
                          and b.attr == 'TestCase'), None)
            names = [node.name]
        if isinstance(value, ast.Attribute) and value.attr == 'TestCase' and \
                isinstance(value.value, ast.Name) and value.value.id in machines:
            found.extend((f'{name}::runTest', machines[value.value.id], node) for name in names)
    return found


def holds_properties(tree: ast.Module) -> bool:
    """Whether a module defines a ``@given`` test or a Hypothesis state machine test."""
    reader = ModuleReader(tree)
    for _identity, func in test_functions(tree):
        for spelled in func.decorator_list:  # type: ignore[attr-defined]
            deco = _applied_decorator(reader, spelled)
            if _is_given(reader, deco) or (isinstance(deco, ast.Name) and
                                           _binds_given(reader, deco.id)):
                return True
    return bool(state_machines(tree))


def read_properties(path: str, tree: ast.Module, modules: Any = None) -> list[PropertyTest]:
    """Every @given test of one module, with what it draws and how it is configured.

    ``modules`` finds helper modules the strategies import (``strategy_reader.ModuleSource``).
    """
    from oracle_guard.reading.strategy_reader import data_draws
    from oracle_guard.reading.strategy_reader import StrategyReader

    reader = ModuleReader(tree)
    forms = StrategyReader(path, tree, modules)
    found = []
    for identity, func in test_functions(tree):
        given: ast.Call | None = None
        settings_calls: list[tuple[ast.AST, ast.Call | None]] = []
        seed: Located | None = None
        ambiguous: str | None = None
        for spelled in func.decorator_list:  # type: ignore[attr-defined]
            deco = _applied_decorator(reader, spelled)
            name = _canonical_hypothesis(reader.callee(deco))
            if name != GIVEN and isinstance(deco, ast.Name) and _binds_given(reader, deco.id):
                # `tiny = given(...)` in both branches of an if: a @given test whose
                # strategies cannot be told apart; never drop it out of view.
                given = next(v for v in reader.bindings[deco.id] if _is_given(reader, v))
                ambiguous = f'{deco.id} is bound more than once'
                continue
            if name == GIVEN and isinstance(deco, ast.Call):
                given = deco
            elif name == SEED and isinstance(deco, ast.Call) and deco.args:
                seed = Located(reader.value(deco.args[0]), deco.lineno, deco.col_offset + 1)
            elif name == f'{SETTINGS}.get_profile':
                settings_calls.append((deco, None))
            else:
                call = _settings_call(reader, deco)
                if call is not None:
                    settings_calls.append((deco, call))
        if given is None:
            continue
        prop = PropertyTest(path, identity, func.lineno, func.col_offset + 1)  # type: ignore[attr-defined]
        prop.settings['seed'] = seed or Located(None, func.lineno, func.col_offset + 1)  # type: ignore[attr-defined]
        for deco, call in settings_calls[:1]:
            if call is None:
                prop.parent = _profile_reference(reader, deco)
                continue
            values, prop.parent = read_settings(reader, call)
            prop.settings.update(values)
        filters = _count_filters(reader, given)
        for arg, node in _given_arguments(given, func).items():
            fields, written = read_strategy(reader, node)
            if ambiguous:
                fields = {name: Unverifiable(ambiguous) for name in fields}
                written = ()
            prop.strategies[arg] = fields
            prop.written[arg] = written
            form = forms.form(node)
            if ambiguous:
                form = {'unresolved': unparse(node) if node is not None else '...',
                        'why': ambiguous}
            elif isinstance(form, dict) and form.get('strategy') == 'data':
                form = {**form, 'draws': data_draws(forms, func, arg)}
            prop.forms[arg] = form
            prop.strategy_lines[arg] = getattr(node, 'lineno', given.lineno)
        assumes = _assume_calls(reader, func)
        prop.filters = filters + len(assumes)
        prop.filter_line = assumes[0].lineno if assumes and not filters else given.lineno
        found.append(prop)
    found.extend(_machine_properties(path, tree, reader, forms))
    return found


RULES = ('hypothesis.stateful.rule', 'hypothesis.stateful.initialize')


def _machine_properties(path: str, tree: ast.Module, reader: ModuleReader, forms: Any
                        ) -> list[PropertyTest]:
    """A Hypothesis state machine run as a test is a property like any other: locked by
    its settings (``@settings`` on the machine, ``Machine.TestCase.settings = ...`` or
    ``TestX.settings = ...``) and by what its rules draw (``rule.argument``)."""
    machines = state_machines(tree)
    if not machines:
        return []
    assigned: dict[str, ast.Call] = {}  # machine or test-case name -> settings(...) call
    for node in module_statements(tree.body):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        call = _settings_call(reader, node.value)
        if call is None or not (isinstance(target, ast.Attribute) and target.attr == 'settings'):
            continue
        owner = target.value
        if isinstance(owner, ast.Attribute) and owner.attr == 'TestCase' and \
                isinstance(owner.value, ast.Name):
            assigned[owner.value.id] = call
        elif isinstance(owner, ast.Name):
            assigned[owner.id] = call
    found = []
    for identity, machine, bound in machines:
        prop = PropertyTest(path, identity, bound.lineno, bound.col_offset + 1)  # type: ignore[attr-defined]
        prop.settings['seed'] = Located(None, prop.line, prop.col)
        call = assigned.get(identity.split('::', 1)[0]) or assigned.get(machine.name)
        if call is None:
            call = next((c for c in (_settings_call(reader, d) for d in machine.decorator_list)
                         if c is not None), None)
        if call is None:
            # Hypothesis runs a state machine without a deadline unless settings say so.
            prop.settings['deadline_ms'] = Located(None, prop.line, prop.col)
        else:
            values, prop.parent = read_settings(reader, call)
            prop.settings.update(values)
        for method in machine.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for deco in method.decorator_list:
                if not (isinstance(deco, ast.Call) and
                        _canonical_hypothesis(reader.callee(deco)) in RULES):
                    continue
                for kw in deco.keywords:
                    if kw.arg is None or kw.arg == 'target' or kw.arg == 'targets':
                        continue
                    arg = f'{method.name}.{kw.arg}'
                    fields, written = read_strategy(reader, kw.value)
                    prop.strategies[arg] = fields
                    prop.written[arg] = written
                    prop.forms[arg] = forms.form(kw.value)
                    prop.strategy_lines[arg] = kw.value.lineno
                    prop.filters += _count_filters(reader, kw.value)
        found.append(prop)
    return found


# -- profiles ----------------------------------------------------------------------------

def _env_lookup(reader: ModuleReader, node: ast.AST) -> tuple[bool, Any] | None:
    """``os.environ.get('HYPOTHESIS_PROFILE', 'dev')`` -> (True, 'dev'); other env reads."""
    if isinstance(node, ast.Call) and reader.callee(node) in ('os.getenv', 'os.environ.get') \
            and node.args:
        default = reader.value(node.args[1]) if len(node.args) > 1 else None
        return reader.value(node.args[0]) == _ENV_NAME, default
    if isinstance(node, ast.Subscript) and reader.resolve(node.value) == 'os.environ':
        return reader.value(node.slice) == _ENV_NAME, None
    return None


def read_profiles(path: str, tree: ast.Module, sources: ProfileSources) -> None:
    """Add the profiles a module registers and the ones it loads."""
    reader = ModuleReader(tree)
    top_level = {id(stmt.value) for stmt in tree.body
                 if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _canonical_hypothesis(reader.callee(node))
        if name == f'{SETTINGS}.register_profile' and node.args:
            profile_name = reader.value(node.args[0])
            if not isinstance(profile_name, str):
                profile_name = f'<{unparse(node.args[0])}>'
            call = ast.Call(func=node.func, args=node.args[1:2], keywords=[
                kw for kw in node.keywords])
            values, parent = read_settings(reader, call)
            sources.profiles.append(Profile(
                profile_name, path, node.lineno, node.col_offset + 1,
                {k: v.value for k, v in values.items()}, parent))
        elif name == f'{SETTINGS}.load_profile' and node.args:
            arg = node.args[0]
            unconditional = id(node) in top_level and path.endswith('conftest.py')
            env = _env_lookup(reader, arg)
            if env is not None:
                is_ours, default = env
                if is_ours and isinstance(default, str):
                    sources.selections.append(ProfileSelection(
                        default, path, node.lineno, node.col_offset + 1, 'load_profile',
                        unconditional))
                sources.selections.append(ProfileSelection(
                    Unverifiable('the environment') if not is_ours else '$' + _ENV_NAME,
                    path, node.lineno, node.col_offset + 1, 'load_profile', unconditional))
                continue
            value = reader.value(arg)
            sources.selections.append(ProfileSelection(
                value if isinstance(value, str) else Unverifiable(
                    f'profile name {unparse(arg)} is not a literal'),
                path, node.lineno, node.col_offset + 1, 'load_profile', unconditional))


_CLI_PROFILE = re.compile(r'--hypothesis-profile(?:=|\s+)["\']?([\w.\-]+)')
_ENV_PROFILE = re.compile(r'\bHYPOTHESIS_PROFILE["\']?\s*[:=]\s*["\']?([\w.\-]+)')
# Which files can select a profile: in a module of their own, which the commit path of
# check-generator-lock imports without this one.
from oracle_guard.reading.profile_files import CONFIG_DIRS  # noqa: E402,F401
from oracle_guard.reading.profile_files import CONFIG_FILES  # noqa: E402,F401
from oracle_guard.reading.profile_files import is_config_file  # noqa: E402,F401


def read_config_text(path: str, text: str, sources: ProfileSources) -> None:
    """``--hypothesis-profile NAME`` and ``HYPOTHESIS_PROFILE=NAME`` in config and CI files."""
    for pattern, how in ((_CLI_PROFILE, '--hypothesis-profile'), (_ENV_PROFILE, _ENV_NAME)):
        for match in pattern.finditer(text):
            line = text.count('\n', 0, match.start()) + 1
            col = match.start() - (text.rfind('\n', 0, match.start()) + 1) + 1
            name = match.group(1)
            if how == _ENV_NAME:
                sources.env_names.append(name)
            sources.selections.append(ProfileSelection(name, path, line, col, how))


def profile_values(name: str, profiles: dict[str, Profile], depth: int = 0) -> dict[str, Any]:
    """Every settings field of a profile, following its parent; unknown -> Unverifiable."""
    if name in profiles and depth <= MAX_DEPTH:
        profile = profiles[name]
        if profile.parent is None:
            base = dict(HYPOTHESIS_DEFAULTS)
        elif is_unverifiable(profile.parent):
            base = {k: profile.parent for k in HYPOTHESIS_DEFAULTS}
        else:
            base = profile_values(profile.parent, profiles, depth + 1)  # type: ignore[arg-type]
        return {**base, **profile.values}
    if name in BUILTIN_PROFILES:
        return dict(BUILTIN_PROFILES[name])
    missing = Unverifiable(f'profile {name!r} is not registered in this repository')
    return {k: missing for k in HYPOTHESIS_DEFAULTS}
