"""TreeView.read_document from a commit: one ``git cat-file --batch`` (the folder's tree
for the mode, the blob for the bytes) answers what ``ls-tree`` and ``cat-file blob``
answered, symlinks refused included (rule 10)."""
from __future__ import annotations

import os
import subprocess

import pytest

from oracle_guard.findings import ConfigError
from oracle_guard.repo.tree_view import TreeView


def reference(view: TreeView, path: str):  # type: ignore[no-untyped-def]
    """The two-process answer: ls-tree for the mode, cat-file blob for the bytes."""
    if any(e.path == path and e.is_symlink for e in view.entries([path])):
        return 'symlink'
    proc = subprocess.run(('git', 'cat-file', 'blob', f'{view.rev}:{path}'), cwd=view.root,
                          capture_output=True)
    return proc.stdout if proc.returncode == 0 else None


def fast(view: TreeView, path: str):  # type: ignore[no-untyped-def]
    try:
        return view.read_document(path)
    except ConfigError:
        return 'symlink'


@pytest.mark.parametrize('object_format', ['sha1', 'sha256'])
def test_a_committed_document_reads_as_ls_tree_and_cat_file_read_it(repo, object_format):
    if object_format == 'sha256':
        os.system(f'rm -rf {repo.path}/.git')
        subprocess.run(('git', 'init', '-q', '--object-format=sha256', repo.path), check=True)
    repo.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n')
    repo.write('tests/domain_lock.json', '{}\n')
    repo.write('top.yaml', 'budget: 1\n')
    repo.write('deep/er/still/doc.json', '[]\n')
    repo.write('tests/sub/x.txt', 'x\n')
    repo.write('tests/a b.yaml', 'spaced\n')
    os.symlink('freeze_ledger.yaml', os.path.join(repo.path, 'tests', 'linked.yaml'))
    os.symlink('../outside', os.path.join(repo.path, 'tests', 'leaving.yaml'))
    head = repo.commit('documents')
    view = TreeView(repo.path, head)
    paths = ['tests/freeze_ledger.yaml', 'tests/domain_lock.json', 'top.yaml',
             'deep/er/still/doc.json', 'tests/sub', 'tests/a b.yaml', 'tests/linked.yaml',
             'tests/leaving.yaml', 'tests/missing.yaml', 'missing/folder/doc.yaml',
             'tests/freeze_ledger.yaml/below', 'tests/freeze']
    for path in paths:
        assert fast(TreeView(repo.path, head), path) == reference(view, path), path
    assert fast(TreeView(repo.path, head), 'tests/linked.yaml') == 'symlink'


def test_a_document_of_the_index_not_staged_is_read_from_head_as_before(repo):
    repo.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n')
    os.symlink('freeze_ledger.yaml', os.path.join(repo.path, 'tests', 'linked.yaml'))
    head = repo.commit('documents')
    repo.write('tests/test_a.py', 'def test_a():\n    assert 1\n')
    repo.add()
    from oracle_guard.repo.changeset import staged_against

    _, staged = staged_against(repo.path, head)
    index = TreeView(repo.path, '').unstaged_from(head, staged)

    assert index.read_document('tests/freeze_ledger.yaml') == b'budget: 0\nfreezes: []\n'
    with pytest.raises(ConfigError, match='symlink'):
        TreeView(repo.path, '').unstaged_from(head, staged).read_document('tests/linked.yaml')


def git_calls(monkeypatch):  # type: ignore[no-untyped-def]
    """The git subcommands a hook runs (the real git, counted)."""
    from oracle_guard.repo import gitrepo

    calls: list[str] = []
    real = gitrepo.run_git

    def counted(args, *rest, **options):  # type: ignore[no-untyped-def]
        calls.append(args[0])
        return real(args, *rest, **options)

    monkeypatch.setattr(gitrepo, 'run_git', counted)
    return calls


def test_a_commit_reads_the_ledger_with_heads_first_answers(guarded, monkeypatch):
    from oracle_guard.hooks.check_freeze_ledger import main

    guarded.write('tests/test_app.py', 'def test_other():\n    assert 1\n')
    guarded.add()
    calls = git_calls(monkeypatch)

    assert guarded.run(main).rc == 0
    assert calls == ['cat-file', 'diff']  # HEAD, pyproject.toml and the ledger; the diff


def test_a_ledger_committed_as_a_symlink_is_refused_on_a_later_commit(guarded):
    from oracle_guard.hooks.check_freeze_ledger import main

    os.remove(os.path.join(guarded.path, 'tests/freeze_ledger.yaml'))
    guarded.write('ledger-elsewhere.yaml', 'budget: 0\nfreezes: []\n')
    os.symlink('../ledger-elsewhere.yaml', os.path.join(guarded.path, 'tests/freeze_ledger.yaml'))
    guarded.commit('pushed past the hooks with --no-verify')
    guarded.write('tests/test_app.py', 'def test_other():\n    assert 1\n')
    guarded.add()

    result = guarded.run(main)

    assert result.rc == 2 and 'symlink' in result.err, (result.out, result.err)
