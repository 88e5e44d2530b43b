"""The README is the front door: it documents every hook and code, and CI runs its command."""
from __future__ import annotations

import os
import re

import yaml

from conftest import ROOT


def read(rel: str) -> str:
    with open(os.path.join(ROOT, rel), encoding='utf-8') as f:
        return f.read()


def test_every_hook_id_is_documented():
    hooks = yaml.safe_load(read('.pre-commit-hooks.yaml'))
    readme = read('README.md')
    for hook in hooks:
        assert f'### {hook["id"]}' in readme or f'`{hook["id"]}`' in readme, hook['id']


def test_every_hook_has_its_console_script():
    hooks = yaml.safe_load(read('.pre-commit-hooks.yaml'))
    pyproject = read('pyproject.toml')
    for hook in hooks:
        assert f'\n{hook["entry"]} = ' in pyproject, hook['entry']


def test_every_rule_code_in_the_code_is_documented():
    readme = read('README.md')
    package = os.path.join(ROOT, 'hooks', 'oracle_guard')
    codes = set()
    for folder, _, names in os.walk(package):  # hooks/, commands/, runtime/ too
        for name in names:
            if name.endswith('.py'):
                codes.update(re.findall(r"'(OG\d{3})'", read(os.path.join(folder, name))))
    assert codes
    missing = sorted(c for c in codes if c not in readme)
    assert not missing, f'codes missing from README.md: {missing}'


def test_ci_runs_exactly_the_readme_test_command():
    readme = read('README.md')
    match = re.search(r"# 2\. .*\n(.+)\n", readme)
    assert match, 'README lost its second set-up command'
    command = match.group(1).strip()
    ci_lines = [line.strip() for line in read('.ci/run').splitlines()]
    assert command in ci_lines
