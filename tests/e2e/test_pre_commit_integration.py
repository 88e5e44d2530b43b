"""End to end with the real ``pre-commit`` program (SPEC §1 and §4).

This project is installed as a hook repository (``repo:`` a local path, ``rev:`` a
commit) into the ``guarded`` repository of conftest.py, and the three ways it runs are
exercised: ``pre-commit install`` + ``git commit``, ``pre-commit run --all-files`` and
``pre-commit run --from-ref A --to-ref B``. pre-commit builds the hook environment once
per session (one PRE_COMMIT_HOME); it pip-installs pyyaml and identify from PyPI.
"""

from __future__ import annotations

import subprocess

import pytest

from builders.hook_scenarios import _bare_skip
from builders.hook_scenarios import _fixture_bytes
from builders.hook_scenarios import apply_cheats
from builders.hook_scenarios import CHEAT_GROUPS
from builders.hook_scenarios import finding_lines
from builders.hook_scenarios import FIXTURE
from builders.hook_scenarios import group_id
from builders.hook_scenarios import HOOK_FIXED_SRC
from builders.hook_scenarios import HOOK_PROPERTY
from builders.hook_scenarios import HOOK_SRC
from builders.hook_scenarios import HOOK_WEAKER_PROPERTY
from builders.hook_scenarios import TEST
from builders.pre_commit import Completed
from builders.pre_commit import HOOK_IDS
from builders.pre_commit import HookRepo
from builders.pre_commit import pre_commit
from builders.pre_commit import run
from builders.repos import Repo


@pytest.fixture
def user(guarded: Repo, hook_repo: HookRepo) -> Repo:
    """The guarded repository using this project's hooks, as its own commit."""
    guarded.write('.pre-commit-config.yaml', hook_repo.config())
    guarded.commit('use oracle-guard')
    return guarded


def pc(repo: Repo, hook_repo: HookRepo, *args: str, **env: str) -> Completed:
    return pre_commit(*args, cwd=repo.path, env=hook_repo.env(**env))


def git_commit(repo: Repo, hook_repo: HookRepo, *args: str) -> Completed:
    """``git commit`` as a person types it: the installed hook runs."""
    return run(('git', 'commit', '-m', 'change', *args), repo.path, hook_repo.env())


def head(repo: Repo) -> str:
    return repo.git('rev-parse', 'HEAD').strip()


def installed(repo: Repo, hook_repo: HookRepo) -> Repo:
    result = pc(repo, hook_repo, 'install')
    assert result.rc == 0, result.out
    return repo


@pytest.mark.parametrize('cheats', CHEAT_GROUPS, ids=group_id)
def test_git_commit_of_a_cheat_is_blocked(user: Repo, hook_repo: HookRepo,
                                          cheats: tuple[str, ...]) -> None:
    installed(user, hook_repo)
    before = head(user)
    expected = apply_cheats(user, cheats)
    user.add()

    result = git_commit(user, hook_repo)

    assert result.rc != 0, result.out
    for code, path in expected:  # each cheat's own finding
        assert result.has(code, path), (code, path, result.out)
    assert head(user) == before
    assert user.git('diff', '--cached', '--name-only').strip()  # still staged, not lost


def test_git_commit_of_a_clean_change_lands(user: Repo, hook_repo: HookRepo) -> None:
    installed(user, hook_repo)
    before = head(user)
    user.write(HOOK_SRC, HOOK_FIXED_SRC)
    user.add()

    result = git_commit(user, hook_repo)

    assert result.rc == 0, result.out
    assert ': OG' not in result.out
    assert user.git('rev-parse', 'HEAD^').strip() == before
    assert user.git('show', '--name-only', '--format=', 'HEAD').split() == [HOOK_SRC]


def test_commit_that_only_deletes_the_property_tests_is_blocked(
        user: Repo, hook_repo: HookRepo) -> None:
    installed(user, hook_repo)
    before = head(user)
    user.rm(HOOK_PROPERTY)  # pre-commit passes no filenames for a deletion

    result = git_commit(user, hook_repo)

    assert result.rc != 0, result.out
    assert result.has('OG401', 'tests/properties'), result.out
    assert head(user) == before
    assert user.git('ls-tree', '--name-only', 'HEAD', HOOK_PROPERTY).strip() == HOOK_PROPERTY


def test_git_commit_of_one_path_is_judged_on_that_path_only(
        user: Repo, hook_repo: HookRepo) -> None:
    installed(user, hook_repo)
    user.write(HOOK_SRC, HOOK_FIXED_SRC)
    user.write(HOOK_PROPERTY, HOOK_WEAKER_PROPERTY)
    user.add()
    before = head(user)
    whole_index = pc(user, hook_repo, 'run')  # the whole index would be a mixed change
    assert whole_index.rc != 0 and whole_index.has('OG201', HOOK_PROPERTY), whole_index.out

    result = git_commit(user, hook_repo, '--', HOOK_SRC)  # git sets GIT_INDEX_FILE for the hook

    assert result.rc == 0, result.out
    assert user.git('rev-parse', 'HEAD^').strip() == before
    assert user.git('show', '--name-only', '--format=', 'HEAD').split() == [HOOK_SRC]
    assert user.git('diff', '--cached', '--name-only').split() == [HOOK_PROPERTY]


