"""A commit's first git process also lists the properties folder (its tree object, when
it holds no folder): the same entries, modes and object ids as ``git ls-tree -r``; and
TreeView.object_id gives each listed or staged path the blob id git gives it."""
from __future__ import annotations

import os

import pytest

from oracle_guard.hooks.check_properties_present import main
from oracle_guard.repo.changeset import staged_against
from oracle_guard.repo.gitrepo import head_documents_and_folders
from oracle_guard.repo.tree_view import TreeView


def ls_tree(repo, folder: str) -> list[tuple[str, str, str]]:  # type: ignore[no-untyped-def]
    out = repo.git('ls-tree', '-r', '-z', '--full-tree', 'HEAD', '--', folder)
    rows = []
    for rec in out.split('\0'):
        if rec:
            meta, _, path = rec.partition('\t')
            mode, _kind, object_id = meta.split(' ')
            rows.append((path, mode, object_id))
    return rows


def listing(repo, folder: str):  # type: ignore[no-untyped-def]
    return head_documents_and_folders(repo.path, ('pyproject.toml',), (), (folder,))[3][folder]


def test_a_flat_folder_is_listed_as_ls_tree_lists_it(repo):
    repo.write('tests/properties/test_b.py', 'def test_b():\n    assert 1\n')
    repo.write('tests/properties/test_a.py', 'def test_a():\n    assert 1\n')
    repo.write('tests/properties/run.sh', '#!/bin/sh\n')
    os.chmod(os.path.join(repo.path, 'tests/properties/run.sh'), 0o755)
    os.symlink('test_a.py', os.path.join(repo.path, 'tests/properties/test_link.py'))
    repo.write('tests/properties-other/test_c.py', 'x = 1\n')  # a prefix, not the folder
    repo.commit('properties')

    found = listing(repo, 'tests/properties/')

    assert found == ls_tree(repo, 'tests/properties/')
    assert {mode for _path, mode, _id in found} == {'100644', '100755', '120000'}


@pytest.mark.parametrize('layout', ['nested', 'missing', 'a file'])
def test_a_folder_git_must_recurse_into_or_cannot_find_is_asked_of_ls_tree(repo, layout):
    if layout == 'nested':
        repo.write('tests/properties/deep/test_a.py', 'def test_a():\n    assert 1\n')
    elif layout == 'a file':
        repo.write('tests/properties', 'not a folder\n')
    repo.write('pyproject.toml', '[tool.oracle-guard]\n')
    repo.commit('layout')

    assert listing(repo, 'tests/properties/') is None


def test_the_listing_serves_entries_only_while_nothing_is_staged_below(guarded):
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add()
    head = guarded.git('rev-parse', 'HEAD').strip()
    view = TreeView(guarded.path, '').unstaged_from(*staged_against(guarded.path, head))
    view.remember_listing('tests/properties/', [('tests/properties/test_x.py', '100644',
                                                 'a' * 40)])
    # nothing staged below: the listing answers (a made-up one shows it is the source)
    assert [e.path for e in view.entries(['tests/properties/'])] == \
        ['tests/properties/test_x.py']
    assert view.object_id('tests/properties/test_x.py') == 'a' * 40

    guarded.write('tests/properties/test_new.py', 'def test_new():\n    assert 2\n')
    guarded.add()
    staged = TreeView(guarded.path, '').unstaged_from(*staged_against(guarded.path, head))
    staged.remember_listing('tests/properties/', [])
    paths = [e.path for e in staged.entries(['tests/properties/'])]
    assert paths == ['tests/properties/test_new.py', 'tests/properties/test_parse.py']
    new_id = guarded.git('rev-parse', ':tests/properties/test_new.py').strip()
    assert staged.object_id('tests/properties/test_new.py') == new_id


def test_object_ids_are_the_blobs_git_names(guarded):
    guarded.write('tests/properties/test_parse.py', 'def test_p():\n    assert 3\n')
    guarded.add()
    head = guarded.git('rev-parse', 'HEAD').strip()
    index = TreeView(guarded.path, '').unstaged_from(*staged_against(guarded.path, head))
    commit = TreeView(guarded.path, head)
    work = TreeView(guarded.path, None)
    for view in (index, commit, work):
        view.entries(['tests/'])

    path = 'tests/properties/test_parse.py'
    assert index.object_id(path) == guarded.git('rev-parse', f':{path}').strip()
    assert commit.object_id(path) == guarded.git('rev-parse', f'HEAD:{path}').strip()
    assert index.object_id(path) != commit.object_id(path)
    assert work.object_id(path) is None  # the working tree's bytes may be any
    assert index.object_id('tests/test_app.py') == \
        guarded.git('rev-parse', 'HEAD:tests/test_app.py').strip()


def test_a_nested_properties_folder_is_still_judged_whole(guarded):
    guarded.write('tests/properties/deep/test_more.py', 'def test_more():\n    pass\n')
    guarded.commit('a hollow property one folder down')
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add()

    result = guarded.run(main)

    assert result.codes == ['OG403']
    assert 'tests/properties/deep/test_more.py' in result.out


