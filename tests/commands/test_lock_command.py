"""`oracle-guard lock`: the human-run command that writes the domain lock."""
from __future__ import annotations

import json

from oracle_guard.hooks import check_generator_lock
from oracle_guard.commands.lock import main

LOCK = 'tests/domain_lock.json'
TWO_ARGS = '''\
from hypothesis import given, seed, settings, strategies as st

MAX = 4096


@seed(20260916)
@settings(max_examples=200, deadline=400, derandomize=True)
@given(key=st.text("0123456789abcdef", min_size=1), buf=st.binary(max_size=MAX).filter(bool))
def test_codec(key, buf):
    assert key and buf
'''


def test_lock_writes_entries_with_stable_formatting_and_prints_the_diff(guarded):
    guarded.write('tests/test_codec.py', TWO_ARGS)
    result = guarded.run(main)
    assert result.rc == 0, result.err
    text = guarded.read(LOCK).decode()
    data = json.loads(text)
    assert data['properties']['test_codec'] == {
        'max_examples': 200, 'deadline_ms': 400, 'derandomize': True, 'seed': 20260916,
        'filters': 1,
        'args': {'key': {'alphabet': '0123456789abcdef', 'min_size': 1},
                 'buf': {'max_size': 4096}},
    }
    assert text == json.dumps(data, indent=2, sort_keys=True) + '\n'
    assert '+++ b/tests/domain_lock.json' in result.out and '+    "test_codec": {' in result.out
    # what it wrote is exactly what the hook accepts
    guarded.add()
    assert guarded.run(check_generator_lock.main, '--all-files').rc == 0


def test_lock_never_lowers_an_entry_without_allow_loosen(guarded):
    guarded.write_json(LOCK, {'version': 1, 'properties': {
        'test_parse_never_throws': {'max_examples': 500}}})
    result = guarded.run(main)
    assert result.rc == 0
    entry = json.loads(guarded.read(LOCK))['properties']['test_parse_never_throws']
    assert entry['max_examples'] == 500
    assert 'max_examples kept at 500; the test now has 100' in result.out
    result = guarded.run(main, '--allow-loosen')
    entry = json.loads(guarded.read(LOCK))['properties']['test_parse_never_throws']
    assert entry['max_examples'] == 100
    assert '-      "max_examples": 500' in result.out


def test_lock_raises_an_entry_when_the_test_got_stronger(guarded):
    guarded.write('tests/properties/test_parse.py', '''\
        from hypothesis import given, settings, strategies as st


        @settings(max_examples=1000)
        @given(st.binary())
        def test_parse_never_throws(buf):
            assert isinstance(buf, bytes)
        ''')
    guarded.run(main)
    assert json.loads(guarded.read(LOCK))['properties']['test_parse_never_throws'] == {
        'max_examples': 1000, 'deadline_ms': 200}


def test_lock_keeps_entries_of_tests_that_are_gone(guarded):
    guarded.write_json(LOCK, {'version': 1, 'properties': {
        'test_parse_never_throws': {'max_examples': 100}, 'test_gone': {'max_examples': 9}}})
    result = guarded.run(main)
    assert json.loads(guarded.read(LOCK))['properties']['test_gone'] == {'max_examples': 9}
    assert 'test_gone: no @given test has this identity any more; entry kept' in result.out


def test_lock_up_to_date_changes_nothing(guarded):
    guarded.run(main)
    before = guarded.read(LOCK)
    result = guarded.run(main)
    assert result.out.endswith('tests/domain_lock.json: up to date\n')
    assert guarded.read(LOCK) == before


def test_lock_dry_run_prints_without_writing(guarded):
    guarded.write('tests/test_codec.py', TWO_ARGS)
    before = guarded.read(LOCK)
    result = guarded.run(main, '--dry-run')
    assert '+    "test_codec": {' in result.out
    assert guarded.read(LOCK) == before


def test_lock_only_named_identities(guarded):
    guarded.write('tests/test_codec.py', TWO_ARGS)
    guarded.run(main, 'test_parse_never_throws')
    assert 'test_codec' not in json.loads(guarded.read(LOCK))['properties']


def test_lock_skips_unverifiable_values_with_a_note(guarded):
    guarded.write('tests/test_x.py', '''\
        from hypothesis import given, settings, strategies as st
        from helpers import N


        @settings(max_examples=N)
        @given(st.binary(max_size=N))
        def test_x(buf):
            assert buf is not None
        ''')
    result = guarded.run(main)
    assert 'test_x: max_examples not locked: N is not a constant of this module' in result.out
    assert json.loads(guarded.read(LOCK))['properties']['test_x'] == {'deadline_ms': 200}


def test_lock_refuses_a_malformed_lock(guarded):
    guarded.write(LOCK, '{"version": 1, "properties": {"t": {"max_examples": 0}}}')
    result = guarded.run(main)
    assert result.rc == 2
    assert result.err.startswith('tests/domain_lock.json:1: t: max_examples must be')


def test_lock_counts_map_as_a_filter_and_skips_examples_never_generated(guarded):
    guarded.write('tests/test_x.py', '''\
        from hypothesis import given, Phase, settings, strategies as st


        @settings(max_examples=500, phases=[Phase.explicit])
        @given(st.binary(max_size=64).map(bytes))
        def test_x(buf):
            assert buf is not None
        ''')
    result = guarded.run(main)
    assert 'test_x: max_examples not locked: phases ["explicit"] leave out "generate"' \
        in result.out
    entry = json.loads(guarded.read(LOCK))['properties']['test_x']
    assert entry == {'deadline_ms': 200, 'filters': 1, 'max_size': 64,
                     'phases': ['explicit']}
    guarded.add()
    assert guarded.run(check_generator_lock.main, '--all-files').rc == 0
