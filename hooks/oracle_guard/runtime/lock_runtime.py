"""The runtime twin of check-generator-lock: what Hypothesis will really run.

At collection the pytest plugin hands the collected items to ``problems_by_test``
(a test with problems fails at its call, the others run); at call time (after the fixtures ran, just before the test) to ``check_call``, so a
fixture that rewrites ``_hypothesis_internal_use_settings`` or the strategies after
collection is caught too. ``ExampleCount`` counts the examples a property really
generated. For
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

Lock version 2: each argument's live strategy object is turned into its canonical form
(``live_strategy_form.live_form``, read from what Hypothesis stored: the function and
arguments of each lazy strategy, the branches of ``one_of``, the elements of
``sampled_from``, the transforms) and compared with the locked form like the hook does.
Parts only the source can show (the draws of a ``@composite`` body or of ``data()``,
expressions such as a ``builds`` target) are left to the static hook.
"""
from __future__ import annotations

import inspect
import os
from typing import Any

from oracle_guard.config import Config
from oracle_guard.oracle.domain_lock import compare_entry
from oracle_guard.oracle.domain_lock import DomainLock
from oracle_guard.oracle.domain_lock import read_lock_bytes
from oracle_guard.oracle.domain_lock import render
from oracle_guard.oracle.domain_lock import SETTINGS_FIELDS
from oracle_guard.oracle.domain_lock import skips_generation
from oracle_guard.oracle.domain_lock import Unverifiable
from oracle_guard.findings import ConfigError
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import identity_of
from oracle_guard.reading.property_reader import normalize_expression
from oracle_guard.reading.property_reader import STRATEGY_SIGNATURES


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
    checks = settings.suppress_health_check
    names = [h.name for h in checks]
    # Hypothesis' pytest plugin writes a set here (rule 23's discount): sorted, so that a
    # message names them in the same order on every run.
    return names if isinstance(checks, (list, tuple)) else sorted(names)


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


def transformations(strategy: Any, depth: int = 0, from_src: Any = None) -> int:
    """How many .map()/.filter()/.flatmap() wrap a strategy (what the static hook counts
    as "filters"; ``assume`` is invisible here, so this is a lower bound). With
    ``from_src``, a transformation whose function ``from_src`` says was written under
    ``src`` is not counted: a strategy that the package under test ships is read by no
    static reader, so the lock could never hold its transformations."""
    if depth > 8 or strategy is None:
        return 0

    def own(function: Any) -> int:
        return 0 if from_src is not None and from_src(function) else 1

    kind = type(strategy).__name__
    if kind == 'FlatMapStrategy':
        return own(getattr(strategy, 'expand', None)) + \
            transformations(getattr(strategy, 'base', None), depth + 1, from_src)
    if kind == 'MappedStrategy':
        return own(getattr(strategy, 'pack', None)) + \
            transformations(getattr(strategy, 'mapped_strategy', None), depth + 1, from_src)
    if kind == 'FilteredStrategy':
        return sum(own(c) for c in getattr(strategy, 'flat_conditions', ())) + \
            transformations(getattr(strategy, 'filtered_strategy', None), depth + 1, from_src)
    return sum(own(step[1]) for step in getattr(strategy, '_transformations', ())
               if step[0] in ('map', 'filter'))


def src_functions(cfg: Config | None) -> Any:
    """``function -> bool``: whether a function's code was compiled from a file under
    ``src`` (a builtin, with no code of its own, is not)."""
    if cfg is None:
        return None
    root = os.path.realpath(cfg.root)

    def from_src(function: Any) -> bool:
        name = getattr(getattr(function, '__code__', None), 'co_filename', None)
        if not isinstance(name, str) or name.startswith('<'):
            return False
        rel = os.path.relpath(os.path.realpath(name), root).replace(os.sep, '/')
        return not rel.startswith('../') and cfg.is_src(rel)

    return from_src


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


_LOCKS: dict[str, tuple[Any, DomainLock]] = {}


