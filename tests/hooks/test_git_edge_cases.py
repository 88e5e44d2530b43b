"""Odd but valid git situations (issue 6 §2, the git part), hooks called in-process.

Each test builds the situation in a real repository and checks that the change is
read correctly: odd path names, a detached HEAD, an unborn branch, a shallow clone, a
merge in range mode, a rename with modification, a linked worktree and a submodule.
"""
from __future__ import annotations

import json
import os
import subprocess

import pytest
from builders.repos import PROPERTY_TEST
from builders.repos import Repo
from builders.repos import sha256
from oracle_guard import cli
from oracle_guard.hooks import check_fixture_manifest
from oracle_guard.hooks import check_named_freezes
from oracle_guard.hooks import check_properties_present
from oracle_guard.hooks import forbid_mixed_oracle_diff

SRC = 'src/app.py'
PROPERTY = 'tests/properties/test_parse.py'
MANIFEST = 'tests/fixtures/manifest.json'
FIXED_SRC = 'def parse(b):\n    return bytes(b)\n'
BARE_SKIP = 'import pytest\n\n\n@pytest.mark.skip\ndef test_it():\n    assert False\n'

ODD_NAMES = {
    'space': 'with space.bin',
    'newline': 'line\nbreak.bin',
    'quotes': 'say "hi" it\'s.bin',
    'non-ascii': 'résumé-データ.bin',
    'leading-dash': '-rf.bin',
    'tab': 'tab\there.bin',
}


def add_fixture_row(repo: Repo, rel: str, data: bytes) -> None:
    """Write a fixture under tests/fixtures/ and its manifest row (what `fixtures add` does)."""
    repo.write(f'tests/fixtures/{rel}', data)
    manifest = json.loads(repo.read(MANIFEST))
    manifest['fixtures'][rel] = {'sha256': sha256(data), 'source': 'human',
                                 'purpose': 'an odd name'}
    repo.write_json(MANIFEST, manifest)


def other(repo: Repo, path: str) -> Repo:
    return Repo(path, repo._capsys)


# --- odd path names ------------------------------------------------------------------

@pytest.mark.parametrize('name', sorted(ODD_NAMES))
def test_fixture_with_odd_name_changed_bytes_is_caught(guarded: Repo, name: str) -> None:
    rel = ODD_NAMES[name]
    add_fixture_row(guarded, rel, b'original\n')
    guarded.commit('odd fixture')
    guarded.write(f'tests/fixtures/{rel}', b'retargeted\n')
    guarded.add()

    staged = guarded.run(check_fixture_manifest.main)
    whole = guarded.run(check_fixture_manifest.main, '--all-files')

    for result in (staged, whole):
        assert result.rc == 1, result.out + result.err
        assert result.codes == ['OG101']
        assert result.out.startswith(f'tests/fixtures/{rel}:1:1: OG101')


@pytest.mark.parametrize('name', sorted(ODD_NAMES))
def test_fixture_with_odd_name_and_its_row_is_clean(guarded: Repo, name: str) -> None:
    add_fixture_row(guarded, ODD_NAMES[name], b'original\n')
    guarded.add()

    staged = guarded.run(check_fixture_manifest.main)
    guarded.commit('odd fixture')
    whole = guarded.run(check_fixture_manifest.main, '--all-files')

    assert (staged.rc, staged.out, whole.rc, whole.out) == (0, '', 0, '')


def test_fixture_name_with_backslash_is_refused_clearly(guarded: Repo) -> None:
    # Manifest keys are portable POSIX paths; a backslash would mean a folder on Windows.
    add_fixture_row(guarded, 'back\\slash.bin', b'original\n')
    guarded.add()

    result = guarded.run(check_fixture_manifest.main)

    assert result.rc == 1 and 'OG105' in result.codes, result.out + result.err
    assert 'backslash' in result.out and not result.err


@pytest.mark.parametrize('name', sorted(ODD_NAMES))
def test_unmanifested_fixture_with_odd_name_is_reported_by_name(guarded: Repo, name: str) -> None:
    rel = 'tests/fixtures/' + ODD_NAMES[name]
    guarded.write(rel, b'new\n')
    guarded.add()

    result = guarded.run(check_fixture_manifest.main)

    assert result.rc == 1
    assert result.out.startswith(f'{rel}:1:1: OG102')


