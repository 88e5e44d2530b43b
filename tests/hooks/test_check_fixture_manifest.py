"""check-fixture-manifest: decision-table rows 1, 2, 3, 4 and 10."""
from __future__ import annotations

import json
import os

from builders.repos import sha256

from oracle_guard.hooks.check_fixture_manifest import main

MANIFEST = 'tests/fixtures/manifest.json'
FIXTURE = 'tests/fixtures/headers/ok.bin'


def manifest(repo):
    return json.loads(repo.read(MANIFEST))


def add_row(repo, key, data, **fields):
    doc = manifest(repo)
    doc['fixtures'][key] = {'sha256': sha256(data), 'source': 'human', 'purpose': 'p', **fields}
    repo.write_json(MANIFEST, doc)


def test_clean_guarded_repository_passes(guarded):
    assert guarded.run(main, '--all-files').rc == 0


def test_fixture_bytes_changed_without_manifest_update_fails(guarded):
    guarded.write(FIXTURE, b'GET /other HTTP/1.1\r\n\r\n')
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 1
    assert result.codes == ['OG101']
    assert FIXTURE in result.out
    # both digests are shown
    assert sha256(b'GET / HTTP/1.1\r\n\r\n') in result.out
    assert sha256(b'GET /other HTTP/1.1\r\n\r\n') in result.out


def test_fixture_bytes_changed_is_caught_by_all_files_too(guarded):
    guarded.write(FIXTURE, b'tampered')
    guarded.commit('tamper')
    result = guarded.run(main, '--all-files')
    assert result.codes == ['OG101']


def test_unstaged_fixture_edit_is_not_what_a_commit_records(guarded):
    # The commit records the index: a tampered working tree with a clean index passes
    # in commit mode, and the staged version is what gets hashed.
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add('src/app.py')
    guarded.write(FIXTURE, b'unstaged edit')
    assert guarded.run(main).rc == 0
    guarded.add(FIXTURE)
    assert guarded.run(main).codes == ['OG101']


def test_new_fixture_without_manifest_row_fails(guarded):
    guarded.write('tests/fixtures/headers/new.bin', b'new')
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 1
    assert result.codes == ['OG102']
    assert result.out.startswith('tests/fixtures/headers/new.bin:1:1: OG102')


def test_new_fixture_with_its_row_passes(guarded):
    guarded.write('tests/fixtures/headers/new.bin', b'new')
    add_row(guarded, 'headers/new.bin', b'new')
    guarded.add()
    assert guarded.run(main).rc == 0


def test_untracked_fixture_on_disk_is_not_judged(guarded):
    # pre-commit leaves untracked files on disk during a commit: git decides what exists.
    guarded.write('tests/fixtures/scratch.bin', b'not tracked')
    guarded.write('src/app.py', 'x = 1\n')
    guarded.add('src/app.py')
    assert guarded.run(main).rc == 0
    assert guarded.run(main, '--all-files').rc == 0


def test_manifest_row_without_file_fails(guarded):
    guarded.rm(FIXTURE)
    result = guarded.run(main)
    assert result.rc == 1
    assert result.codes == ['OG103']
    assert f'{MANIFEST}:' in result.out


def test_row_added_for_file_that_does_not_exist_fails(guarded):
    add_row(guarded, 'headers/ghost.bin', b'ghost')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG103']
    assert 'headers/ghost.bin' in result.out


def test_untrusted_row_cannot_be_committed(guarded):
    guarded.write('tests/fixtures/scratch/draft.json', b'{}')
    add_row(guarded, 'scratch/draft.json', b'{}', source='untrusted')
    guarded.add()
    assert guarded.run(main).codes == ['OG104']


def test_manifest_with_duplicate_key_is_a_clear_error(guarded):
    digest = sha256(b'GET / HTTP/1.1\r\n\r\n')
    row = f'{{"sha256": "{digest}", "source": "human", "purpose": "p"}}'
    guarded.write(MANIFEST, f'{{"version": 1, "fixtures": {{\n  "headers/ok.bin": {row},\n'
                            f'  "headers/ok.bin": {row}\n}}}}\n')
    guarded.add()
    before = guarded.snapshot()
    result = guarded.run(main)
    assert result.rc == 2
    assert f'{MANIFEST}:3: duplicate key' in result.err
    assert 'Traceback' not in result.err
    assert guarded.snapshot() == before


def test_malformed_manifest_json_names_file_and_line(guarded):
    guarded.write(MANIFEST, '{"version": 1,\n "fixtures": {\n   "a": \n}\n')
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 2
    assert result.err.startswith(f'{MANIFEST}:4: invalid JSON')


