"""The share of a property's draws its filters reject (rule 55), from Hypothesis's own
statistics.

At the end of each test's run Hypothesis hands its engine's statistics to the callback in
``hypothesis.statistics.collector`` (what ``--hypothesis-show-statistics`` prints). The
``DrawRates`` plugin sets that callback, innermost around each test call (inside
Hypothesis's own pytest plugin, whose callback it calls in turn), and counts the test cases
of the generate phase: all of them, and those rejected, that is a test case Hypothesis marked
invalid (``assume``, ``reject``, a ``.filter()`` that gave up after its retries, a state
machine with no rule whose precondition holds) or one in which a filter had to draw
again (its event ``Retried draw from ... to satisfy filter``, the filter's own retries of a
``.filter()``, a ``sampled_from`` filter, a state machine's rule preconditions). The second
kind is what makes the count follow the share of draws a predicate refuses: a
``.filter()`` retries three times before it gives the test case up, so test cases marked
invalid alone grow with the cube of that share. A test case that overran (the engine's own
limit on its size, hit without any filter) counts in neither.

``taken(item)`` hands what one call drew to the run record (``run_record``, the
``draws`` field of its call event: ``[test cases, rejected]``). Loaded as a plugin of its
own (``-p oracle_guard.runtime.draw_rates``, ``oracle-guard lock --rates``) with
``ORACLE_GUARD_WRITE_RATES=FILE``, it writes identity -> ``[test cases, rejected]`` of the
session to FILE at its end (each pytest-xdist worker to ``FILE.<worker>``).
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any

try:  # pytest.hookimpl itself, without importing pytest into the gate's process
    from pluggy import HookimplMarker
    hookimpl = HookimplMarker('pytest')
except ImportError:  # pragma: no cover -- the gate reads the numbers only
    def hookimpl(**_options: Any) -> Any:  # type: ignore[misc,no-redef]
        return lambda function: function

PLUGIN_NAME = 'oracle-guard-draw-rates'
RATES_ENV = 'ORACLE_GUARD_WRITE_RATES'
RETRIED = 'to satisfy filter'
# id(item) -> [test cases, rejected] of its last call, until the run record takes it.
_DRAWN: dict[int, list[int]] = {}


def rejected_draws(stats: Any) -> tuple[int, int]:
    """(test cases, rejected test cases) of the generate phase of one Hypothesis run's
    statistics (``ConjectureRunner.statistics``); (0, 0) for anything else."""
    phase = stats.get('generate-phase') if isinstance(stats, dict) else None
    cases = phase.get('test-cases') if isinstance(phase, dict) else None
    total = rejected = 0
    for case in cases if isinstance(cases, list) else ():
        if not isinstance(case, dict):
            continue
        retried = any(RETRIED in str(event) for event in case.get('events') or ())
        status = case.get('status')
        if status == 'overrun' and not retried:
            continue  # the engine's own limit on a test case's size, not a predicate
        total += 1
        if status == 'invalid' or retried:
            rejected += 1
    return total, rejected


def taken(item: Any) -> list[int] | None:
    """What the last call of ``item`` drew, once: ``[test cases, rejected]``."""
    return _DRAWN.pop(id(item), None)


class DrawRates:
    """Counts, per test call, the test cases Hypothesis drew and those it rejected."""

    def __init__(self, write_to: str | None = None) -> None:
        self.write_to = write_to
        self.by_identity: dict[str, list[int]] = {}

    @hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_call(self, item: Any) -> Any:
        statistics = sys.modules.get('hypothesis.statistics')
        collector = getattr(statistics, 'collector', None)
        if collector is None or not hasattr(collector, 'with_value'):
            yield
            return
        outer = collector.value
        drawn = [0, 0]

        def note(stats: Any) -> None:
            total, rejected = rejected_draws(stats)
            drawn[0] += total
            drawn[1] += rejected
            if outer is not None:
                outer(stats)

        with collector.with_value(note):
            yield
        if drawn[0]:
            _DRAWN[id(item)] = drawn
            if self.write_to:
                from oracle_guard.oracle.ledger import function_of
                from oracle_guard.oracle.ledger import identity_of

                seen = self.by_identity.setdefault(function_of(identity_of(item.nodeid)),
                                                   [0, 0])
                seen[0] += drawn[0]
                seen[1] += drawn[1]

    def pytest_sessionfinish(self, session: Any) -> None:
        if not self.write_to:
            return
        # A pytest-xdist worker writes a file of its own beside it; the reader sums them.
        # xdist tells a worker by its config's `workerinput`; an environment variable
        # would also name a worker of an outer run this pytest was started from.
        worker = (getattr(session.config, 'workerinput', None) or {}).get('workerid')
        with open(f'{self.write_to}.{worker}' if worker else self.write_to, 'w',
                  encoding='utf-8') as f:
            json.dump(self.by_identity, f, sort_keys=True)


def register(pluginmanager: Any, write_to: str | None = None) -> None:
    """Register the plugin once in this process."""
    plugin = pluginmanager.get_plugin(PLUGIN_NAME)
    if plugin is None:
        pluginmanager.register(DrawRates(write_to), PLUGIN_NAME)
    elif write_to:
        plugin.write_to = write_to


def pytest_configure(config: Any) -> None:
    """Loaded with ``-p oracle_guard.runtime.draw_rates``: write the rates to the file
    ``ORACLE_GUARD_WRITE_RATES`` names."""
    target = os.environ.get(RATES_ENV)
    if target:
        register(config.pluginmanager, target)
