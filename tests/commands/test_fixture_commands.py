"""``oracle-guard fixtures add|rehash|status`` end to end on temporary repositories."""
from __future__ import annotations

import os
import json

import pytest
from builders.repos import sha256

from oracle_guard import cli
from oracle_guard.commands.fixtures import main
from oracle_guard.hooks import check_fixture_manifest

MANIFEST = 'tests/fixtures/manifest.json'
TRACES = 'tests/fixtures/traces.txt'
SCHEMA = 'schemas/error.json'
OK_BIN = 'tests/fixtures/headers/ok.bin'


def rows(repo) -> dict:
    return json.loads(repo.read(MANIFEST))['fixtures']


def stable(document: dict) -> bytes:
    return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + '\n').encode()


def hook(repo, *args):
    return repo.run(check_fixture_manifest.main, '--today', '2026-06-01', *args)


# -- add ---------------------------------------------------------------------------

def test_add_writes_a_row_with_the_current_hash_and_the_hook_accepts_it(guarded):
    guarded.write('tests/fixtures/headers/crlf.bin', b'GET /\r\n')
    result = guarded.run(main, 'add', 'tests/fixtures/headers/crlf.bin', '--source', 'human',
                         '--purpose', 'must reject CR without LF')
    assert result.rc == 0
    assert result.out.startswith('added tests/fixtures/headers/crlf.bin (human, sha256 ')
    assert rows(guarded)['headers/crlf.bin'] == {
        'sha256': sha256(b'GET /\r\n'), 'source': 'human', 'purpose': 'must reject CR without LF',
    }
    guarded.add()
    assert (hook(guarded).rc, hook(guarded).out) == (0, '')


def test_add_keeps_the_manifest_in_one_stable_form(guarded):
    guarded.write(MANIFEST, json.dumps(json.loads(guarded.read(MANIFEST))))  # one line
    guarded.write('tests/fixtures/b.bin', b'b')
    guarded.write('tests/fixtures/a.bin', b'a')
    assert guarded.run(main, 'add', 'tests/fixtures/b.bin', 'tests/fixtures/a.bin',
                       '--source', 'human', '--purpose', 'p').rc == 0
    written = guarded.read(MANIFEST)
    assert written == stable(json.loads(written))
    assert written.endswith(b'}\n') and b'\n  "fixtures": {\n    "a.bin": {' in written
    keys = list(json.loads(written)['fixtures'])
    assert keys == sorted(keys)


def test_add_of_a_folder_writes_a_row_per_file_but_not_for_manifest_or_trace_store(guarded):
    guarded.write('tests/fixtures/checkout/a.json', '{}')
    guarded.write('tests/fixtures/checkout/deep/b.json', '[]')
    guarded.write('.gitignore', 'tests/fixtures/checkout/ignored.tmp\n')
    guarded.write('tests/fixtures/checkout/ignored.tmp', 'x')
    result = guarded.run(main, 'add', 'tests/fixtures/checkout', '--source', 'human',
                         '--purpose', 'p')
    assert result.rc == 0
    assert sorted(rows(guarded)) == ['checkout/a.json', 'checkout/deep/b.json', 'headers/ok.bin']


def test_add_refuses_a_file_that_already_has_a_row(guarded):
    before = guarded.read(MANIFEST)
    result = guarded.run(main, 'add', OK_BIN, '--source', 'human', '--purpose', 'p')
    assert result.rc == 1
    assert 'already has a manifest row' in result.err
    assert f'oracle-guard fixtures rehash {OK_BIN}' in result.err
    assert guarded.read(MANIFEST) == before


def test_add_requires_a_purpose(guarded):
    guarded.write('tests/fixtures/n.bin', b'n')
    for purpose in ((), ('--purpose', '  ')):
        with pytest.raises(SystemExit) as exc:
            guarded.run(main, 'add', 'tests/fixtures/n.bin', '--source', 'human', *purpose)
        assert exc.value.code == 2
    assert 'n.bin' not in rows(guarded)


def test_add_refuses_a_path_outside_the_fixture_root(guarded):
    result = guarded.run(main, 'add', 'src/app.py', '--source', 'human', '--purpose', 'p')
    assert result.rc == 2
    assert result.err.startswith('src/app.py: is not a fixture')


def test_add_refuses_the_manifest_itself(guarded):
    result = guarded.run(main, 'add', MANIFEST, '--source', 'human', '--purpose', 'p')
    assert result.rc == 2


