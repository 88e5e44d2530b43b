"""Decision rows 5-9: provenance rules of check-fixture-manifest, on real git repositories."""
from __future__ import annotations

import json
import subprocess
import sys

from builders.repos import sha256

from oracle_guard.hooks.check_fixture_manifest import main

MANIFEST = 'tests/fixtures/manifest.json'
TRACES = 'tests/fixtures/traces.txt'
LEDGER = 'tests/freeze_ledger.yaml'
SCHEMA = 'schemas/checkout_error.json'
ERROR_SCHEMA = {
    'type': 'object',
    'required': ['code', 'message'],
    'properties': {'code': {'type': 'integer'}, 'message': {'type': 'string'}},
}
TODAY = '2026-06-01'


def manifest(repo) -> dict:
    return json.loads(repo.read(MANIFEST))


def put_fixture(repo, key: str, body: bytes, **row) -> dict:
    """Write a fixture and its row (with the right hash); returns the row."""
    repo.write(f'tests/fixtures/{key}', body)
    doc = manifest(repo)
    doc['fixtures'][key] = {'sha256': sha256(body), **row}
    repo.write_json(MANIFEST, doc)
    return doc['fixtures'][key]


def edit_row(repo, key: str, **fields) -> None:
    doc = manifest(repo)
    doc['fixtures'][key].update(fields)
    for name, value in fields.items():
        if value is None:
            del doc['fixtures'][key][name]
    repo.write_json(MANIFEST, doc)


def add_trace(repo, trace_id: str) -> None:
    repo.write(TRACES, repo.read(TRACES) + f'{trace_id}\n'.encode())


def freeze(repo, *fixtures: str, expires: str = '2026-12-31') -> None:
    repo.write(LEDGER, f'''\
        budget: 1
        freezes:
          - id: FZ-1
            nodeid: tests/test_app.py::test_parse
            class: order-dependent
            evidence: "fails after test_cache_warm"
            owner: alice
            expires: {expires}
            fixtures: [{", ".join(fixtures)}]
        ''')


def run(repo, *args):
    return repo.run(main, '--today', TODAY, *args)


# -- row 5: recorded fixtures cite a trace id the base already knew --------------------

def test_recorded_row_whose_trace_id_was_committed_earlier_passes(guarded):
    add_trace(guarded, 'trc_0041')
    guarded.commit('record trace trc_0041')
    put_fixture(guarded, 'checkout/ok.json', b'{"ok": true}\n', source='recorded',
                trace_id='trc_0041', purpose='the recorded happy path')
    guarded.add()
    result = run(guarded)
    assert (result.rc, result.out) == (0, '')


def test_recorded_row_minting_its_trace_id_in_the_same_change_fails(guarded):
    add_trace(guarded, 'trc_0041')
    put_fixture(guarded, 'checkout/ok.json', b'{"ok": true}\n', source='recorded',
                trace_id='trc_0041', purpose='the recorded happy path')
    guarded.add()
    result = run(guarded)
    assert result.rc == 1
    assert result.codes == ['OG111']
    assert 'added by this same change' in result.out
    assert 'cannot mint a trace id' in result.out
    assert f'git commit -m "record trace trc_0041" -- {TRACES}' in result.out