def _cached_lock(cfg: Config) -> DomainLock:
    """The lock, read again only when the file changed (check_call runs once per test)."""
    path = os.path.join(cfg.root, cfg.domain_lock)
    try:
        stat = os.stat(path)
        key: Any = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        key = None
    cached = _LOCKS.get(path)
    if cached is not None and cached[0] == key and key is not None:
        return cached[1]
    lock = _read_lock(cfg)
    _LOCKS[path] = (key, lock)
    return lock


def given_strategies(test: Any) -> dict[str, Any]:
    """The strategies Hypothesis will draw from: the ``given_kwargs`` its wrapper closes
    over (what runs), falling back to the handle's copy of them."""
    found = _closure_value(test, 'given_kwargs')
    if isinstance(found, dict):
        return found
    handle = getattr(test, 'hypothesis', None)
    return getattr(handle, '_given_kwargs', None) or {}


def _closure_value(function: Any, name: str, depth: int = 0) -> Any:
    code = getattr(function, '__code__', None)
    if code is None or depth > 4:
        return None
    for free, cell in zip(code.co_freevars, getattr(function, '__closure__', None) or ()):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if free == name:
            return value
        if callable(value):
            found = _closure_value(value, name, depth + 1)
            if found is not None:
                return found
    return None


def live_forms(test: Any) -> dict[str, Any]:
    from oracle_guard.oracle.live_strategy_form import live_form
    return {name: live_form(strategy) for name, strategy in
            sorted(given_strategies(test).items())}


def form_problems(nodeid: str, lock_path: str, entry: Any, test: Any) -> list[str]:
    """Version 2: every locked form against the live strategy objects."""
    if not entry.strategies:
        return []
    from oracle_guard.oracle.strategy_form import compare
    from oracle_guard.oracle.strategy_form import comparable_at_run_time
    from oracle_guard.oracle.strategy_form import short

    live = live_forms(test)
    problems = [f'{nodeid}: unlocked argument: {arg} has no form under "strategies" in '
                f'{lock_path} (run `oracle-guard lock`)'
                for arg in sorted(set(live) - set(entry.strategies))]
    for arg, locked in sorted(entry.strategies.items()):
        if arg not in live:
            problems.append(f'{nodeid}: tests less than its lock ({lock_path}): args.{arg}: '
                            f'locked {short(locked)}, but the test no longer draws this '
                            'argument')
            continue
        for difference in compare(locked, comparable_at_run_time(locked, live[arg])):
            problems.append(f'{nodeid}: tests less than its lock ({lock_path}): args.{arg}: '
                            f'{difference.describe()}')
    return problems


def write_forms(path: str, items: list) -> None:  # type: ignore[type-arg]
    """identity -> argument -> live form of every collected Hypothesis test, as JSON
    (what ``oracle-guard lock --collect`` locks where the source cannot be read)."""
    import json

    forms: dict[str, Any] = {}
    for item in items:
        test = getattr(item, 'obj', None)
        if getattr(test, 'is_hypothesis_test', False):
            forms.setdefault(function_of(identity_of(item.nodeid)), live_forms(test))
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(forms, f, sort_keys=True, default=repr)


def check_call(cfg: Config, item: Any, test: Any) -> list[str]:
    """Problems of one Hypothesis test at call time (after its fixtures ran), against the
    lock: the settings object and the strategies Hypothesis is about to use."""
    try:
        lock = _cached_lock(cfg)
    except ConfigError as exc:
        return [str(exc)]
    return _item_problems(item, test, lock, at_call=True, cfg=cfg) or []