def test_git_commit_of_paths_judges_their_working_tree_content_not_the_index(
        user: Repo, hook_repo: HookRepo) -> None:
    installed(user, hook_repo)
    user.write(HOOK_SRC, HOOK_FIXED_SRC)
    user.add(HOOK_SRC)
    user.write(HOOK_PROPERTY, HOOK_WEAKER_PROPERTY)  # unstaged: the real index holds only src
    before = head(user)
    real_index = pc(user, hook_repo, 'run')
    assert real_index.rc == 0, real_index.out

    result = git_commit(user, hook_repo, '--', HOOK_SRC, HOOK_PROPERTY)

    assert result.rc != 0, result.out
    assert result.has('OG201', HOOK_PROPERTY), result.out
    assert head(user) == before


# --- pre-commit run --all-files ------------------------------------------------------

def test_run_all_files_on_a_clean_repository_passes(user: Repo, hook_repo: HookRepo) -> None:
    result = pc(user, hook_repo, 'run', '--all-files')

    assert result.rc == 0, result.out
    assert ': OG' not in result.out
    assert result.out.count('Passed') == len(HOOK_IDS), result.out


@pytest.mark.parametrize('cheats', CHEAT_GROUPS, ids=group_id)
def test_run_all_files_on_a_broken_tree_fails(user: Repo, hook_repo: HookRepo,
                                              cheats: tuple[str, ...]) -> None:
    expected = apply_cheats(user, cheats)
    user.commit('pushed past the hooks with --no-verify')

    result = pc(user, hook_repo, 'run', '--all-files')

    assert result.rc != 0, result.out
    for code, path in expected:  # each cheat's own finding
        assert result.has(code, path), (code, path, result.out)


# --- pre-commit run --from-ref A --to-ref B ------------------------------------------

def test_range_catches_a_cheat_split_across_two_commits(user: Repo, hook_repo: HookRepo) -> None:
    installed(user, hook_repo)
    base = head(user)
    user.write(HOOK_SRC, HOOK_FIXED_SRC)
    user.add()
    first = git_commit(user, hook_repo)
    assert first.rc == 0, first.out  # each commit alone passes commit mode
    middle = head(user)
    user.write(HOOK_PROPERTY, HOOK_WEAKER_PROPERTY)
    user.add()
    second = git_commit(user, hook_repo)
    assert second.rc == 0, second.out
    assert head(user) != middle

    one_commit = pc(user, hook_repo, 'run', '--from-ref', base, '--to-ref', middle)
    whole_range = pc(user, hook_repo, 'run', '--from-ref', base, '--to-ref', 'HEAD')

    assert one_commit.rc == 0, one_commit.out
    assert whole_range.rc != 0, whole_range.out
    assert whole_range.has('OG201', HOOK_PROPERTY), whole_range.out
    assert HOOK_SRC in whole_range.out


# --- no writes, no dependence on concurrency -----------------------------------------

def _many_skips(repo: Repo) -> None:
    for i in range(10):  # enough files for pre-commit to split them across processes
        repo.write(f'tests/test_skip_{i}.py', 'import pytest\n\n\n@pytest.mark.skip\n'
                                              f'def test_{i}():\n    assert False\n')


def test_hooks_leave_the_working_tree_untouched(user: Repo, hook_repo: HookRepo) -> None:
    installed(user, hook_repo)
    _many_skips(user)
    _fixture_bytes(user)
    user.add()
    user.write(HOOK_SRC, HOOK_FIXED_SRC)  # unstaged: pre-commit stashes and restores it
    user.write('notes.txt', 'untracked\n')
    before = user.snapshot()
    index_before = user.git('ls-files', '-s')

    committed = git_commit(user, hook_repo)
    all_files = pc(user, hook_repo, 'run', '--all-files')

    assert committed.rc != 0 and all_files.rc != 0
    assert committed.has('OG301') and all_files.has('OG101', FIXTURE)
    assert user.snapshot() == before
    assert user.git('ls-files', '-s') == index_before


@pytest.mark.parametrize('args', [('run',), ('run', '--all-files')])
def test_result_is_the_same_without_concurrency(user: Repo, hook_repo: HookRepo,
                                                args: tuple[str, ...]) -> None:
    _many_skips(user)
    user.add()

    parallel = pc(user, hook_repo, *args)
    serial = pc(user, hook_repo, *args, PRE_COMMIT_NO_CONCURRENCY='1')

    assert parallel.rc == serial.rc == 1, parallel.out
    assert len(finding_lines(parallel.out)) == 10, parallel.out
    assert finding_lines(parallel.out) == finding_lines(serial.out)


# --- the pull-request job of the README, run locally ---------------------------------

