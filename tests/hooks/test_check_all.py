"""`oracle-guard check`: every hook in one process; row 26 (an honest change passes)."""
from __future__ import annotations

import pytest

from oracle_guard.cli import main

# Every hook once, in one process: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python


def test_code_only_change_passes_every_hook(guarded):
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.write('tests/test_app.py', 'from app import parse\n\n\ndef test_parse():\n    assert parse(b"y") == b"y"\n')
    guarded.add()
    result = guarded.run(main, 'check')
    assert result.rc == 0, result.out + result.err
    assert result.out == 'oracle-guard: all checks passed\n'  # one summary line
    guarded.commit('honest fix')
    result = guarded.run(main, 'check', '--all-files')
    assert result.rc == 0, result.out + result.err


def test_check_reports_findings_of_several_hooks(guarded):
    guarded.write('src/app.py', 'x = 1\n')
    guarded.write('tests/properties/test_parse.py', 'import pytest\n\n@pytest.mark.skip\ndef test_p():\n    assert 1\n')
    guarded.write('tests/fixtures/headers/ok.bin', b'regenerated from the new code')
    guarded.add()
    result = guarded.run(main, 'check')
    assert result.rc == 1
    assert {'OG101', 'OG201', 'OG301'} <= set(result.codes)


def test_check_hook_option_selects_hooks(guarded):
    guarded.write('tests/fixtures/headers/ok.bin', b'changed')
    guarded.add()
    assert guarded.run(main, 'check', '--hook', 'check-properties-present').rc == 0
    assert guarded.run(main, 'check', '--hook', 'check-fixture-manifest').codes == ['OG101']


def test_unknown_config_key_is_exit_2_naming_file_and_line(guarded):
    text = guarded.read('pyproject.toml').decode() + 'sorce = ["src/"]\n'
    guarded.write('pyproject.toml', text)
    result = guarded.run(main, 'check')
    assert result.rc == 2
    line = len(text.splitlines())
    assert result.err.startswith(f"pyproject.toml:{line}: unknown key 'sorce'")
    assert 'Traceback' not in result.err


def test_invalid_toml_is_exit_2(guarded):
    guarded.write('pyproject.toml', '[tool.oracle-guard]\nsrc = [\n')
    result = guarded.run(main, 'check')
    assert result.rc == 2
    assert result.err.startswith('pyproject.toml:')


def test_config_path_leaving_the_repository_is_exit_2(guarded):
    guarded.write('pyproject.toml', '[tool.oracle-guard]\nledger = "../ledger.yaml"\n')
    result = guarded.run(main, 'check')
    assert result.rc == 2
    assert 'leaves the repository' in result.err


def test_outside_a_git_repository_is_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(['check']) == 2
    assert 'not inside a git repository' in capsys.readouterr().err


def test_unknown_command_is_exit_2(capsys):
    assert main(['frobnicate']) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_from_ref_without_to_ref_is_exit_2(guarded):
    result = guarded.run(main, 'check', '--from-ref', 'HEAD')
    assert result.rc == 2
    assert '--from-ref and --to-ref go together' in result.err


def test_repository_with_no_commits_works(repo):
    repo.write('src/a.py', 'x = 1\n')
    repo.write('tests/properties/test_a.py', 'def test_a():\n    assert 1\n')
    repo.add()
    result = repo.run(main, 'check')
    assert result.rc == 1  # first commit: base is the empty tree, src and properties together
    assert 'OG201' in result.codes


def test_detached_head_all_files(guarded):
    guarded.write('src/app.py', 'x = 2\n')
    guarded.commit('second')
    guarded.git('checkout', '-q', '--detach', 'HEAD')
    result = guarded.run(main, 'check', '--all-files')
    assert result.rc == 0, result.out + result.err


def test_untracked_pyproject_cannot_reconfigure_a_commit(repo):
    # Defaults apply to what git records; an untracked pyproject.toml on disk that points
    # src and tests elsewhere must not switch the checks off for the staged change.
    repo.write('src/app.py', 'x = 1\n')
    repo.write('tests/properties/test_p.py', 'def test_p():\n    assert 1\n')
    repo.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n')
    repo.commit('baseline')
    repo.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["nowhere/"]\ntests = ["nowhere/"]\n')
    repo.write('src/app.py', 'x = 2\n')
    repo.write('tests/properties/test_p.py', 'import pytest\n\n@pytest.mark.skip\ndef test_p():\n    assert 1\n')
    repo.add('src/app.py', 'tests/properties/test_p.py')
    result = repo.run(main, 'check')
    assert {'OG201', 'OG301'} <= set(result.codes), result.out


def test_untracked_ledger_names_no_freeze_in_a_commit(repo):
    from oracle_guard.hooks.check_named_freezes import main as named
    repo.write('tests/test_a.py', 'def test_c():\n    assert 1\n')
    repo.commit('baseline')
    repo.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes:\n  - id: FZ-1\n'
               '    nodeid: tests/test_a.py::test_c\n    class: time-dependent\n'
               '    evidence: midnight\n    owner: alice\n    expires: 2026-12-31\n')
    repo.write('tests/test_a.py', 'import pytest\n\n@pytest.mark.skip(reason="FZ-1")\ndef test_c():\n    assert 1\n')
    repo.add('tests/test_a.py')
    result = repo.run(named, '--today', '2026-11-29', 'tests/test_a.py')
    assert result.codes == ['OG302']  # the ledger is not part of what is committed
    repo.add('tests/freeze_ledger.yaml')
    assert repo.run(named, '--today', '2026-11-29', 'tests/test_a.py').rc == 0


def test_moving_ledger_and_lock_does_not_escape_the_loosening_rules(guarded):
    # Row 27: a budget raise and a lowered lock entry, together with a test edit, moved
    # to new paths in the same change so that no base version exists at the new paths.
    text = guarded.read('pyproject.toml').decode() + \
        'ledger = "tests/freezes.yaml"\ndomain-lock = "tests/lock.json"\n'
    guarded.write('pyproject.toml', text)
    guarded.rm('tests/freeze_ledger.yaml', 'tests/domain_lock.json')
    guarded.write('tests/freezes.yaml', 'budget: 5\nfreezes: []\n')
    guarded.write_json('tests/lock.json', {'version': 1, 'properties': {
        'test_parse_never_throws': {'max_examples': 5}}})
    guarded.write('tests/test_app.py', 'def test_parse():\n    assert True\n')
    guarded.add()
    result = guarded.run(main, 'check')
    assert {'OG515', 'OG606'} <= set(result.codes), result.out
