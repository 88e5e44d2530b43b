"""``oracle-guard lock --rates`` (rule 55): the measured share goes into each entry, and a
higher share than the one locked is a loosening."""

from __future__ import annotations

from oracle_guard.commands.lock import apply_rates


def _data(**fields: object) -> dict:
    return {'version': 2, 'properties': {'test_p': {'max_examples': 50, **fields}}}


def test_a_measured_share_is_written_into_its_entry() -> None:
    data, notes = _data(), []
    apply_rates(data, {'test_p': [100, 12], 'test_unlocked': [100, 0]}, [], False, notes)
    assert data['properties'] == {'test_p': {'max_examples': 50, 'rejected_share': 0.12}}
    assert notes == []


def test_a_higher_share_is_kept_out_unless_loosening_is_allowed() -> None:
    data, notes = _data(rejected_share=0.1), []
    apply_rates(data, {'test_p': [100, 40]}, [], False, notes)
    assert data['properties']['test_p']['rejected_share'] == 0.1
    assert notes == ['test_p: rejected_share kept at 0.1; measured 0.4 (pass --allow-loosen '
                     'to raise it)']
    apply_rates(data, {'test_p': [100, 40]}, [], True, notes)
    assert data['properties']['test_p']['rejected_share'] == 0.4


def test_too_few_draws_record_nothing_and_say_so() -> None:
    data, notes = _data(), []
    apply_rates(data, {'test_p': [20, 0]}, [], False, notes)
    assert 'rejected_share' not in data['properties']['test_p']
    assert notes == ['test_p: rejected_share not recorded: 20 test cases drawn, fewer than 50']
