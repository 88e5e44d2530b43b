"""The change a run judges and its base (SPEC §4), against real git repositories."""
from __future__ import annotations

import os

from oracle_guard.repo.changeset import ALL_FILES
from oracle_guard.repo.changeset import COMMIT
from oracle_guard.repo.changeset import detect_change_set
from oracle_guard.repo.changeset import NO_BASE
from oracle_guard.repo.changeset import RANGE
from oracle_guard.config import Config
from oracle_guard.repo.gitrepo import EMPTY_TREE


def detect(repo, **kwargs):
    return detect_change_set(Config(root=repo.path), **kwargs)


def test_first_commit_is_judged_against_the_empty_tree(repo):
    repo.write('a.txt', 'a')
    repo.add()
    cs = detect(repo)
    assert cs.mode == COMMIT
    assert cs.base == EMPTY_TREE
    assert cs.added_or_modified() == ['a.txt']
    assert cs.read_base('a.txt') is None
    assert cs.read_new('a.txt') == b'a'


def test_staged_change_includes_deletions_and_renames(repo):
    repo.write('keep.txt', 'k')
    repo.write('gone.txt', 'g')
    repo.write('old/name.txt', 'same content, long enough for rename detection\n' * 5)
    head = repo.commit('init')
    repo.rm('gone.txt')
    os.makedirs(os.path.join(repo.path, 'new'))
    repo.git('mv', 'old/name.txt', 'new/name.txt')
    cs = detect(repo)
    assert cs.mode == COMMIT
    assert cs.base == head
    assert cs.deleted() == ['gone.txt', 'old/name.txt']
    assert cs.touched() == {'gone.txt', 'old/name.txt', 'new/name.txt'}
    assert cs.read_base('gone.txt') == b'g'
    assert cs.read_new('gone.txt') is None


def test_commit_mode_reads_the_index_not_the_working_tree(repo):
    repo.write('a.txt', 'one')
    repo.commit('init')
    repo.write('a.txt', 'two')
    repo.add()
    repo.write('a.txt', 'three (unstaged)')
    cs = detect(repo)
    assert cs.read_new('a.txt') == b'two'
    assert cs.read_base('a.txt') == b'one'


def test_git_index_file_is_honoured(repo, monkeypatch):
    # `git commit <path>` runs hooks with GIT_INDEX_FILE pointing at a temporary index.
    repo.write('a.txt', 'a')
    repo.write('b.txt', 'b')
    repo.commit('init')
    repo.write('a.txt', 'a2')
    repo.write('b.txt', 'b2')
    repo.add()
    other = os.path.join(repo.path, '.git', 'other-index')
    monkeypatch.setenv('GIT_INDEX_FILE', other)
    repo.git('read-tree', 'HEAD')
    repo.git('add', 'a.txt')
    cs = detect(repo)
    assert cs.touched() == {'a.txt'}


def test_nothing_staged_judges_the_working_tree_and_the_history(repo):
    repo.write('a.txt', 'a')
    repo.commit('one')
    repo.write('b.txt', 'b')
    second = repo.commit('two')
    cs = detect(repo)
    assert cs.mode == ALL_FILES
    # The working tree against HEAD; HEAD and the commits before it are history mode's.
    assert cs.base == second
    assert cs.history
    assert cs.touched() == set()


def test_all_files_flag_ignores_what_is_staged(repo):
    repo.write('a.txt', 'a')
    repo.commit('one')
    repo.write('b.txt', 'b')
    second = repo.commit('two')
    repo.write('c.txt', 'c')
    repo.add()
    cs = detect(repo, all_files=True)
    assert cs.mode == ALL_FILES
    assert cs.base == second
    assert cs.touched() == {'c.txt'}


def test_root_commit_has_no_base(repo):
    repo.write('a.txt', 'a')
    repo.commit('one')
    cs = detect(repo)
    assert cs.mode == NO_BASE
    assert cs.base is None
    assert cs.changes == ()
    assert 'no parent' in cs.description


def test_repository_without_commits_and_nothing_staged_has_no_base(repo):
    cs = detect(repo)
    assert cs.mode == NO_BASE
    assert 'no commits' in cs.description


def test_range_uses_the_merge_base(repo):
    repo.write('a.txt', 'a')
    base = repo.commit('base')
    repo.git('checkout', '-q', '-b', 'feature')
    repo.write('f.txt', 'f')
    repo.commit('feature')
    repo.git('checkout', '-q', 'main')
    repo.write('m.txt', 'm')
    repo.commit('main moved on')
    cs = detect(repo, from_ref='main', to_ref='feature')
    assert cs.mode == RANGE
    assert cs.base == base
    assert cs.touched() == {'f.txt'}  # main's own progress is not the feature's change
    assert cs.read_new('f.txt') == b'f'


def test_range_from_pre_commit_environment(repo, monkeypatch):
    repo.write('a.txt', 'a')
    base = repo.commit('base')
    repo.write('b.txt', 'b')
    repo.commit('next')
    monkeypatch.setenv('PRE_COMMIT_FROM_REF', base)
    monkeypatch.setenv('PRE_COMMIT_TO_REF', 'HEAD')
    cs = detect(repo)
    assert cs.mode == RANGE
    assert cs.touched() == {'b.txt'}


def test_range_with_unknown_revision_has_no_base(repo):
    repo.write('a.txt', 'a')
    repo.commit('base')
    cs = detect(repo, from_ref='no-such-branch', to_ref='HEAD')
    assert cs.mode == NO_BASE
    assert 'no-such-branch' in cs.description


def test_configured_base_ref_for_all_files(repo):
    repo.write('a.txt', 'a')
    base = repo.commit('base')
    repo.git('checkout', '-q', '-b', 'feature')
    repo.write('b.txt', 'b')
    repo.commit('one')
    repo.write('c.txt', 'c')
    repo.commit('two')
    cfg = Config(root=repo.path, base_ref='main')
    cs = detect_change_set(cfg)
    assert cs.base == base
    assert cs.touched() == {'b.txt', 'c.txt'}
