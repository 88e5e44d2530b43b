"""Fixtures every test may ask for: an isolated git, an empty or a guarded repository,
this project as a pre-commit hook repository, and the three ways pre-commit runs."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from builders.pre_commit import HookRepo
from builders.repos import PROPERTY_TEST
from builders.repos import Repo
from builders.repos import ROOT
from builders.repos import sha256

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


@pytest.fixture
def repo(tmp_path, capsys) -> Repo:  # type: ignore[no-untyped-def]
    """An empty git repository (no commits yet)."""
    path = tmp_path / 'repo'
    path.mkdir()
    subprocess.run(('git', 'init', '-q', str(path)), check=True)
    return Repo(str(path), capsys)


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
    """This project as a hook repository, with its environment built once per run: the
    pytest-xdist workers share the snapshot and its PRE_COMMIT_HOME (the first to ask
    builds both, under the lock of builders.ci_repo.shared_template; pre-commit's store
    locks what it installs itself). The tests only read the snapshot."""
    from builders.ci_repo import shared_template
    from builders.pre_commit import HookRepo
    from builders.pre_commit import pre_commit
    from builders.pre_commit import snapshot_hook_repo

    def hooks_at(path: str, rev: str) -> HookRepo:
        return HookRepo(path, rev, os.path.join(os.path.dirname(path), 'pre-commit-home'))

    def build(path: str) -> None:
        hooks = hooks_at(path, snapshot_hook_repo(path))
        scratch = os.path.join(os.path.dirname(path), 'warm-up')
        env = hooks.env(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM='1')
        subprocess.run(('git', 'init', '-q', scratch), check=True, env=env)
        with open(os.path.join(scratch, '.pre-commit-config.yaml'), 'w') as f:
            f.write(hooks.config())
        warm = pre_commit('install-hooks', cwd=scratch, env=env)
        assert warm.rc == 0, warm.out

    path = shared_template(tmp_path_factory, 'hook-repo', build)
    env = hooks_at(path, 'HEAD').env(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM='1')
    rev = subprocess.run(('git', 'rev-parse', 'HEAD'), cwd=path, env=env, check=True,
                         capture_output=True, text=True).stdout.strip()
    return hooks_at(path, rev)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """``default_python``: what .ci/run leaves to the default Python. On every Python run
    the tests of what depends on the interpreter itself: tests/unit (the readers: ``ast``,
    ``tokenize`` and the standard library change between versions), tests/plugin (the
    plugin and the lock inside pytest and Hypothesis, whose releases differ by Python),
    tests/properties, and the modules elsewhere marked ``every_python`` (the hooks' rules
    that read source, the gate's start-up and test environment). The rest (the hooks' and
    commands' rules over real repositories, the gate's scenarios and the end-to-end chains
    of programs) runs once."""
    for item in items:
        folder = os.path.basename(os.path.dirname(str(item.fspath)))
        if folder in ('unit', 'plugin', 'properties'):
            continue
        if item.get_closest_marker('every_python') is None:
            item.add_marker('default_python')


MODES = ('commit', 'range', 'all-files')


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    """One change judged as a ``git commit``, a ``--from-ref/--to-ref`` range and an
    ``--all-files`` history run (builders.pre_commit.judge)."""
    return request.param


@pytest.fixture
def user(guarded: Repo, hook_repo: HookRepo) -> Repo:
    """The guarded repository with this project's hooks in its pre-commit configuration."""
    guarded.write('.pre-commit-config.yaml', hook_repo.config())
    guarded.commit('use oracle-guard')
    return guarded
