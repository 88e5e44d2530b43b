"""Odd and hostile input: never a crash, never a traceback, never a modified file."""
from __future__ import annotations

import os

import pytest
from builders.repos import sha256

from oracle_guard.findings import ConfigError
from oracle_guard.hooks import check_fixture_manifest
from oracle_guard.hooks import check_named_freezes
from oracle_guard.hooks import check_properties_present
from oracle_guard.oracle.documents import load_json
from oracle_guard.oracle.documents import load_yaml
from oracle_guard.oracle.ledger import parse_ledger
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import scan_file
from oracle_guard.reading.scanner import ScanError

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python

BILLION_LAUGHS = b'''\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
budget: *g
'''


def test_billion_laughs_ledger_fails_fast_with_a_clear_message():
    with pytest.raises(ConfigError) as info:
        parse_ledger(BILLION_LAUGHS, 'tests/freeze_ledger.yaml')
    assert info.value.line == 2
    assert 'aliases' in info.value.message


def test_deeply_nested_json_is_a_clean_error():
    with pytest.raises(ConfigError, match='nested too deeply'):
        load_json(b'[' * 200_000 + b']' * 200_000, 'm.json')


def test_deeply_nested_yaml_is_a_clean_error():
    with pytest.raises(ConfigError):
        load_yaml(b'[' * 200_000 + b']' * 200_000, 'l.yaml')


def test_yaml_python_tags_are_refused():
    with pytest.raises(ConfigError, match='constructor'):
        load_yaml(b'budget: !!python/object/apply:os.system ["echo pwned"]\n', 'l.yaml')


def test_bom_and_crlf_documents_parse():
    assert load_json(b'\xef\xbb\xbf{"a":\r\n 1}\r\n', 'm.json') == {'a': 1}
    assert load_yaml(b'\xef\xbb\xbfbudget: 0\r\nfreezes: []\r\n', 'l.yaml') == {'budget': 0, 'freezes': []}


def test_nul_bytes_in_a_test_file_are_a_scan_error():
    with pytest.raises(ScanError, match='NUL'):
        parse_python(b'import pytest\0\n')


def test_python2_syntax_is_a_scan_error():
    with pytest.raises(ScanError) as info:
        parse_python(b'import pytest\n\ndef test_a():\n    print "skip"\n')
    assert info.value.line == 4


def test_bom_crlf_and_tabs_in_test_files_are_scanned():
    source = b'\xef\xbb\xbfimport pytest\r\n\r\nclass TestA:\r\n\t@pytest.mark.skip\r\n\tdef test_a(self):\r\n\t\tassert 0\r\n'
    scanned = scan_file(source)
    assert [(s.line, s.kind, s.targets) for s in scanned.silences] == [(4, 'skip', ('TestA::test_a',))]


def test_latin1_file_with_coding_cookie_is_scanned():
    source = '# -*- coding: latin-1 -*-\nimport pytest\n# caf\xe9\n@pytest.mark.xfail\ndef test_a():\n    pass\n'.encode('latin-1')
    assert [s.kind for s in scan_file(source).silences] == ['xfail']


def test_ten_megabyte_single_line_test_file(repo):
    ledger = repo.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n')
    assert ledger
    big = b'import pytest\nDATA = "' + b'x' * (10 * 1024 * 1024) + b'"\n@pytest.mark.skip\ndef test_a():\n    pass\n'
    path = repo.write('tests/test_big.py', big)
    result = repo.run(check_named_freezes.main, path)
    assert result.codes == ['OG301']
    assert result.out.startswith('tests/test_big.py:3:2:')


def test_test_file_symlink_leaving_the_repository_is_reported(repo, tmp_path):
    outside = tmp_path / 'outside_test.py'
    outside.write_text('import pytest\n@pytest.mark.skip\ndef test_a():\n    pass\n')
    os.makedirs(os.path.join(repo.path, 'tests'))
    os.symlink(str(outside), os.path.join(repo.path, 'tests', 'test_link.py'))
    result = repo.run(check_named_freezes.main, 'tests/test_link.py')
    assert result.codes == ['OG307']
    assert 'symlink' in result.out


def test_directory_where_a_manifest_is_expected_is_not_a_crash(guarded):
    os.remove(os.path.join(guarded.path, 'tests/fixtures/manifest.json'))
    os.makedirs(os.path.join(guarded.path, 'tests/fixtures/manifest.json'))
    guarded.write('tests/fixtures/manifest.json/inner.json', '{}')
    result = guarded.run(check_fixture_manifest.main, '--all-files')
    assert result.rc in (1, 2)
    assert 'Traceback' not in result.err + result.out


