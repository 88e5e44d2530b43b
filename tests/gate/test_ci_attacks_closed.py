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


from conftest import Repo
from hook_modes import judge
from hook_modes import mode  # noqa: F401 -- a fixture: commit, range, all-files
from hook_modes import user  # noqa: F401 -- a fixture: the guarded repository
from oracle_guard.commands.baseline import main as baseline
from pre_commit_env import HookRepo

from ci_repo import adopt as adopt_with_init
from ci_repo import CiRepo
from ci_repo import Run
from test_ci_attacks import BUG
from test_ci_attacks import gate
from test_ci_attacks import GOOD
from test_ci_attacks import PYPROJECT


def adopt(path: str, project: dict[str, str], after: list[dict[str, str | None]],
          pyproject: str = PYPROJECT) -> CiRepo:
    return adopt_with_init(path, pyproject, project, after)


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


LATER = "import pytest\n\n\ndef later(why):\n    pytest.skip(f'later: {why}')\n"


def test_new_call_of_a_baselined_helper_skip_fails_ci(tmp_path) -> None:
    # The open end of attack 57: the baselined helper skips with words of its own, so the
    # audit's importorskip check has nothing to say; the call in test_four is new since
    # the base, and the baseline records the calls that existed (rule 39): OG301.
    repo = adopt(str(tmp_path / 'repo'), unit_project(**{'tests/_support.py': LATER}),
                 [{'src/dd/__init__.py': BUG}])
    unit = TWO_UNITS.replace('from dd import dedupe\n',
                             'from dd import dedupe\nfrom _support import later\n')
    ci = cheat(repo, {'tests/test_dd.py': unit.replace(
        'def test_four():\n', 'def test_four():\n    later("flaky")\n')})
    assert any(line.startswith('tests/test_dd.py:') and 'calls tests/_support.py::later' in line
               for line in ci.lines('OG301')), ci.out


def test_importorskip_of_a_declared_module_that_is_missing_passes_ci(tmp_path) -> None:
    # The honest counterpart: a new test importorskips a declared dependency this
    # environment lacks, in its own body; pytest reports the skip at that call.
    repo = adopt(str(tmp_path / 'repo'), unit_project(), [], DECLARING)
    unit = TWO_UNITS + ('\n\ndef test_extra():\n'
                        '    pytest.importorskip("nowhere_installed_og")\n' + FOUR)
    plain, ci = pull_request(repo, {'tests/test_dd.py': 'import pytest\n' + unit})
    assert plain.rc == 0 and '1 skipped' in plain.out, plain.out
    assert ci.rc == 0, ci.out


# == rule 39: a baselined silence follows a moved file only onto a test new there ==========
LEGACY_SKIP = ('import pytest\nfrom dd import dedupe\n\n\n'
               '@pytest.mark.skip(reason="legacy, never fixed")\ndef test_four():\n'
               '    assert len(dedupe([4, 3, 2, 1])) >= 0\n')


def test_baselined_skip_moved_onto_a_test_that_ran_fails_ci(tmp_path) -> None:
    # Attack 60: the legacy file is deleted and its skipped test_four "moved" over the
    # running (failing) tests/test_dd.py::test_four. The entry's file is gone, so rule 39
    # let it match anywhere; test_four existed at the base without it: OG323.
    repo = adopt(str(tmp_path / 'repo'), unit_project(**{'tests/test_legacy.py': LEGACY_SKIP}),
                 [{'src/dd/__init__.py': BUG}])
    moved = 'import pytest\n' + SMALL + '\n\n' + LEGACY_SKIP.split('\n\n\n', 1)[1]
    ci = cheat(repo, {'tests/test_legacy.py': None, 'tests/test_dd.py': moved})
    assert [line.split(': ')[0] for line in ci.lines('OG323')] == ['tests/test_dd.py:9:2'], \
        ci.out
    assert 'tests/test_legacy.py' in ci.lines('OG323')[0], ci.out


def test_baselined_skip_moved_with_its_file_passes_ci(tmp_path) -> None:
    # The honest counterpart: the legacy file renamed, its baselined skip with it.
    repo = adopt(str(tmp_path / 'repo'), unit_project(**{'tests/test_legacy.py': LEGACY_SKIP}),
                 [])
    plain, ci = pull_request(repo, {'tests/test_legacy.py': None,
                                    'tests/test_archive.py': LEGACY_SKIP})
    assert plain.rc == 0 and '1 skipped' in plain.out, plain.out
    assert ci.rc == 0, ci.out


# The same in every mode of the hooks (rule 50), on the guarded repository of conftest.py.
APP_LEGACY = ('import pytest\n\n\n@pytest.mark.skip(reason="legacy")\ndef test_parse():\n'
              '    assert True\n')
APP_TEST = 'tests/test_app.py'


def _adopted_with_legacy(repo: Repo) -> None:
    """The root commit (adoption) holds tests/test_legacy.py and the baseline of its skip:
    history mode judges no commit before the change."""
    repo.write('tests/test_legacy.py', APP_LEGACY)
    assert repo.run(baseline).rc == 0
    repo.add()
    root = repo.git('rev-list', '--max-parents=0', 'HEAD').strip()
    repo.git('reset', '-q', '--soft', root)
    repo.git('commit', '-q', '--amend', '--no-verify', '-m', 'adopt the guard')
    assert b'tests/test_legacy.py' in repo.read('tests/oracle_baseline.json')