def _pull_request(user: Repo, tmp_path, cheat: bool) -> Repo:  # type: ignore[no-untyped-def]
    """What actions/checkout with fetch-depth: 0 gives a pull_request job: a full clone,
    ``origin/main`` present, HEAD a detached merge of the branch into the base."""
    user.git('checkout', '-q', '-b', 'feature')
    user.write(HOOK_SRC, HOOK_FIXED_SRC)
    user.commit('fix parse')
    if cheat:  # the same cheat, split across two commits of the pull request
        user.write(HOOK_PROPERTY, HOOK_WEAKER_PROPERTY)
        user.commit('tidy the property test')
    user.git('checkout', '-q', 'main')
    path = str(tmp_path / 'ci-checkout')
    subprocess.run(('git', 'clone', '-q', '--no-local', user.path, path), check=True)
    ci = Repo(path, user._capsys)
    ci.git('checkout', '-q', '--detach', 'origin/main')
    ci.git('merge', '-q', '--no-ff', '--no-edit', 'origin/feature')
    return ci


@pytest.mark.parametrize('cheat', [True, False], ids=['split-cheat', 'clean'])
def test_pull_request_job_from_the_readme(user: Repo, hook_repo: HookRepo, tmp_path,  # type: ignore[no-untyped-def]
                                          cheat: bool) -> None:
    ci = _pull_request(user, tmp_path, cheat)

    # run: pre-commit run --from-ref origin/${{ github.base_ref }} --to-ref HEAD
    result = pc(ci, hook_repo, 'run', '--from-ref', 'origin/main', '--to-ref', 'HEAD')

    if cheat:
        assert result.rc == 1, result.out
        assert result.has('OG201', HOOK_PROPERTY) and HOOK_SRC in result.out, result.out
    else:
        assert result.rc == 0, result.out
        assert ': OG' not in result.out


def test_all_files_judges_from_base_ref_when_configured(user: Repo, hook_repo: HookRepo,
                                                        tmp_path) -> None:  # type: ignore[no-untyped-def]
    ci = _pull_request(user, tmp_path, cheat=True)
    ci.git('checkout', '-q', '--detach', 'origin/feature')  # HEAD alone only edits a test
    without_base = pc(ci, hook_repo, 'run', '--all-files')

    ci.write('pyproject.toml', ci.read('pyproject.toml').decode() + 'base-ref = "origin/main"\n')
    with_base = pc(ci, hook_repo, 'run', '--all-files')

    assert without_base.rc == 0, without_base.out  # history mode: each commit alone is clean
    assert with_base.rc == 1, with_base.out  # origin/main...HEAD: the whole branch
    assert with_base.has('OG201', HOOK_PROPERTY) and HOOK_SRC in with_base.out


def test_all_files_in_a_shallow_clone_notes_or_fails_with_require_base(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    user.write(HOOK_SRC, HOOK_FIXED_SRC)
    user.write(HOOK_PROPERTY, HOOK_WEAKER_PROPERTY)
    user.commit('cheat, pushed with --no-verify')
    path = str(tmp_path / 'shallow')
    subprocess.run(('git', 'clone', '-q', '--depth', '1', f'file://{user.path}', path),
                   check=True)
    shallow = Repo(path, user._capsys)

    # pre-commit shows a passing hook's output only with --verbose
    noted = pc(shallow, hook_repo, 'run', '--all-files', '--verbose')
    shallow.write('.pre-commit-config.yaml', hook_repo.config().replace(
        '      - id: forbid-mixed-oracle-diff\n',
        '      - id: forbid-mixed-oracle-diff\n        args: [--require-base]\n'))
    required = pc(shallow, hook_repo, 'run', '--all-files')

    assert noted.rc == 0, noted.out
    assert 'forbid-mixed-oracle-diff: no base revision' in noted.out
    assert required.rc == 1, required.out
    assert required.has('OG001', '.'), required.out


# --- pre-push: the range is the pushed branch, which need not be checked out ----------

def test_pre_push_of_a_branch_that_is_not_checked_out_is_blocked(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    remote = str(tmp_path / 'remote.git')
    subprocess.run(('git', 'init', '-q', '--bare', remote), check=True)
    user.git('remote', 'add', 'origin', remote)
    user.git('push', '-q', 'origin', 'main')
    result = pc(user, hook_repo, 'install', '--hook-type', 'pre-push')
    assert result.rc == 0, result.out
    user.git('checkout', '-q', '-b', 'feature')
    _bare_skip(user)
    user.commit('silence a test, past the commit hook')
    user.git('checkout', '-q', 'main')

    pushed = run(('git', 'push', 'origin', 'feature'), user.path, hook_repo.env())

    assert pushed.rc != 0, pushed.out
    assert pushed.has('OG301', TEST), pushed.out
    assert subprocess.run(('git', 'rev-parse', '--verify', '-q', 'refs/heads/feature'),
                          cwd=remote, stdout=subprocess.DEVNULL).returncode != 0
