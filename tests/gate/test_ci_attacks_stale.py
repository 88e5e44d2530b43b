"""The record of what adoption's collection left out must not outlive its reason (rule 39b,
benchmarks/ATTACKS.md attacks 34-36).

A library with implementations of dedupe; a conftest deselects the cases of one this build
lacks (an optional C speed-up is the common case), and the property is parametrized over
the implementations src declares, with their names as case ids. Each repository adopts the
guard with ``oracle-guard init``, so the baseline records what that collection left out;
later commits on ``main`` change which implementations exist and put a real bug in one.
Each pull request leaves the bug in place, rewrites the unit tests to the bug's answers and
steers the unchanged conftest through ``src``: plain pytest is green, ``oracle-guard ci``
(run isolated, as the action runs it) fails with the code named, because the record is
accepted only for what the base revision's own collection leaves out too.
"""
from __future__ import annotations

import sys

import pytest

from ci_repo import adopt as adopt_with_init
from ci_repo import CiRepo
from ci_repo import copy_template
from ci_repo import Run
from test_ci_attacks import gate
from test_ci_attacks import PYPROJECT
from test_ci_attacks import PYTEST
from test_ci_attacks_session import CONFTEST
from test_ci_attacks_session import DD_UNIT
from test_ci_attacks_session import DD_UNIT_FOR_THE_BUG
from test_ci_attacks_session import IMPL_PROPERTY

IMPLS = '''\
class Impl:
    def __init__(self, name, fn, available=True):
        self.name, self.fn, self.available = name, fn, available

    def __call__(self, xs):
        return self.fn(xs)

    def __str__(self):
        return self.name


def _pure(xs):
    return sorted(set(xs))


def _fast(xs):
    return sorted(set(xs))


def _ref(xs):
    return sorted(set(xs))


'''
CORRECT = '    return sorted(set(xs))\n'
WRONG = '    out = sorted(set(xs))\n    return out[:-1] if len(out) > 3 else out\n'
PROPS = 'tests/properties/test_dd_props.py'
FUNCTION = f'{PROPS}::test_impl_matches_set'


def impls(declared: str, dedupe: str, buggy: str = '') -> str:
    """src/dd/__init__.py: the implementations, ``buggy`` (a function name) with the bug."""
    code = IMPLS
    if buggy:
        code = code.replace(f'def {buggy}(xs):\n{CORRECT}', f'def {buggy}(xs):\n{WRONG}')
    return f'{code}IMPLS = [{declared}]\ndedupe = {dedupe}\n'


def project(declared: str, dedupe: str) -> dict[str, str]:
    return {'src/dd/__init__.py': impls(declared, dedupe), 'tests/conftest.py': CONFTEST,
            'tests/test_dd.py': DD_UNIT, 'tests/properties/test_dd_props.py': IMPL_PROPERTY}


def adopt(path: str, files: dict[str, str], after: list[str]) -> CiRepo:
    """``files`` adopted, then each of ``after`` (a src/dd/__init__.py) committed on main;
    the last one has the bug."""
    return adopt_with_init(path, PYPROJECT, files, [{'src/dd/__init__.py': src} for src in after])


def recorded(repo: CiRepo) -> str:
    with open(f'{repo.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        return f.read()


def pull_request(repo: CiRepo, src: str, unit: str = DD_UNIT_FOR_THE_BUG) -> tuple[Run, Run]:
    repo.pull_request({'src/dd/__init__.py': src, 'tests/test_dd.py': unit}, bug=False)
    return gate(repo)


# Attack 34: at adoption `fast` is not built, so `[fast]` is recorded; main builds it, makes
# it the default and gets the bug in it.
STALE_MAIN = [impls("Impl('pure', _pure), Impl('fast', _fast)", '_fast'),
              impls("Impl('pure', _pure), Impl('fast', _fast)", '_fast', buggy='_fast')]


@pytest.fixture(scope='module')
def stale_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp('stale') / 'repo')
    adopt(path, project("Impl('pure', _pure), Impl('fast', _fast, available=False)",
                        '_pure'), STALE_MAIN)
    return path