@pytest.mark.parametrize('name', sorted(ODD_NAMES))
def test_bare_skip_in_test_file_with_odd_name_is_caught(guarded: Repo, name: str) -> None:
    rel = 'tests/test_' + ODD_NAMES[name].replace('.bin', '.py')
    guarded.write(rel, BARE_SKIP)
    guarded.add()

    staged = guarded.run(check_named_freezes.main)  # no filenames: asks git
    passed = guarded.run(check_named_freezes.main, '--', rel)  # as pre-commit passes it
    whole = guarded.run(check_named_freezes.main, '--all-files')

    for result in (staged, passed, whole):
        assert result.rc == 1, result.out + result.err
        assert result.out.startswith(f'{rel}:4:2: OG301'), result.out


@pytest.mark.parametrize('name', sorted(ODD_NAMES))
def test_src_file_with_odd_name_mixed_with_property_edit_fails(guarded: Repo, name: str) -> None:
    src = 'src/' + ODD_NAMES[name].replace('.bin', '.py')
    guarded.write(src, FIXED_SRC)
    guarded.write(PROPERTY, PROPERTY_TEST + '\n# loosened\n')
    guarded.add()

    result = guarded.run(forbid_mixed_oracle_diff.main)

    assert result.rc == 1
    assert result.codes == ['OG201']
    assert result.out.startswith(f'{PROPERTY}:1:1: OG201')
    assert src in result.out


def test_property_dir_with_odd_file_name_still_counts(guarded: Repo) -> None:
    guarded.git('mv', PROPERTY, 'tests/properties/test_ "odd"\nnäme.py')

    result = guarded.run(check_properties_present.main)

    assert (result.rc, result.out) == (0, '')


# --- HEAD in unusual states ----------------------------------------------------------

def test_detached_head_judges_staged_change_and_head_commit(guarded: Repo) -> None:
    guarded.write(SRC, FIXED_SRC)
    guarded.write(PROPERTY, PROPERTY_TEST + '\n# loosened\n')
    guarded.commit('cheat, pushed with --no-verify')
    guarded.git('checkout', '-q', '--detach', 'HEAD')

    clean_index = guarded.run(forbid_mixed_oracle_diff.main)
    whole = guarded.run(forbid_mixed_oracle_diff.main, '--all-files')

    # Nothing staged: the HEAD commit itself is the change (pre-commit.ci's situation).
    assert clean_index.rc == whole.rc == 1
    assert whole.codes == ['OG201']

    guarded.git('checkout', '-q', '--detach', 'HEAD^')
    guarded.write(SRC, FIXED_SRC)
    guarded.add()
    assert guarded.run(forbid_mixed_oracle_diff.main).rc == 0
    guarded.write(PROPERTY, PROPERTY_TEST + '\n# loosened\n')
    guarded.add()
    staged = guarded.run(forbid_mixed_oracle_diff.main)
    assert staged.rc == 1 and staged.codes == ['OG201']


def test_unborn_branch_in_empty_repository(repo: Repo) -> None:
    repo.write('tests/properties/test_parse.py', PROPERTY_TEST)
    repo.write('tests/fixtures/a.bin', b'a')
    repo.write('tests/test_app.py', BARE_SKIP)
    repo.add()

    manifest = repo.run(check_fixture_manifest.main)
    freezes = repo.run(check_named_freezes.main)
    properties = repo.run(check_properties_present.main)
    nothing_staged = repo.run(cli.main, 'check', '--all-files')

    assert manifest.rc == 1 and manifest.codes == ['OG102'], manifest.out + manifest.err
    assert freezes.rc == 1 and freezes.codes == ['OG301']
    assert (properties.rc, properties.out) == (0, '')
    assert nothing_staged.rc == 1, nothing_staged.out + nothing_staged.err
    assert 'OG102' in nothing_staged.codes and 'OG301' in nothing_staged.codes