def test_add_recorded_with_a_committed_trace_id_passes_the_hook(guarded):
    guarded.write(TRACES, 'trc_7\n')
    guarded.commit('record trace trc_7')
    guarded.write('tests/fixtures/checkout/ok.json', '{"ok": true}')
    result = guarded.run(main, 'add', 'tests/fixtures/checkout/ok.json', '--source', 'recorded',
                         '--trace-id', 'trc_7', '--purpose', 'the recorded happy path')
    assert (result.rc, result.err) == (0, '')
    assert rows(guarded)['checkout/ok.json']['trace_id'] == 'trc_7'
    guarded.add()
    assert hook(guarded).rc == 0


def test_add_recorded_with_an_unknown_trace_id_is_refused(guarded):
    guarded.write('tests/fixtures/checkout/ok.json', '{}')
    result = guarded.run(main, 'add', 'tests/fixtures/checkout/ok.json', '--source', 'recorded',
                         '--trace-id', 'trc_nope', '--purpose', 'p')
    assert result.rc == 1
    assert "trace id 'trc_nope' is not in the trace store" in result.err
    assert 'checkout/ok.json' not in rows(guarded)


def test_add_recorded_with_an_uncommitted_trace_id_warns_what_the_hook_will_say(guarded):
    guarded.write(TRACES, 'trc_7\n')
    guarded.write('tests/fixtures/checkout/ok.json', '{}')
    result = guarded.run(main, 'add', 'tests/fixtures/checkout/ok.json', '--source', 'recorded',
                         '--trace-id', 'trc_7', '--purpose', 'p')
    assert result.rc == 0
    assert f'git commit -m "record trace trc_7" -- {TRACES}' in result.out
    guarded.add()
    assert hook(guarded).codes == ['OG111']


def test_add_recorded_needs_a_trace_id_and_trace_id_needs_recorded(guarded):
    guarded.write('tests/fixtures/a.json', '{}')
    assert guarded.run(main, 'add', 'tests/fixtures/a.json', '--source', 'recorded',
                       '--purpose', 'p').rc == 2
    assert guarded.run(main, 'add', 'tests/fixtures/a.json', '--source', 'human',
                       '--trace-id', 't', '--purpose', 'p').rc == 2


def test_add_synthetic_validates_the_body_against_the_schema(guarded):
    guarded.write_json(SCHEMA, {'type': 'object', 'required': ['code']})
    guarded.write('tests/fixtures/err.json', '{"message": "m"}')
    result = guarded.run(main, 'add', 'tests/fixtures/err.json', '--source', 'synthetic',
                         '--schema', SCHEMA, '--purpose', 'p')
    assert result.rc == 1
    assert "'code' is a required property" in result.err
    assert 'err.json' not in rows(guarded)
    guarded.write('tests/fixtures/err.json', '{"code": 1}')
    result = guarded.run(main, 'add', 'tests/fixtures/err.json', '--source', 'synthetic',
                         '--schema', SCHEMA, '--purpose', 'p')
    assert result.rc == 0
    assert rows(guarded)['err.json']['schema'] == SCHEMA
    guarded.add()
    assert hook(guarded).rc == 0


def test_add_synthetic_needs_a_schema_file(guarded):
    guarded.write('tests/fixtures/err.json', '{}')
    assert guarded.run(main, 'add', 'tests/fixtures/err.json', '--source', 'synthetic',
                       '--purpose', 'p').rc == 2
    result = guarded.run(main, 'add', 'tests/fixtures/err.json', '--source', 'synthetic',
                         '--schema', 'schemas/none.json', '--purpose', 'p')
    assert result.rc == 2
    assert 'not a regular file' in result.err


def test_add_works_from_a_subfolder_with_relative_paths(guarded, monkeypatch, capsys):
    guarded.write('tests/fixtures/headers/new.bin', b'new')
    monkeypatch.chdir(f'{guarded.path}/tests/fixtures/headers')
    assert main(['add', 'new.bin', '--source', 'human', '--purpose', 'p']) == 0
    assert 'headers/new.bin' in rows(guarded)


def test_commands_are_reached_through_the_oracle_guard_cli(guarded):
    result = guarded.run(cli.main, 'fixtures', 'status')
    assert result.rc == 0
    assert result.out == f'1 fixture(s) match {MANIFEST}\n'


# -- rehash -----------------------------------------------------------------------