@pytest.fixture
def stale(stale_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(stale_template, str(tmp_path / 'repo'))


def test_the_bug_on_main_fails_the_fast_case(stale: CiRepo) -> None:
    assert f'"{FUNCTION}[fast]"' in recorded(stale)
    plain = stale.finish(stale.start(
        (sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider')))
    assert plain.rc == 1 and '2 failed, 2 passed' in plain.out, plain.out


def test_a_recorded_case_the_base_ran_deselected_through_src_fails_ci(stale: CiRepo) -> None:
    # Attack 34: src declares `fast` unavailable again and keeps it the default; the
    # unchanged conftest deselects `[fast]`, which the record names but the base ran.
    plain, ci = pull_request(stale, impls(
        "Impl('pure', _pure), Impl('fast', _fast, available=False)", '_fast', buggy='_fast'))
    assert plain.rc == 0 and '1 deselected' in plain.out, plain.out
    assert ci.rc == 1, ci.out
    assert any(f'{FUNCTION}[fast] was deselected' in line for line in ci.lines('OG704')), ci.out


def test_the_honest_fix_with_a_stale_record_passes_ci(stale: CiRepo) -> None:
    plain, ci = pull_request(stale, impls("Impl('pure', _pure), Impl('fast', _fast)",
                                          '_fast'), DD_UNIT)
    assert plain.rc == 0, plain.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_a_function_recorded_whole_accepts_no_case_the_base_ran(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Attack 35: at adoption only the unbuilt `fast` exists, so the whole function is
    # recorded; main adds `pure` (the default, later with the bug) and a correct `ref`.
    # src declares `pure` unavailable: `[pure]` ran at the base, so the record does not
    # cover it.
    repo = adopt(str(tmp_path / 'repo'), project("Impl('fast', _fast, available=False)",
                                                 '_pure'), [
        impls("Impl('pure', _pure), Impl('ref', _ref), Impl('fast', _fast, available=False)",
              '_pure'),
        impls("Impl('pure', _pure), Impl('ref', _ref), Impl('fast', _fast, available=False)",
              '_pure', buggy='_pure')])
    assert f'"{FUNCTION}"' in recorded(repo)
    plain, ci = pull_request(repo, impls(
        "Impl('pure', _pure, available=False), Impl('ref', _ref), "
        "Impl('fast', _fast, available=False)", '_pure', buggy='_pure'))
    assert plain.rc == 0 and '2 deselected' in plain.out, plain.out
    assert ci.rc == 1, ci.out
    og704 = ci.lines('OG704')
    assert any(f'{FUNCTION}[pure] was deselected' in line for line in og704), ci.out
    assert not any('[fast]' in line for line in og704), ci.out  # left out at the base too


# Attack 36: `[fast]` recorded and still left out at the base; the bug is in `pure`.
RENAME_MAIN = [impls("Impl('pure', _pure), Impl('ref', _ref), "
                     "Impl('fast', _fast, available=False)", '_pure', buggy='_pure')]


@pytest.fixture(scope='module')
def rename_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp('rename') / 'repo')
    adopt(path, project("Impl('pure', _pure), Impl('ref', _ref), "
                        "Impl('fast', _fast, available=False)", '_pure'), RENAME_MAIN)
    return path


@pytest.fixture
def rename(rename_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(rename_template, str(tmp_path / 'repo'))


def test_a_case_renamed_into_the_record_fails_ci(rename: CiRepo) -> None:
    # src renames the buggy implementation to the recorded id and declares it
    # unavailable: `[fast]` is deselected (accepted: the base left it out too) and
    # `[pure]`, which the base ran, is gone from the run.
    assert f'"{FUNCTION}[fast]"' in recorded(rename)
    plain, ci = pull_request(rename, impls(
        "Impl('fast', _pure, available=False), Impl('ref', _ref)", '_pure', buggy='_pure'))
    assert plain.rc == 0 and '1 deselected' in plain.out, plain.out
    assert ci.rc == 1, ci.out
    assert any(f'{FUNCTION}[pure] ran in the base revision' in line
               for line in ci.lines('OG703')), ci.out
    assert not ci.lines('OG704'), ci.out


def test_the_honest_fix_with_the_record_still_true_passes_ci(rename: CiRepo) -> None:
    # `fast` is still not built: the record accepts `[fast]`, as the base left it out.
    plain, ci = pull_request(rename, impls("Impl('pure', _pure), Impl('ref', _ref), "
                                           "Impl('fast', _fast, available=False)", '_pure'),
                             DD_UNIT)
    assert plain.rc == 0 and '1 deselected' in plain.out, plain.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


# == the base revision's collection does not complete: nothing recorded is accepted =======
# The conftest needs a file each checkout makes for itself (ignored by git), so the tree of
# the base revision the gate writes from git objects cannot be collected.
NEEDS_LOCAL_FILE = '''\
import os

if not os.path.exists(os.path.join(os.path.dirname(__file__), 'local.cfg')):
    raise RuntimeError('write tests/local.cfg first (see CONTRIBUTING)')


''' + CONFTEST


def test_when_the_base_collection_does_not_complete_no_recorded_test_is_accepted(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    files = project("Impl('pure', _pure), Impl('ref', _ref), "
                    "Impl('fast', _fast, available=False)", '_pure')
    files.update({'tests/conftest.py': NEEDS_LOCAL_FILE, '.gitignore': 'tests/local.cfg\n',
                  'tests/local.cfg': 'local\n'})
    repo = adopt(str(tmp_path / 'repo'), files, RENAME_MAIN)
    assert f'"{FUNCTION}[fast]"' in recorded(repo)
    # The honest fix: the record is still true, and would be accepted (the test above).
    repo.pull_request({'src/dd/__init__.py': impls(
        "Impl('pure', _pure), Impl('ref', _ref), Impl('fast', _fast, available=False)",
        '_pure'), 'tests/test_dd.py': DD_UNIT}, bug=False)
    ci = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(
        PYTEST, '--no-reference-run', '--timings')[1:]]))
    assert ci.rc == 1, ci.out
    assert any(f'{FUNCTION}[fast] was deselected' in line for line in ci.lines('OG704')), ci.out
    assert "oracle-guard ci: note: the base revision's collection did not complete (" in \
        ci.out, ci.out
    assert 'write tests/local.cfg first' in ci.out, ci.out
    assert 'no test the baseline records as left out at adoption is accepted (rule 39b)' in \
        ci.out, ci.out
    assert any(line.startswith('oracle-guard ci: timing: base collection: wall ')
               for line in ci.out.splitlines()), ci.out
