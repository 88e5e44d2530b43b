"""The reference run of ``oracle-guard ci`` (rule 44) and its evidence for freezes and new
tests (rules 48, 49), on a repository whose pull request breaks ``calc.add`` for real.

The base oracle here has a property, ``test_add_matches_the_sum``, that compares ``add``
with a helper module outside the properties folder (``tests/sums.py``) and a fixture-only
conftest on its path. Each cheat turns plain ``python -m pytest`` green; the gate must
fail with the named code because the reference tree holds the base's oracle, not the
pull request's test code. The honest counterparts must pass.
"""
from __future__ import annotations

import sys
import textwrap

import pytest

from ci_repo import BASE_FILES
from ci_repo import build_template
from ci_repo import CiRepo
from ci_repo import copy_template
from ci_repo import git
from ci_repo import PYTEST
from ci_repo import Run
from ci_repo import write

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
PROPERTY = 'tests/properties/test_sum_props.py::test_add_matches_the_sum'
# test_add of the base expects the right sum; a cheat "updates" it to the bug.
TEST_ADD_MADE_TO_AGREE = textwrap.dedent(BASE_FILES['tests/test_calc.py']).replace(
    'assert add(2, 3) == 5', 'assert add(2, 3) == 6')
REFACTORED_ADD = 'def add(a, b):\n    return sum((a, b))\n\n\ndef mul(a, b):\n    return a * b\n'
FIXED_ADD = REFACTORED_ADD


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


@pytest.fixture(scope='session')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_template(str(tmp_path_factory.mktemp('reference-template') / 'repo'), ORACLE)