def test_manifest_path_with_dotdot_fails(guarded):
    add_row(guarded, '../../src/app.py', b'x')
    guarded.add()
    result = guarded.run(main, '--all-files')
    assert result.rc == 1
    assert 'OG105' in result.codes


def test_manifest_absolute_path_fails(guarded):
    add_row(guarded, '/etc/passwd', b'x')
    guarded.add()
    assert 'OG105' in guarded.run(main).codes


def test_fixture_symlink_leaving_the_repository_fails(guarded, tmp_path):
    outside = tmp_path / 'outside.bin'
    outside.write_bytes(b'secret')
    link = os.path.join(guarded.path, 'tests/fixtures/leak.bin')
    os.symlink(str(outside), link)
    add_row(guarded, 'leak.bin', b'secret')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG106']
    assert 'outside the repository' in result.out


def test_sha256_not_64_hex_is_reported(guarded):
    doc = manifest(guarded)
    doc['fixtures']['headers/ok.bin']['sha256'] = 'abc'
    guarded.write_json(MANIFEST, doc)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG107']
    assert 'sha256 must be 64 lowercase hex digits' in result.out


def test_unknown_row_field_is_reported_with_its_line(guarded):
    doc = manifest(guarded)
    doc['fixtures']['headers/ok.bin']['colour'] = 'red'
    guarded.write_json(MANIFEST, doc)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG107']
    line = [i for i, text in enumerate(guarded.read(MANIFEST).decode().splitlines(), 1)
            if 'colour' in text][0]
    assert f'{MANIFEST}:{line}:1: OG107' in result.out


def test_fixtures_without_any_manifest_fail(repo):
    repo.write('tests/fixtures/a.json', '{}')
    repo.add()
    result = repo.run(main)
    assert result.codes == ['OG102']


def test_repository_without_fixtures_or_manifest_passes(repo):
    repo.write('src/a.py', 'x = 1\n')
    repo.add()
    assert repo.run(main).rc == 0


def test_github_format_prints_annotations(guarded):
    guarded.write(FIXTURE, b'changed')
    guarded.add()
    result = guarded.run(main, '--format', 'github')
    assert result.out.startswith(f'::error file={FIXTURE},line=1,col=1,title=OG101::sha256 mismatch')
    assert '%0ATo fix:' in result.out


def test_hook_never_modifies_the_tree(guarded):
    guarded.write(FIXTURE, b'changed')
    guarded.write('tests/fixtures/new.bin', b'new')
    guarded.add()
    before = guarded.snapshot()
    guarded.run(main)
    guarded.run(main, '--all-files')
    assert guarded.snapshot() == before


def test_verdict_does_not_depend_on_checkout_line_endings(guarded):
    # The manifest hashes the bytes git records. With core.autocrlf=true the working
    # tree holds CRLF, the blob LF: --all-files (working tree) must agree with a commit.
    text = b'line one\nline two\n'
    guarded.write('tests/fixtures/text/lines.txt', text)
    add_row(guarded, 'text/lines.txt', text)
    guarded.commit('text fixture')
    guarded.git('config', 'core.autocrlf', 'true')
    os.remove(os.path.join(guarded.path, 'tests/fixtures/text/lines.txt'))
    guarded.git('checkout', '--', 'tests/fixtures/text/lines.txt')
    assert guarded.read('tests/fixtures/text/lines.txt') == b'line one\r\nline two\r\n'
    assert guarded.run(main, '--all-files').rc == 0
    guarded.write('src/app.py', 'x = 1\n')
    guarded.write('tests/fixtures/text/lines.txt', b'line one\r\nline 2\r\n')
    guarded.add()
    assert guarded.run(main).codes == ['OG101']  # a real edit still fails
    assert guarded.run(main, '--all-files').codes == ['OG101']


def test_deleting_the_manifest_while_fixtures_remain_fails(guarded):
    guarded.rm(MANIFEST)
    result = guarded.run(main)
    assert result.codes == ['OG108']
    assert guarded.run(main, '--all-files').codes == ['OG102']


def test_symlinked_manifest_is_refused_in_every_mode(guarded, tmp_path):
    outside = tmp_path / 'manifest.json'
    outside.write_bytes(guarded.read(MANIFEST))
    os.remove(os.path.join(guarded.path, MANIFEST))
    os.symlink(str(outside), os.path.join(guarded.path, MANIFEST))
    guarded.commit('link the manifest')
    for args in ((), ('--all-files',), ('--from-ref', 'HEAD^', '--to-ref', 'HEAD')):
        result = guarded.run(main, *args)
        assert result.rc == 2, args
        assert f'{MANIFEST}:1: is a symlink' in result.err


