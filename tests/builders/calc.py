"""The ``calc`` project of builders/ci_repo.py, and what the gate's scenarios on it share.
"""

from __future__ import annotations

import textwrap

from builders.ci_repo import BASE_FILES
from builders.ci_repo import CiRepo
from builders.ci_repo import git
from builders.ci_repo import PYTEST
from builders.ci_repo import Run
from builders.ci_repo import write


FROZEN_ADD = '''\
    budget: 1
    freezes:
      - id: FZ-1
        nodeid: tests/test_calc.py::test_add
        class: order-dependent
        evidence: "fails after test_mul when run in reverse order"
        owner: alice
        expires: 2099-01-01
    '''


def cheat_fails_ci_naming(calc: CiRepo, files: dict, code: str, *names: str,
                             test_command=PYTEST) -> Run:  # type: ignore[no-untyped-def]
    calc.pull_request(files)
    plain, ci = calc.both(test_command)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    assert ci.summary.startswith('oracle-guard ci: '), ci.out
    lines = ci.lines(code)
    assert lines, f'no {code} in:\n{ci.out}'
    for name in names:
        assert any(name in line for line in lines), f'{name} not named by {code}:\n{ci.out}'
    return ci


# An honest pull request: a new unit test, no bug.
NEW_TEST = {'tests/test_mul_zero.py': 'from calc import mul\n\n\ndef test_mul_zero():\n'
                                      '    assert mul(0, 5) == 0\n'}


EXIT_0_AT_EXIT = 'import atexit\nimport os\n\natexit.register(os._exit, 0)\n'


def cheat_works_but_ci_fails(calc: CiRepo, files: dict, code: str, *words: str,  # type: ignore[type-arg]
                             bug: bool = True) -> Run:
    calc.pull_request(files, bug=bug)
    plain, ci = calc.both(PYTEST)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    lines = ci.lines(code)
    assert lines, f'no {code} in:\n{ci.out}'
    for word in words:
        assert any(word in line for line in lines), f'{word!r} not in the {code} lines:\n{ci.out}'
    return ci


ORACLE = {
    'pyproject.toml': textwrap.dedent(BASE_FILES['pyproject.toml']) + 'flaky-reruns = 3\n',
    'tests/conftest.py': '''\
        import pytest


        @pytest.fixture
        def limit():
            return 6
        ''',
    'tests/sums.py': 'def expected(a, b):\n    return a + b\n',
    'tests/properties/test_sum_props.py': '''\
        from calc import add
        from sums import expected


        def test_add_matches_the_sum(limit):
            for a in range(limit):
                for b in range(limit):
                    assert add(a, b) == expected(a, b)
        ''',
}


REFACTORED_ADD = 'def add(a, b):\n    return sum((a, b))\n\n\ndef mul(a, b):\n    return a * b\n'


def freeze(nodeid: str, freeze_class: str = 'order-dependent') -> str:
    return textwrap.dedent(f'''\
        budget: 1
        freezes:
          - id: FZ-1
            nodeid: {nodeid}
            class: {freeze_class}
            evidence: "fails when run after the cache tests"
            owner: alice
            expires: 2099-01-01
        ''')


def on_main(repo: CiRepo, files: dict) -> None:  # type: ignore[type-arg]
    write(repo.path, files)
    git(repo.path, 'add', '-A')
    git(repo.path, 'commit', '-q', '-m', 'main moves on')


def green_then_ci(oracle_calc: CiRepo, *options: str) -> tuple[Run, str]:
    """(oracle-guard ci, its review report) after asserting that plain pytest is green."""
    report = f'{oracle_calc.path}/../report.md'
    plain, ci = oracle_calc.both(PYTEST, '--report', report, *options)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    with open(report, encoding='utf-8') as f:
        return ci, f.read()


def reference_codes(run: Run) -> list[str]:
    return [line for line in run.out.splitlines() if ': OG73' in line]
