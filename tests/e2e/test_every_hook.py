"""The optional ``oracle-guard`` hook id, through the real ``pre-commit`` program: the six
hooks' rules in one process judge a commit, a range and ``--all-files`` (history mode)
exactly as the six hooks do (rule 50: the same verdict in every mode)."""
from __future__ import annotations

import pytest
from builders.hook_scenarios import apply_cheats
from builders.hook_scenarios import CHEAT_GROUPS
from builders.hook_scenarios import finding_lines
from builders.hook_scenarios import group_id
from builders.hook_scenarios import HOOK_FIXED_SRC
from builders.hook_scenarios import HOOK_PROPERTY
from builders.hook_scenarios import HOOK_SRC
from builders.hook_scenarios import HOOK_WEAKER_PROPERTY
from builders.pre_commit import HookRepo
from builders.pre_commit import pre_commit
from builders.repos import Repo

from oracle_guard.hooks import EVERY_HOOK


@pytest.fixture
def user(guarded: Repo, hook_repo: HookRepo, tmp_path) -> Repo:  # type: ignore[no-untyped-def]
    """A guarded repository using the six hooks; the one-process configuration sits
    outside it, so switching between the two changes nothing git sees."""
    guarded.write('.pre-commit-config.yaml', hook_repo.config())
    guarded.commit('use oracle-guard')
    (tmp_path / 'one-process.yaml').write_text(hook_repo.config([EVERY_HOOK]))
    return guarded


def both(repo: Repo, hook_repo: HookRepo, tmp_path, *args: str):  # type: ignore[no-untyped-def]
    """(six hooks, one process) for the same ``pre-commit run`` arguments."""
    env = hook_repo.env()
    six = pre_commit('run', *args, cwd=repo.path, env=env)
    one = pre_commit('run', '--config', str(tmp_path / 'one-process.yaml'), *args,
                     cwd=repo.path, env=env)
    return six, one


@pytest.mark.parametrize('cheats', CHEAT_GROUPS, ids=group_id)
def test_a_staged_cheat_fails_the_one_process_hook_with_the_six_hooks_findings(
        user: Repo, hook_repo: HookRepo, tmp_path, cheats: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    expected = apply_cheats(user, cheats)
    user.add()

    six, one = both(user, hook_repo, tmp_path)

    assert six.rc == one.rc == 1, (six.out, one.out)
    for code, path in expected:  # each cheat's own finding
        assert one.has(code, path), (code, path, one.out)
    assert finding_lines(one.out) == finding_lines(six.out)


@pytest.mark.parametrize('cheats', CHEAT_GROUPS, ids=group_id)
def test_a_committed_cheat_fails_all_files_in_one_process_as_in_six(
        user: Repo, hook_repo: HookRepo, tmp_path, cheats: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    expected = apply_cheats(user, cheats)
    user.commit('pushed past the hooks with --no-verify')

    six, one = both(user, hook_repo, tmp_path, '--all-files')

    assert six.rc == one.rc == 1, (six.out, one.out)
    for code, path in expected:  # each cheat's own finding
        assert one.has(code, path), (code, path, one.out)
    assert finding_lines(one.out) == finding_lines(six.out)


def test_a_cheat_split_across_two_commits_fails_the_range_in_one_process_as_in_six(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    base = user.git('rev-parse', 'HEAD').strip()
    user.write(HOOK_SRC, HOOK_FIXED_SRC)
    user.commit('fix parse')
    user.write(HOOK_PROPERTY, HOOK_WEAKER_PROPERTY)
    user.commit('weaken the property')

    six, one = both(user, hook_repo, tmp_path, '--from-ref', base, '--to-ref', 'HEAD')

    assert six.rc == one.rc == 1, (six.out, one.out)
    assert one.has('OG201', HOOK_PROPERTY), one.out
    assert finding_lines(one.out) == finding_lines(six.out)


def test_a_clean_change_passes_the_one_process_hook_silently(
        user: Repo, hook_repo: HookRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    user.write(HOOK_SRC, HOOK_FIXED_SRC)
    user.add()

    six, one = both(user, hook_repo, tmp_path)

    assert six.rc == one.rc == 0, (six.out, one.out)
    assert ': OG' not in one.out
    assert one.out.count('Passed') == 1, one.out
