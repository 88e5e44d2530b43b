"""Real git repositories in tmp_path; hooks called in-process through their main()."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.join(ROOT, 'hooks') not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, os.path.join(ROOT, 'hooks'))

GIT_ENV_DROP = (
    'PRE_COMMIT_FROM_REF', 'PRE_COMMIT_TO_REF', 'PRE_COMMIT_SOURCE', 'PRE_COMMIT_ORIGIN',
    'GIT_INDEX_FILE', 'GIT_DIR', 'GIT_WORK_TREE', 'HYPOTHESIS_PROFILE', 'SKIP',
    # Hypothesis loads its 'ci' profile (derandomize, no deadline) when one of these is
    # set; the pytest runs these tests start must see the same defaults on CI as here.
    'CI', '__TOX_ENVIRONMENT_VARIABLE_ORIGINAL_CI', 'TF_BUILD', 'bamboo.buildKey',
    'BUILDKITE', 'CIRCLECI', 'CIRRUS_CI', 'CODEBUILD_BUILD_ID', 'GITHUB_ACTIONS',
    'GITLAB_CI', 'HEROKU_TEST_RUN_ID', 'TEAMCITY_VERSION',
    # An outer gate or an outer pull request's event must not approve or refuse anything here.
    'ORACLE_GUARD_GATE', 'GITHUB_EVENT_PATH',
)


@pytest.fixture(autouse=True)
def isolated_git(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test sees the same git: no user or system config, fixed identity and dates."""
    home = tmp_path_factory.mktemp('home')
    gitconfig = home / '.gitconfig'
    gitconfig.write_text(
        '[init]\n\tdefaultBranch = main\n[user]\n\tname = Test\n\temail = test@example.invalid\n'
        '[core]\n\tautocrlf = false\n[commit]\n\tgpgsign = false\n',
    )
    monkeypatch.setenv('GIT_CONFIG_GLOBAL', str(gitconfig))
    # check-named-freezes' scan cache (reading/scan_cache.py): one folder per test.
    monkeypatch.setenv('XDG_CACHE_HOME', str(home / '.cache'))
    monkeypatch.setenv('GIT_CONFIG_NOSYSTEM', '1')
    for name in GIT_ENV_DROP:
        monkeypatch.delenv(name, raising=False)


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def codes(self) -> list[str]:
        """The rule codes reported, in order (`path:line:col: OGxxx ...`)."""
        codes = []
        for line in self.out.splitlines():
            parts = line.split(': ', 2)
            if len(parts) >= 2 and parts[1][:2] == 'OG':
                codes.append(parts[1].split()[0])
        return codes


class Repo:
    def __init__(self, path: str, capsys: pytest.CaptureFixture[str]) -> None:
        self.path = path
        self._capsys = capsys

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(('git', *args), cwd=self.path, capture_output=True, text=True)
        if check and proc.returncode:
            raise AssertionError(f'git {args} failed: {proc.stderr}')
        return proc.stdout

    def write(self, rel: str, content: str | bytes, *, dedent: bool = True) -> str:
        full = os.path.join(self.path, rel)
        os.makedirs(os.path.dirname(full) or '.', exist_ok=True)
        if isinstance(content, str):
            content = (textwrap.dedent(content) if dedent else content).encode()
        with open(full, 'wb') as f:
            f.write(content)
        return rel

    def write_json(self, rel: str, data: object) -> str:
        return self.write(rel, json.dumps(data, indent=2, sort_keys=True) + '\n', dedent=False)

    def read(self, rel: str) -> bytes:
        with open(os.path.join(self.path, rel), 'rb') as f:
            return f.read()

    def add(self, *paths: str) -> None:
        self.git('add', '-A', '--', *(paths or ('.',)))

    def commit(self, message: str = 'change', *paths: str) -> str:
        self.add(*paths)
        self.git('commit', '-q', '--no-verify', '--allow-empty', '-m', message)
        return self.git('rev-parse', 'HEAD').strip()

    def rm(self, *paths: str) -> None:
        self.git('rm', '-q', '-r', '--', *paths)

    def run(self, main: Callable[[Sequence[str] | None], int], *args: str) -> Result:
        """Call a hook's main() in-process, in this repository, and capture its output."""
        self._capsys.readouterr()
        cwd = os.getcwd()
        os.chdir(self.path)
        try:
            rc = main(list(args))
        finally:
            os.chdir(cwd)
        captured = self._capsys.readouterr()
        return Result(rc, captured.out, captured.err)

    def snapshot(self) -> dict[str, bytes]:
        """Every file on disk (outside .git): a hook must leave it unchanged."""
        files = {}
        for top, dirs, names in os.walk(self.path):
            dirs[:] = [d for d in dirs if d != '.git']
            for name in names:
                full = os.path.join(top, name)
                if not os.path.islink(full):
                    with open(full, 'rb') as f:
                        files[os.path.relpath(full, self.path)] = f.read()
        return files


