"""``oracle-guard init`` on temporary repositories: scaffold what is missing, clobber nothing."""
from __future__ import annotations

import os
import subprocess
import sys

from pre_commit.clientlib import load_config as load_pre_commit_config

from builders.repos import ROOT
from oracle_guard import cli
from oracle_guard.commands.fixtures import main as fixtures_main
from oracle_guard.commands.init import main
from oracle_guard.config import load_config
from oracle_guard.hooks import check_fixture_manifest
from oracle_guard.hooks import HOOKS

SCAFFOLD = ('pyproject.toml', 'tests/freeze_ledger.yaml', 'tests/fixtures/manifest.json',
            'tests/fixtures/traces.txt', 'tests/domain_lock.json', '.pre-commit-config.yaml')
URL = 'https://git.example.invalid/oracle-guard'


def hook_ids(repo) -> list[list[str]]:
    config = load_pre_commit_config(os.path.join(repo.path, '.pre-commit-config.yaml'))
    return [[hook['id'] for hook in r['hooks']] for r in config['repos']]


def test_init_scaffolds_every_file_in_an_empty_repository(repo):
    result = repo.run(main, '--hook-repo', URL)
    assert result.rc == 0
    for path in SCAFFOLD:
        assert f'wrote {path}: ' in result.out
    assert 'budget 0' in result.out
    cfg = load_config(repo.path)
    assert cfg.has_table and cfg.src == ('src/',) and cfg.ledger == 'tests/freeze_ledger.yaml'
    assert repo.read('tests/freeze_ledger.yaml').endswith(b'budget: 0\nfreezes: []\n')
    assert repo.read('tests/fixtures/manifest.json') == b'{\n  "fixtures": {},\n  "version": 1\n}\n'
    assert repo.read('tests/domain_lock.json') == b'{\n  "properties": {},\n  "version": 1\n}\n'
    config = load_pre_commit_config(os.path.join(repo.path, '.pre-commit-config.yaml'))
    assert config['repos'][0]['repo'] == URL
    # A rev that exists: the commit of the oracle-guard checkout this one runs from.
    assert config['repos'][0]['rev'] == subprocess.run(
        ('git', 'rev-parse', 'HEAD'), cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert hook_ids(repo) == [list(HOOKS)]


def test_init_twice_writes_nothing_the_second_time(repo):
    assert repo.run(main).rc == 0
    before = repo.snapshot()
    result = repo.run(main)
    assert result.rc == 0
    assert 'wrote' not in result.out
    assert result.out.endswith('nothing to do: oracle-guard is already set up here\n')
    assert repo.snapshot() == before


def test_init_is_reachable_through_the_cli(repo):
    assert repo.run(cli.main, 'init').rc == 0
    assert load_config(repo.path).has_table


def test_init_into_a_closed_pipe_ends_quietly(repo):
    """``oracle-guard init | head -1``: the reader went away; no internal error, no
    traceback, and exit 1 (the command could not say what it did)."""
    proc = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), 'oracle-guard'),
                             'init', '--hook-repo', URL],
                            cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # type: ignore[union-attr]
    err = proc.stderr.read().decode()  # type: ignore[union-attr]
    assert proc.wait() == 1, err
    assert err == '', err


def test_scaffolded_repository_passes_the_fixture_hook_and_status(repo):
    repo.run(main)
    repo.commit('oracle-guard init')
    assert repo.run(check_fixture_manifest.main, '--all-files').rc == 0
    status = repo.run(fixtures_main, 'status')
    assert (status.rc, status.out) == (0, '0 fixture(s) match tests/fixtures/manifest.json\n')


def test_init_appends_the_table_to_an_existing_pyproject_without_touching_the_rest(repo):
    original = b'[project]\nname = "app"\n\n[tool.black]\nline-length = 100'  # no newline
    repo.write('pyproject.toml', original)
    result = repo.run(main, '--src', 'app/', '--src', 'lib')
    assert 'wrote pyproject.toml: appended the [tool.oracle-guard] table' in result.out
    text = repo.read('pyproject.toml')
    assert text.startswith(original + b'\n\n[tool.oracle-guard]\n')
    assert load_config(repo.path).src == ('app/', 'lib/')


def test_init_never_clobbers_an_existing_table_and_uses_its_paths(repo):
    original = b'[tool.oracle-guard]\nledger = "qa/ledger.yaml"\n'
    repo.write('pyproject.toml', original)
    result = repo.run(main)
    assert 'kept  pyproject.toml: [tool.oracle-guard] is already there' in result.out
    assert repo.read('pyproject.toml') == original
    assert 'wrote qa/ledger.yaml: empty freeze ledger, budget 0' in result.out
    assert not os.path.exists(os.path.join(repo.path, 'tests/freeze_ledger.yaml'))


