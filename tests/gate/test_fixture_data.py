"""A data file the tests read, in ``tests/data/`` (not the fixture folder ``init`` creates),
is an answer key like any fixture: ``init`` gives it a manifest row, so a pull request that
moves a byte of it together with the code it checks is blocked by the hook (the real
``pre-commit``, range mode) and by the gate; an honest ``src/`` change beside it passes both.
"""
from __future__ import annotations

import pytest

from builders.ci_repo import adopt
from builders.ci_repo import copy_template
from builders.ci_repo import CiRepo
from builders.pre_commit import HookRepo
from builders.pre_commit import pre_commit

PYPROJECT = '''\
[project]
name = "calc"
version = "0.1"

[tool.pytest.ini_options]
pythonpath = ["src"]
'''
SUMS_TEST = '''\
    import json
    from pathlib import Path

    from calc import add

    SUMS = json.loads((Path(__file__).parent / 'data' / 'sums.json').read_text())


    def test_add_sums():
        for a, b, total in SUMS:
            assert add(a, b) == total
    '''
ADD = 'def add(a, b):\n    return a + b\n'
# The bug: 2 + 3 is off by one. Only the data file's second case catches it.
BUGGY_ADD = 'def add(a, b):\n    total = a + b\n    return total + 1 if total == 5 else total\n'
SUMS = '[[1, 2, 3], [2, 3, 5]]\n'


@pytest.fixture(scope='module')
def template(tmp_path_factory: pytest.TempPathFactory, hook_repo: HookRepo) -> str:
    path = str(tmp_path_factory.mktemp('fixture-data') / 'repo')
    adopt(path, PYPROJECT, {'src/calc/__init__.py': ADD, 'tests/test_sums.py': SUMS_TEST,
                            'tests/data/sums.json': SUMS},
          init_args=('--hook-repo', hook_repo.path, '--rev', hook_repo.rev))
    return path


def hook_range(repo: CiRepo, hook_repo: HookRepo) -> tuple[int, str]:
    ran = pre_commit('run', '--from-ref', 'main', '--to-ref', 'pr', cwd=repo.path,
                     env=hook_repo.env())
    return ran.rc, ran.out


def test_an_edited_byte_in_an_existing_data_file_is_blocked_by_the_hook_and_the_gate(
        template: str, tmp_path, hook_repo: HookRepo) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(template, str(tmp_path / 'repo'))
    # The bug, and the answer key rewritten to agree with it: plain pytest is green.
    repo.pull_request({'src/calc/__init__.py': BUGGY_ADD,
                       'tests/data/sums.json': '[[1, 2, 3], [2, 3, 6]]\n'}, bug=False)
    rc, out = hook_range(repo, hook_repo)
    assert rc == 1, out
    assert 'tests/data/sums.json:1:1: OG101 sha256 mismatch' in out
    plain, ci = repo.both()
    assert plain.rc == 0, plain.out
    assert ci.rc == 1, ci.out
    assert any(line.startswith('tests/data/sums.json:1:1: ') for line in ci.lines('OG101')), \
        ci.out


def test_an_honest_src_change_beside_the_data_file_passes_the_hook_and_the_gate(
        template: str, tmp_path, hook_repo: HookRepo) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(template, str(tmp_path / 'repo'))
    repo.pull_request({'src/calc/__init__.py': 'def add(a, b):\n    return sum((a, b))\n'},
                      bug=False)
    rc, out = hook_range(repo, hook_repo)
    assert rc == 0, out
    ci = repo.ci()
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out