def test_baselined_skip_moved_onto_a_test_that_ran_fails_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _adopted_with_legacy(user)
    ran = user.read(APP_TEST).decode()

    def move(repo: Repo) -> None:
        repo.rm('tests/test_legacy.py')
        repo.write(APP_TEST, 'import pytest\n' + ran.replace(
            'def test_parse', '@pytest.mark.skip(reason="legacy")\ndef test_parse'))

    result = judge(mode, user, hook_repo, move)
    assert result.rc == 1, result.out
    assert result.has('OG323', APP_TEST), result.out


def test_baselined_skip_moved_to_a_new_file_passes_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _adopted_with_legacy(user)

    def move(repo: Repo) -> None:
        repo.rm('tests/test_legacy.py')
        repo.write('tests/test_archive.py', APP_LEGACY)

    result = judge(mode, user, hook_repo, move)
    assert result.rc == 0, result.out


# == rules 30 and 52: a move onto a test the configuration leaves out is a removal ========
IGNORING = PYPROJECT + 'addopts = "--ignore=tests/legacy"\n'
LEGACY = ('from dd import dedupe\n\n\ndef test_old():\n    assert dedupe([]) == []\n\n\n'
          'def test_four():\n    assert len(dedupe([4, 3, 2, 1])) >= 0\n')
ALONE = TWO_UNITS.split('\n\ndef test_four')[0]


def test_failing_test_moved_onto_a_recorded_left_out_test_fails_ci(tmp_path) -> None:
    # Attack 38: tests/legacy/test_old.py::test_four is recorded as left out at adoption
    # (addopts --ignore); the failing tests/test_dd.py::test_four is deleted and its body put
    # over the legacy one. Rule 52 took it for a move and the record accepted the
    # destination; nothing runs it there, so it is a removal, an oracle change (OG740).
    repo = adopt(str(tmp_path / 'repo'), unit_project(**{'tests/legacy/test_old.py': LEGACY}),
                 [{'src/dd/__init__.py': BUG}], IGNORING)
    with open(f'{repo.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        assert '"tests/legacy/test_old.py::test_four"' in f.read()
    ci = cheat(repo, {'tests/test_dd.py': ALONE, 'tests/legacy/test_old.py': LEGACY.replace(
        '    assert len(dedupe([4, 3, 2, 1])) >= 0\n', FOUR)})
    assert any('tests/test_dd.py::test_four' in line for line in ci.lines('OG740')), ci.out


def test_test_moved_to_a_module_that_runs_passes_ci(tmp_path) -> None:
    # The honest counterpart: the same test moved, body unchanged, to a module pytest runs.
    repo = adopt(str(tmp_path / 'repo'), unit_project(**{'tests/legacy/test_old.py': LEGACY}),
                 [], IGNORING)
    plain, ci = pull_request(repo, {'tests/test_dd.py': ALONE,
                                    'tests/test_dd_more.py': f'from dd import dedupe\n\n\n'
                                                             f'def test_four():\n{FOUR}'})
    assert plain.rc == 0 and '3 passed' in plain.out, plain.out
    assert ci.rc == 0, ci.out


APP_IGNORING = '[tool.pytest.ini_options]\naddopts = "--ignore=tests/legacy"\n'
APP_LEGACY_RUN = 'from app import parse\n\n\ndef test_parse():\n    assert parse(b"") is not None\n'
APP_RUN = 'from app import parse\n\n\ndef test_parse():\n    assert parse(b"x") == b"x"\n'


def _adopted_with_ignored_legacy(repo: Repo) -> None:
    pyproject = repo.read('pyproject.toml').decode()
    repo.write('pyproject.toml', pyproject + '\n' + APP_IGNORING, dedent=False)
    repo.write('tests/legacy/test_old.py', APP_LEGACY_RUN)
    repo.add()
    root = repo.git('rev-list', '--max-parents=0', 'HEAD').strip()
    repo.git('reset', '-q', '--soft', root)
    repo.git('commit', '-q', '--amend', '--no-verify', '-m', 'adopt the guard')


def test_test_moved_onto_an_ignored_one_next_to_src_fails_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _adopted_with_ignored_legacy(user)

    def move(repo: Repo) -> None:
        repo.write('src/app.py', 'def parse(b):\n    return b or None\n')
        repo.write(APP_TEST, 'from app import parse\n')
        repo.write('tests/legacy/test_old.py', APP_RUN)

    result = judge(mode, user, hook_repo, move)
    assert result.rc == 1, result.out
    assert result.has('OG202', APP_TEST), result.out


def test_test_moved_to_a_module_that_runs_next_to_src_passes_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _adopted_with_ignored_legacy(user)

    def move(repo: Repo) -> None:
        repo.write('src/app.py', 'def parse(b):\n    return b\n\n\nVERSION = 2\n')
        repo.write(APP_TEST, 'from app import parse\n')
        repo.write('tests/test_moved.py', APP_RUN)

    result = judge(mode, user, hook_repo, move)
    assert result.rc == 0, result.out