class ExampleCount:
    """Counts the examples a Hypothesis test really runs, by wrapping the inner test that
    ``@given`` calls once per example (read by Hypothesis at call time). Examples the
    test discarded (``assume``, ``reject``, ``UnsatisfiedAssumption``) do not count;
    explicit ``@example`` cases are counted apart."""

    def __init__(self, test: Any) -> None:
        self.handle = getattr(test, 'hypothesis', None)
        self.inner = getattr(self.handle, 'inner_test', None)
        self.explicit = len(getattr(test, 'hypothesis_explicit_examples', ()) or ())
        self.ran = 0
        self.installed = False
        self.counted: Any = None

    def install(self) -> ExampleCount:
        if self.handle is None or not callable(self.inner):
            return self
        inner = self.inner

        def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                result = inner(*args, **kwargs)
            except BaseException as exc:
                if type(exc).__name__ != 'UnsatisfiedAssumption':
                    self.ran += 1
                raise
            self.ran += 1
            return result

        for attr in ('__name__', '__qualname__', '__module__', '__doc__', '__signature__'):
            if hasattr(inner, attr):
                try:
                    setattr(counted, attr, getattr(inner, attr))
                except (AttributeError, TypeError):
                    pass
        counted.__wrapped__ = inner  # type: ignore[attr-defined]
        try:
            self.handle.inner_test = counted
        except AttributeError:
            return self
        self.counted = counted
        self.installed = True
        return self

    def remove(self) -> None:
        """Put the inner test back, unless another wrapper (the run record's counter)
        already restored what it found: then there is nothing of ours left on it."""
        if self.installed:
            if getattr(self.handle, 'inner_test', None) is self.counted:
                self.handle.inner_test = self.inner
            self.installed = False

    @property
    def generated(self) -> int:
        return max(self.ran - self.explicit, 0)


def check_collected(cfg: Config, items: list) -> list[str]:  # type: ignore[type-arg]
    """Problems (one line each) of the collected Hypothesis tests against the lock."""
    try:
        found = problems_by_test(cfg, items)
    except ConfigError as exc:
        return [str(exc)]
    return [problem for problems in found.values() for problem in problems]


def problems_by_test(cfg: Config, items: list) -> dict[str, list[str]]:  # type: ignore[type-arg]
    """Function identity -> the problems of that collected Hypothesis test against the lock
    (the cases of a parametrized test share one entry, and so their problems); raises
    ``ConfigError`` for a lock that cannot be read."""
    lock = _read_lock(cfg)
    problems: dict[str, list[str]] = {}
    seen: set[str] = set()
    for item in items:
        test = getattr(item, 'obj', None)
        identity = function_of(identity_of(item.nodeid))
        if identity in seen:  # parametrized: one function, one entry
            continue
        found = _item_problems(item, test, lock, cfg=cfg)
        if found is not None:
            seen.add(identity)
            if found:
                problems[identity] = found
    return problems


# (test file, its size and mtime) -> the identities it decorates with @given
_GIVEN_IN: dict[tuple[str, int, int], frozenset[str]] = {}


def _claims_the_lock(cfg: Config | None, item: Any, identity: str) -> bool:
    """Whether a test that Hypothesis does not run is the locked property of its name: it
    lives in a properties file, or its file decorates it with ``@given``. A unit test that
    only shares the name (dateutil's tests/test_rrule.py::test_rrule_roundtrip beside the
    property tests/property/test_rrule_prop.py::test_rrule_roundtrip) is not."""
    if cfg is None:
        return True
    path = os.path.relpath(str(item.path), cfg.root).replace(os.sep, '/')
    if cfg.is_property(path):
        return True
    full = os.path.join(cfg.root, path)
    try:
        stat = os.stat(full)
    except OSError:
        return True  # nothing to read: judged as the property
    key = (full, stat.st_size, stat.st_mtime_ns)
    if key not in _GIVEN_IN:
        from oracle_guard.reading.scanner import parse_python
        from oracle_guard.reading.scanner import scan_tests
        from oracle_guard.reading.scanner import ScanError

        try:
            with open(full, 'rb') as f:
                tests = scan_tests(parse_python(f.read(), path))
        except (OSError, ScanError):
            tests = []
        _GIVEN_IN[key] = frozenset(t.identity for t in tests if t.uses_given)
    return identity in _GIVEN_IN[key]