def test_rehash_with_a_new_purpose_updates_the_hash_and_the_hook_accepts_it(guarded):
    guarded.write(OK_BIN, b'GET /x HTTP/1.1\r\n\r\n')
    result = guarded.run(main, 'rehash', OK_BIN, '--purpose', 'a request for a sub-path')
    assert result.rc == 0
    assert result.out.startswith(f'rehashed {OK_BIN} (human, sha256 ')
    assert rows(guarded)['headers/ok.bin'] == {
        'sha256': sha256(b'GET /x HTTP/1.1\r\n\r\n'), 'source': 'human',
        'purpose': 'a request for a sub-path',
    }
    guarded.add()
    assert hook(guarded).rc == 0


def test_rehash_of_new_bytes_under_the_old_purpose_is_refused(guarded):
    guarded.write(OK_BIN, b'other')
    before = guarded.read(MANIFEST)
    result = guarded.run(main, 'rehash', OK_BIN, '--purpose', 'a well-formed request')
    assert result.rc == 1
    assert 'the bytes changed but the purpose did not' in result.err
    assert guarded.read(MANIFEST) == before


def test_rehash_judges_the_purpose_against_the_committed_row_too(guarded):
    guarded.write(OK_BIN, b'other')
    doc = json.loads(guarded.read(MANIFEST))
    doc['fixtures']['headers/ok.bin']['sha256'] = sha256(b'other')  # hashed by hand first
    guarded.write_json(MANIFEST, doc)
    result = guarded.run(main, 'rehash', OK_BIN, '--purpose', 'a well-formed request')
    assert result.rc == 1
    assert 'the bytes changed but the purpose did not' in result.err


def test_rehash_of_unchanged_bytes_and_purpose_writes_nothing(guarded):
    guarded.write(MANIFEST, guarded.read(MANIFEST))
    before = guarded.read(MANIFEST)
    result = guarded.run(main, 'rehash', OK_BIN, '--purpose', 'a well-formed request')
    assert (result.rc, result.out) == (0, f'unchanged {OK_BIN}\n')
    assert guarded.read(MANIFEST) == before


def test_rehash_drops_rewritable_by_agent(guarded):
    doc = json.loads(guarded.read(MANIFEST))
    doc['fixtures']['headers/ok.bin']['rewritable_by_agent'] = True
    guarded.write_json(MANIFEST, doc)
    guarded.add()
    assert hook(guarded).codes == ['OG116']
    assert guarded.run(main, 'rehash', OK_BIN, '--purpose', 'a well-formed request').rc == 0
    assert 'rewritable_by_agent' not in rows(guarded)['headers/ok.bin']
    guarded.add()
    assert hook(guarded).rc == 0


def test_rehash_of_a_file_without_a_row_is_refused(guarded):
    guarded.write('tests/fixtures/new.bin', b'x')
    result = guarded.run(main, 'rehash', 'tests/fixtures/new.bin', '--purpose', 'p')
    assert result.rc == 1
    assert 'oracle-guard fixtures add tests/fixtures/new.bin' in result.err


def frozen_recording(repo, expires: str) -> str:
    repo.write(TRACES, 'trc_7\n')
    repo.write('tests/fixtures/checkout/ok.json', '{"code": 1}')
    repo.write_json(SCHEMA, {'type': 'object'})
    doc = json.loads(repo.read(MANIFEST))
    doc['fixtures']['checkout/ok.json'] = {
        'sha256': sha256(b'{"code": 1}'), 'source': 'recorded', 'trace_id': 'trc_7',
        'purpose': 'p'}
    repo.write_json(MANIFEST, doc)
    repo.write('tests/freeze_ledger.yaml', f'''\
        budget: 1
        freezes:
          - id: FZ-3
            nodeid: tests/test_app.py::test_parse
            class: time-dependent
            evidence: "fails around midnight"
            owner: alice
            expires: {expires}
            fixtures: [checkout/ok.json]
        ''')
    repo.commit('frozen recording')
    return 'tests/fixtures/checkout/ok.json'


def test_rehash_refuses_to_turn_a_frozen_recording_into_anything_else(guarded):
    path = frozen_recording(guarded, '2026-12-31')
    before = guarded.read(MANIFEST)
    result = guarded.run(main, 'rehash', path, '--source', 'synthetic', '--schema', SCHEMA,
                         '--purpose', 'now invented', '--today', '2026-06-01')
    assert result.rc == 1
    assert 'live freeze FZ-3 lists this fixture' in result.err
    assert guarded.read(MANIFEST) == before


