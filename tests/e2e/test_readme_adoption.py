"""The README's adoption commands, run as written in a real repository with the real pre-commit.

The commands come from the README's code block, not from this file, so the README cannot
drift from what works. Two substitutions, both visible below: the placeholder URL and `REV`
become this project's snapshot hook repository and its commit, and the `pip install` line is
not run (the oracle-guard under test is already installed next to this interpreter, and
the network is not ours to use).
"""
from __future__ import annotations

import os
import re
import sys

from builders.pre_commit import Completed
from builders.pre_commit import HookRepo
from builders.pre_commit import run
from builders.repos import Repo
from builders.repos import ROOT

PLACEHOLDER_URL = 'https://example.invalid/oracle-guard'
PIP_INSTALL = f'"oracle-guard @ git+{PLACEHOLDER_URL}@REV"'


def adoption_block() -> str:
    with open(os.path.join(ROOT, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    section = readme.split('\n## Adopt it in an existing repository\n', 1)[1].split('\n## ', 1)[0]
    assert 'commit id' in section, 'the README must say what REV is'
    match = re.search(r'```sh\n(.*?)```', section, re.S)
    assert match, 'the adoption section lost its commands'
    return match.group(1)


def adoption_steps() -> list[tuple[str, str]]:
    """(title, command) for each numbered step: a `# N. title` line, then its command."""
    steps = []
    lines = [line for line in adoption_block().splitlines() if line.strip()]
    for number, (title, command) in enumerate(zip(lines[::2], lines[1::2]), 1):
        assert title.startswith(f'# {number}. '), title
        assert not command.startswith('#'), command
        steps.append((title, command))
    assert len(lines) == 2 * len(steps), 'a step without its command'
    return steps


def project(repo: Repo) -> Repo:
    """A small existing project: src/ layout, tests/ with a skip and a fixture, no guard yet."""
    repo.write('pyproject.toml', '[project]\nname = "app"\nversion = "1.0"\n')
    repo.write('src/app/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_core.py',
               'from app import add\n\n\ndef test_add_is_commutative():\n'
               '    assert add(2, 3) == add(3, 2) == 5\n')
    repo.write('tests/test_other.py', 'def test_other():\n    assert [1] * 2 == [1, 1]\n')
    # What a real suite has before adoption: a skip, an environment skip, a fixture.
    repo.write('tests/test_slow.py',
               'import sys\n\nimport pytest\n\n\n@pytest.mark.skip(reason="takes an hour")\n'
               'def test_full_import():\n    assert True\n\n\n'
               '@pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")\n'
               'def test_posix_path():\n    assert "/".join(["a", "b"]) == "a/b"\n')
    repo.write('tests/fixtures/sample.json', '{"a": 1}\n')
    repo.commit('an existing project')
    return repo


def shell(command: str, repo: Repo, hook_repo: HookRepo) -> Completed:
    # This interpreter's scripts (oracle-guard, pre-commit) come first on PATH, also when
    # the suite runs from a virtual environment that is not activated.
    env = hook_repo.env()
    env['PATH'] = os.path.dirname(sys.executable) + os.pathsep + env.get('PATH', '')
    return run(('bash', '-ec', command), repo.path, env)


def test_readme_adoption_commands_pass_and_then_block_a_bare_skip(
        repo: Repo, hook_repo: HookRepo) -> None:
    user = project(repo)
    ran = []
    for title, command in adoption_steps():
        if PIP_INSTALL in command:
            assert command.startswith('python -m pip install '), command
            continue  # the oracle-guard under test is installed already
        assert 'v0.' not in command, f'an invented tag: {command}'
        command = command.replace(PLACEHOLDER_URL, hook_repo.path)
        command = re.sub(r'\bREV\b', hook_repo.rev, command)
        result = shell(command, user, hook_repo)
        assert result.rc == 0, f'{title}\n$ {command}\n{result.out}'
        ran.append(command)

    assert any('python3 -m venv .venv' in c for c in ran), 'no virtual-environment step'
    assert ran[-1] == 'pre-commit run --all-files', 'the last step checks the whole repository'
    assert any(c.startswith('oracle-guard init') for c in ran)
    assert any('pre-commit install' in c for c in ran), 'commits would not be blocked'
    # The adoption commit holds the oracle files, never the virtual environment.
    committed = user.git('ls-files').split()
    assert 'tests/freeze_ledger.yaml' in committed and '.pre-commit-config.yaml' in committed
    assert not [p for p in committed if p.startswith('.venv/')]
    assert 'tests/oracle_baseline.json' in committed  # the skip that was already there
    assert not user.git('status', '--porcelain', '--untracked-files=no').strip()

    # The same verdict without pre-commit, as a CI system without it would ask.
    check = shell('oracle-guard check --all-files', user, hook_repo)
    assert check.rc == 0, check.out

    head = user.git('rev-parse', 'HEAD')
    user.write('tests/test_other.py', 'import pytest\n\n\n@pytest.mark.skip\n'
               'def test_other():\n    assert [1] * 2 == [1, 1]\n')
    blocked = run(('git', 'commit', '-am', 'skip the failing test'), user.path, hook_repo.env())
    assert blocked.rc != 0, blocked.out
    assert blocked.has('OG301', 'tests/test_other.py'), blocked.out
    assert user.git('rev-parse', 'HEAD') == head


def test_readme_adoption_installs_from_a_commit_not_a_tag():
    block = adoption_block()
    assert PIP_INSTALL in block
    assert re.search(r'oracle-guard init .*--rev REV\b', block)
    assert not re.search(r'\bv\d+\.\d+', block)



def test_readme_local_clone_install_is_a_form_pip_accepts():
    """Older pips refuse ``git+file:///path@REV`` (no host); the README's local form must
    parse as a requirement with the parser the installed pip itself uses."""
    from pip._vendor.packaging.requirements import Requirement

    with open(os.path.join(ROOT, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    forms = re.findall(r'`(git\+file://[^`]*@REV)`', readme)
    shown = [f for f in forms if not f.startswith('git+file:///')]
    assert shown == ['git+file://localhost/path/to/oracle-guard@REV'], forms
    assert Requirement(f'oracle-guard @ {shown[0]}').url == shown[0]