def _machine_problems(item: Any, entry: Any, lock: DomainLock) -> list[str]:
    """A state machine's test case (``runTest``): its settings against the lock. What its
    rules draw is checked statically (check-generator-lock); Hypothesis builds those
    strategies only inside the run."""
    settings = getattr(getattr(item, 'cls', None), 'settings', None)
    names = [n for n in entry.fields if n in SETTINGS_FIELDS]
    if settings is None:
        live: dict[str, Any] = {n: Unverifiable('the test case has no settings') for n in names}
    else:
        live = {n: None if n == 'seed' else _settings_field(settings, n) for n in names}
        if 'max_examples' in live and skips_generation(_settings_field(settings, 'phases')):
            live['max_examples'] = 0
    return [f'{item.nodeid}: tests less than its lock ({lock.path}): {drift.describe()}'
            for drift in compare_entry(entry, live, {}, None) if drift.field in SETTINGS_FIELDS]


def added_by_hypothesis(item: Any) -> frozenset[str]:
    """The health checks Hypothesis' own pytest plugin suppresses on this item just before
    its call: ``differing_executors`` on a test that is parametrized or uses a parametrized
    fixture (``_hypothesis_pytestplugin.pytest_runtest_call``, HypothesisWorks/hypothesis
    issue 3733), written onto the function, so every later case sees it too. Discounted
    at call time only: at collection the settings are still the ones the test module
    built, so a suppression the user wrote and the lock does not hold fails there (rule 23).
    Where this holds, Hypothesis suppresses the check whatever the settings say, so the
    discount accepts nothing Hypothesis would not do anyway."""
    config = getattr(item, 'config', None)
    manager = getattr(config, 'pluginmanager', None)
    if manager is None or not manager.has_plugin('hypothesispytest'):
        return frozenset()
    closest = getattr(item, 'get_closest_marker', None)
    parametrized = callable(closest) and closest('parametrize') is not None
    info = getattr(item, '_fixtureinfo', None)
    for definitions in getattr(info, 'name2fixturedefs', {}).values():
        parametrized = parametrized or any(getattr(d, 'params', None) for d in definitions)
    return frozenset({'differing_executors'}) if parametrized else frozenset()


def _item_problems(item: Any, test: Any, lock: DomainLock, at_call: bool = False,
                   cfg: Config | None = None) -> list[str] | None:
    """The problems of one item against the lock; None when it is neither a Hypothesis
    test nor a locked identity (nothing to say about it)."""
    identity = function_of(identity_of(item.nodeid))
    when = 'when called' if at_call else 'when collected'
    if not getattr(test, 'is_hypothesis_test', False):
        if identity in lock.entries and callable(test) and _claims_the_lock(cfg, item, identity):
            # A locked property that Hypothesis does not run: @given replaced or
            # patched away (a conftest rebinding hypothesis.given), or the test
            # wrapped so that no example is ever drawn.
            return [f'{item.nodeid}: locked property {identity} is not a Hypothesis test '
                    f'{when}; no example would run']
        return None
    entry = lock.entries.get(identity)
    if entry is None:
        return [f'{item.nodeid}: unlocked property: {identity} has no entry in '
                f'{lock.path} (run `oracle-guard lock`)']
    if getattr(test, '_hypothesis_state_machine_class', None) is not None:
        return _machine_problems(item, entry, lock)
    problems = []
    settings = live_settings(test, [n for n in entry.fields if n in SETTINGS_FIELDS])
    if at_call and isinstance(settings.get('suppress_health_check'), list):
        added = added_by_hypothesis(item)
        settings['suppress_health_check'] = [
            name for name in settings['suppress_health_check'] if name not in added]
    given = given_strategies(test)
    from_src = src_functions(cfg)
    counted = sum(transformations(s, from_src=from_src) for s in given.values())
    phases = live_phases(test)
    strategies = {name: strategy_fields(strategy) for name, strategy in sorted(given.items())}
    for drift in compare_entry(entry, settings, strategies, counted):
        note = ''
        if drift.field == 'max_examples' and skips_generation(phases):
            note = f' (phases {render(phases)} leave out "generate": no example is generated)'
        elif drift.field == 'filters':
            note = ' (.map()/.filter()/.flatmap() on its strategies)'
        problems.append(f'{item.nodeid}: tests less than its lock ({lock.path}): '
                        f'{drift.describe()}{note}')
    problems += form_problems(item.nodeid, lock.path, entry, test)
    return problems