def test_unborn_branch_with_nothing_staged_notes_change_rules_not_checked(repo: Repo) -> None:
    result = repo.run(forbid_mixed_oracle_diff.main, '--all-files')
    required = repo.run(forbid_mixed_oracle_diff.main, '--all-files', '--require-base')

    assert result.rc == 0
    assert 'no base revision' in result.out and 'no commits yet' in result.out
    assert required.rc == 1 and required.codes == ['OG001']


def test_orphan_branch_first_commit_is_judged_against_the_empty_tree(guarded: Repo) -> None:
    guarded.git('checkout', '-q', '--orphan', 'fresh')
    guarded.git('rm', '-q', '-r', '--cached', 'tests/fixtures/headers/ok.bin')
    guarded.write('tests/fixtures/headers/ok.bin', b'a different oracle\n')
    guarded.add()

    result = guarded.run(check_fixture_manifest.main)

    assert result.rc == 1
    assert result.codes == ['OG101']


# --- shallow clone -------------------------------------------------------------------

@pytest.fixture
def shallow(guarded: Repo, tmp_path) -> Repo:  # type: ignore[no-untyped-def]
    guarded.write(SRC, FIXED_SRC)
    guarded.write(PROPERTY, PROPERTY_TEST + '\n# loosened\n')
    guarded.commit('cheat')
    path = str(tmp_path / 'shallow')
    subprocess.run(('git', 'clone', '-q', '--depth', '1', f'file://{guarded.path}', path),
                   check=True)
    clone = other(guarded, path)
    assert clone.git('rev-parse', '--is-shallow-repository').strip() == 'true'
    return clone


def test_shallow_clone_without_parent_notes_that_change_rules_were_not_checked(
        shallow: Repo) -> None:
    result = shallow.run(forbid_mixed_oracle_diff.main, '--all-files')

    assert result.rc == 0, result.out + result.err
    assert result.codes == []
    assert 'forbid-mixed-oracle-diff: no base revision' in result.out
    assert 'shallow' in result.out


def test_shallow_clone_with_require_base_fails_with_og001(shallow: Repo) -> None:
    result = shallow.run(forbid_mixed_oracle_diff.main, '--all-files', '--require-base')
    check = shallow.run(cli.main, 'check', '--all-files', '--require-base')

    assert result.rc == 1 and result.codes == ['OG001']
    assert check.rc == 1 and 'OG001' in check.codes


def test_shallow_clone_still_runs_whole_tree_rules(shallow: Repo) -> None:
    shallow.write('tests/fixtures/headers/ok.bin', b'retargeted\n')

    manifest = shallow.run(check_fixture_manifest.main, '--all-files')
    properties = shallow.run(check_properties_present.main, '--all-files')

    assert manifest.rc == 1 and manifest.codes == ['OG101']
    assert (properties.rc, properties.codes) == (0, [])


def test_range_with_a_ref_missing_from_a_shallow_clone_is_not_a_traceback(
        shallow: Repo) -> None:
    result = shallow.run(forbid_mixed_oracle_diff.main, '--from-ref', 'HEAD~3', '--to-ref', 'HEAD')
    required = shallow.run(forbid_mixed_oracle_diff.main, '--from-ref', 'HEAD~3',
                           '--to-ref', 'HEAD', '--require-base')

    assert result.rc == 0 and 'not in this clone' in result.out
    assert required.rc == 1 and required.codes == ['OG001']
    assert 'Traceback' not in result.err + required.err


# --- merges and renames --------------------------------------------------------------

def test_range_through_a_merge_judges_only_the_branch_own_changes(guarded: Repo) -> None:
    guarded.git('checkout', '-q', '-b', 'feature')
    guarded.write(SRC, FIXED_SRC)
    guarded.commit('fix parse')
    guarded.git('checkout', '-q', 'main')
    guarded.write(PROPERTY, PROPERTY_TEST + '\n# reviewed on main, alone\n')
    guarded.commit('property change, alone')
    guarded.git('checkout', '-q', 'feature')
    guarded.git('merge', '-q', '--no-edit', 'main')

    result = guarded.run(forbid_mixed_oracle_diff.main, '--from-ref', 'main', '--to-ref', 'HEAD')

    assert (result.rc, result.codes) == (0, [])


