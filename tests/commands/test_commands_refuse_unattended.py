"""The commands that write oracle files (lock, fixtures add|rehash, baseline, init) refuse
to run under CI or inside ``oracle-guard ci`` unless given ``--force``: an oracle written by
the job that checks it approves whatever the code does now."""
from __future__ import annotations

import json

import pytest

from builders.repos import Repo
from builders.repos import sha256
from oracle_guard.commands import ci
from oracle_guard.commands import GATE_ENV
from oracle_guard.commands.baseline import main as baseline_main
from oracle_guard.commands.fixtures import main as fixtures_main
from oracle_guard.commands.init import main as init_main
from oracle_guard.commands.lock import main as lock_main

NEW_PROPERTY = 'from hypothesis import given, strategies as st\n\n\n' \
               '@given(st.text())\ndef test_decode_total(s):\n    assert isinstance(s, str)\n'
SKIPPED = 'import pytest\n\n\n@pytest.mark.skip(reason="later")\ndef test_later():\n' \
          '    assert False\n'
PURPOSE = ('--purpose', 'a request with one header')


def prepared(guarded: Repo) -> Repo:
    """Something for every command to write: a new property, fixture and silence."""
    guarded.write('tests/properties/test_decode.py', NEW_PROPERTY)
    guarded.write('tests/fixtures/headers/one.bin', b'GET / HTTP/1.1\r\nA: b\r\n\r\n')
    guarded.write('tests/fixtures/headers/ok.bin', b'GET /x HTTP/1.1\r\n\r\n')
    guarded.write('tests/test_later.py', SKIPPED)
    return guarded


COMMANDS = {
    'lock': (lock_main, (), 'tests/domain_lock.json'),
    'fixtures add': (fixtures_main, ('add', 'tests/fixtures/headers/one.bin', '--source',
                                     'human', *PURPOSE), 'tests/fixtures/manifest.json'),
    'fixtures rehash': (fixtures_main, ('rehash', 'tests/fixtures/headers/ok.bin', *PURPOSE),
                        'tests/fixtures/manifest.json'),
    'baseline': (baseline_main, (), 'tests/oracle_baseline.json'),
}


def state(repo: Repo, path: str) -> bytes | None:
    try:
        return repo.read(path)
    except FileNotFoundError:
        return None


@pytest.mark.parametrize('command', sorted(COMMANDS))
@pytest.mark.parametrize('variable, value', [('CI', 'true'), ('CI', '1'), (GATE_ENV, '1')])
def test_command_writing_an_oracle_file_under_ci_is_refused(
        guarded: Repo, monkeypatch: pytest.MonkeyPatch, command: str, variable: str,
        value: str) -> None:
    main, args, writes = COMMANDS[command]
    repo = prepared(guarded)
    before = state(repo, writes)
    monkeypatch.setenv(variable, value)
    result = repo.run(main, *args)
    assert result.rc == 2, result.out + result.err
    assert f'oracle-guard {command}: refused: ' in result.err
    assert 'a person runs it locally' in result.err and '--force' in result.err
    assert state(repo, writes) == before


@pytest.mark.parametrize('command', sorted(COMMANDS))
def test_command_under_ci_with_force_writes(
        guarded: Repo, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    main, args, writes = COMMANDS[command]
    repo = prepared(guarded)
    before = state(repo, writes)
    monkeypatch.setenv('CI', 'true')
    result = repo.run(main, *args, '--force')
    assert result.rc == 0, result.out + result.err
    assert state(repo, writes) != before


@pytest.mark.parametrize('value', ['', 'false', 'False', '0'])
def test_ci_set_to_false_is_a_person(guarded: Repo, monkeypatch: pytest.MonkeyPatch,
                                     value: str) -> None:
    repo = prepared(guarded)
    monkeypatch.setenv('CI', value)
    assert repo.run(lock_main).rc == 0
    assert 'test_decode_total' in json.loads(repo.read('tests/domain_lock.json'))['properties']


def test_dry_run_under_ci_writes_nothing_and_is_allowed(
        guarded: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = prepared(guarded)
    before = repo.read('tests/domain_lock.json')
    monkeypatch.setenv('CI', 'true')
    result = repo.run(lock_main, '--dry-run')
    assert result.rc == 0 and '+    "test_decode_total": {' in result.out
    assert repo.read('tests/domain_lock.json') == before
    assert repo.run(baseline_main, '--dry-run').rc == 0


def test_fixtures_status_under_ci_is_allowed(guarded: Repo,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('CI', 'true')
    assert repo_rc(guarded, 'status') == 0


def repo_rc(repo: Repo, *args: str) -> int:
    return repo.run(fixtures_main, *args).rc


def test_init_under_ci_is_refused(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('CI', 'true')
    result = repo.run(init_main, '--hook-repo', 'https://git.example.invalid/oracle-guard')
    assert result.rc == 2
    assert 'oracle-guard init: refused: CI is set (CI=true)' in result.err
    assert state(repo, 'pyproject.toml') is None


def test_init_under_ci_with_force_runs_the_commands_it_follows_with(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write('src/app.py', 'def f():\n    return 1\n')
    repo.write('tests/properties/test_decode.py', NEW_PROPERTY)
    repo.write('tests/fixtures/one.bin', b'x')
    repo.commit('before adoption')
    monkeypatch.setenv('CI', 'true')
    result = repo.run(init_main, '--hook-repo', 'https://git.example.invalid/oracle-guard',
                      '--force')
    assert result.rc == 0, result.out + result.err
    lock = json.loads(repo.read('tests/domain_lock.json'))
    assert 'test_decode_total' in lock['properties']
    rows = json.loads(repo.read('tests/fixtures/manifest.json'))['fixtures']
    assert rows['one.bin']['sha256'] == sha256(b'x')
    assert state(repo, 'tests/oracle_baseline.json') is not None


def test_the_gate_tells_its_test_command_it_runs_inside_the_gate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = ci.test_environment(str(tmp_path), None)
    assert env[GATE_ENV] == '1'
