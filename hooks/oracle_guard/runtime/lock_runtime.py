"""The runtime twin of check-generator-lock: what Hypothesis will really run.

At collection the pytest plugin hands the collected items to ``check_collected``. For
each ``@given`` test it reads the settings object Hypothesis stored on the wrapped test
(``_hypothesis_internal_use_settings``: the @settings object, or the profile active when
the test was decorated), the seed (``_hypothesis_internal_use_seed``) and the strategies
``@given`` was called with (``test.hypothesis._given_kwargs``; positional strategies
are already bound to argument names there), and compares them with the lock exactly
like the static hook. Values computed at import, profiles loaded in a conftest and
``--hypothesis-profile`` are all visible here.

``.map()``/``.filter()``/``.flatmap()`` on the strategies count against ``filters`` here
too; ``assume()`` calls are left to the static hook (invisible before the test runs), so
the runtime count is a lower bound of the static one.
"""
from __future__ import annotations

import inspect
import os
from typing import Any

from oracle_guard.config import Config
from oracle_guard.domain_lock import compare_entry
from oracle_guard.domain_lock import DomainLock
from oracle_guard.domain_lock import read_lock_bytes
from oracle_guard.domain_lock import render
from oracle_guard.domain_lock import SETTINGS_FIELDS
from oracle_guard.domain_lock import skips_generation
from oracle_guard.domain_lock import Unverifiable
from oracle_guard.findings import ConfigError
from oracle_guard.ledger import function_of
from oracle_guard.ledger import identity_of
from oracle_guard.property_reader import normalize_expression
from oracle_guard.property_reader import STRATEGY_SIGNATURES


def _read_lock(cfg: Config) -> DomainLock:
    try:
        with open(os.path.join(cfg.root, cfg.domain_lock), 'rb') as f:
            raw: bytes | None = f.read()
    except FileNotFoundError:
        raw = None
    return read_lock_bytes(raw, cfg.domain_lock)


def _settings_field(settings: Any, name: str) -> Any:
    if name == 'max_examples':
        return settings.max_examples
    if name == 'deadline_ms':
        deadline = settings.deadline
        if deadline is None:
            return None
        ms = deadline.total_seconds() * 1000
        return int(ms) if ms == int(ms) else ms
    if name == 'derandomize':
        return settings.derandomize
    if name == 'database':
        return settings.database is not None
    if name == 'phases':
        return [p.name for p in settings.phases]
    return [h.name for h in settings.suppress_health_check]


def live_settings(test: Any, names: Any = SETTINGS_FIELDS) -> dict[str, Any]:
    """The locked settings fields of a collected Hypothesis test, as Hypothesis sees them.

    Without the "generate" phase no example is drawn, so max_examples is 0 then.
    """
    settings = getattr(test, '_hypothesis_internal_use_settings', None)
    values: dict[str, Any] = {}
    for name in names:
        if name == 'seed':
            values[name] = getattr(test, '_hypothesis_internal_use_seed', None)
        elif settings is None:
            values[name] = Unverifiable('Hypothesis stored no settings on the test')
        elif name == 'max_examples' and skips_generation(_settings_field(settings, 'phases')):
            values[name] = 0
        else:
            values[name] = _settings_field(settings, name)
    return values


def live_phases(test: Any) -> list[str] | None:
    settings = getattr(test, '_hypothesis_internal_use_settings', None)
    return None if settings is None else _settings_field(settings, 'phases')


def transformations(strategy: Any, depth: int = 0) -> int:
    """How many .map()/.filter()/.flatmap() wrap a strategy (what the static hook counts
    as "filters"; ``assume`` is invisible here, so this is a lower bound)."""
    if depth > 8 or strategy is None:
        return 0
    kind = type(strategy).__name__
    if kind == 'FlatMapStrategy':
        return 1 + transformations(getattr(strategy, 'base', None), depth + 1)
    if kind == 'MappedStrategy':
        return 1 + transformations(getattr(strategy, 'mapped_strategy', None), depth + 1)
    if kind == 'FilteredStrategy':
        return len(getattr(strategy, 'flat_conditions', ())) + \
            transformations(getattr(strategy, 'filtered_strategy', None), depth + 1)
    return sum(1 for step in getattr(strategy, '_transformations', ())
               if step[0] in ('map', 'filter'))


def strategy_fields(strategy: Any) -> dict[str, Any]:
    """min_size/max_size/alphabet/min_value/max_value of a strategy, where it takes them."""
    function = getattr(strategy, 'function', None)
    args = getattr(strategy, '_LazyStrategy__args', None)
    kwargs = getattr(strategy, '_LazyStrategy__kwargs', None)
    name = getattr(function, '__name__', '')
    if function is None or args is None or kwargs is None or name not in STRATEGY_SIGNATURES:
        return {}
    try:
        bound = inspect.signature(function).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {}
    bound.apply_defaults()
    fields = {}
    for field in STRATEGY_SIGNATURES[name][1]:
        value = bound.arguments.get(field)
        if field == 'alphabet' and value is not None and not isinstance(value, str):
            value = normalize_expression(repr(value))
        fields[field] = value
    return fields


def live_strategies(test: Any) -> dict[str, dict[str, Any]]:
    handle = getattr(test, 'hypothesis', None)
    given = getattr(handle, '_given_kwargs', None) or {}
    return {name: strategy_fields(strategy) for name, strategy in sorted(given.items())}


def check_collected(cfg: Config, items: list) -> list[str]:  # type: ignore[type-arg]
    """Problems (one line each) of the collected Hypothesis tests against the lock."""
    try:
        lock = _read_lock(cfg)
    except ConfigError as exc:
        return [str(exc)]
    problems = []
    seen = set()
    for item in items:
        test = getattr(item, 'obj', None)
        identity = function_of(identity_of(item.nodeid))
        if not getattr(test, 'is_hypothesis_test', False):
            if identity in lock.entries and identity not in seen and callable(test):
                # A locked property that Hypothesis does not run: @given replaced or
                # patched away (a conftest rebinding hypothesis.given), or the test
                # wrapped so that no example is ever drawn.
                seen.add(identity)
                problems.append(f'{item.nodeid}: locked property {identity} is not a '
                                f'Hypothesis test when collected; no example would run')
            continue
        if identity in seen:  # parametrized: one function, one entry
            continue
        seen.add(identity)
        entry = lock.entries.get(identity)
        if entry is None:
            problems.append(f'{item.nodeid}: unlocked property: {identity} has no entry in '
                            f'{lock.path} (run `oracle-guard lock`)')
            continue
        settings = live_settings(test, [n for n in entry.fields if n in SETTINGS_FIELDS])
        given = getattr(getattr(test, 'hypothesis', None), '_given_kwargs', None) or {}
        counted = sum(transformations(s) for s in given.values())
        phases = live_phases(test)
        for drift in compare_entry(entry, settings, live_strategies(test), counted):
            note = ''
            if drift.field == 'max_examples' and skips_generation(phases):
                note = f' (phases {render(phases)} leave out "generate": no example is generated)'
            elif drift.field == 'filters':
                note = ' (.map()/.filter()/.flatmap() on its strategies)'
            problems.append(f'{item.nodeid}: tests less than its lock ({lock.path}): '
                            f'{drift.describe()}{note}')
    return problems
