"""What the base's collection left out (rule 39b): the tests adoption recorded as left out
by the project's own configuration are accepted only while that reason holds.
"""

from __future__ import annotations

import sys

import pytest

from builders.ci_repo import adopt as adopt_with_init
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.ci_repo import git
from builders.ci_repo import Run
from builders.ci_repo import write
from builders.dedupe import adopt_project
from builders.dedupe import APP_TEST
from builders.dedupe import attack
from builders.dedupe import BUG
from builders.dedupe import CASE_PROJECT
from builders.dedupe import cheat
from builders.dedupe import CONFTEST
from builders.dedupe import DD_PYTEST
from builders.dedupe import DD_UNIT
from builders.dedupe import DD_UNIT_FOR_THE_BUG
from builders.dedupe import FOUR
from builders.dedupe import gate
from builders.dedupe import gate_pull_request
from builders.dedupe import GOOD
from builders.dedupe import IGNORING
from builders.dedupe import IMPL_PROPERTY
from builders.dedupe import impls
from builders.dedupe import PROPS
from builders.dedupe import pull_request_cheat
from builders.dedupe import PYPROJECT
from builders.dedupe import TWO_UNITS
from builders.dedupe import unit_project
from builders.dedupe import UNIT_TESTS
from builders.pre_commit import HookRepo
from builders.pre_commit import judge
from builders.repos import Repo


# -- a case the base ran, dropped by src -----------------------------------------------------
# The property is parametrized over the implementations src declares
# (`@pytest.mark.parametrize('impl', dd.IMPLS, ids=str)`); adoption ran `pure` and `fast`,
# so the baseline records nothing left out. main gets the bug in `_fast` (the default);
# the pull request stops declaring `fast` and keeps `dedupe = _fast`. A property whose
# parameters are not literals of its own module makes the gate collect the base revision
# too (rule 39b), and the base's `[fast]`, gone from the run, did not run (OG703; in the
# reference run OG733).
IMPL_PROPS = 'tests/properties/test_dd_props.py'


@pytest.fixture(scope='session')
def impl_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'base-collection-impls', lambda path: adopt_with_init(path, PYPROJECT, {
        'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)", '_fast'),
        'tests/test_dd.py': DD_UNIT, IMPL_PROPS: IMPL_PROPERTY},
        after=[{'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)",
        '_fast', buggy=True)}]).path)