def test_the_blobs_a_listing_names_come_from_the_same_git_process(repo, monkeypatch):
    """``listed``: asked of the ``git cat-file --batch`` that listed the folder, once its
    first answers are in; each answer is the blob git names (``cat-file blob``)."""
    from builders.repos import git_calls

    from oracle_guard.repo.gitrepo import head_documents_folders_and_objects

    repo.write('tests/properties/test_a.py', 'def test_a():\n    assert 1\n')
    repo.write('tests/properties/test_b.py', 'def test_b():\n    assert 2\n' * 5000)
    repo.commit('properties')
    seen = []

    def listed(listings):  # type: ignore[no-untyped-def]
        seen.append(listings)
        return [oid for path, mode, oid in listings['tests/properties/']]

    calls = git_calls(monkeypatch)
    head, _, _, found, extra = head_documents_folders_and_objects(
        repo.path, ('pyproject.toml',), (), ('tests/properties/',), (), listed)

    assert calls == ['cat-file']
    assert seen == [{'tests/properties/': ls_tree(repo, 'tests/properties/')}] and found == seen[0]
    for path, _mode, oid in found['tests/properties/']:
        assert extra[oid] == (oid, 'blob', repo.read(path))
    assert head == repo.git('rev-parse', 'HEAD').strip()


@pytest.mark.parametrize('where', ['no commit yet', 'no repository'])
def test_a_listing_git_cannot_give_asks_nothing_more(tmp_path, repo, monkeypatch, where):
    """No HEAD (nothing listed: ``listed`` gets no folder) and no repository (git stops
    before answering: an error, not a process waiting for more input)."""
    from oracle_guard.repo.gitrepo import GitError
    from oracle_guard.repo.gitrepo import head_documents_folders_and_objects

    seen = []

    def listed(listings):  # type: ignore[no-untyped-def]
        seen.append(listings)
        return ['HEAD:pyproject.toml']

    if where == 'no commit yet':
        head, files, _, found, extra = head_documents_folders_and_objects(
            repo.path, ('pyproject.toml',), (), ('tests/properties/',), (), listed)
        assert (head, files, found, seen) == (None, {'pyproject.toml': None}, {}, [{}])
        assert extra == {'HEAD:pyproject.toml': None}
    else:
        alone = tmp_path / 'alone'
        alone.mkdir()
        monkeypatch.setenv('GIT_CEILING_DIRECTORIES', str(tmp_path))
        with pytest.raises(GitError):
            head_documents_folders_and_objects(
                str(alone), ('pyproject.toml',), (), ('tests/properties/',), (), listed)


def test_path_names_are_the_paths_entries_lists_on_every_side(repo):
    """``TreeView.path_names`` (what the helper lookup of rule 14 lists) beside
    ``entries``, and the lookup's answers (outside the tests roots too: the top names
    from git's root tree) beside a folder tree made from ``entries``: the index staged on
    HEAD with nothing staged and with something staged below, a commit, the working
    tree's tracked files; renames, deletions, a symlink, a path outside ASCII, a folder
    that is a prefix of another, files added and deleted at the top."""
    from oracle_guard.config import load_config
    from oracle_guard.reading.helper_paths import HelperPaths

    def holds(name, view):  # type: ignore[no-untyped-def]
        for prefixes in (['tests/'], ['tests/a', 'other'], ['nowhere/']):
            expected = sorted(os.fsencode(p) for p in view.paths(prefixes))
            assert view.path_names(prefixes) == expected, (name, prefixes)
        if view.rev is None:
            return
        paths = set(view.paths())
        folders = {p.rsplit('/', i)[0] for p in paths for i in range(1, p.count('/') + 1)}
        helpers = HelperPaths(view, cfg.is_test_code, ['tests/'], ['src/'],
                              lambda p: p.startswith('src/'))
        asked = paths | folders | {'tests/a/b/nope.py', 'tests/a/bb', 'tests/a-', 'tests/c',
                                   'tests/d', 'tests/new/deep', 'tests/caf\u00e9', 'nope.py',
                                   'testing/nope.py', 'harness', 'newtop', 'oldtop'}
        for path in sorted(p for p in asked if not p.startswith('src')):
            assert helpers.is_file(path) == (path in paths), (name, path)
            assert helpers.is_folder(path) == (path in folders), (name, path)

    for path in ('tests/a/b/helper.py', 'tests/a/b/gone.py', 'tests/a-b/x.py', 'tests/ab.py',
                 'tests/caf\u00e9/mod.py', 'tests/c/__init__.py', 'other/tests.py',
                 'harness.py', 'oldtop.py', 'testing/harness.py', 'src/app/__init__.py'):
        repo.write(path, 'x = 1\n')
    os.symlink('ab.py', os.path.join(repo.path, 'tests/link.py'))
    repo.commit('layout')
    cfg = load_config(repo.path)
    head = repo.git('rev-parse', 'HEAD').strip()
    holds('index, nothing staged',
          TreeView(repo.path, '').unstaged_from(*staged_against(repo.path, head)))
    repo.git('rm', '-q', 'tests/a/b/gone.py', 'oldtop.py')
    os.makedirs(os.path.join(repo.path, 'tests/d'))
    repo.git('mv', 'tests/c/__init__.py', 'tests/d/__init__.py')
    repo.write('tests/new/deep/mod.py', 'y = 2\n')
    repo.write('newtop.py', 'z = 3\n')
    repo.git('add', '-A')
    holds('index, staged below',
          TreeView(repo.path, '').unstaged_from(*staged_against(repo.path, head)))
    holds('commit', TreeView(repo.path, head))
    holds('working tree (tracked)', TreeView(repo.path, None))