def test_recorded_row_with_trace_id_unknown_anywhere_fails(guarded):
    put_fixture(guarded, 'checkout/ok.json', b'{}', source='recorded', trace_id='trc_nope',
                purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG111']
    text = guarded.read(MANIFEST).decode().splitlines()  # the finding points at trace_id
    trace_line = next(i for i, t in enumerate(text, 1) if '"trace_id"' in t)
    assert result.out.startswith(f'{MANIFEST}:{trace_line}:1: OG111')


def test_recorded_row_without_trace_id_fails(guarded):
    put_fixture(guarded, 'checkout/ok.json', b'{}', source='recorded', purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG110']
    assert 'oracle-guard fixtures rehash tests/fixtures/checkout/ok.json --source recorded ' \
        '--trace-id TRACE_ID --purpose' in result.out


def test_minting_split_across_commits_of_one_range_still_fails(guarded):
    guarded.git('checkout', '-q', '-b', 'agent')
    add_trace(guarded, 'trc_0041')
    guarded.commit('record trace')
    put_fixture(guarded, 'checkout/ok.json', b'{}', source='recorded', trace_id='trc_0041',
                purpose='p')
    guarded.commit('use it')
    result = run(guarded, '--from-ref', 'main', '--to-ref', 'agent')
    assert result.codes == ['OG111']


def test_trace_id_landed_on_main_before_the_range_passes(guarded):
    add_trace(guarded, 'trc_0041')
    guarded.commit('record trace on main')
    guarded.git('checkout', '-q', '-b', 'agent')
    put_fixture(guarded, 'checkout/ok.json', b'{}', source='recorded', trace_id='trc_0041',
                purpose='p')
    guarded.commit('use it')
    result = run(guarded, '--from-ref', 'main', '--to-ref', 'agent')
    assert (result.rc, result.out) == (0, '')


def test_all_files_judges_the_last_commit_that_minted_a_trace(guarded):
    add_trace(guarded, 'trc_0041')
    put_fixture(guarded, 'checkout/ok.json', b'{}', source='recorded', trace_id='trc_0041',
                purpose='p')
    guarded.commit('mint and use in one commit')
    result = run(guarded, '--all-files')
    assert result.codes == ['OG111']


def test_trace_id_removed_from_the_store_under_a_recorded_row_fails(guarded):
    add_trace(guarded, 'trc_0041')
    guarded.commit('record trace')
    put_fixture(guarded, 'checkout/ok.json', b'{}', source='recorded', trace_id='trc_0041',
                purpose='p')
    guarded.commit('use it')
    guarded.write(TRACES, '# emptied\n')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG111']
    assert 'is not in the trace store' in result.out


def test_trace_store_with_two_ids_on_one_line_is_a_clear_error(guarded):
    guarded.write(TRACES, 'trc_1 trc_2\n')
    put_fixture(guarded, 'checkout/ok.json', b'{}', source='recorded', trace_id='trc_1',
                purpose='p')
    guarded.add()
    result = run(guarded, '--all-files')
    assert result.rc == 2
    assert result.err.startswith(f'{TRACES}:1: trace store line')
    assert 'Traceback' not in result.err


# -- row 6: synthetic fixtures are held to a schema -----------------------------------

def synthetic_setup(repo) -> None:
    repo.write_json(SCHEMA, ERROR_SCHEMA)
    repo.commit('schema')


def test_synthetic_row_without_schema_fails(guarded):
    put_fixture(guarded, 'checkout/timeout.json', b'{"code": 504, "message": "x"}',
                source='synthetic', purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG112']
    assert '--source synthetic --schema SCHEMA.json --purpose' in result.out


def test_synthetic_json_body_matching_its_schema_passes(guarded):
    synthetic_setup(guarded)
    put_fixture(guarded, 'checkout/timeout.json', b'{"code": 504, "message": "timeout"}',
                source='synthetic', schema=SCHEMA, purpose='p')
    guarded.add()
    result = run(guarded)
    assert (result.rc, result.out) == (0, '')


def test_synthetic_json_body_invalid_against_its_schema_fails_at_the_line(guarded):
    synthetic_setup(guarded)
    body = b'{\n  "code": "504",\n  "message": "timeout"\n}\n'
    put_fixture(guarded, 'checkout/timeout.json', body, source='synthetic', schema=SCHEMA,
                purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG114']
    assert result.out.startswith('tests/fixtures/checkout/timeout.json:2:1: OG114 synthetic '
                                 f'fixture does not match {SCHEMA} at $.code:')
    assert 'oracle-guard fixtures rehash tests/fixtures/checkout/timeout.json' in result.out


def test_synthetic_yaml_body_invalid_against_its_schema_fails(guarded):
    synthetic_setup(guarded)
    put_fixture(guarded, 'checkout/timeout.yaml', b'code: 504\n', source='synthetic',
                schema=SCHEMA, purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG114']
    assert "'message' is a required property" in result.out


def test_synthetic_body_is_judged_by_its_file_type_not_one_suffix(guarded):
    # A GeoJSON document is JSON (identify's file types): held to its schema too.
    synthetic_setup(guarded)
    put_fixture(guarded, 'checkout/area.geojson', b'{"code": "504"}', source='synthetic',
                schema=SCHEMA, purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG114']
    assert 'does not match' in result.out


def test_synthetic_json_body_that_does_not_parse_fails(guarded):
    synthetic_setup(guarded)
    put_fixture(guarded, 'checkout/timeout.json', b'{"code": 504,', source='synthetic',
                schema=SCHEMA, purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG114']
    assert 'is not valid JSON' in result.out


def test_synthetic_binary_fixture_needs_only_its_schema(guarded):
    synthetic_setup(guarded)
    put_fixture(guarded, 'checkout/blob.bin', b'\x00\x01', source='synthetic', schema=SCHEMA,
                purpose='p')
    guarded.add()
    assert run(guarded).rc == 0


def test_synthetic_row_naming_a_schema_not_in_the_repository_fails(guarded):
    put_fixture(guarded, 'checkout/timeout.json', b'{}', source='synthetic',
                schema='schemas/missing.json', purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG113']
    assert 'git add schemas/missing.json' in result.out


def test_synthetic_row_with_schema_path_leaving_the_repository_fails(guarded):
    put_fixture(guarded, 'checkout/timeout.json', b'{}', source='synthetic',
                schema='../outside.json', purpose='p')
    guarded.add()
    assert run(guarded).codes == ['OG113']


def test_schema_that_is_not_a_valid_json_schema_is_a_clear_error(guarded):
    guarded.write(SCHEMA, '{\n  "type": "object",\n  "properties": {\n    "code": {"minimum": "a"}\n  }\n}\n')
    guarded.commit('bad schema')
    put_fixture(guarded, 'checkout/timeout.json', b'{}', source='synthetic', schema=SCHEMA,
                purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.rc == 2
    assert result.err.startswith(f'{SCHEMA}:4: not a valid JSON Schema:')
    assert 'Traceback' not in result.err


def test_loosening_the_schema_under_an_existing_synthetic_fixture_rejudges_it(guarded):
    synthetic_setup(guarded)
    put_fixture(guarded, 'checkout/timeout.json', b'{"code": 504, "message": "x"}',
                source='synthetic', schema=SCHEMA, purpose='p')
    guarded.commit('fixture')
    guarded.write_json(SCHEMA, {**ERROR_SCHEMA, 'required': ['code', 'message', 'retry']})
    guarded.add()
    result = run(guarded)  # only the schema is staged; the fixture is judged again
    assert result.codes == ['OG114']


def test_schema_ref_to_the_network_is_refused_offline(guarded):
    guarded.write_json(SCHEMA, {'$ref': 'https://example.invalid/schema.json'})
    guarded.commit('remote ref')
    put_fixture(guarded, 'checkout/timeout.json', b'{}', source='synthetic', schema=SCHEMA,
                purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.rc == 2
    assert 'points outside the repository; oracle-guard runs offline' in result.err


def test_schema_ref_to_a_file_in_the_repository_is_followed(guarded):
    guarded.write_json('schemas/common.json', {'$defs': {'code': {'type': 'integer'}}})
    guarded.write_json(SCHEMA, {'type': 'object',
                                'properties': {'code': {'$ref': 'common.json#/$defs/code'}}})
    guarded.commit('schemas')
    put_fixture(guarded, 'checkout/timeout.json', b'{"code": "x"}', source='synthetic',
                schema=SCHEMA, purpose='p')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG114']
    assert "'x' is not of type 'integer'" in result.out


def test_jsonschema_is_imported_only_when_a_synthetic_row_is_checked(guarded):
    code = ('import sys; from oracle_guard.hooks.check_fixture_manifest import main; '
            'rc = main(["--all-files"]); '
            'print(rc, "jsonschema" in sys.modules)')
    out = subprocess.run((sys.executable, '-c', code), cwd=guarded.path, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip().endswith('0 False')
    synthetic_setup(guarded)
    put_fixture(guarded, 'checkout/timeout.json', b'{"code": 1, "message": "m"}',
                source='synthetic', schema=SCHEMA, purpose='p')
    guarded.commit('synthetic')
    out = subprocess.run((sys.executable, '-c', code), cwd=guarded.path, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip().endswith('0 True')


# -- row 7: nobody adds an agent-writable row -----------------------------------------

def test_row_added_with_rewritable_by_agent_true_fails(guarded):
    put_fixture(guarded, 'headers/new.bin', b'x', source='human', purpose='p',
                rewritable_by_agent=True)
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG116']
    assert 'oracle-guard fixtures rehash tests/fixtures/headers/new.bin' in result.out


def test_existing_row_changed_to_rewritable_by_agent_true_fails(guarded):
    edit_row(guarded, 'headers/ok.bin', rewritable_by_agent=True)
    guarded.add()
    assert run(guarded).codes == ['OG116']


def test_rewritable_row_a_person_committed_earlier_is_left_alone(guarded):
    put_fixture(guarded, 'scratch/draft.bin', b'x', source='human', purpose='p',
                rewritable_by_agent=True)
    guarded.commit('reviewed by a person')
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add()
    assert run(guarded).rc == 0


def test_rewritable_by_agent_false_is_fine(guarded):
    put_fixture(guarded, 'headers/new.bin', b'x', source='human', purpose='p',
                rewritable_by_agent=False)
    guarded.add()
    assert run(guarded).rc == 0


# -- row 8: new bytes need a new purpose ----------------------------------------------

def test_existing_row_sha256_changed_without_purpose_change_fails(guarded):
    body = b'GET /x HTTP/1.1\r\n\r\n'
    guarded.write('tests/fixtures/headers/ok.bin', body)
    edit_row(guarded, 'headers/ok.bin', sha256=sha256(body))
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG117']
    assert 'explain the new oracle' in result.out
    assert 'oracle-guard fixtures rehash tests/fixtures/headers/ok.bin --purpose' in result.out


def test_existing_row_sha256_changed_with_only_respaced_purpose_fails(guarded):
    body = b'GET /x HTTP/1.1\r\n\r\n'
    guarded.write('tests/fixtures/headers/ok.bin', body)
    edit_row(guarded, 'headers/ok.bin', sha256=sha256(body),
             purpose='a  well-formed   request ')
    guarded.add()
    assert run(guarded).codes == ['OG117']


def test_existing_row_sha256_changed_with_a_new_purpose_passes(guarded):
    body = b'GET /x HTTP/1.1\r\n\r\n'
    guarded.write('tests/fixtures/headers/ok.bin', body)
    edit_row(guarded, 'headers/ok.bin', sha256=sha256(body),
             purpose='a well-formed request for a path other than /')
    guarded.add()
    assert run(guarded).rc == 0


def test_human_row_added_without_purpose_fails(guarded):
    put_fixture(guarded, 'headers/new.bin', b'x', source='human')
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG115']


# -- row 9: a frozen test's recording stays a recording -------------------------------

def recorded_and_frozen(repo, expires: str = '2026-12-31') -> None:
    add_trace(repo, 'trc_0041')
    repo.commit('record trace')
    put_fixture(repo, 'checkout/ok.json', b'{"code": 1, "message": "m"}', source='recorded',
                trace_id='trc_0041', purpose='p')
    repo.write_json(SCHEMA, ERROR_SCHEMA)
    freeze(repo, 'checkout/ok.json', expires=expires)
    repo.commit('recorded fixture, frozen test')


def test_source_away_from_recorded_while_a_live_freeze_lists_it_fails(guarded):
    recorded_and_frozen(guarded)
    edit_row(guarded, 'checkout/ok.json', source='synthetic', schema=SCHEMA, trace_id=None)
    guarded.add()
    result = run(guarded)
    assert result.codes == ['OG118']
    assert 'live freeze FZ-1 lists this fixture' in result.out
    assert '--source recorded --trace-id trc_0041' in result.out


def test_source_away_from_recorded_while_dropping_it_from_the_freeze_still_fails(guarded):
    recorded_and_frozen(guarded)
    edit_row(guarded, 'checkout/ok.json', source='synthetic', schema=SCHEMA, trace_id=None)
    freeze(guarded, 'other.json')
    guarded.add()
    assert run(guarded).codes == ['OG118']


def test_source_away_from_recorded_after_the_freeze_expired_passes(guarded):
    recorded_and_frozen(guarded, expires='2026-05-01')
    edit_row(guarded, 'checkout/ok.json', source='synthetic', schema=SCHEMA, trace_id=None)
    guarded.add()
    assert run(guarded).rc == 0


# -- context ---------------------------------------------------------------------------

def test_without_a_base_the_change_rules_say_they_were_not_checked(repo):
    repo.write('tests/fixtures/a.bin', b'x')
    repo.write_json(MANIFEST, {'version': 1, 'fixtures': {'a.bin': {
        'sha256': sha256(b'x'), 'source': 'human', 'purpose': 'p', 'rewritable_by_agent': True}}})
    repo.write(TRACES, '')
    repo.commit('root commit')
    result = run(repo, '--all-files')
    assert result.rc == 0
    assert 'check-fixture-manifest: no base revision' in result.out
    assert run(repo, '--all-files', '--require-base').codes == ['OG001']


def test_provenance_rules_never_modify_the_tree(guarded):
    add_trace(guarded, 'trc_0041')
    put_fixture(guarded, 'checkout/ok.json', b'{}', source='recorded', trace_id='trc_0041')
    guarded.add()
    before = guarded.snapshot()
    assert run(guarded).rc == 1
    assert guarded.snapshot() == before


FROZEN_LEDGER = '''\
budget: 1
freezes:
  - id: FZ-1
    nodeid: tests/test_app.py::test_frozen
    class: order-dependent
    evidence: "fails after test_cache_warm"
    owner: alice
    expires: 2026-12-20
    fixtures: [ok.json]
'''


def _frozen_recording(guarded):
    import hashlib
    import json as _json
    guarded.write('tests/fixtures/traces.txt', '# traces\ntrc_1\n')
    guarded.commit('trace')
    body = b'{"ok": true, "items": [1, 2, 3], "note": "recorded from production"}\n'
    guarded.write('tests/fixtures/ok.json', body)
    doc = _json.loads(guarded.read('tests/fixtures/manifest.json'))
    doc['fixtures']['ok.json'] = {'sha256': hashlib.sha256(body).hexdigest(),
                                  'source': 'recorded', 'trace_id': 'trc_1'}
    guarded.write_json('tests/fixtures/manifest.json', doc)
    guarded.write('tests/freeze_ledger.yaml', FROZEN_LEDGER)
    guarded.commit('a frozen recording')
    return doc


def test_frozen_recording_renamed_relabelled_and_regenerated_fails(guarded):
    import hashlib
    doc = _frozen_recording(guarded)
    guarded.git('mv', 'tests/fixtures/ok.json', 'tests/fixtures/ok2.json')
    body = b'{"ok": false, "items": [1, 2, 3], "note": "recorded from production"}\n'
    guarded.write('tests/fixtures/ok2.json', body)
    del doc['fixtures']['ok.json']
    doc['fixtures']['ok2.json'] = {'sha256': hashlib.sha256(body).hexdigest(),
                                   'source': 'human', 'purpose': 'invented from the new code'}
    guarded.write_json('tests/fixtures/manifest.json', doc)
    guarded.add()
    result = guarded.run(main, '--today', '2026-11-29')
    assert 'OG118' in result.codes, result.out


def test_frozen_recording_row_deleted_with_its_file_fails(guarded):
    doc = _frozen_recording(guarded)
    guarded.rm('tests/fixtures/ok.json')
    del doc['fixtures']['ok.json']
    guarded.write_json('tests/fixtures/manifest.json', doc)
    guarded.add()
    result = guarded.run(main, '--today', '2026-11-29')
    assert result.codes == ['OG118'], result.out
    assert 'recorded row removed' in result.out


def test_new_bytes_with_the_purpose_deleted_fails(guarded):
    import hashlib
    import json as _json
    guarded.write('tests/fixtures/headers/ok.bin', b'GET /new HTTP/1.1\r\n\r\n')
    doc = _json.loads(guarded.read('tests/fixtures/manifest.json'))
    row = doc['fixtures']['headers/ok.bin']
    row['sha256'] = hashlib.sha256(b'GET /new HTTP/1.1\r\n\r\n').hexdigest()
    row['source'] = 'synthetic'
    row['schema'] = 'schemas/any.json'
    del row['purpose']
    guarded.write('schemas/any.json', '{}')
    guarded.write_json('tests/fixtures/manifest.json', doc)
    guarded.add()
    assert 'OG117' in guarded.run(main).codes


def test_editing_a_referenced_schema_rejudges_synthetic_rows(guarded):
    import hashlib
    import json as _json
    guarded.write('schemas/top.json', '{"$ref": "common.json"}')
    guarded.write('schemas/common.json', '{"type": "object", "properties": {"code": {"type": "integer"}}}')
    guarded.write('tests/fixtures/s.json', '{"code": 5}')
    doc = _json.loads(guarded.read('tests/fixtures/manifest.json'))
    doc['fixtures']['s.json'] = {'sha256': hashlib.sha256(b'{"code": 5}').hexdigest(),
                                 'source': 'synthetic', 'schema': 'schemas/top.json'}
    guarded.write_json('tests/fixtures/manifest.json', doc)
    base = guarded.commit('synthetic row')
    guarded.write('schemas/common.json', '{"type": "object", "properties": {"code": {"type": "string"}}}')
    guarded.add()
    assert 'OG114' in guarded.run(main).codes
    guarded.commit('schema loosened elsewhere')
    assert 'OG114' in guarded.run(main, '--from-ref', base, '--to-ref', 'HEAD').codes