def test_init_keeps_existing_ledger_manifest_and_lock(repo):
    repo.write('tests/freeze_ledger.yaml', 'budget: 2\nfreezes: []\n')
    repo.write('tests/fixtures/manifest.json', '{"version": 1, "fixtures": {}}')
    result = repo.run(main)
    assert 'kept  tests/freeze_ledger.yaml: it exists' in result.out
    assert 'kept  tests/fixtures/manifest.json: it exists' in result.out
    assert repo.read('tests/freeze_ledger.yaml') == b'budget: 2\nfreezes: []\n'
    assert repo.read('tests/fixtures/manifest.json') == b'{"version": 1, "fixtures": {}}'


def test_init_appends_a_repo_entry_to_an_existing_block_list(repo):
    original = (
        '# our hooks\n'
        'repos:\n'
        '  - repo: https://github.com/pre-commit/pre-commit-hooks\n'
        '    rev: v4.6.0\n'
        '    hooks:\n'
        '      - id: trailing-whitespace  # keep\n'
        'ci:\n'
        '  autofix_prs: false\n'
    )
    repo.write('.pre-commit-config.yaml', original, dedent=False)
    result = repo.run(main, '--hook-repo', URL)
    assert 'appended the oracle-guard hooks to "repos:"' in result.out
    text = repo.read('.pre-commit-config.yaml').decode()
    assert text.startswith(original.split('ci:')[0])
    assert text.endswith('ci:\n  autofix_prs: false\n')
    assert '# keep' in text
    assert hook_ids(repo) == [['trailing-whitespace'], list(HOOKS)]


def test_init_fills_an_empty_flow_list(repo):
    repo.write('.pre-commit-config.yaml', 'repos: []  # none yet\nfail_fast: true\n')
    assert repo.run(main).rc == 0
    assert hook_ids(repo) == [list(HOOKS)]
    assert load_pre_commit_config(os.path.join(repo.path, '.pre-commit-config.yaml'))['fail_fast']


def test_init_keeps_crlf_line_endings_of_the_pre_commit_config(repo):
    repo.write('.pre-commit-config.yaml',
               'repos:\r\n- repo: local\r\n  hooks:\r\n  - id: x\r\n    name: x\r\n'
               '    entry: x\r\n    language: system\r\n', dedent=False)
    assert repo.run(main).rc == 0
    text = repo.read('.pre-commit-config.yaml')
    assert b'\n' not in text.replace(b'\r\n', b'')
    assert hook_ids(repo) == [['x'], list(HOOKS)]


def test_init_leaves_a_config_that_already_runs_oracle_guard_alone(repo):
    original = 'repos:\n  - repo: local\n    hooks:\n      - id: check-named-freezes\n' \
               '        name: n\n        entry: oracle-guard-check-named-freezes\n' \
               '        language: system\n'
    repo.write('.pre-commit-config.yaml', original, dedent=False)
    result = repo.run(main)
    assert result.rc == 0
    assert 'kept  .pre-commit-config.yaml: it already runs oracle-guard' in result.out
    assert repo.read('.pre-commit-config.yaml').decode() == original


def test_init_refuses_politely_to_edit_a_flow_style_list_and_prints_the_entry(repo):
    original = 'repos: [{repo: local, hooks: []}]\n'
    repo.write('.pre-commit-config.yaml', original, dedent=False)
    result = repo.run(main)
    assert result.rc == 1
    assert 'add this entry to it by hand:' in result.err
    assert '- id: check-fixture-manifest' in result.err
    assert repo.read('.pre-commit-config.yaml').decode() == original
    assert 'wrote tests/freeze_ledger.yaml' in result.out  # the rest is still scaffolded


def test_init_refuses_politely_when_tool_is_an_inline_table(repo):
    original = b'tool = {black = {line-length = 100}}\n'
    repo.write('pyproject.toml', original)
    result = repo.run(main)
    assert result.rc == 1
    assert 'add this table by hand:' in result.err
    assert repo.read('pyproject.toml') == original


def test_init_reports_invalid_yaml_with_file_and_line(repo):
    repo.write('.pre-commit-config.yaml', 'repos:\n  - repo: [\n')
    before = repo.snapshot()
    result = repo.run(main)
    assert result.rc == 2
    assert result.err.startswith('.pre-commit-config.yaml:3: invalid YAML')
    assert 'Traceback' not in result.err
    assert repo.snapshot() == before  # bad input writes nothing


def test_init_with_invalid_toml_writes_nothing(repo):
    repo.write('pyproject.toml', '[project\n')
    before = repo.snapshot()
    result = repo.run(main)
    assert result.rc == 2
    assert result.err.startswith('pyproject.toml:')
    assert repo.snapshot() == before


def test_init_outside_a_git_repository_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert 'not inside a git repository' in err
    assert os.listdir(tmp_path) == []
