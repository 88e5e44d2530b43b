"""Rule 55's measure and tolerance: the share of a property's test cases its filters
rejected, from Hypothesis's statistics, and when a rise counts."""

from __future__ import annotations

import pytest

from oracle_guard.findings import ConfigError
from oracle_guard.oracle.domain_lock import loosened
from oracle_guard.oracle.domain_lock import loosened_entries
from oracle_guard.oracle.domain_lock import parse_lock
from oracle_guard.oracle.rejected_share import rose
from oracle_guard.oracle.rejected_share import share
from oracle_guard.runtime.draw_rates import rejected_draws

RETRY = 'Retried draw from lists(integers()).filter(accepted) to satisfy filter'


def _stats(*cases: tuple[str, list[str]]) -> dict:
    return {'generate-phase': {'test-cases': [{'status': status, 'events': events}
                                              for status, events in cases]},
            'shrink-phase': {'test-cases': [{'status': 'invalid', 'events': []}] * 9}}


def test_invalid_and_retried_test_cases_count_as_rejected_and_overruns_not_at_all() -> None:
    stats = _stats(('valid', []), ('valid', [RETRY]), ('invalid', []),
                   ('invalid', [RETRY, 'gave up because: unable to satisfy']),
                   ('overrun', []), ('overrun', [RETRY]), ('interesting', []))
    # The shrink phase's test cases are not draws of the domain.
    assert rejected_draws(stats) == (6, 4)


def test_statistics_of_another_shape_count_nothing() -> None:
    assert rejected_draws(None) == (0, 0)
    assert rejected_draws({'generate-phase': {'test-cases': 'x'}}) == (0, 0)


@pytest.mark.parametrize(('locked', 'draws', 'rejected', 'rises'), [
    (0.0, 100, 24, False),   # below the absolute rise
    (0.0, 100, 25, True),
    (0.0, 49, 49, False),    # too few test cases to judge
    (0.2, 100, 39, False),   # 0.19 up, and under twice the locked share
    (0.2, 100, 45, True),
    (0.3, 100, 59, False),   # 0.29 up but not twice 0.3
    (0.3, 100, 60, True),
])
def test_a_rise_counts_past_the_absolute_and_the_relative_tolerance(
        locked: float, draws: int, rejected: int, rises: bool) -> None:
    assert rose(locked, draws, rejected) is rises


def test_the_share_is_rounded_and_none_below_the_minimum() -> None:
    assert share(300, 100) == 0.333
    assert share(10, 1) is None


def _lock(entry: str) -> bytes:
    return ('{"version": 1, "properties": {"test_p": {"max_examples": 50%s}}}' % entry
            ).encode()


def test_the_lock_takes_a_share_from_0_to_1_and_an_entry_without_it_stays_valid() -> None:
    assert parse_lock(_lock(', "rejected_share": 0.25'), 'lock.json').entries[
        'test_p'].fields['rejected_share'] == 0.25
    assert 'rejected_share' not in parse_lock(_lock(''), 'lock.json').entries['test_p'].fields
    for bad in ('1.5', '-0.1', '"a lot"', 'true'):
        with pytest.raises(ConfigError, match='rejected_share'):
            parse_lock(_lock(f', "rejected_share": {bad}'), 'lock.json')


def test_a_higher_locked_share_or_a_removed_one_loosens_the_lock() -> None:
    assert loosened('rejected_share', 0.1, 0.2)
    assert not loosened('rejected_share', 0.2, 0.1)
    base = parse_lock(_lock(', "rejected_share": 0.1'), 'lock.json')
    raised = parse_lock(_lock(', "rejected_share": 0.6'), 'lock.json')
    removed = parse_lock(_lock(''), 'lock.json')
    assert [what for _, what, _ in loosened_entries(base, raised)] == ['rejected_share 0.1 -> 0.6']
    assert [what for _, what, _ in loosened_entries(base, removed)] == [
        'rejected_share removed (was 0.1)']
