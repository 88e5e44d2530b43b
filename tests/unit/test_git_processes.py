"""How hooks talk to git without the subprocess module: run_git and head_and_files, on
real repositories. Large outputs and inputs cross the pipes without a deadlock."""
from __future__ import annotations

import os

import pytest

from oracle_guard.findings import ConfigError
from oracle_guard.repo.gitrepo import git
from oracle_guard.repo.gitrepo import git_ok
from oracle_guard.repo.gitrepo import head_and_files
from oracle_guard.repo.gitrepo import run_git


def test_run_git_returns_exit_code_stdout_and_stderr(repo):
    code, out, err = run_git(('rev-parse', '--show-toplevel'), repo.path)
    assert (code, out.decode().strip(), err) == (0, os.path.realpath(repo.path), b'')
    code, out, err = run_git(('rev-parse', '--verify', 'no-such-branch'), repo.path)
    assert code != 0 and out == b'' and b'fatal' in err


def test_large_output_and_error_output_do_not_deadlock(repo):
    # Several pipe buffers on stdout while git also writes to stderr.
    big = os.urandom(600_000).hex()
    repo.write('big.txt', big)
    repo.commit('big')
    assert git('cat-file', 'blob', 'HEAD:big.txt', cwd=repo.path).decode() == big
    code, _, err = run_git(('cat-file', 'blob', 'HEAD:nope'), repo.path)
    assert code != 0 and err


def test_large_input_is_fed_while_output_is_drained(repo):
    repo.write('a.txt', 'a\n')
    repo.commit('a')
    request = b'HEAD:a.txt\n' * 20_000  # more than a pipe holds, answered as it is read
    code, out, _ = run_git(('cat-file', '--batch'), repo.path, input=request)
    assert code == 0 and out.count(b' blob 2\na\n\n') == 20_000


def test_git_failure_is_a_config_error_not_a_traceback(repo):
    with pytest.raises(ConfigError, match='failed'):
        git('rev-parse', '--verify', 'no-such-branch', cwd=repo.path)
    assert not git_ok('rev-parse', '--verify', '--quiet', 'no-such-branch', cwd=repo.path)
    assert git_ok('rev-parse', '--git-dir', cwd=repo.path)


def test_missing_git_is_a_config_error(repo, monkeypatch):
    monkeypatch.setenv('PATH', os.path.join(repo.path, 'no-git-here'))
    with pytest.raises(ConfigError, match='cannot run git'):
        git('status', cwd=repo.path)
    with pytest.raises(ConfigError, match='cannot run git'):
        head_and_files(repo.path, ('pyproject.toml',))


def test_head_and_files_answers_as_rev_parse_and_cat_file_do(repo):
    assert head_and_files(repo.path, ('pyproject.toml',)) == (None, {'pyproject.toml': None})
    repo.write('pyproject.toml', '[tool.oracle-guard]\n')
    repo.write('folder/inside.txt', 'x')
    repo.commit('first')
    head = git('rev-parse', 'HEAD', cwd=repo.path).decode().strip()
    assert head_and_files(repo.path, ('pyproject.toml', 'folder', 'absent')) == (head, {
        'pyproject.toml': b'[tool.oracle-guard]\n',
        'folder': None,  # a tree is not a file
        'absent': None,
    })


def test_read_many_reads_what_read_would_with_one_process(repo, monkeypatch):
    from oracle_guard.repo.tree_view import TreeView
    repo.write('a.py', 'a = 1\n')
    repo.write('b.py', 'b = 2\n')
    repo.write('folder/c.py', 'c = 3\n')
    repo.commit('files')
    paths = ('a.py', 'b.py', 'folder', 'absent.py')
    one_by_one = TreeView(repo.path, 'HEAD')
    expected = {p: one_by_one.read(p) for p in paths}
    assert expected['a.py'] == b'a = 1\n' and expected['folder'] is None
    batched = TreeView(repo.path, 'HEAD')
    batched.read_many(paths)
    monkeypatch.setenv('PATH', os.path.join(repo.path, 'no-git-here'))  # no more git now
    assert {p: batched.read(p) for p in paths} == expected