@pytest.fixture
def calc(template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(template, str(tmp_path / 'repo'))


def on_main(repo: CiRepo, files: dict) -> None:  # type: ignore[type-arg]
    write(repo.path, files)
    git(repo.path, 'add', '-A')
    git(repo.path, 'commit', '-q', '-m', 'main moves on')


def green_then_ci(calc: CiRepo, *options: str) -> tuple[Run, str]:
    """(oracle-guard ci, its review report) after asserting that plain pytest is green."""
    report = f'{calc.path}/../report.md'
    plain, ci = calc.both(PYTEST, '--report', report, *options)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    with open(report, encoding='utf-8') as f:
        return ci, f.read()


def ci_with_report(calc: CiRepo, *options: str) -> tuple[Run, str]:
    report = f'{calc.path}/../report.md'
    ci = calc.ci(PYTEST, '--report', report, *options)
    with open(report, encoding='utf-8') as f:
        return ci, f.read()


def reference_codes(run: Run) -> list[str]:
    return [line for line in run.out.splitlines() if ': OG73' in line]


# -- rule 44: the base oracle against the pull request's src ------------------------------
def test_helper_of_a_property_rewritten_to_agree_with_the_bug_fails_the_reference_run(
        calc: CiRepo) -> None:
    calc.pull_request({
        'tests/sums.py': 'from calc import add\n\n\ndef expected(a, b):\n    return add(a, b)\n',
        'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE,
    })
    ci, report = green_then_ci(calc)
    assert ci.rc == 1, ci.out
    assert any(PROPERTY in line and 'failed against your src/' in line
               for line in ci.lines('OG730')), ci.out
    # The report names what the tree held: the base's helper, the pull request's src.
    section = report.split('### Reference run', 1)[1]
    base_line = next(line for line in section.splitlines() if 'other files from base' in line)
    assert '`tests/sums.py`' in base_line and '`tests/conftest.py`' in base_line
    assert 'src from the pull request' in section and '`src/calc/__init__.py`' in section


def test_lying_eq_in_src_is_caught_by_the_reference_runs_own_canaries(calc: CiRepo) -> None:
    # The base property compares add() with ==; a src whose result claims to equal anything
    # makes it pass in the reference tree too. Only the twin planted there (its == against a
    # fresh sentinel) can tell: the reference run is sealed like the test command.
    lying = ('class _Sum(int):\n    def __eq__(self, other):\n        return True\n\n'
             '    __hash__ = int.__hash__\n\n\ndef add(a, b):\n'
             '    return _Sum(a + b + 1)\n\n\ndef mul(a, b):\n    return a * b\n')
    calc.pull_request({'src/calc/__init__.py': lying})
    ci, _ = green_then_ci(calc)
    assert ci.rc == 1, ci.out
    assert any(line.split(': OG724 ', 1)[1].startswith('reference run:')
               and 'the twin of tests/properties/' in line for line in ci.lines('OG724')), ci.out
    assert not reference_codes(ci), ci.out  # its oracle tests passed: only the twin knew


def test_property_rewritten_next_to_the_bug_fails_the_reference_run(calc: CiRepo) -> None:
    calc.pull_request({
        'tests/properties/test_sum_props.py': 'def test_add_matches_the_sum():\n'
                                              '    assert 1 + 1 == 2\n',
        'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE,
    })
    ci, _ = green_then_ci(calc)
    assert ci.rc == 1
    assert any(PROPERTY in line for line in ci.lines('OG730')), ci.out


def test_approved_property_edit_is_what_the_reference_run_runs(calc: CiRepo) -> None:
    # With --oracle-approved (rule 47) a person accepted the rewritten property: the
    # reference tree takes it from the pull request and the base's version is not run.
    calc.pull_request({'tests/properties/test_sum_props.py': 'def test_add_matches_the_sum():\n'
                                                             '    assert 1 + 1 == 2\n',
                       'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE})
    approved, report = ci_with_report(calc, '--oracle-approved')
    assert reference_codes(approved) == [], approved.out
    line = next(line for line in report.split('### Reference run', 1)[1].splitlines()
                if 'from the pull request' in line and 'test_sum_props' in line)
    assert '`tests/properties/test_sum_props.py`' in line


def test_root_conftest_forging_every_outcome_is_not_in_the_reference_tree(calc: CiRepo) -> None:
    # SWE-bench issue #631: a patch made only of a root conftest that sets every report
    # to passed. The reference tree never holds the pull request's conftests.
    calc.pull_request({'conftest.py': '''\
        import pytest


        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_makereport(item, call):
            outcome = yield
            report = outcome.get_result()
            report.outcome = 'passed'
            report.longrepr = None
        '''})
    ci, _ = green_then_ci(calc)
    # The failure as pytest reported it: no hook of the pull request rewrote it.
    assert any(PROPERTY in line and line.endswith('(it raised AssertionError)')
               for line in ci.lines('OG730')), ci.out


def test_pytest_configuration_deselecting_the_property_is_not_in_the_reference_tree(
        calc: CiRepo) -> None:
    calc.pull_request({
        'pyproject.toml': ORACLE['pyproject.toml'].replace(
            'pythonpath = ["src"]', f'pythonpath = ["src"]\naddopts = "--deselect {PROPERTY}"'),
        'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE,
    })
    ci, report = green_then_ci(calc)
    assert any(PROPERTY in line for line in ci.lines('OG730')), ci.out
    assert ci.lines('OG733') == [], ci.out
    base_files = next(line for line in report.split('### Reference run', 1)[1].splitlines()
                      if 'other files from base' in line)
    assert '`pyproject.toml`' in base_files


@pytest.mark.parametrize('path, source', [
    ('src/oracle_guard/__init__.py', ''),
    ('src/_hypothesis_pytestplugin.py', 'import os\n\nos._exit(0)\n'),
])
def test_src_module_named_like_a_plugin_is_not_placed_in_the_reference_tree(
        calc: CiRepo, path: str, source: str) -> None:
    # src/ is first on the reference child's sys.path: a src/oracle_guard would be the
    # `-p oracle_guard` that writes the record there; Hypothesis' entry point loads
    # `_hypothesis_pytestplugin` after the src roots are on sys.path.
    calc.pull_request({path: source,
                       'tests/sums.py': 'from calc import add\n\n\ndef expected(a, b):\n'
                                        '    return add(a, b)\n'})
    ci, report = ci_with_report(calc)
    assert any(PROPERTY in line for line in ci.lines('OG730')), ci.out
    assert ci.lines('OG734') == [], ci.out
    assert f'not placed: {path} (its import name' in report


def test_src_that_breaks_what_a_property_imports_is_an_error_of_the_reference_run(
        calc: CiRepo) -> None:
    calc.pull_request({'src/calc/__init__.py': 'def plus(a, b):\n    return a + b\n'},
                      bug=False)
    ci = calc.ci(PYTEST)
    lines = ci.lines('OG731')
    assert any(line.startswith('tests/properties/test_sum_props.py:1:1: OG731 reference run')
               and 'could not be collected' in line for line in lines), ci.out


def test_test_environment_without_pytest_is_a_finding_of_the_reference_run(
        calc: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import venv

    venv.create(str(tmp_path / 'bare'), with_pip=False)
    calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD}, bug=False)
    ci = calc.ci(PYTEST, '--test-python', str(tmp_path / 'bare' / 'bin' / 'python'))
    assert ci.rc == 1
    lines = ci.lines('OG734')
    assert lines and 'left no record' in lines[0] and "No module named 'pytest'" in ci.out, \
        ci.out


def test_src_that_skips_on_the_failing_input_fails_the_reference_run(calc: CiRepo) -> None:
    calc.pull_request({'src/calc/__init__.py': textwrap.dedent('''\
        import unittest


        def add(a, b):
            if a + b == 5:
                raise unittest.SkipTest('later')
            return a + b


        def mul(a, b):
            return a * b
        ''')}, bug=False)
    ci, _ = green_then_ci(calc)
    lines = ci.lines('OG732')
    assert any(PROPERTY in line and 'no live freeze explains it' in line for line in lines), \
        ci.out


def test_src_that_stops_the_session_leaves_the_base_tests_not_run(calc: CiRepo) -> None:
    calc.pull_request({'src/calc/__init__.py': textwrap.dedent('''\
        import gc

        for thing in gc.get_objects():
            if type(thing).__name__ == 'Session':
                thing.shouldstop = 'done'


        def add(a, b):
            return a + b


        def mul(a, b):
            return a * b
        ''')}, bug=False)
    ci = calc.ci(PYTEST)
    assert any(PROPERTY in line and 'was not collected' in line
               for line in ci.lines('OG733')), ci.out


def test_property_frozen_in_the_pull_request_still_runs_in_the_reference_run(
        calc: CiRepo) -> None:
    # The ledger of the reference tree is the base's: a freeze the pull request adds
    # does not explain anything there (and its reruns say it is broken, rule 48).
    calc.pull_request({'tests/freeze_ledger.yaml': freeze(PROPERTY),
                       'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE})
    ci, report = green_then_ci(calc)
    assert any(PROPERTY in line for line in ci.lines('OG730')), ci.out
    assert any('FZ-1' in line and 'none of 3 reruns' in line for line in ci.lines('OG735'))
    assert 'passed 0 of 3: failed, failed, failed (broken, not flaky)' in report


def test_property_skipped_by_a_freeze_live_at_base_is_explained(calc: CiRepo) -> None:
    on_main(calc, {'tests/freeze_ledger.yaml': freeze(PROPERTY)})
    calc.pull_request({'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE})
    ci, report = green_then_ci(calc)
    assert reference_codes(ci) == [], ci.out
    assert 'all passed or frozen at base' in report


def test_real_change_to_src_passes_the_reference_run(calc: CiRepo) -> None:
    calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD}, bug=False)
    ci, report = green_then_ci(calc)
    assert ci.rc == 0, ci.out
    assert '2 oracle test(s) of 2 file(s): all passed or frozen at base' in report


def test_reference_run_can_be_switched_off_for_a_local_run(calc: CiRepo) -> None:
    calc.pull_request({'tests/sums.py': 'from calc import add\n\n\ndef expected(a, b):\n'
                                        '    return add(a, b)\n',
                       'tests/test_calc.py': TEST_ADD_MADE_TO_AGREE})
    ci = calc.ci(PYTEST, '--no-reference-run')
    assert reference_codes(ci) == [] and ci.rc == 0, ci.out


def test_test_python_that_cannot_run_is_exit_2_with_a_message(
        calc: CiRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    from oracle_guard.commands.ci import range_context
    from oracle_guard.findings import ConfigError
    from oracle_guard.gate.reference import reference_runs

    calc.pull_request({'README.md': 'calc\n'}, bug=False)
    ci = calc.ci(PYTEST, '--test-python', '/nonexistent/python')
    assert ci.rc == 2, ci.out
    assert '/nonexistent/python' in ci.out and 'Traceback' not in ci.out
    # The reference run on its own says why.
    monkeypatch.chdir(calc.path)
    with pytest.raises(ConfigError, match="cannot run '/nonexistent/python'"):
        reference_runs(range_context('main'), '/nonexistent/python')


# -- rule 48: a freeze needs a measured flip -----------------------------------------------
# A second bug, in mul, that only the unit test test_mul[2] catches: freezing that test
# is all a cheat needs to turn plain pytest green.
BUGGY_MUL = REFACTORED_ADD.replace('return a * b', 'return a * b + (a == 2 and b == 1)')


def test_freeze_on_a_test_that_fails_every_time_fails_ci(calc: CiRepo) -> None:
    calc.pull_request({'src/calc/__init__.py': BUGGY_MUL,
                       'tests/freeze_ledger.yaml': freeze('tests/test_calc.py::test_mul')},
                      bug=False)
    ci, report = green_then_ci(calc)
    assert ci.rc == 1
    lines = ci.lines('OG735')
    assert lines and 'tests/test_calc.py::test_mul' in lines[0], ci.out
    assert 'passed in none of 3 reruns against your src/ (failed, failed, failed)' in lines[0]
    assert lines[0].startswith('tests/freeze_ledger.yaml:')
    assert 'passed 0 of 3: failed, failed, failed (broken, not flaky)' in report


FLIPPING_TEST = '''\
    import os

    COUNTER = os.path.join(os.path.dirname(__file__), '.flip-count')


    def test_flips():
        # Passes on every other run: a test whose outcome really flips.
        count = int(open(COUNTER).read()) if os.path.exists(COUNTER) else 0
        with open(COUNTER, 'w') as f:
            f.write(str(count + 1))
        assert count % 2 == 0
    '''


def test_freeze_on_a_test_that_really_flips_passes_with_its_evidence(calc: CiRepo) -> None:
    calc.pull_request({'tests/test_flip.py': FLIPPING_TEST,
                       'tests/freeze_ledger.yaml': freeze('tests/test_flip.py::test_flips',
                                                          'time-dependent')}, bug=False)
    ci, report = green_then_ci(calc)
    assert reference_codes(ci) == [], ci.out
    assert ('FZ-1 (tests/test_flip.py::test_flips, time-dependent): passed 2 and failed 1 of '
            '3 reruns: passed, failed, passed (a measured flip)') in report
    # The rerun tree holds the pull request's test, but the conftest on its path is the base's.
    section = report.split('### Freeze evidence', 1)[1].split('###', 1)[0]
    base_line = next(line for line in section.splitlines() if 'other files from base' in line)
    assert '`tests/conftest.py`' in base_line, section


def test_freeze_marker_in_the_test_file_does_not_hide_the_rerun_outcome(calc: CiRepo) -> None:
    calc.pull_request({
        'src/calc/__init__.py': BUGGY_MUL,
        'tests/test_calc.py': textwrap.dedent(BASE_FILES['tests/test_calc.py']).replace(
            "@pytest.mark.parametrize('a', [1, 2])",
            "@pytest.mark.skip(reason='FZ-1')\n@pytest.mark.parametrize('a', [1, 2])"),
        'tests/freeze_ledger.yaml': freeze('tests/test_calc.py::test_mul'),
    }, bug=False)
    ci, _ = green_then_ci(calc)
    assert any('(failed, failed, failed)' in line for line in ci.lines('OG735')), ci.out


# -- rule 49: new tests must test the change ----------------------------------------------
NEW_TEST = '''\
    from calc import add


    def test_add_five():
        assert add(2, 3) == 5
    '''


def test_new_or_changed_test_that_passes_on_the_old_src_is_listed(calc: CiRepo) -> None:
    changed_mul = textwrap.dedent(BASE_FILES['tests/test_calc.py']).replace(
        'assert mul(a, 1) == a', 'assert mul(a, 1) == a == mul(1, a)')
    calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD, 'tests/test_new.py': NEW_TEST,
                       'tests/test_calc.py': changed_mul}, bug=False)
    ci, report = green_then_ci(calc)
    assert ci.rc == 0, ci.out
    assert '`tests/test_new.py::test_add_five`: passes without your change' in report
    assert '`tests/test_calc.py::test_mul`: passes without your change' in report
    assert 'tests/test_calc.py::test_add`' not in report  # unchanged: not run there


def test_new_test_passing_on_the_old_src_fails_with_require_fail_to_pass(calc: CiRepo) -> None:
    on_main(calc, {'pyproject.toml': ORACLE['pyproject.toml'] + 'require-fail-to-pass = true\n'})
    calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD,
                       'tests/test_new.py': NEW_TEST}, bug=False)
    ci, _ = green_then_ci(calc)
    assert ci.rc == 1
    lines = ci.lines('OG736')
    assert lines and lines[0].startswith('tests/test_new.py:4:'), ci.out
    assert 'tests/test_new.py::test_add_five passes against the base revision' in lines[0]


def test_real_fix_with_a_test_that_fails_on_the_old_src_is_not_listed(calc: CiRepo) -> None:
    on_main(calc, {'src/calc/__init__.py': textwrap.dedent('''\
        def add(a, b):
            total = a + b
            return total + 1 if total == 5 else total


        def mul(a, b):
            return a * b
        ''')})
    on_main(calc, {'pyproject.toml': ORACLE['pyproject.toml'] + 'require-fail-to-pass = true\n'})
    calc.pull_request({'src/calc/__init__.py': FIXED_ADD, 'tests/test_new.py': NEW_TEST},
                      bug=False)
    ci, report = green_then_ci(calc)
    assert ci.rc == 0, ci.out
    assert '`tests/test_new.py::test_add_five`: passes without' not in report
    assert 'none of the 1 new or changed test(s) passes without your change' in report


# The tree of the new-test run keeps the digests of what the gate wrote, as the reference
# tree does (rule 44): a file of it changed when its run ends is OG734.
REWRITING_NEW_TEST = '''\
    import os

    from calc import add


    def test_add_five():
        if os.path.basename(os.getcwd()) == 'new-tests':  # the gate's tree of the new tests
            with open(__file__, 'a') as f:
                f.write('\\n# rewritten while it ran\\n')
        assert add(2, 3) == 5
    '''


def test_new_test_rewriting_its_tree_fails_ci(calc: CiRepo) -> None:
    calc.pull_request({'src/calc/__init__.py': REFACTORED_ADD,
                       'tests/test_new.py': REWRITING_NEW_TEST}, bug=False)
    ci, _ = green_then_ci(calc)
    assert ci.rc == 1, ci.out
    assert any('new-test run (rule 49): the tree of the new tests was changed while it ran: '
               'tests/test_new.py' in line for line in ci.lines('OG734')), ci.out


def test_new_test_without_a_src_change_is_not_run_against_the_base(calc: CiRepo) -> None:
    calc.pull_request({'tests/test_new.py': NEW_TEST}, bug=False)
    ci, report = green_then_ci(calc)
    assert ci.rc == 0, ci.out
    assert 'New tests against the base src' not in report


def test_gate_environment_cannot_start_code_in_the_reference_child(calc: CiRepo) -> None:
    # python -I: PYTHONPATH (and a sitecustomize on it) of the gate's job never reaches
    # the reference child; this one would end it with exit 0 before pytest starts.
    folder = f'{calc.path}/../site'
    write(folder, {'sitecustomize.py': 'import os\nos._exit(0)\n'})
    calc.pull_request({'tests/sums.py': 'from calc import add\n\n\ndef expected(a, b):\n'
                                        '    return add(a, b)\n'})
    gate = [sys.executable, '-I', '-m', 'oracle_guard.cli', 'ci', '--base', 'main', '--',
            *PYTEST]
    ci = calc.finish(calc.start(gate, {'PYTHONPATH': folder}))
    assert any(PROPERTY in line for line in ci.lines('OG730')), ci.out
    assert ci.lines('OG734') == [], ci.out


def test_approved_oracle_change_takes_the_oracle_from_the_pull_request(
        calc: CiRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    # Rule 47's approval: the reference tree then holds the pull request's helper, which
    # agrees with its src/, so nothing fails there; without it, the base's helper does.
    from oracle_guard.commands.ci import range_context
    from oracle_guard.gate.reference import reference_runs

    calc.pull_request({'tests/sums.py': 'def expected(a, b):\n'
                                        '    return a + b + (a + b == 5)\n'})
    monkeypatch.chdir(calc.path)
    for name in ('ORACLE_GUARD_RECORD', 'PYTEST_ADDOPTS'):
        monkeypatch.delenv(name, raising=False)
    unapproved = reference_runs(range_context('main'), sys.executable)
    assert [f.code for f in unapproved.findings] == ['OG730'], unapproved.findings
    approved = reference_runs(range_context('main'), sys.executable, approved=True)
    assert approved.findings == [], approved.findings
    files = next(lines for title, lines in approved.report if title == 'Reference run')
    assert any(line.startswith('- other files from the pull request') and '`tests/sums.py`'
               in line for line in files), files
    # Only the approved files come from the pull request: an approval of another file
    # leaves the base's helper in the tree.
    one = reference_runs(range_context('main'), sys.executable, approved=True,
                         approved_files=['tests/sums.py'])
    assert one.findings == [], one.findings
    other = reference_runs(range_context('main'), sys.executable, approved=True,
                           approved_files=['tests/freeze_ledger.yaml'])
    assert [f.code for f in other.findings] == ['OG730'], other.findings


def test_the_imports_of_a_file_are_found_as_a_walk_of_every_node_finds_them() -> None:
    """The reference and evidence trees take the helpers a test file imports (rules 44, 48,
    49): read from its statements alone (an import is one), in ``ast.walk``'s order,
    they are what a walk of every node finds, on every file of this repository and on
    imports hidden in every kind of block."""
    import ast
    import pathlib
    import sys

    from oracle_guard.gate.reference import _parse_imports

    def walked(source: bytes) -> list[tuple[str, int]]:
        found = []
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                found += [(alias.name, 0) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ''
                found.append((module, node.level))
                found += [(f'{module}.{alias.name}' if module else alias.name, node.level)
                          for alias in node.names if alias.name != '*']
        return found

    hidden = textwrap.dedent('''\
        import a, b.c as d
        from . import e
        from ..f import g
        from .h import *
        try:
            import h
        except ImportError:
            from i import j
        else:
            import k
        finally:
            import l
        if x:
            import m
        elif y:
            import n
        with o:
            import p
        for q in r:
            import s
        while t:
            import u
        class V:
            import w
            def x(self):
                import y
                async def z():
                    import aa
        f = lambda: __import__('not_an_import_statement')
        ''')
    if sys.version_info >= (3, 10):
        hidden += 'match q:\n    case 1:\n        import bb\n    case _:\n        from cc import dd\n'
    if sys.version_info >= (3, 11):
        hidden += 'try:\n    pass\nexcept* ValueError:\n    import ee\n'
    root = pathlib.Path(__file__).resolve().parents[1]
    sources = [hidden.encode()] + [p.read_bytes() for p in sorted(root.rglob('*.py'))]
    assert len(walked(sources[0])) >= 20  # 3.9: no match statement, no except*
    for source in sources:
        assert _parse_imports(source, 'x.py') == walked(source)
