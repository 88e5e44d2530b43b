"""What a user's environment sees of the package: the manifest, --version, --help, check."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import yaml

from builders.repos import ROOT
from oracle_guard.cli import COMMANDS
from oracle_guard.cli import main


def test_every_hook_declares_the_pre_commit_version_its_stage_names_need():
    with open(os.path.join(ROOT, '.pre-commit-hooks.yaml'), encoding='utf-8') as f:
        hooks = yaml.safe_load(f)
    for hook in hooks:
        assert hook['minimum_pre_commit_version'] == '3.2.0', hook['id']
        assert 'pre-commit' in hook['stages']  # the 3.2.0 name of the commit stage


def test_this_repository_runs_every_hook_as_its_users_do():
    """The repository's own configuration is .pre-commit-hooks.yaml run from the checkout:
    the same hooks in the same order, each with the keys a user's clone gets (a
    `types:` or `files:` of our own would judge this repository differently)."""
    with open(os.path.join(ROOT, '.pre-commit-hooks.yaml'), encoding='utf-8') as f:
        declared = [h for h in yaml.safe_load(f) if h['id'] != 'oracle-guard']
    with open(os.path.join(ROOT, '.pre-commit-config.yaml'), encoding='utf-8') as f:
        [local] = yaml.safe_load(f)['repos']
    assert local['repo'] == 'local'
    assert [h['id'] for h in local['hooks']] == [h['id'] for h in declared]
    for ours, theirs in zip(local['hooks'], declared):
        assert ours['language'] == 'system', ours['id']
        expected = {k: v for k, v in theirs.items()
                    if k not in ('language', 'description', 'minimum_pre_commit_version')}
        assert {k: v for k, v in ours.items() if k != 'language'} == expected, ours['id']



def test_the_hook_ids_the_configuration_readers_know_are_the_package_hooks():
    """reading/ sits below hooks/, so its readers of a pre-commit configuration (the hooks'
    args, the rev the hooks are pinned to) keep their own list of the hook ids: it is the
    package's and the manifest's."""
    from oracle_guard.hooks import EVERY_HOOK
    from oracle_guard.hooks import HOOKS
    from oracle_guard.reading.precommit_config import HOOK_IDS

    with open(os.path.join(ROOT, '.pre-commit-hooks.yaml'), encoding='utf-8') as f:
        declared = {h['id'] for h in yaml.safe_load(f)}
    assert HOOK_IDS == {*HOOKS, EVERY_HOOK} == declared


def test_each_hook_entry_is_an_installed_plain_script_of_its_hook():
    """pre-commit runs each hook's `entry`: a script pip installs (pyproject's
    `script-files`) that imports `sys` and its hook's `main`, nothing before them: not
    pip's console-script wrapper, which imports `re` first (docs/architecture.md)."""
    import ast
    import importlib

    with open(os.path.join(ROOT, '.pre-commit-hooks.yaml'), encoding='utf-8') as f:
        entries = [h['entry'] for h in yaml.safe_load(f)]
    with open(os.path.join(ROOT, 'pyproject.toml'), encoding='utf-8') as f:
        installed = re.search(r'^script-files = \[(.*?)\]', f.read(), re.S | re.M).group(1)
    assert sorted(re.findall(r'"scripts/([^"]+)"', installed)) == sorted(entries)
    for entry in entries:
        with open(os.path.join(ROOT, 'scripts', entry), encoding='utf-8') as f:
            tree = ast.parse(f.read())
        imports = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        hook = 'oracle_guard.hooks.' + entry[len('oracle-guard-'):].replace('-', '_')
        assert [ast.dump(node) for node in imports] == [
            ast.dump(ast.parse('import sys').body[0]),
            ast.dump(ast.parse(f'from {hook} import main').body[0]),
        ], entry
        assert callable(importlib.import_module(hook).main), entry

def test_help_lists_every_command_with_one_line(capsys):
    assert main(['--help']) == 0
    out = capsys.readouterr().out
    for command in ['check', *COMMANDS]:
        line = next(line for line in out.splitlines() if line.startswith(f'  {command} '))
        assert len(line.split(None, 1)[1]) > 10, line


def test_version_names_the_commit_of_the_checkout_it_was_installed_from(capsys):
    assert main(['--version']) == 0
    out = capsys.readouterr().out
    head = subprocess.run(('git', 'rev-parse', 'HEAD'), cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    assert re.fullmatch(r'oracle-guard \d+\.\d+\.\d+ \(commit [0-9a-f]{40}\)\n', out), out
    assert head in out


def test_successful_check_prints_one_summary_line(guarded):
    guarded.write('README.md', 'an honest change\n')
    guarded.add()
    result = guarded.run(main, 'check')
    assert (result.rc, result.out) == (0, 'oracle-guard: all checks passed\n')
    guarded.write('src/app.py', 'x = 1\n')
    guarded.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes: []\n')
    guarded.add()
    assert 'all checks passed' not in guarded.run(main, 'check').out


def test_the_suite_needs_no_activated_environment():
    """pre-commit is run as `python -m pre_commit` everywhere, never looked up on PATH."""
    offenders = []
    for top, _, names in os.walk(os.path.join(ROOT, 'tests')):
        for name in sorted(names):
            if name.endswith('.py'):
                with open(os.path.join(top, name), encoding='utf-8') as f:
                    text = f.read()
                if re.search(r"""\(\s*['"]pre-commit['"]\s*,""", text):
                    offenders.append(name)
    assert not offenders
    assert sys.executable
