"""The README is the front door: short, for users, and every hook, code and rule documented."""
from __future__ import annotations

import glob
import os
import re

import yaml

from builders.repos import ROOT

README_LIMIT = 15_000  # bytes: the front door, not the reference


def read(rel: str) -> str:
    with open(os.path.join(ROOT, rel), encoding='utf-8') as f:
        return f.read()


def docs() -> dict[str, str]:
    return {os.path.relpath(p, ROOT): read(os.path.relpath(p, ROOT))
            for p in sorted(glob.glob(os.path.join(ROOT, 'docs', '*.md')))}


def section(text: str, heading: str) -> str:
    """The body of a `## heading` section, up to the next `## ` heading."""
    start = text.index(f'\n## {heading}\n')
    end = text.find('\n## ', start + 1)
    return text[start:end if end != -1 else len(text)]


def test_every_hook_id_is_documented():
    hooks = yaml.safe_load(read('.pre-commit-hooks.yaml'))
    readme = read('README.md')
    for hook in hooks:
        assert f'`{hook["id"]}`' in readme, hook['id']
        assert f'## {hook["id"]}' in read('docs/hooks.md'), hook['id']


def test_every_hook_has_its_script():
    # The hooks' entries are plain scripts (no pip console-script wrapper, which imports
    # `re`): each is installed, and runs its hook module's main.
    hooks = yaml.safe_load(read('.pre-commit-hooks.yaml'))
    pyproject = read('pyproject.toml')
    for hook in hooks:
        script = f'scripts/{hook["entry"]}'
        assert f'\n    "{script}",' in pyproject, script
        module = 'every_hook' if hook['id'] == 'oracle-guard' else hook['id'].replace('-', '_')
        body = read(script)
        assert body.startswith('#!python\n'), script  # pip writes the interpreter there
        assert f'\nfrom oracle_guard.hooks.{module} import main\n' in body, script
        assert 'import re' not in body, script


def test_every_rule_code_in_the_code_is_documented():
    documented = read('README.md') + ''.join(docs().values())
    package = os.path.join(ROOT, 'hooks', 'oracle_guard')
    codes = set()
    for folder, _, names in os.walk(package):  # hooks/, commands/, runtime/ too
        for name in names:
            if name.endswith('.py'):
                codes.update(re.findall(r"'(OG\d{3})'", read(os.path.join(folder, name))))
    assert codes
    missing = sorted(c for c in codes if c not in documented)
    assert not missing, f'codes missing from README.md and docs/*.md: {missing}'


def test_every_docs_file_the_readme_links_exists():
    links = re.findall(r'\]\((docs/[^)#\s]+)', read('README.md'))
    assert 'docs/rules.md' in links
    missing = sorted({link for link in links if not os.path.isfile(os.path.join(ROOT, link))})
    assert not missing, missing


def test_links_between_docs_files_resolve():
    broken = []
    for path, text in docs().items():
        for target in re.findall(r'\]\(([^)#\s:]+\.md)', text):
            if not os.path.isfile(os.path.join(ROOT, 'docs', target)):
                broken.append(f'{path} -> {target}')
    assert not broken, broken


def test_readme_is_under_15_kb():
    size = len(read('README.md').encode('utf-8'))
    assert size < README_LIMIT, f'README.md is {size} bytes; reference material goes to docs/'


def test_readme_cites_no_spec_and_no_table_row():
    readme = read('README.md')
    assert not re.search(r'SPEC|decision[- ]table row|\brow \d+', readme), \
        re.search(r'.*(SPEC|decision[- ]table row|\brow \d+).*', readme).group(0)


def test_docs_cite_no_spec():
    for path, text in docs().items():
        hit = re.search(r'.*(SPEC|§|decision[- ]table).*', text)
        assert not hit, f'{path}: {hit.group(0)}'


def test_rules_are_numbered_1_to_42_in_order():
    numbers = [int(n) for n in re.findall(r'^### Rule (\d+)$', read('docs/rules.md'), re.M)]
    assert numbers[:42] == list(range(1, 43))


def test_every_rule_names_its_code_or_its_result():
    text = read('docs/rules.md')
    rules = re.split(r'^### Rule \d+$', text, flags=re.M)[1:]
    for number, body in enumerate(rules, 1):
        assert re.search(r'OG\d{3}|code: added with this rule|passes', body, re.I), number


def test_every_rule_names_the_test_modules_that_prove_it():
    text = read('docs/rules.md')
    sections = re.split(r'^### Rule (\w+)$', text, flags=re.M)[1:]
    for number, body in zip(sections[::2], sections[1::2]):
        line = re.search(r'^Tests: (.+)\.$', body, re.M)
        assert line, f'rule {number} names no test module'
        modules = re.findall(r'`(tests/[\w/]+\.py)`', line.group(1))
        assert modules, f'rule {number}: {line.group(0)}'
        for module in modules:
            assert os.path.isfile(os.path.join(ROOT, module)), f'rule {number}: no {module}'


def test_ci_runs_exactly_the_readme_test_command():
    contributors = section(read('README.md'), 'For contributors to oracle-guard')
    match = re.search(r'# 2\. .*\n(.+)\n', contributors)
    assert match, 'README lost its second set-up command'
    command = match.group(1).strip()
    assert 'python -m pytest' in command
    ci_lines = [line.strip() for line in read('.ci/run').splitlines()]
    assert command in ci_lines
    assert ci_lines[-1] == command  # its exit code (5 too: no tests collected) is CI's
    setup = re.search(r'# 1\. .*\n(.+)\n', contributors)
    assert setup, 'README lost its first set-up command'
    # The hooks on this repository itself, run before the test command (beside the 3.9 suite).
    assert setup.group(1).strip() in ci_lines[:-1]


def test_readme_workflow_uses_only_the_actions_inputs():
    action = yaml.safe_load(read('action.yml'))
    gate = section(read('README.md'), 'The pull-request gate')
    workflow = yaml.safe_load(re.search(r'```yaml\n(.*?)```', gate, re.S).group(1))
    steps = workflow['jobs']['oracle-guard']['steps']
    [step] = [s for s in steps if s.get('uses', '').startswith('OWNER/oracle-guard@')]
    assert set(step['with']) <= set(action['inputs']), set(step['with']) - set(action['inputs'])
    checkout = [s for s in steps if s.get('uses', '').startswith('actions/checkout@')]
    assert checkout[0]['with']['fetch-depth'] == 0  # the merge-base must be in the clone