def test_rehash_refuses_a_frozen_recording_already_relabelled_by_hand(guarded):
    path = frozen_recording(guarded, '2026-12-31')
    doc = json.loads(guarded.read(MANIFEST))
    doc['fixtures']['checkout/ok.json'].update(source='human')
    guarded.write_json(MANIFEST, doc)
    result = guarded.run(main, 'rehash', path, '--source', 'human', '--purpose', 'invented',
                         '--today', '2026-06-01')
    assert result.rc == 1
    assert 'live freeze FZ-3 lists this fixture' in result.err


def test_rehash_turns_a_recording_synthetic_once_the_freeze_expired(guarded):
    path = frozen_recording(guarded, '2026-05-01')
    result = guarded.run(main, 'rehash', path, '--source', 'synthetic', '--schema', SCHEMA,
                         '--purpose', 'now invented', '--today', '2026-06-01')
    assert result.rc == 0
    assert rows(guarded)['checkout/ok.json'] == {
        'sha256': sha256(b'{"code": 1}'), 'source': 'synthetic', 'schema': SCHEMA,
        'purpose': 'now invented'}


# -- status -----------------------------------------------------------------------

def test_status_of_a_clean_manifest_says_so(guarded):
    result = guarded.run(main, 'status')
    assert (result.rc, result.out) == (0, f'1 fixture(s) match {MANIFEST}\n')


def test_status_lists_unmanifested_missing_modified_and_untrusted(guarded):
    guarded.write('tests/fixtures/new.bin', b'untracked but not ignored')
    guarded.write('.gitignore', '*.tmp\n')
    guarded.write('tests/fixtures/skip.tmp', b'ignored')
    guarded.write(OK_BIN, b'changed')
    doc = json.loads(guarded.read(MANIFEST))
    doc['fixtures']['gone.bin'] = {'sha256': '0' * 64, 'source': 'human', 'purpose': 'p'}
    doc['fixtures']['draft.bin'] = {'sha256': sha256(b'd'), 'source': 'untrusted'}
    guarded.write('tests/fixtures/draft.bin', b'd')
    guarded.write_json(MANIFEST, doc)
    result = guarded.run(main, 'status')
    assert result.rc == 1
    lines = [line for line in result.out.splitlines() if not line.startswith('    ')]
    assert lines == [
        'unmanifested: tests/fixtures/new.bin',
        'untrusted:    tests/fixtures/draft.bin',
        'missing:      tests/fixtures/gone.bin',
        f'modified:     {OK_BIN}',
    ]
    assert f'oracle-guard fixtures rehash {OK_BIN} --purpose' in result.out


def test_status_never_writes(guarded):
    guarded.write(OK_BIN, b'changed')
    before = guarded.snapshot()
    guarded.run(main, 'status')
    assert guarded.snapshot() == before


def test_a_broken_manifest_is_a_clear_error_not_a_rewrite(guarded):
    guarded.write(MANIFEST, '{"version": 1, "fixtures": {"a": {}, "a": {}}}\n')
    before = guarded.read(MANIFEST)
    guarded.write('tests/fixtures/n.bin', b'n')
    result = guarded.run(main, 'add', 'tests/fixtures/n.bin', '--source', 'human',
                         '--purpose', 'p')
    assert result.rc == 2
    assert result.err.startswith(f'{MANIFEST}:1: duplicate key')
    assert guarded.read(MANIFEST) == before


def test_add_hashes_the_bytes_git_records_under_autocrlf(repo):
    from oracle_guard.hooks.check_fixture_manifest import main as hook
    from oracle_guard.cli import main as cli

    repo.write('tests/fixtures/manifest.json', '{"version": 1, "fixtures": {}}\n')
    repo.write('tests/fixtures/lines.txt', b'one\ntwo\n')
    repo.commit('text fixture, no row yet')
    repo.git('config', 'core.autocrlf', 'true')
    os.remove(os.path.join(repo.path, 'tests/fixtures/lines.txt'))
    repo.git('checkout', '--', 'tests/fixtures/lines.txt')
    assert repo.read('tests/fixtures/lines.txt') == b'one\r\ntwo\r\n'
    result = repo.run(cli, 'fixtures', 'add', 'tests/fixtures/lines.txt', '--source', 'human',
                      '--purpose', 'two lines')
    assert result.rc == 0, result.err
    repo.add()
    assert repo.run(hook).rc == 0  # commit mode hashes the LF blob in the index
    assert repo.run(hook, '--all-files').rc == 0


