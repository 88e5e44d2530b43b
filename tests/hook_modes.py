"""One change, judged by the real ``pre-commit`` program in each way it runs.

``judge(mode, repo, hook_repo, change)`` applies ``change`` on top of the repository's last
commit and runs the installed hooks as a ``git commit`` (the staged change), as a
``pre-commit run --from-ref BASE --to-ref HEAD`` range, or as an ``--all-files`` history run
(no ``base-ref``: every commit since adoption is judged against its first parent). The
``mode`` fixture parametrizes a test over the three and ``user`` is the guarded repository
of conftest.py using this project's hooks; a test module imports both (``from hook_modes
import mode, user``), so one scenario must get one verdict (row 50 of docs/rules.md). One
repository per scenario and mode; pre-commit's hook environment is built once per session
(the ``hook_repo`` fixture).
"""
from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import Repo
from pre_commit_env import Completed
from pre_commit_env import HookRepo
from pre_commit_env import pre_commit
from pre_commit_env import run

MODES = ('commit', 'range', 'all-files')


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def user(guarded: Repo, hook_repo: HookRepo) -> Repo:
    """The guarded repository with this project's hooks in its pre-commit configuration."""
    guarded.write('.pre-commit-config.yaml', hook_repo.config())
    guarded.commit('use oracle-guard')
    return guarded


def judge(mode: str, repo: Repo, hook_repo: HookRepo,
          change: Callable[[Repo], object]) -> Completed:
    base = repo.git('rev-parse', 'HEAD').strip()
    change(repo)
    if mode == 'commit':
        installed = pre_commit('install', cwd=repo.path, env=hook_repo.env())
        assert installed.rc == 0, installed.out
        repo.add()
        return run(('git', 'commit', '-q', '-m', 'change'), repo.path, hook_repo.env())
    repo.commit('change, past the commit hook')
    if mode == 'range':
        return pre_commit('run', '--from-ref', base, '--to-ref', 'HEAD',
                          cwd=repo.path, env=hook_repo.env())
    assert mode == 'all-files', mode
    return pre_commit('run', '--all-files', cwd=repo.path, env=hook_repo.env())