# -- several fixture folders: the data folders init guards (tests/data/ beside tests/fixtures/)

CASES = 'tests/data/cases.json'


def with_data_folder(repo):
    """``guarded`` with ``fixtures = ["tests/fixtures/", "tests/data/"]``: the manifest's
    keys are then repository paths, its existing row rekeyed in the same commit."""
    text = repo.read('pyproject.toml').decode()
    repo.write('pyproject.toml', text + 'fixtures = ["tests/fixtures/", "tests/data/"]\n',
               dedent=False)
    repo.write(CASES, b'[[1, 2, 3]]\n')
    doc = manifest(repo)
    doc['fixtures'] = {f'tests/fixtures/{key}': row for key, row in doc['fixtures'].items()}
    doc['fixtures'][CASES] = {'sha256': sha256(b'[[1, 2, 3]]\n'), 'source': 'human',
                              'purpose': 'sums the tests check'}
    repo.write_json(MANIFEST, doc)
    repo.commit('guard tests/data/')
    return repo


def test_several_fixture_folders_pass_when_every_file_has_its_row(guarded):
    with_data_folder(guarded)
    assert guarded.run(main, '--all-files').rc == 0
    assert guarded.run(main, '--from-ref', 'HEAD^', '--to-ref', 'HEAD').rc == 0


def test_byte_changed_in_a_second_fixture_folder_fails_in_every_mode(guarded):
    with_data_folder(guarded)
    guarded.write(CASES, b'[[1, 2, 4]]\n')
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG101'] and result.out.startswith(f'{CASES}:1:1: OG101'), result.out
    guarded.commit('edit the answer key with the code')
    assert guarded.run(main, '--all-files').codes == ['OG101']
    assert guarded.run(main, '--from-ref', 'HEAD^', '--to-ref', 'HEAD').codes == ['OG101']


def test_new_file_in_a_second_fixture_folder_needs_its_row(guarded):
    with_data_folder(guarded)
    guarded.write('tests/data/more.json', b'[]\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG102']
    assert result.out.startswith('tests/data/more.json:1:1: OG102')


def test_with_several_fixture_folders_a_key_is_a_repository_path(guarded):
    # A key relative to the manifest's folder names tests/fixtures/tests/data/cases.json:
    # a file that does not exist, and the real one has no row.
    with_data_folder(guarded)
    doc = manifest(guarded)
    doc['fixtures']['data/cases.json'] = doc['fixtures'].pop(CASES)
    guarded.write_json(MANIFEST, doc)
    guarded.add()
    result = guarded.run(main, '--all-files')
    assert sorted(result.codes) == ['OG102', 'OG103'], result.out
    assert 'data/cases.json: manifest row names a file that is not in the repository' \
        in result.out


def test_one_fixture_folder_in_a_list_keeps_keys_relative_to_the_manifest(guarded):
    text = guarded.read('pyproject.toml').decode()
    guarded.write('pyproject.toml', text + 'fixtures = ["tests/fixtures/"]\n', dedent=False)
    guarded.commit('the same folder, as a list')
    assert guarded.run(main, '--all-files').rc == 0


def test_many_new_rows_are_hashed_from_batched_blob_reads(guarded, monkeypatch):
    # The adoption commit of a project with thousands of data files judges a row per file:
    # a git process per file made that commit wait a minute.
    from builders.repos import git_calls
    from oracle_guard.repo.tree_view import TreeView

    doc = manifest(guarded)
    for n in range(250):
        data = f'case {n}\n'.encode()
        guarded.write(f'tests/fixtures/cases/{n:03}.txt', data)
        doc['fixtures'][f'cases/{n:03}.txt'] = {'sha256': sha256(data), 'source': 'human',
                                                 'purpose': f'case {n}'}
    guarded.write('tests/fixtures/cases/007.txt', b'tampered\n')
    guarded.write_json(MANIFEST, doc)
    guarded.add()
    streamed: list[str] = []
    chunks = TreeView.chunks

    def counted(self, path):  # type: ignore[no-untyped-def]
        streamed.append(path)
        return chunks(self, path)

    monkeypatch.setattr(TreeView, 'chunks', counted)
    calls = git_calls(monkeypatch)
    result = guarded.run(main)
    assert result.codes == ['OG101'] and 'tests/fixtures/cases/007.txt' in result.out
    assert streamed == [], len(streamed)
    assert calls.count('cat-file') < 10, calls.count('cat-file')
