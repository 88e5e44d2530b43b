"""Install this project as a hook repository and drive the real ``pre-commit`` program.

The snapshot holds what ``git ls-files -co --exclude-standard`` lists at the project
root (tracked files plus untracked files that are not ignored), so it is the code under
test on a developer's machine and on a clean CI clone alike. pre-commit clones it like
any other ``repo:`` (a local path) at ``rev:`` = the snapshot's commit.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass

from builders.repos import Repo

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The hooks of the foundation; each is declared in .pre-commit-hooks.yaml.
HOOK_IDS = (
    'check-fixture-manifest',
    'forbid-mixed-oracle-diff',
    'check-named-freezes',
    'check-properties-present',
    'check-freeze-ledger',
    'check-generator-lock',
)

# A git with no user or system configuration and a fixed identity, for the snapshot
# (session fixtures run before the per-test isolated_git fixture of conftest.py).
_SNAPSHOT_GIT_ENV = {
    'GIT_CONFIG_GLOBAL': os.devnull,
    'GIT_CONFIG_NOSYSTEM': '1',
    'GIT_AUTHOR_NAME': 'oracle-guard tests',
    'GIT_AUTHOR_EMAIL': 'tests@example.invalid',
    'GIT_COMMITTER_NAME': 'oracle-guard tests',
    'GIT_COMMITTER_EMAIL': 'tests@example.invalid',
    'GIT_AUTHOR_DATE': '2026-01-01T00:00:00+00:00',
    'GIT_COMMITTER_DATE': '2026-01-01T00:00:00+00:00',
}
# Variables a hook or an outer git may have exported; they must not leak in.
_DROPPED = (
    'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY',
    'PRE_COMMIT_FROM_REF', 'PRE_COMMIT_TO_REF', 'PRE_COMMIT_SOURCE', 'PRE_COMMIT_ORIGIN',
    'PRE_COMMIT_NO_CONCURRENCY', 'PRE_COMMIT_COLOR', 'SKIP', 'PRE_COMMIT',
)


def _git(*args: str, cwd: str, env: Mapping[str, str] | None = None) -> bytes:
    return subprocess.run(
        ('git', *args), cwd=cwd, env=env, check=True, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
    ).stdout


def project_files(root: str = PROJECT_ROOT) -> list[str]:
    """Tracked and untracked-but-not-ignored files that exist on disk."""
    out = _git('ls-files', '-co', '--exclude-standard', '-z', cwd=root)
    paths = sorted({os.fsdecode(p) for p in out.split(b'\0') if p})
    return [p for p in paths if os.path.lexists(os.path.join(root, p))]


def snapshot_hook_repo(dest: str, root: str = PROJECT_ROOT) -> str:
    """Copy the project into ``dest``, commit it, and return the commit id."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(_SNAPSHOT_GIT_ENV)
    os.makedirs(dest, exist_ok=True)
    for rel in project_files(root):
        src, dst = os.path.join(root, rel), os.path.join(dest, rel)
        if os.path.isdir(src) and not os.path.islink(src):
            continue  # a submodule or nested repository: not part of the package
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
    _git('init', '-q', '-b', 'main', cwd=dest, env=env)
    _git('add', '-A', cwd=dest, env=env)
    _git('-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', 'snapshot',
         cwd=dest, env=env)
    return _git('rev-parse', 'HEAD', cwd=dest, env=env).decode().strip()


@dataclass(frozen=True)
class HookRepo:
    path: str
    rev: str
    home: str  # the PRE_COMMIT_HOME shared by the whole session

    def config(self, hook_ids: Sequence[str] = HOOK_IDS) -> str:
        """The ``.pre-commit-config.yaml`` a user of this hook repository writes."""
        lines = ['repos:', f'  - repo: {self.path}', f'    rev: {self.rev}', '    hooks:']
        lines += [f'      - id: {hook_id}' for hook_id in hook_ids]
        return '\n'.join(lines) + '\n'

    def env(self, **extra: str) -> dict[str, str]:
        """The test's environment (isolated git config) plus the shared PRE_COMMIT_HOME."""
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
        env['PRE_COMMIT_HOME'] = self.home
        env['PRE_COMMIT_COLOR'] = 'never'
        env.update(extra)
        return env


@dataclass
class Completed:
    rc: int
    out: str

    def has(self, code: str, path: str | None = None) -> bool:
        """Whether a finding line ``path:line:col: CODE ...`` is in the output."""
        for line in self.out.splitlines():
            parts = line.split(': ', 2)
            if len(parts) >= 2 and parts[1].split(' ', 1)[0] == code and (
                    path is None or parts[0].rsplit(':', 2)[0] == path):
                return True
        return False


def run(args: Sequence[str], cwd: str, env: Mapping[str, str]) -> Completed:
    """Run a command and return its exit code and merged output."""
    proc = subprocess.run(
        tuple(args), cwd=cwd, env=dict(env), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )
    return Completed(proc.returncode, proc.stdout.decode('utf-8', 'replace'))


def pre_commit(*args: str, cwd: str, env: Mapping[str, str]) -> Completed:
    return run((sys.executable, '-m', 'pre_commit', *args), cwd, env)


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
