"""Human-owned properties of oracle-guard's own parsers: any input gives a result or a
clean error, never an exception a user would see as a traceback."""
from __future__ import annotations

import json

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from oracle_guard.config import config_from_table
from oracle_guard.config import read_table
from oracle_guard.oracle.documents import load_json
from oracle_guard.oracle.documents import load_yaml
from oracle_guard.findings import ConfigError
from oracle_guard.oracle.ledger import parse_ledger
from oracle_guard.oracle.manifest import parse_manifest
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.scanner import scan_silences
from oracle_guard.reading.scanner import scan_tests

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=2048))
def test_manifest_parser_never_crashes_on_bytes(raw):
    try:
        manifest = parse_manifest(raw, 'manifest.json')
    except ConfigError as exc:
        assert exc.path == 'manifest.json'
        assert exc.message
    else:
        assert all(f.path == 'manifest.json' for f in manifest.problems)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.fixed_dictionaries({'version': st.just(1)}, optional={'fixtures': json_values}))
def test_manifest_parser_never_crashes_on_documents(doc):
    raw = json.dumps(doc).encode()
    try:
        manifest = parse_manifest(raw, 'manifest.json')
    except ConfigError as exc:
        assert exc.line >= 0
    else:
        for row in manifest.rows.values():
            assert not row.path.startswith('/') and '..' not in row.path.split('/')


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=2048))
def test_ledger_parser_never_crashes_on_bytes(raw):
    try:
        ledger = parse_ledger(raw, 'ledger.yaml')
    except ConfigError as exc:
        assert exc.path == 'ledger.yaml'
    else:
        for row in ledger.rows:
            assert isinstance(row.identity, str)
            row.is_live(__import__('datetime').date(2026, 1, 1))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(json_values)
def test_yaml_and_json_readers_agree_or_fail_cleanly(value):
    text = json.dumps(value).encode()
    assert load_json(text, 'a.json') == value
    try:
        loaded = load_yaml(text, 'a.yaml')
    except ConfigError:
        return
    if isinstance(value, (dict, list)) and value:
        assert isinstance(loaded, type(value))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=2048))
def test_scanner_never_crashes_on_bytes(raw):
    try:
        tree = parse_python(raw, 'tests/test_x.py')
    except ScanError as exc:
        assert exc.line >= 1 and exc.message
        return
    text = raw.decode('utf-8', 'replace')
    for silence in scan_silences(tree, text):
        assert silence.line >= 1
    scan_tests(tree)


SNIPPETS = st.sampled_from([
    'import pytest', 'import pytest as pt', 'from pytest import mark, skip',
    'import unittest', 'from unittest import SkipTest', 'pytestmark = pytest.mark.skip',
    '@pytest.mark.skip(reason="FZ-1")', '@pt.mark.xfail', 'def test_a():', '    pass',
    '    skip("FZ-2")', '    raise SkipTest', 'class TestA(unittest.TestCase):',
    '    def test_b(self):', '        self.skipTest("x")', '        assert 1', 's = pytest.mark.skip',
    '@s', '@mark.parametrize("x", [pytest.param(1, marks=mark.xfail)])',
])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(SNIPPETS, max_size=12))
def test_scanner_handles_any_arrangement_of_silences(lines):
    source = '\n'.join(lines).encode()
    try:
        tree = parse_python(source)
    except ScanError:
        return
    for silence in scan_silences(tree, source.decode()):
        assert silence.scope in ('test', 'class', 'module')
        assert all('FZ-' in fid for fid in silence.freeze_ids)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text(max_size=400))
def test_config_reader_never_crashes(text):
    text = '[tool.oracle-guard]\n' + text
    try:
        table = read_table(text)
        config_from_table('/repo', table, text)
    except ConfigError as exc:
        assert exc.path == 'pyproject.toml'


lock_fields = st.dictionaries(
    st.sampled_from(['max_examples', 'deadline_ms', 'seed', 'derandomize', 'min_size',
                     'max_size', 'alphabet', 'filters', 'args', 'phases', 'bogus']),
    json_values, max_size=5,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=2048))
def test_domain_lock_parser_never_crashes_on_bytes(raw):
    from oracle_guard.oracle.domain_lock import parse_lock
    try:
        parse_lock(raw, 'tests/domain_lock.json')
    except ConfigError as exc:
        assert exc.path == 'tests/domain_lock.json'


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.dictionaries(st.text(max_size=12), lock_fields, max_size=4))
def test_domain_lock_parser_never_crashes_on_documents(properties):
    from oracle_guard.oracle.domain_lock import parse_lock
    raw = json.dumps({'version': 1, 'properties': properties}).encode()
    try:
        lock = parse_lock(raw, 'tests/domain_lock.json')
    except ConfigError as exc:
        assert exc.line >= 0
    else:
        assert set(lock.entries) <= set(properties)