def test_range_catches_an_oracle_edit_hidden_in_a_merge_commit(guarded: Repo) -> None:
    guarded.git('checkout', '-q', '-b', 'feature')
    guarded.write(SRC, FIXED_SRC)
    guarded.commit('fix parse')
    guarded.git('checkout', '-q', 'main')
    guarded.write('README.txt', 'docs\n')
    guarded.commit('docs on main')
    guarded.git('checkout', '-q', 'feature')
    guarded.git('merge', '-q', '--no-commit', 'main')
    guarded.write(PROPERTY, PROPERTY_TEST + '\n# slipped into the merge\n')
    guarded.add()
    guarded.git('commit', '-q', '--no-verify', '--no-edit')
    assert guarded.git('rev-list', '--parents', '-n', '1', 'HEAD').count(' ') == 2

    result = guarded.run(forbid_mixed_oracle_diff.main, '--from-ref', 'main', '--to-ref', 'HEAD')

    assert result.rc == 1 and result.codes == ['OG201']
    assert result.out.startswith(f'{PROPERTY}:1:1: OG201')


def test_rename_with_modification_out_of_the_properties_dir_counts_both_sides(
        guarded: Repo) -> None:
    guarded.git('mv', PROPERTY, 'tests/test_parse_moved.py')
    guarded.write('tests/test_parse_moved.py', PROPERTY_TEST + '\n# and a bit changed\n')
    guarded.write(SRC, FIXED_SRC)
    guarded.add()
    statuses = guarded.git('diff', '--cached', '--name-status', '-M').splitlines()
    assert [line[0] for line in statuses] == ['M', 'R']  # a rename with modification

    mixed = guarded.run(forbid_mixed_oracle_diff.main)
    present = guarded.run(check_properties_present.main)

    assert mixed.rc == 1 and mixed.out.startswith(f'{PROPERTY}:1:1: OG201')
    assert present.rc == 1 and present.codes == ['OG401']