def test_fixture_symlink_inside_the_repository_is_still_refused(guarded):
    os.symlink('headers/ok.bin', os.path.join(guarded.path, 'tests/fixtures/alias.bin'))
    import json
    doc = json.loads(guarded.read('tests/fixtures/manifest.json'))
    doc['fixtures']['alias.bin'] = {'sha256': sha256(b'GET / HTTP/1.1\r\n\r\n'), 'source': 'human', 'purpose': 'p'}
    guarded.write_json('tests/fixtures/manifest.json', doc)
    guarded.add()
    result = guarded.run(check_fixture_manifest.main)
    assert result.codes == ['OG106']
    assert "'headers/ok.bin'" in result.out


def test_property_file_that_is_a_symlink_does_not_count(repo, tmp_path):
    outside = tmp_path / 'test_real.py'
    outside.write_text('def test_a():\n    assert 1\n')
    os.makedirs(os.path.join(repo.path, 'tests/properties'))
    os.symlink(str(outside), os.path.join(repo.path, 'tests/properties/test_link.py'))
    repo.add()
    assert repo.run(check_properties_present.main).codes == ['OG401']


def test_manifest_with_wrong_types_is_reported_not_crashed(guarded):
    guarded.write('tests/fixtures/manifest.json', '{"version": 1, "fixtures": {"headers/ok.bin": ["not", "a", "row"]}}')
    guarded.add()
    result = guarded.run(check_fixture_manifest.main)
    assert result.rc == 1
    assert 'OG107' in result.codes


@pytest.mark.parametrize('doc', [
    '[]', '"manifest"', '{"version": 2, "fixtures": {}}', '{"version": 1, "fixtures": []}',
    '{"version": 1, "fixtures": {}, "extra": 1}',
])
def test_manifest_that_is_not_a_manifest_is_exit_2(guarded, doc):
    guarded.write('tests/fixtures/manifest.json', doc)
    guarded.add()
    before = guarded.snapshot()
    result = guarded.run(check_fixture_manifest.main)
    assert result.rc == 2
    assert result.err.startswith('tests/fixtures/manifest.json:')
    assert guarded.snapshot() == before


def test_internal_errors_are_one_line_unless_debug(guarded, monkeypatch):
    def broken(ctx):
        raise RuntimeError('boom')

    from oracle_guard.runner import run_hook
    result = guarded.run(lambda argv: run_hook(broken, argv, 'x'))
    assert result.rc == 3
    assert 'internal error: RuntimeError: boom' in result.err
    assert 'Traceback' not in result.err
    with pytest.raises(RuntimeError):
        guarded.run(lambda argv: run_hook(broken, argv, 'x'), '--debug')


@pytest.mark.parametrize('expires', ['2026-02-30', '2026-13-01', '2026-12-31T25:00:00'])
def test_impossible_dates_in_the_ledger_are_findings_not_tracebacks(repo, expires):
    from oracle_guard.hooks import check_freeze_ledger
    repo.write('tests/test_a.py', 'def test_one():\n    assert 1\n')
    repo.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes:\n  - id: FZ-1\n'
               '    nodeid: tests/test_a.py::test_one\n    class: order-dependent\n'
               f'    evidence: x\n    owner: alice\n    expires: {expires}\n')
    repo.add()
    result = repo.run(check_freeze_ledger.main, '--today', '2026-11-29')
    assert result.rc == 1, result.err
    assert 'OG502' in result.codes
    assert 'Traceback' not in result.err and 'internal error' not in result.err


def test_symlinked_domain_lock_is_refused(guarded, tmp_path):
    from oracle_guard.hooks import check_generator_lock
    outside = tmp_path / 'lock.json'
    outside.write_bytes(guarded.read('tests/domain_lock.json'))
    os.remove(os.path.join(guarded.path, 'tests/domain_lock.json'))
    os.symlink(str(outside), os.path.join(guarded.path, 'tests/domain_lock.json'))
    guarded.commit('link the lock')
    result = guarded.run(check_generator_lock.main, '--all-files')
    assert result.rc == 2
    assert 'tests/domain_lock.json:1: is a symlink' in result.err


def test_today_is_the_utc_date_whatever_the_time_zone(monkeypatch):
    import datetime
    import time
    from oracle_guard.config import Config
    from oracle_guard.context import RunContext
    for zone in ('Etc/GMT+12', 'Etc/GMT-14'):  # a day apart from each other
        monkeypatch.setenv('TZ', zone)
        time.tzset()
        utc = datetime.datetime.now(datetime.timezone.utc).date()
        assert RunContext(cfg=Config(root='.')).today == utc
    monkeypatch.undo()
    time.tzset()
