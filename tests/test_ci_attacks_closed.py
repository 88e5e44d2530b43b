"""Four walks around the gate an adversarial review found (attacks 38, 56, 57 and 60 of
benchmarks/ATTACKS.md), each closed: the audit's importorskip explanation (rule 41), a
baselined silence that follows a moved file (rule 39), and a move onto a test the
configuration leaves out (rules 30 and 52).

Each repository adopts the guard with ``oracle-guard init`` and then gets a real bug on
``main``; each pull request leaves the bug in place and cheats. Plain pytest goes green,
``oracle-guard ci`` (run isolated, as the action runs it) fails with the code named, and an
honest counterpart of each passes.
"""
from __future__ import annotations

import subprocess
import sys

from ci_repo import CiRepo
from ci_repo import git
from ci_repo import Run
from ci_repo import write
from test_ci_attacks import BUG
from test_ci_attacks import gate
from test_ci_attacks import GOOD
from test_ci_attacks import PYPROJECT


def adopt(path: str, project: dict[str, str], after: list[dict[str, str]],
          pyproject: str = PYPROJECT) -> CiRepo:
    """``project`` committed, adopted with the README's commands, then each of ``after``
    committed on main (the last one is the bug)."""
    repo = CiRepo(path)
    subprocess.run(('git', 'init', '-q', '-b', 'main', path), check=True)
    write(path, {'pyproject.toml': pyproject, **project})
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'project')
    init = subprocess.run((sys.executable, '-m', 'oracle_guard.cli', 'init', '--hook-repo',
                           path, '--rev', 'HEAD'), cwd=path, env=repo.env(),
                          capture_output=True, text=True)
    assert init.returncode == 0, init.stdout + init.stderr
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'Adopt oracle-guard')
    for n, files in enumerate(after):
        write(path, files)
        git(path, 'add', '-A')
        git(path, 'commit', '-q', '-m', f'main {n}')
    return repo


def pull_request(repo: CiRepo, files: dict[str, str | None]) -> tuple[Run, Run]:
    """(plain pytest, the gate) on a pull request that leaves main's bug in place."""
    repo.pull_request(files, bug=False)
    return gate(repo)


def cheat(repo: CiRepo, files: dict[str, str | None]) -> Run:
    plain, ci = pull_request(repo, files)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    return ci


# The bug is caught by unit tests only: the property checks sortedness, which the bug keeps.
SORTED_PROPERTY = '''\
from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_dedupe_is_sorted(xs):
    assert dedupe(xs) == sorted(dedupe(xs))
'''
SMALL = 'from dd import dedupe\n\n\ndef test_small():\n    assert dedupe([3, 1, 3]) == [1, 3]\n'
FOUR = '    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]\n'
TWO_UNITS = f'{SMALL}\n\ndef test_four():\n{FOUR}'
PROPS = 'tests/properties/test_dd_props.py'
# hypothesis and a module nobody installs are declared test dependencies (rule 41).
DECLARING = PYPROJECT.replace(
    '[tool.pytest', '[project.optional-dependencies]\n'
    'test = ["pytest", "hypothesis", "nowhere-installed-og"]\n\n[tool.pytest')


def unit_project(**extra: str) -> dict[str, str]:
    return {'src/dd/__init__.py': GOOD, 'tests/test_dd.py': TWO_UNITS, PROPS: SORTED_PROPERTY,
            **extra}


def og706_tests(ci: Run) -> list[str]:
    return sorted(line.split(' was skipped')[0].rsplit(' ', 1)[-1]
                  for line in ci.lines('OG706'))


# == rule 41: importorskip's words explain a skip only where importorskip raised it =========
BAIL = ("import pytest\n\n\ndef bail():\n"
        "    pytest.skip(\"could not import 'hypothesis': No module named 'hypothesis'\")\n")
IMPORTING = ('import pytest\nfrom dd import dedupe\n{imports}\n'
             'pytest.importorskip("hypothesis")\n')


def test_importorskip_words_from_a_helper_outside_the_tests_roots_fail_ci(tmp_path) -> None:
    # Attack 56: the module-level importorskip of a declared dependency imports fine; the
    # skip comes from testing/bail.py with importorskip's words. pytest reports it at the
    # helper's line, and hypothesis is loaded: the declared import explains nothing.
    repo = adopt(str(tmp_path / 'repo'), unit_project(), [{'src/dd/__init__.py': BUG}],
                 DECLARING)
    unit = TWO_UNITS.replace('from dd import dedupe\n',
                             IMPORTING.format(imports='from testing.bail import bail\n'))
    ci = cheat(repo, {'testing/__init__.py': '', 'testing/bail.py': BAIL,
                      'tests/test_dd.py': unit.replace('def test_four():\n',
                                                       'def test_four():\n    bail()\n')})
    assert og706_tests(ci) == ['tests/test_dd.py::test_four'], ci.out


NEED = ("import pytest\n\n\ndef need(module):\n"
        "    pytest.skip(f'could not import {module!r}: No module named {module!r}')\n")


def test_importorskip_words_from_a_baselined_helper_fail_ci(tmp_path) -> None:
    # Attack 57: the helper is test code from before adoption, its skip baselined; the pull
    # request edits only the test module. The skip is reported at tests/_support.py, not at
    # an importorskip of the test's module, and hypothesis imported.
    repo = adopt(str(tmp_path / 'repo'), unit_project(**{'tests/_support.py': NEED}),
                 [{'src/dd/__init__.py': BUG}], DECLARING)
    with open(f'{repo.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        assert '"tests/_support.py"' in f.read()
    unit = TWO_UNITS.replace('from dd import dedupe\n',
                             IMPORTING.format(imports='from _support import need\n'))
    ci = cheat(repo, {'tests/test_dd.py': unit.replace(
        'def test_four():\n', 'def test_four():\n    need("hypothesis")\n')})
    assert og706_tests(ci) == ['tests/test_dd.py::test_four'], ci.out


def test_importorskip_of_a_declared_module_that_is_missing_passes_ci(tmp_path) -> None:
    # The honest counterpart: a new test importorskips a declared dependency this
    # environment lacks, in its own body; pytest reports the skip at that call.
    repo = adopt(str(tmp_path / 'repo'), unit_project(), [], DECLARING)
    unit = TWO_UNITS + ('\n\ndef test_extra():\n'
                        '    pytest.importorskip("nowhere_installed_og")\n' + FOUR)
    plain, ci = pull_request(repo, {'tests/test_dd.py': 'import pytest\n' + unit})
    assert plain.rc == 0 and '1 skipped' in plain.out, plain.out
    assert ci.rc == 0, ci.out