@pytest.fixture
def repo(tmp_path, capsys) -> Repo:  # type: ignore[no-untyped-def]
    """An empty git repository (no commits yet)."""
    path = tmp_path / 'repo'
    path.mkdir()
    subprocess.run(('git', 'init', '-q', str(path)), check=True)
    return Repo(str(path), capsys)


def git_calls(monkeypatch):  # type: ignore[no-untyped-def]
    """The git subcommands a hook runs from here on (the real git, counted)."""
    from oracle_guard.repo import gitrepo

    calls: list[str] = []
    real = gitrepo.run_git

    def counted(args, *rest, **options):  # type: ignore[no-untyped-def]
        calls.append(next(a for a in args if not a.startswith('-')))  # the subcommand
        return real(args, *rest, **options)

    monkeypatch.setattr(gitrepo, 'run_git', counted)
    return calls


def sha256(data: bytes) -> str:
    import hashlib
    return hashlib.sha256(data).hexdigest()


PROPERTY_TEST = '''\
from hypothesis import given, strategies as st


@given(st.binary())
def test_parse_never_throws(buf):
    assert isinstance(buf, bytes)
'''


@pytest.fixture
def guarded(repo: Repo) -> Repo:
    """A repository already guarded by oracle-guard, with one clean commit.

    src/app.py, a real property test, one manifested human fixture, an empty
    ledger with budget 0, and an empty trace store and domain lock.
    """
    repo.write('pyproject.toml', '''\
        [project]
        name = "app"

        [tool.oracle-guard]
        src = ["src/"]
        ''')
    repo.write('src/app.py', 'def parse(b):\n    return b\n')
    repo.write('tests/properties/test_parse.py', PROPERTY_TEST)
    repo.write('tests/test_app.py', 'from app import parse\n\n\ndef test_parse():\n    assert parse(b"x") == b"x"\n')
    fixture = b'GET / HTTP/1.1\r\n\r\n'
    repo.write('tests/fixtures/headers/ok.bin', fixture)
    repo.write_json('tests/fixtures/manifest.json', {
        'version': 1,
        'fixtures': {'headers/ok.bin': {
            'sha256': sha256(fixture), 'source': 'human', 'purpose': 'a well-formed request',
        }},
    })
    repo.write('tests/fixtures/traces.txt', '# recorded trace ids, one a line\n')
    repo.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n')
    repo.write_json('tests/domain_lock.json', {'version': 1, 'properties': {
        'test_parse_never_throws': {'max_examples': 100},
    }})
    repo.write('.pre-commit-config.yaml', 'repos: []\n')
    repo.commit('guarded baseline')
    return repo


@pytest.fixture(scope='session')
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> 'HookRepo':
    """This project as a hook repository, with its environment built once per session."""
    from pre_commit_env import HookRepo
    from pre_commit_env import pre_commit
    from pre_commit_env import snapshot_hook_repo

    path = str(tmp_path_factory.mktemp('hook-repo'))
    rev = snapshot_hook_repo(path)
    hooks = HookRepo(path, rev, str(tmp_path_factory.mktemp('pre-commit-home')))
    scratch = str(tmp_path_factory.mktemp('warm-up'))
    env = hooks.env(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM='1')
    subprocess.run(('git', 'init', '-q', scratch), check=True, env=env)
    with open(os.path.join(scratch, '.pre-commit-config.yaml'), 'w') as f:
        f.write(hooks.config())
    warm = pre_commit('install-hooks', cwd=scratch, env=env)
    assert warm.rc == 0, warm.out
    return hooks