def test_rehash_of_a_folder_keeps_the_purpose_of_rows_whose_bytes_did_not_change(repo):
    from oracle_guard.cli import main as cli
    import json
    repo.write('tests/fixtures/manifest.json', '{"version": 1, "fixtures": {}}\n')
    repo.write('tests/fixtures/b.bin', b'B')
    repo.write('tests/fixtures/c.bin', b'C')
    assert repo.run(cli, 'fixtures', 'add', 'tests/fixtures/b.bin', '--source', 'human',
                    '--purpose', 'b must reject an empty header').rc == 0
    assert repo.run(cli, 'fixtures', 'add', 'tests/fixtures/c.bin', '--source', 'human',
                    '--purpose', 'c is the CRLF oracle').rc == 0
    repo.commit('rows')
    repo.write('tests/fixtures/b.bin', b'B2')
    result = repo.run(cli, 'fixtures', 'rehash', 'tests/fixtures', '--purpose',
                      'b now rejects an empty header with 400')
    assert result.rc == 0, result.err
    rows = json.loads(repo.read('tests/fixtures/manifest.json'))['fixtures']
    assert rows['b.bin']['purpose'] == 'b now rejects an empty header with 400'
    assert rows['c.bin']['purpose'] == 'c is the CRLF oracle'


@pytest.mark.parametrize('name', ['trail.bin ', 'back\\slash.bin'])
def test_add_refuses_a_file_name_the_hook_would_reject(repo, name):
    from oracle_guard.cli import main as cli
    repo.write('tests/fixtures/manifest.json', '{"version": 1, "fixtures": {}}\n')
    repo.write(f'tests/fixtures/{name}', b'x')
    before = repo.read('tests/fixtures/manifest.json')
    result = repo.run(cli, 'fixtures', 'add', f'tests/fixtures/{name}', '--source', 'human',
                      '--purpose', 'edge')
    assert result.rc == 2
    assert 'cannot be a manifest key' in result.err
    assert repo.read('tests/fixtures/manifest.json') == before


def test_concurrent_adds_keep_every_row(repo):
    import json
    import subprocess
    import sys
    repo.write('tests/fixtures/manifest.json', '{"version": 1, "fixtures": {}}\n')
    for i in range(12):
        repo.write(f'tests/fixtures/p{i}.bin', str(i).encode())
    code = 'import sys; from oracle_guard.cli import main; sys.exit(main(sys.argv[1:]))'
    procs = [subprocess.Popen([sys.executable, '-c', code, 'fixtures', 'add',
                               f'tests/fixtures/p{i}.bin', '--source', 'human', '--purpose', f'p{i}'],
                              cwd=repo.path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for i in range(12)]
    assert all(p.wait() == 0 for p in procs)
    rows = json.loads(repo.read('tests/fixtures/manifest.json'))['fixtures']
    assert sorted(rows) == sorted(f'p{i}.bin' for i in range(12))
    leftovers = [n for n in os.listdir(os.path.join(repo.path, 'tests/fixtures'))
                 if n.endswith('.oracle-guard-tmp')]
    assert leftovers == []


# -- several fixture folders ---------------------------------------------------------

def test_add_and_status_key_rows_by_repository_path_with_several_fixture_folders(guarded):
    text = guarded.read('pyproject.toml').decode()
    guarded.write('pyproject.toml', text + 'fixtures = ["tests/fixtures/", "tests/data/"]\n',
                  dedent=False)
    doc = json.loads(guarded.read(MANIFEST))
    doc['fixtures'] = {f'tests/fixtures/{key}': row for key, row in doc['fixtures'].items()}
    guarded.write_json(MANIFEST, doc)
    guarded.write('tests/data/cases.json', b'[1]\n')
    guarded.write('tests/data/more/edge.json', b'[0]\n')
    guarded.commit('a second fixture folder, before its rows')
    status = guarded.run(main, 'status')
    assert status.rc == 1
    assert 'unmanifested: tests/data/cases.json' in status.out
    added = guarded.run(main, 'add', 'tests/data', '--source', 'human', '--purpose', 'the cases')
    assert added.rc == 0, added.err
    assert sorted(rows(guarded)) == ['tests/data/cases.json', 'tests/data/more/edge.json',
                                     'tests/fixtures/headers/ok.bin']
    assert rows(guarded)['tests/data/cases.json']['sha256'] == sha256(b'[1]\n')
    guarded.commit('rows for tests/data/')
    assert hook(guarded, '--all-files').rc == 0
    guarded.write('tests/data/more/edge.json', b'[1]\n')
    status = guarded.run(main, 'status')
    assert status.rc == 1
    assert status.out.startswith('modified:     tests/data/more/edge.json'), status.out