@pytest.fixture
def impl_dd(impl_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(impl_template, str(tmp_path / 'repo'))


@pytest.mark.reference_run
def test_case_the_base_ran_dropped_by_src_fails_ci(impl_dd: CiRepo) -> None:
    with open(f'{impl_dd.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        assert 'test_impl_matches_set' not in f.read()  # adoption left nothing out
    _, ci = attack(impl_dd, {'src/dd/__init__.py': impls("Impl('pure', _pure)", '_fast',
                                                         buggy=True),
                             'tests/test_dd.py': DD_UNIT_FOR_THE_BUG}, plain_rc=0)
    gone = f'{IMPL_PROPS}::test_impl_matches_set[fast] ran in the base revision\'s collection'
    assert any(gone in line for line in ci.lines('OG703')), ci.out
    assert any(gone in line and 'reference run:' in line for line in ci.lines('OG733')), ci.out


@pytest.mark.parametrize('added', ["Impl('faster', _fast)", "Impl('fast', _pure)"],
                         ids=['a new id', 'an id the base had'])
def test_case_added_by_src_passes_ci(impl_dd: CiRepo, added: str) -> None:
    # The honest pull request of the same shape: it fixes `_fast` and declares one more
    # implementation. With an id the base had, pytest numbers the two (`[fast0]`,
    # `[fast1]`): `[fast]` still runs.
    impl_dd.pull_request({'src/dd/__init__.py': impls(
        f"Impl('pure', _pure), Impl('fast', _fast), {added}", '_fast')}, bug=False)
    plain, ci = gate(impl_dd)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0 and ci.summary.endswith('0 finding(s); test command exited 0'), ci.out


def test_base_collection_for_the_cases_alone_collects_the_property_files_only(
        impl_dd: CiRepo) -> None:
    # Rule 39b: made for this question alone (the baseline records nothing left
    # out), the base revision's collection takes the property modules, not the whole suite;
    # with a recorded exclusion, which may name any test, it takes the whole suite.
    import json

    from oracle_guard.config import load_config
    from oracle_guard.gate.base_collection import BaseCollector
    from oracle_guard.gate.base_collection import scope
    from oracle_guard.repo.tree_view import TreeView

    cfg = load_config(impl_dd.path)
    head = base = TreeView(impl_dd.path, 'HEAD')
    only = scope(head, cfg, base)
    assert only == [IMPL_PROPS]
    kept = BaseCollector(cfg, base, sys.executable, only=only).wait().kept
    assert kept and all(case.startswith(f'{IMPL_PROPS}::') for case in kept), kept
    baseline = f'{impl_dd.path}/tests/oracle_baseline.json'
    with open(baseline, encoding='utf-8') as f:
        data = json.load(f)
    data['excluded'] = [{'nodeid': 'tests/test_dd.py::test_small', 'by': '-m'}]
    with open(baseline, 'w', encoding='utf-8') as f:
        json.dump(data, f)
    git(impl_dd.path, 'commit', '-q', '-am', 'record an exclusion')
    head = TreeView(impl_dd.path, 'HEAD')
    assert scope(head, cfg, base) is None
    kept = BaseCollector(cfg, base, sys.executable, only=None).wait().kept
    assert any(case.startswith('tests/test_dd.py::') for case in kept), kept


@pytest.mark.reference_run
def test_base_collection_is_made_only_for_cases_written_outside_the_property(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Rule 39b, decided statically: a parametrize over a list written in the module (or
    # a module-level name bound once to one), whatever its elements, needs no base
    # collection; one over a name taken from src, a starred list, a list grown later, a
    # fixture's params from src, or a pytest_generate_tests hook does.
    from oracle_guard.config import load_config
    from oracle_guard.gate.base_collection import cases_from_code
    from oracle_guard.repo.tree_view import TreeView

    literal = ('import pytest\n\nCASES = [1, 2, pytest.param(3, id="three")]\n\n\n'
               '@pytest.mark.parametrize("n", CASES)\ndef test_a(n):\n    assert n\n\n\n'
               '@pytest.mark.parametrize("n", [(1, 2)], ids=str)\ndef test_b(n):\n'
               '    assert n\n\n\nclass A:\n    pass\n\n\n'
               '@pytest.mark.parametrize("cls", [A, dict])\ndef test_c(cls):\n'
               '    assert cls\n')
    from_code = {
        'tests/properties/test_src.py': 'import pytest\nimport dd\n\n\n'
                                        '@pytest.mark.parametrize("impl", dd.IMPLS)\n'
                                        'def test_c(impl):\n    assert impl\n',
        'tests/properties/test_grown.py': literal.replace(
            '\n\n\n@pytest.mark.parametrize("n", CASES)',
            '\nCASES.extend(range(4))\n\n\n@pytest.mark.parametrize("n", CASES)'),
        'tests/properties/test_hook.py': 'def pytest_generate_tests(metafunc):\n    pass\n',
        'tests/properties/test_starred.py': 'import pytest\nimport dd\n\n\n'
                                            '@pytest.mark.parametrize("impl", [*dd.IMPLS])\n'
                                            'def test_d(impl):\n    assert impl\n',
        'tests/properties/conftest.py': 'import pytest\nimport dd\n\n\n'
                                        '@pytest.fixture(params=dd.IMPLS)\n'
                                        'def impl(request):\n    return request.param\n',
    }
    path = str(tmp_path / 'repo')
    adopt_with_init(path, PYPROJECT, {'src/dd/__init__.py': GOOD,
                            'tests/properties/test_literal.py': literal,
                            'tests/test_dd.py': UNIT_TESTS})
    # The properties' folder named (init names it where the properties use Hypothesis).
    cfg = load_config(path).replace(properties=('tests/properties/',))
    assert cases_from_code(TreeView(path, 'HEAD'), cfg) == []
    write(path, from_code)
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'cases from code')
    assert cases_from_code(TreeView(path, 'HEAD'), cfg) == sorted(from_code)


CASE_MAIN = [
    # Later the fast implementation is built and becomes the default; then the bug in it.
    {'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)")},
    {'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)", buggy=True)},
]


@pytest.fixture(scope='session')
def case_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'base-collection-case', lambda path: adopt_with_init(path, PYPROJECT, CASE_PROJECT,
        CASE_MAIN).path)


@pytest.fixture
def cases(case_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(case_template, str(tmp_path / 'repo'))


def test_adoption_records_the_one_case_its_collection_left_out(cases: CiRepo) -> None:
    with open(f'{cases.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        assert f'"{PROPS}::test_impl_matches_set[fast]"' in f.read()
    plain = cases.finish(cases.start(DD_PYTEST))
    assert plain.rc == 1 and '2 failed, 2 passed' in plain.out, plain.out


@pytest.mark.reference_run
def test_the_kept_case_deselected_through_the_unchanged_conftest_fails_ci(
        cases: CiRepo) -> None:
    # Both implementations declared unavailable in src; `[pure]` ran at
    # adoption, and `[fast]`, recorded then, ran on main (the base) since it was built:
    # the record accepts neither.
    ci = cheat(cases, {
        'src/dd/__init__.py': impls("Impl('pure', _pure, available=False), "
                                    "Impl('fast', _fast, available=False)", buggy=True),
        'tests/test_dd.py': DD_UNIT_FOR_THE_BUG})
    og704 = [line for line in ci.lines('OG704')]
    assert any(f'{PROPS}::test_impl_matches_set[pure]' in line for line in og704), ci.out
    assert any(f'{PROPS}::test_impl_matches_set[fast]' in line for line in og704), ci.out
    assert ci.lines('OG733'), ci.out  # the reference run: the base property did not run


LEGACY = ('from dd import dedupe\n\n\ndef test_old():\n    assert dedupe([]) == []\n\n\n'
          'def test_four():\n    assert len(dedupe([4, 3, 2, 1])) >= 0\n')


ALONE = TWO_UNITS.split('\n\ndef test_four')[0]


def test_failing_test_moved_onto_a_recorded_left_out_test_fails_ci(tmp_path) -> None:
    # tests/legacy/test_old.py::test_four is recorded as left out at adoption
    # (addopts --ignore); the failing tests/test_dd.py::test_four is deleted and its body put
    # over the legacy one. Rule 52 took it for a move and the record accepted the
    # destination; nothing runs it there, so it is a removal, an oracle change (OG740).
    repo = adopt_project(str(tmp_path / 'repo'), unit_project(**{'tests/legacy/test_old.py': LEGACY}),
                 [{'src/dd/__init__.py': BUG}], IGNORING)
    with open(f'{repo.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        assert '"tests/legacy/test_old.py::test_four"' in f.read()
    ci = pull_request_cheat(repo, {'tests/test_dd.py': ALONE, 'tests/legacy/test_old.py': LEGACY.replace(
        '    assert len(dedupe([4, 3, 2, 1])) >= 0\n', FOUR)})
    assert any('tests/test_dd.py::test_four' in line for line in ci.lines('OG740')), ci.out


def test_test_moved_to_a_module_that_runs_passes_ci(tmp_path) -> None:
    # The honest counterpart: the same test moved, body unchanged, to a module pytest runs.
    repo = adopt_project(str(tmp_path / 'repo'), unit_project(**{'tests/legacy/test_old.py': LEGACY}),
                 [], IGNORING)
    plain, ci = gate_pull_request(repo, {'tests/test_dd.py': ALONE,
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


STALE_IMPLS = '''\
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


FUNCTION = f'{PROPS}::test_impl_matches_set'


def stale_impls(declared: str, dedupe: str, buggy: str = '') -> str:
    """src/dd/__init__.py: the implementations, ``buggy`` (a function name) with the bug."""
    code = STALE_IMPLS
    if buggy:
        code = code.replace(f'def {buggy}(xs):\n{CORRECT}', f'def {buggy}(xs):\n{WRONG}')
    return f'{code}IMPLS = [{declared}]\ndedupe = {dedupe}\n'


def project(declared: str, dedupe: str) -> dict[str, str]:
    return {'src/dd/__init__.py': stale_impls(declared, dedupe), 'tests/conftest.py': CONFTEST,
            'tests/test_dd.py': DD_UNIT, 'tests/properties/test_dd_props.py': IMPL_PROPERTY}


def adopt_stale(path: str, files: dict[str, str], after: list[str]) -> CiRepo:
    """``files`` adopted, then each of ``after`` (a src/dd/__init__.py) committed on main;
    the last one has the bug."""
    return adopt_with_init(path, PYPROJECT, files, [{'src/dd/__init__.py': src} for src in after])


def recorded(repo: CiRepo) -> str:
    with open(f'{repo.path}/tests/oracle_baseline.json', encoding='utf-8') as f:
        return f.read()


def pull_request(repo: CiRepo, src: str, unit: str = DD_UNIT_FOR_THE_BUG) -> tuple[Run, Run]:
    repo.pull_request({'src/dd/__init__.py': src, 'tests/test_dd.py': unit}, bug=False)
    return gate(repo)


# At adoption `fast` is not built, so `[fast]` is recorded; main builds it, makes
# it the default and gets the bug in it.
STALE_MAIN = [stale_impls("Impl('pure', _pure), Impl('fast', _fast)", '_fast'),
              stale_impls("Impl('pure', _pure), Impl('fast', _fast)", '_fast', buggy='_fast')]


@pytest.fixture(scope='module')
def stale_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp('stale') / 'repo')
    adopt_stale(path, project("Impl('pure', _pure), Impl('fast', _fast, available=False)",
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
    # Src declares `fast` unavailable again and keeps it the default; the
    # unchanged conftest deselects `[fast]`, which the record names but the base ran.
    plain, ci = pull_request(stale, stale_impls(
        "Impl('pure', _pure), Impl('fast', _fast, available=False)", '_fast', buggy='_fast'))
    assert plain.rc == 0 and '1 deselected' in plain.out, plain.out
    assert ci.rc == 1, ci.out
    assert any(f'{FUNCTION}[fast] was deselected' in line for line in ci.lines('OG704')), ci.out


def test_the_honest_fix_with_a_stale_record_passes_ci(stale: CiRepo) -> None:
    plain, ci = pull_request(stale, stale_impls("Impl('pure', _pure), Impl('fast', _fast)",
                                          '_fast'), DD_UNIT)
    assert plain.rc == 0, plain.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_a_function_recorded_whole_accepts_no_case_the_base_ran(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # At adoption only the unbuilt `fast` exists, so the whole function is
    # recorded; main adds `pure` (the default, later with the bug) and a correct `ref`.
    # src declares `pure` unavailable: `[pure]` ran at the base, so the record does not
    # cover it.
    repo = adopt_stale(str(tmp_path / 'repo'), project("Impl('fast', _fast, available=False)",
                                                 '_pure'), [
        stale_impls("Impl('pure', _pure), Impl('ref', _ref), Impl('fast', _fast, available=False)",
              '_pure'),
        stale_impls("Impl('pure', _pure), Impl('ref', _ref), Impl('fast', _fast, available=False)",
              '_pure', buggy='_pure')])
    assert f'"{FUNCTION}"' in recorded(repo)
    plain, ci = pull_request(repo, stale_impls(
        "Impl('pure', _pure, available=False), Impl('ref', _ref), "
        "Impl('fast', _fast, available=False)", '_pure', buggy='_pure'))
    assert plain.rc == 0 and '2 deselected' in plain.out, plain.out
    assert ci.rc == 1, ci.out
    og704 = ci.lines('OG704')
    assert any(f'{FUNCTION}[pure] was deselected' in line for line in og704), ci.out
    assert not any('[fast]' in line for line in og704), ci.out  # left out at the base too


# `[fast]` recorded and still left out at the base; the bug is in `pure`.
RENAME_MAIN = [stale_impls("Impl('pure', _pure), Impl('ref', _ref), "
                     "Impl('fast', _fast, available=False)", '_pure', buggy='_pure')]


@pytest.fixture(scope='module')
def rename_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp('rename') / 'repo')
    adopt_stale(path, project("Impl('pure', _pure), Impl('ref', _ref), "
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
    plain, ci = pull_request(rename, stale_impls(
        "Impl('fast', _pure, available=False), Impl('ref', _ref)", '_pure', buggy='_pure'))
    assert plain.rc == 0 and '1 deselected' in plain.out, plain.out
    assert ci.rc == 1, ci.out
    assert any(f'{FUNCTION}[pure] ran in the base revision' in line
               for line in ci.lines('OG703')), ci.out
    assert not ci.lines('OG704'), ci.out


def test_the_honest_fix_with_the_record_still_true_passes_ci(rename: CiRepo) -> None:
    # `fast` is still not built: the record accepts `[fast]`, as the base left it out.
    plain, ci = pull_request(rename, stale_impls("Impl('pure', _pure), Impl('ref', _ref), "
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
    repo = adopt_stale(str(tmp_path / 'repo'), files, RENAME_MAIN)
    assert f'"{FUNCTION}[fast]"' in recorded(repo)
    # The honest fix: the record is still true, and would be accepted (the test above).
    repo.pull_request({'src/dd/__init__.py': stale_impls(
        "Impl('pure', _pure), Impl('ref', _ref), Impl('fast', _fast, available=False)",
        '_pure'), 'tests/test_dd.py': DD_UNIT}, bug=False)
    ci = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(
        DD_PYTEST, '--no-reference-run', '--timings')[1:]]))
    assert ci.rc == 1, ci.out
    assert any(f'{FUNCTION}[fast] was deselected' in line for line in ci.lines('OG704')), ci.out
    assert "oracle-guard ci: note: the base revision's collection did not complete (" in \
        ci.out, ci.out
    assert 'write tests/local.cfg first' in ci.out, ci.out
    assert 'no test the baseline records as left out at adoption is accepted (rule 39b)' in \
        ci.out, ci.out
    assert any(line.startswith('oracle-guard ci: timing: base collection: wall ')
               for line in ci.out.splitlines()), ci.out
