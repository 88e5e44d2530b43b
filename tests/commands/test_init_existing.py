"""``oracle-guard init`` on an existing repository: detect, write, and then every check
passes untouched (`oracle-guard check --all-files`, the real `pre-commit run --all-files`)
while the next cheating change is blocked."""
from __future__ import annotations

import json
import os

from builders.pre_commit import HookRepo
from builders.pre_commit import pre_commit
from builders.pre_commit import run
from builders.repos import Repo
from oracle_guard.cli import main as cli
from oracle_guard.commands.init import main as init

PROPERTY = '''\
from hypothesis import given, settings, strategies as st

from app import add


@settings(max_examples=50)
@given(st.integers(), st.integers())
def test_add_commutes(a, b):
    assert add(a, b) == add(b, a)
'''
LEGACY = '''\
import os
import sys

import pytest

from app import add


@pytest.mark.skipif(sys.platform == "win32", reason="posix paths")
def test_paths():
    assert add(1, 1) == 2


@pytest.mark.skipif(not os.environ.get("SLOW"), reason="slow")
def test_slow():
    assert add(2, 2) == 4


def test_yaml():
    yaml = pytest.importorskip("yaml")
    assert yaml


@pytest.mark.xfail(reason="known bug")
def test_known_bug():
    assert add(0, 1) == 2
'''


def existing_project(repo: Repo, layout: str = 'src') -> Repo:
    repo.write('pyproject.toml', '[project]\nname = "app"\nversion = "1.0"\n'
                                 'requires-python = ">=3.9"\ndependencies = ["pyyaml"]\n')
    package = 'src/app' if layout == 'src' else 'app'
    tests = 'tests' if layout == 'src' else 'test'
    repo.write(f'{package}/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write(f'{tests}/test_legacy.py', LEGACY)
    repo.write(f'{tests}/properties/test_props.py', PROPERTY)
    repo.write(f'{tests}/fixtures/request.bin', b'GET / HTTP/1.1\r\n\r\n')
    repo.write(f'{tests}/fixtures/cases/empty.json', '{}\n')
    repo.commit('an existing project')
    return repo


def test_init_detects_the_layout_and_writes_every_oracle_file(repo: Repo) -> None:
    existing_project(repo)
    result = repo.run(init, '--hook-repo', '/somewhere/oracle-guard')
    assert result.rc == 0, result.out + result.err
    assert 'found src: src/' in result.out and 'found tests: tests/' in result.out
    assert 'found properties: tests/properties/' in result.out
    manifest = json.loads(repo.read('tests/fixtures/manifest.json'))['fixtures']
    assert sorted(manifest) == ['cases/empty.json', 'request.bin']
    assert all(row['source'] == 'human' and 'predates oracle-guard' in row['purpose']
               for row in manifest.values())
    lock = json.loads(repo.read('tests/domain_lock.json'))['properties']
    assert lock['test_add_commutes']['max_examples'] == 50
    baseline = json.loads(repo.read('tests/oracle_baseline.json'))['silences']
    # The environment skip and the declared import need no entry; the other two do.
    assert [(e['tests'], e['kind']) for e in baseline] == [
        (['test_known_bug'], 'xfail'), (['test_slow'], 'skipif')]
    assert 'next steps:' in result.out


def test_after_init_every_check_passes_untouched_and_the_next_cheat_is_blocked(
        repo: Repo, hook_repo: HookRepo) -> None:
    existing_project(repo)
    result = repo.run(init, '--hook-repo', hook_repo.path, '--rev', hook_repo.rev)
    assert result.rc == 0, result.out + result.err
    repo.commit('Adopt oracle-guard')
    checked = repo.run(cli, 'check', '--all-files')
    assert checked.rc == 0, checked.out + checked.err
    env = hook_repo.env()
    ran = pre_commit('run', '--all-files', cwd=repo.path, env=env)
    assert ran.rc == 0, ran.out
    assert pre_commit('install', cwd=repo.path, env=env).rc == 0
    head = repo.git('rev-parse', 'HEAD')
    repo.write('tests/test_legacy.py', LEGACY.replace(
        'def test_yaml():', '@pytest.mark.skip\ndef test_yaml():'))
    blocked = run(('git', 'commit', '-qam', 'skip it'), repo.path, env)
    assert blocked.rc != 0 and blocked.has('OG301', 'tests/test_legacy.py'), blocked.out
    assert repo.git('rev-parse', 'HEAD') == head


def test_init_detects_a_flat_package_and_a_test_folder(repo: Repo) -> None:
    existing_project(repo, layout='flat')
    repo.write('docs/__init__.py', '')
    result = repo.run(init)
    assert result.rc == 0, result.out + result.err
    assert 'found src: app/ (flat layout)' in result.out
    text = repo.read('pyproject.toml').decode()
    assert 'src = ["app/"]' in text and 'tests = ["test/"]' in text
    assert 'properties = ["test/properties/"]' in text
    assert os.path.exists(os.path.join(repo.path, 'test/freeze_ledger.yaml'))
    assert repo.run(cli, 'check', '--all-files').rc == 0


def test_init_dry_run_writes_nothing(repo: Repo) -> None:
    existing_project(repo)
    before = repo.snapshot()
    result = repo.run(init, '--dry-run')
    assert result.rc == 0, result.out + result.err
    assert 'would write tests/freeze_ledger.yaml' in result.out
    assert 'would write tests/oracle_baseline.json: 2 silence(s)' in result.out
    assert result.out.rstrip().endswith('dry run: nothing was written')
    assert repo.snapshot() == before


def test_init_never_overwrites_without_force(repo: Repo) -> None:
    existing_project(repo)
    repo.write('tests/freeze_ledger.yaml', 'budget: 2\nfreezes: []\n')
    repo.write('tests/oracle_baseline.json', '{"version": 1, "silences": []}\n')
    result = repo.run(init)
    assert 'kept  tests/freeze_ledger.yaml: it exists (--force rewrites it)' in result.out
    assert repo.read('tests/oracle_baseline.json') == b'{"version": 1, "silences": []}\n'
    forced = repo.run(init, '--force')
    assert forced.rc == 0, forced.out + forced.err
    assert repo.read('tests/freeze_ledger.yaml').endswith(b'budget: 0\nfreezes: []\n')
    assert len(json.loads(repo.read('tests/oracle_baseline.json'))['silences']) == 2


def test_init_writes_codeowners_lines_for_the_oracle_files(repo: Repo) -> None:
    existing_project(repo)
    repo.write('.github/CODEOWNERS', '* @everyone\n')
    assert repo.run(init, '--codeowners', '@qa-team').rc == 0
    text = repo.read('.github/CODEOWNERS').decode()
    assert text.startswith('* @everyone\n')
    for path in ('tests/freeze_ledger.yaml', 'tests/fixtures/manifest.json',
                 'tests/domain_lock.json', 'tests/oracle_baseline.json', 'tests/properties/',
                 '.pre-commit-config.yaml'):
        assert f'/{path} @qa-team\n' in text
    assert repo.run(init, '--codeowners', '@qa-team').rc == 0
    assert repo.read('.github/CODEOWNERS').decode() == text  # not twice
