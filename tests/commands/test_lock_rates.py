"""``oracle-guard lock --rates`` (rule 55): the measured share goes into each entry, and a
higher share than the one locked is a loosening."""

from __future__ import annotations

import pytest

from oracle_guard.commands.lock import apply_rates
from oracle_guard.commands.lock import measured_rates
from oracle_guard.config import load_config


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


PROPERTY = '''\
from hypothesis import given, settings, strategies as st


@settings(max_examples=60, database=None)
@given(st.integers(0, 99).filter(lambda x: x % 2 == 0))
def test_evens(x):
    assert x % 2 == 0


@settings(max_examples=60, database=None)
@given(st.integers(0, 99))
def test_all(x):
    assert x >= 0
'''


@pytest.mark.parametrize('addopts', ['', '-n 2'], ids=['one-process', 'xdist'])
def test_the_properties_run_gives_each_property_its_draws(
        tmp_path, monkeypatch: pytest.MonkeyPatch, addopts: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / 'pyproject.toml').write_text('[tool.oracle-guard]\n')
    (tmp_path / 'tests' / 'properties').mkdir(parents=True)
    (tmp_path / 'tests' / 'properties' / 'test_p.py').write_text(PROPERTY)
    monkeypatch.setenv('PYTEST_ADDOPTS', addopts)
    notes: list[str] = []
    rates = measured_rates(load_config(str(tmp_path)), notes)
    assert notes == []
    assert sorted(rates) == ['test_all', 'test_evens']
    assert rates['test_all'][0] >= 60 and rates['test_all'][1] == 0
    # Half the integers are odd: the filter draws again in about half the test cases.
    draws, rejected = rates['test_evens']
    assert draws >= 60 and 0.2 < rejected / draws < 0.8, rates
