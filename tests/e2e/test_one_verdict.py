"""Row 50 of docs/rules.md: one change, one verdict, whether it is judged as a ``git commit``,
as a ``--from-ref/--to-ref`` range or as an ``--all-files`` history run of the real
``pre-commit`` program (builders.pre_commit.judge). Each scenario is one repository per mode."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from builders.pre_commit import HookRepo
from builders.pre_commit import judge
from builders.repos import Repo

PROPERTY = 'tests/properties/test_parse.py'
HELPER = 'tests/strategies.py'
TEST = 'tests/test_app.py'
SRC = 'src/app.py'


def _property(strategy: str, imports: str = '') -> str:
    return ('from hypothesis import given, strategies as st\n' + imports + '\n\n'
            f'@given({strategy})\ndef test_parse_never_throws(buf):\n'
            '    assert buf is not None\n')


def _with_property(repo: Repo, strategy: str, imports: str = '', **files: str) -> None:
    """The base revision: the locked property draws ``strategy`` (lock version 1), as the
    repository had it when it adopted the guard (one root commit: history mode judges no
    commit before the change)."""
    repo.write(PROPERTY, _property(strategy, imports))
    for path, text in files.items():
        repo.write(path, text)
    repo.add()
    root = repo.git('rev-list', '--max-parents=0', 'HEAD').strip()
    repo.git('reset', '-q', '--soft', root)
    repo.git('commit', '-q', '--amend', '--no-verify', '-m', 'adopt the guard')


# --- rows 23-25: a version-1 lock judged against the base revision's strategy ----------

# One narrowing in every mode: the mode is what this module proves. The spellings of a
# narrowing judged against the base (text alphabet, integer bounds, sampled_from, nested
# sizes and the rest) are tests/hooks/test_strategy_lock.py's version-1 cases, through the
# same hook.
BEFORE, AFTER = 'st.lists(st.text(max_size=20))', 'st.lists(st.text(max_size=2))'


def test_strategy_narrowed_under_a_version_1_lock_fails(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _with_property(user, BEFORE)

    result = judge(mode, user, hook_repo, lambda r: r.write(PROPERTY, _property(AFTER)))

    assert result.rc == 1, result.out
    assert result.has('OG611', PROPERTY), result.out
    assert 'oracle-guard lock --upgrade' in result.out


def test_sampled_from_shrunk_in_a_helper_module_under_a_version_1_lock_fails(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    helper = 'from hypothesis import strategies as st\n\nKINDS = st.sampled_from({})\n'
    _with_property(user, 'KINDS', 'from strategies import KINDS\n',
                   **{HELPER: helper.format('["a", "b", "c"]')})

    result = judge(mode, user, hook_repo, lambda r: r.write(HELPER, helper.format('["a"]')))

    assert result.rc == 1, result.out
    assert result.has('OG611', PROPERTY), result.out


def test_strategy_widened_under_a_version_1_lock_passes(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _with_property(user, 'st.text(alphabet="ab")')

    result = judge(mode, user, hook_repo, lambda r: r.write(PROPERTY, _property('st.text()')))

    assert result.rc == 0, result.out


# --- row 40b: an environment condition added to a test that ran ------------------------

ENV_SKIP = ('import sys\n\nimport pytest\nfrom app import parse\n\n\n'
            '@pytest.mark.skipif(sys.platform != "win32", reason="flaky on linux")\n'
            'def test_{name}():\n    assert parse(b"x") == b"x"\n')


def test_environment_condition_added_to_an_existing_test_fails(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    result = judge(mode, user, hook_repo, lambda r: r.write(TEST, ENV_SKIP.format(name='parse')))

    assert result.rc == 1, result.out
    assert result.has('OG322', TEST), result.out


def test_environment_condition_on_a_new_test_passes(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    result = judge(mode, user, hook_repo,
                   lambda r: r.write('tests/test_windows.py', ENV_SKIP.format(name='windows')))

    assert result.rc == 0, result.out


# --- row 36: only codecs in which ASCII bytes are not themselves -----------------------

def test_latin_1_test_file_with_an_accented_string_passes(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    source = ('# -*- coding: latin-1 -*-\n\n\ndef test_accent():\n'
              '    assert len("caf\xe9") == 4\n').encode('latin-1')

    result = judge(mode, user, hook_repo, lambda r: r.write('tests/test_accent.py', source))

    assert result.rc == 0, result.out


def test_utf_7_test_file_fails(user: Repo, hook_repo: HookRepo, mode: str) -> None:
    source = b'# -*- coding: utf-7 -*-\n\n\ndef test_x():\n    assert True\n'

    result = judge(mode, user, hook_repo, lambda r: r.write('tests/test_seven.py', source))

    assert result.rc == 1, result.out
    assert result.has('OG307', 'tests/test_seven.py'), result.out


# --- row 50: commit mode sees what a range sees ----------------------------------------

def _fix_src(repo: Repo) -> None:
    repo.write(SRC, 'def parse(b):\n    return bytes(b)\n')


def _collect_ignore(repo: Repo) -> None:
    repo.write('tests/conftest.py', 'collect_ignore = ["test_app.py"]\n')


def _deselect(repo: Repo) -> None:
    repo.write('pyproject.toml', repo.read('pyproject.toml').decode() + '\n'
               '[tool.pytest.ini_options]\naddopts = "--deselect tests/test_app.py::test_parse"\n')


def _repointed(hook_repo: HookRepo) -> Callable[[Repo], None]:
    def change(repo: Repo) -> None:
        repo.write('.pre-commit-config.yaml', hook_repo.config().replace(
            '      - id: forbid-mixed-oracle-diff\n',
            '      - id: forbid-mixed-oracle-diff\n        args: [--src, vendor/]\n'))
    return change


@pytest.mark.parametrize('oracle_change', ['collect-ignore', 'addopts-deselect',
                                           'hook-args-repointed'])
def test_test_run_control_next_to_a_src_change_fails(
        user: Repo, hook_repo: HookRepo, mode: str, oracle_change: str) -> None:
    oracle = {'collect-ignore': _collect_ignore, 'addopts-deselect': _deselect,
              'hook-args-repointed': _repointed(hook_repo)}[oracle_change]

    result = judge(mode, user, hook_repo, lambda r: (oracle(r), _fix_src(r)))

    assert result.rc == 1, result.out
    assert result.has('OG201') or result.has('OG202') or result.has('OG210'), result.out
    assert 'no files to check' not in result.out  # every hook was asked


@pytest.mark.parametrize('oracle_change', ['collect-ignore', 'addopts-deselect'])
def test_test_run_control_alone_passes(
        user: Repo, hook_repo: HookRepo, mode: str, oracle_change: str) -> None:
    oracle = {'collect-ignore': _collect_ignore, 'addopts-deselect': _deselect}[oracle_change]

    result = judge(mode, user, hook_repo, oracle)

    assert result.rc == 0, result.out
    assert 'no files to check' not in result.out  # every hook was asked


# --- computed access to pytest's marks, outcomes or internals --------------------------

# One spelling in every mode; the spellings (getattr with a built name, import_module of
# pytest's internals in pieces, and the rest) are tests/hooks/test_check_named_freezes.py's.
COMPUTED = ('import pytest\n\npytestmark = getattr(pytest.mark, "s" + "kip")\n\n\n'
            'def test_parse():\n    assert False\n')


def test_computed_access_to_pytest_in_test_code_fails(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    result = judge(mode, user, hook_repo, lambda r: r.write(TEST, COMPUTED))

    assert result.rc == 1, result.out
    assert result.has('OG310', TEST), result.out


# --- rule 29: a ledger row removed while test code still names it ----------------------

FROZEN_TEST = ('import pytest\nfrom app import parse\n\n\n@pytest.mark.skip(reason="FZ-1")\n'
               'def test_parse():\n    assert parse(b"x") == b"x"\n')
LEDGER_ROW = '''\
budget: 1
freezes:
  - id: FZ-1
    nodeid: tests/test_app.py::test_parse
    class: network
    evidence: "needs the internet"
    owner: alice
    expires: 2026-12-20
'''


def test_ledger_row_removed_while_a_test_names_it_fails(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    user.write(TEST, FROZEN_TEST)
    user.write('tests/freeze_ledger.yaml', LEDGER_ROW)
    user.commit('freeze test_parse')

    result = judge(mode, user, hook_repo,
                   lambda r: r.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes: []\n'))

    assert result.rc == 1, result.out
    assert result.has('OG302', TEST), result.out


# --- the decision-table cheats of test_pre_commit_integration.py, in every mode ---------

def test_decision_table_cheat_fails_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    # bare-skip, fixture-bytes-changed and src-and-property-test in one change: each gives
    # its own finding, on its own path, in every mode.
    from builders.hook_scenarios import apply_cheats

    cheats = ('bare-skip', 'fixture-bytes-changed', 'src-and-property-test')
    found: list[tuple[str, str]] = []
    result = judge(mode, user, hook_repo, lambda r: found.extend(apply_cheats(r, cheats)))

    assert len(set(found)) == 3, found  # three codes on three paths
    assert result.rc == 1, result.out
    for code, path in found:
        assert result.has(code, path), (code, path, result.out)
