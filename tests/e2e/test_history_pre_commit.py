"""History mode with the real ``pre-commit`` program, as pre-commit.ci runs it.

pre-commit.ci runs ``pre-commit run --all-files`` on a detached checkout of the pull
request with no base branch. These tests clone the user's repository, detach HEAD at the
pull request's last commit and run the real pre-commit against this project installed as
a hook repository (tests/builders/pre_commit.py).
"""
from __future__ import annotations

import subprocess

import pytest
from builders.pre_commit import Completed
from builders.pre_commit import HookRepo
from builders.pre_commit import pre_commit
from builders.repos import PROPERTY_TEST
from builders.repos import Repo

SRC = 'src/app.py'
PROPERTY = 'tests/properties/test_parse.py'
LEDGER = 'tests/freeze_ledger.yaml'
ACK = 'tests/oracle_acknowledged.yaml'


@pytest.fixture
def user(guarded: Repo, hook_repo: HookRepo) -> Repo:
    guarded.write('.pre-commit-config.yaml', hook_repo.config())
    guarded.commit('use oracle-guard')
    guarded.git('checkout', '-q', '-b', 'feature')
    return guarded


def edit_src(repo: Repo, n: int = 1) -> None:
    repo.write(SRC, f'def parse(b):\n    return bytes(b)  # {n}\n')


def docs_commit(repo: Repo, n: int = 1) -> str:
    repo.write('README.md', f'docs {n}\n')
    return repo.commit(f'docs {n}')


def mixed_commit(repo: Repo) -> str:
    edit_src(repo)
    repo.write(PROPERTY, PROPERTY_TEST + '\n# tidied\n')
    return repo.commit('tidy')  # Repo.commit passes --no-verify


def ci_checkout(user: Repo, tmp_path, depth: int | None = None) -> Repo:  # type: ignore[no-untyped-def]
    """What pre-commit.ci sees: a clone, HEAD detached at the pull request's last commit."""
    path = str(tmp_path / 'pre-commit-ci')
    args = ['git', 'clone', '-q', '--no-local', '--branch', 'feature']
    if depth:
        args += ['--depth', str(depth)]
    subprocess.run((*args, f'file://{user.path}', path), check=True)
    ci = Repo(path, user._capsys)
    ci.git('checkout', '-q', '--detach', 'HEAD')
    return ci


def run_all_files(repo: Repo, hook_repo: HookRepo, *extra: str) -> Completed:
    return pre_commit('run', '--all-files', *extra, cwd=repo.path, env=hook_repo.env())


def with_args(repo: Repo, hook_repo: HookRepo, args: str) -> None:
    """Give forbid-mixed-oracle-diff ``args:`` in the checkout's pre-commit config (not
    committed: pre-commit reads the file on disk)."""
    repo.write('.pre-commit-config.yaml', hook_repo.config().replace(
        '      - id: forbid-mixed-oracle-diff\n',
        f'      - id: forbid-mixed-oracle-diff\n        args: {args}\n'))


def test_two_commit_pull_request_mixed_then_trivial_fails_on_pre_commit_ci(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    mixed = mixed_commit(user)
    docs_commit(user)
    ci = ci_checkout(user, tmp_path)

    result = run_all_files(ci, hook_repo)

    assert result.rc == 1, result.out
    assert result.has('OG201', PROPERTY), result.out
    assert f'OG201 {mixed[:7]} "tidy": human-owned property test changed' in result.out


def test_clean_pull_request_history_passes_on_pre_commit_ci(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    edit_src(user)
    user.commit('fix parse')
    user.write(PROPERTY, PROPERTY_TEST + '\n# reviewed\n')
    user.commit('tidy the property test, alone')
    docs_commit(user)
    ci = ci_checkout(user, tmp_path)

    result = run_all_files(ci, hook_repo)

    assert result.rc == 0, result.out
    assert ': OG' not in result.out


def test_loosening_committed_alone_then_src_change_passes_on_pre_commit_ci(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    user.write(LEDGER, 'budget: 2\nfreezes: []\n')
    user.commit('raise the freeze budget, alone')
    edit_src(user)
    user.commit('fix parse')
    ci = ci_checkout(user, tmp_path)

    result = run_all_files(ci, hook_repo)

    assert result.rc == 0, result.out


def test_loosening_with_a_test_edit_then_trivial_fails_on_pre_commit_ci(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    user.write(LEDGER, 'budget: 2\nfreezes: []\n')
    user.write('tests/test_app.py', 'def test_parse():\n    assert True\n')
    user.commit('budget and test')
    docs_commit(user)
    ci = ci_checkout(user, tmp_path)

    result = run_all_files(ci, hook_repo)

    assert result.rc == 1, result.out
    assert result.has('OG515', LEDGER), result.out


def test_acknowledged_commit_passes_on_pre_commit_ci(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    mixed = mixed_commit(user)
    user.write(ACK, f'acknowledged:\n  - commit: {mixed}\n    owner: alice\n'
                    '    reason: merged with admin rights before the guard was strict\n')
    user.commit('acknowledge the tidy commit, alone')
    ci = ci_checkout(user, tmp_path)

    result = run_all_files(ci, hook_repo)

    assert result.rc == 0, result.out


def test_shallow_pre_commit_ci_clone_notes_history_it_cannot_judge(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    mixed_commit(user)
    for n in range(3):
        docs_commit(user, n)
    ci = ci_checkout(user, tmp_path, depth=2)

    noted = run_all_files(ci, hook_repo, '--verbose')
    with_args(ci, hook_repo, '[--require-base]')
    required = run_all_files(ci, hook_repo)

    assert noted.rc == 0, noted.out
    assert 'history mode: this clone is shallow' in noted.out
    assert required.rc == 1, required.out
    assert required.has('OG001', '.'), required.out


def test_history_limit_caps_the_walk_on_pre_commit_ci(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    mixed_commit(user)
    for n in range(3):
        docs_commit(user, n)
    ci = ci_checkout(user, tmp_path)

    with_args(ci, hook_repo, '[--history-limit, "3"]')
    capped = run_all_files(ci, hook_repo, '--verbose')
    with_args(ci, hook_repo, '[--history-limit, "4"]')
    reaching = run_all_files(ci, hook_repo)

    assert capped.rc == 0, capped.out
    assert 'stopped after 3 commits (history-limit)' in capped.out
    assert reaching.rc == 1, reaching.out
    assert reaching.has('OG201', PROPERTY), reaching.out