def test_fixture_renamed_and_modified_without_manifest_update(guarded: Repo) -> None:
    old = 'tests/fixtures/headers/ok.bin'
    new = 'tests/fixtures/headers/ok2.bin'
    guarded.git('mv', old, new)
    guarded.write(new, b'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    guarded.add()
    assert guarded.git('diff', '--cached', '--name-status', '-M').startswith('R')

    result = guarded.run(check_fixture_manifest.main)

    assert result.rc == 1
    assert sorted(result.codes) == ['OG102', 'OG103']
    assert f'{new}:1:1: OG102' in result.out
    assert 'headers/ok.bin: manifest row names a file that is not in the repository' in result.out


# --- worktree and submodule ----------------------------------------------------------

def test_linked_worktree_is_judged_on_its_own_index(guarded: Repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = str(tmp_path / 'linked')
    guarded.git('worktree', 'add', '-q', '-b', 'feature', path)
    linked = other(guarded, path)
    linked.write(SRC, FIXED_SRC)
    linked.write(PROPERTY, PROPERTY_TEST + '\n# loosened\n')
    linked.add()

    in_linked = linked.run(forbid_mixed_oracle_diff.main)
    in_main = guarded.run(forbid_mixed_oracle_diff.main)
    linked.git('commit', '-q', '--no-verify', '-m', 'cheat')
    whole = linked.run(cli.main, 'check', '--all-files')
    ranged = linked.run(forbid_mixed_oracle_diff.main, '--from-ref', 'main', '--to-ref', 'HEAD')

    assert in_linked.rc == 1 and in_linked.codes == ['OG201']
    assert (in_main.rc, in_main.codes) == (0, [])
    assert whole.rc == 1 and 'OG201' in whole.codes
    assert ranged.rc == 1 and ranged.codes == ['OG201']


@pytest.fixture
def with_submodule(guarded: Repo, tmp_path) -> Repo:  # type: ignore[no-untyped-def]
    upstream = str(tmp_path / 'upstream')
    subprocess.run(('git', 'init', '-q', upstream), check=True)
    up = other(guarded, upstream)
    up.write('data.bin', b'vendored oracle\n')
    up.commit('data')
    guarded.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '-q',
                f'file://{upstream}', 'tests/fixtures/vendored')
    return guarded


def test_submodule_under_fixtures_is_reported_not_crashed_on(with_submodule: Repo) -> None:
    staged = with_submodule.run(check_fixture_manifest.main)
    with_submodule.commit('add submodule')
    whole = with_submodule.run(check_fixture_manifest.main, '--all-files')

    for result in (staged, whole):
        assert result.rc == 1, result.out + result.err
        assert result.codes == ['OG102']
        assert result.out.startswith('tests/fixtures/vendored:1:1: OG102')


def test_submodule_with_a_manifest_row_is_not_hashed_as_a_file(with_submodule: Repo) -> None:
    manifest = json.loads(with_submodule.read(MANIFEST))
    manifest['fixtures']['vendored'] = {'sha256': '0' * 64, 'source': 'human',
                                        'purpose': 'vendored data'}
    with_submodule.write_json(MANIFEST, manifest)
    with_submodule.add()

    result = with_submodule.run(check_fixture_manifest.main)

    assert result.rc == 1 and result.codes == ['OG106'], result.out + result.err
    assert 'is a submodule' in result.out


def test_hooks_do_not_write_in_odd_situations(shallow: Repo) -> None:
    before = shallow.snapshot()
    status = shallow.git('status', '--porcelain', '-z')

    for main in (check_fixture_manifest.main, forbid_mixed_oracle_diff.main,
                 check_named_freezes.main, check_properties_present.main):
        shallow.run(main, '--all-files')
    shallow.run(cli.main, 'check', '--all-files', '--require-base')

    assert shallow.snapshot() == before
    assert shallow.git('status', '--porcelain', '-z') == status
    assert not os.path.exists(os.path.join(shallow.path, '.hypothesis'))


# --- range mode when the pushed branch is not the one checked out (pre-push) ---------

def test_range_reads_the_pushed_revision_not_the_checked_out_tree(guarded: Repo) -> None:
    guarded.git('checkout', '-q', '-b', 'feature')
    guarded.write('tests/test_new.py', BARE_SKIP)
    guarded.write('tests/test_app.py', BARE_SKIP)
    guarded.commit('silence two tests')
    guarded.git('checkout', '-q', 'main')  # `git push origin feature` from main

    passed = guarded.run(check_named_freezes.main, '--from-ref', 'main', '--to-ref', 'feature',
                         'tests/test_new.py', 'tests/test_app.py')
    asked = guarded.run(cli.main, 'check', '--from-ref', 'main', '--to-ref', 'feature')

    for result in (passed, asked):
        assert result.rc == 1, result.out + result.err
        assert 'tests/test_new.py:4:2: OG301' in result.out
        assert 'tests/test_app.py:4:2: OG301' in result.out


def test_a_replacement_object_does_not_hide_a_change_from_the_hooks(guarded: Repo) -> None:
    # `git replace` lives in one repository's refs/replace/, not in its commits: a clone of
    # the same commits (the gate's checkout, pre-commit.ci's) never sees it. Here the
    # pull request's commit is replaced by main's: honoured, the range would hold no change
    # at all, and the property edited next to src/ would pass (a pull request could write one from an
    # install step into the checkout the gate reads afterwards). Rules 11 and 50.
    guarded.git('checkout', '-q', '-b', 'feature')
    base = guarded.git('rev-parse', 'main').strip()
    guarded.write(SRC, FIXED_SRC)
    guarded.write(PROPERTY, PROPERTY_TEST.replace('assert isinstance(buf, bytes)', 'pass'))
    guarded.commit('fix parse, and the property with it')
    head = guarded.git('rev-parse', 'HEAD').strip()
    guarded.git('replace', head, base)
    assert guarded.git('diff', '--stat', 'main', 'HEAD') == ''  # what git itself now says

    result = guarded.run(forbid_mixed_oracle_diff.main, '--from-ref', 'main', '--to-ref', 'HEAD')

    assert result.rc == 1 and 'OG201' in result.codes, result.out
