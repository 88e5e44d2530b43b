"""The reach measurement of the reference run (gate/reach.py) on this interpreter: coverage
runs from the bootstrap, and each test is credited with the lines it ran, a line run by
two tests to both (Python 3.12+ measures with sys.monitoring, which stops reporting a line
after its first run unless the events are turned on again)."""
from __future__ import annotations

import os
import subprocess
import sys

from oracle_guard.config import Config
from oracle_guard.gate import reach
from oracle_guard.gate.changed_lines import changed_statements
from oracle_guard.gate.reference_process import NO_PROJECT_COVERAGE
from oracle_guard.gate.reference_process import path_argument
from oracle_guard.gate.reference_process import START_UP

MODULE = b'''\
def shared(x):
    return x + 1


def only_b(x):
    return x * 2


def never():
    return 0
'''
TESTS = '''\
from m import only_b, shared


def test_a():
    assert shared(1) == 2


def test_b():
    assert shared(2) == 3
    assert only_b(2) == 4
'''


def _measured(tmp_path, contexts: bool = True, tests: str = TESTS):  # type: ignore[no-untyped-def]
    """The measurement of the tests of a tree with ``src/m.py``, as the reference run's
    bootstrap makes it."""
    root = tmp_path / 'tree'
    (root / 'src').mkdir(parents=True)
    (root / 'tests').mkdir()
    (root / 'src' / 'm.py').write_bytes(MODULE)
    (root / 'tests' / 'test_m.py').write_text(tests)
    plan = reach.Plan({'src/m.py': changed_statements(None, MODULE, 'src/m.py')},
                      str(tmp_path / 'reach.coverage'), contexts)
    env = {**os.environ, 'PYTEST_DISABLE_PLUGIN_AUTOLOAD': '1'}
    proc = subprocess.run(
        [sys.executable, '-I', '-S', '-c', reach.bootstrap(START_UP, NO_PROJECT_COVERAGE),
         path_argument(str(root), ['src/']), plan.argv(str(root)), '-q', '-p', 'no:cacheprovider',
         f'--rootdir={root}', 'tests/test_m.py'],
        cwd=root, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return plan, reach.read_measurement(plan, str(root))


def test_each_test_is_credited_with_the_changed_lines_it_ran(  # type: ignore[no-untyped-def]
        tmp_path) -> None:
    plan, measured = _measured(tmp_path)
    root = tmp_path / 'tree'
    assert measured.measured
    tests = {line: sorted(t for t in found if t) for (_, line), found in measured.tests.items()}
    assert tests == {
        1: [], 5: [], 9: [],  # the def lines run at import, outside a test
        2: ['tests/test_m.py::test_a', 'tests/test_m.py::test_b'],
        6: ['tests/test_m.py::test_b'],
    }
    judged = reach.judge(plan, measured, None, Config(root=str(root)))
    assert judged.note == ('oracle-guard ci: oracle reach: 5 of 6 changed src lines run by '
                           'the human-owned tests; mutants: 0 of 0 killed')
    assert '  - `src/m.py` `never`: line 10 (`return 0`)' in judged.lines
    assert judged.findings == []


def test_no_data_file_is_said_as_not_measured(tmp_path) -> None:  # type: ignore[no-untyped-def]
    plan = reach.Plan({'src/m.py': changed_statements(None, MODULE, 'src/m.py')},
                      str(tmp_path / 'missing.coverage'))
    measured = reach.read_measurement(plan, str(tmp_path))
    assert not measured.measured
    judged = reach.judge(plan, measured, None, Config(root=str(tmp_path)))
    assert 'not measured: the reference run wrote no coverage data' in judged.note
    assert judged.lines[0].startswith('- not measured')


def test_without_mutant_runs_no_test_is_told_apart(  # type: ignore[no-untyped-def]
        tmp_path) -> None:
    # mutant-budget = 0: the lines run are measured, not which test ran them
    plan, measured = _measured(tmp_path, contexts=False)
    assert plan.contexts is False
    assert {line: sorted(found) for (_, line), found in measured.tests.items()} == {
        1: [''], 2: [''], 5: [''], 6: [''], 9: ['']}


def test_a_change_of_no_statement_is_measured_by_no_coverage_and_reaches_0_of_0(  # type: ignore[no-untyped-def]
        tmp_path) -> None:
    # A comment added to a src module: no statement changed, so the reference run starts
    # no coverage (told to measure no file, it would measure every one), and the line
    # still says what was judged.
    assert changed_statements(MODULE, MODULE + b'# a comment\n', 'src/m.py') == []
    plan = reach.Plan({}, str(tmp_path / 'never-written.coverage'))
    assert not plan.measuring()
    measured = reach.read_measurement(plan, str(tmp_path))
    assert measured.measured and measured.tests == {}
    judged = reach.judge(plan, measured, None, Config(root=str(tmp_path)))
    assert judged.note == ('oracle-guard ci: oracle reach: 0 of 0 changed src lines run by '
                           'the human-owned tests; mutants: 0 of 0 killed')
    assert judged.findings == []
    edited = reach.Plan({'src/m.py': changed_statements(None, MODULE, 'src/m.py')},
                        str(tmp_path / 'm.coverage'))
    assert edited.measuring()


# What the tests see of the measurement: on Python 3.12+ a sys.monitoring tool and no trace
# function (coverage's C tracer would see every call of the run), and no COVERAGE_CORE.
CORE_TESTS = '''\
import os
import sys

from m import shared


def test_the_core():
    assert shared(1) == 2
    assert "COVERAGE_CORE" not in os.environ
    if sys.version_info >= (3, 12):
        assert sys.gettrace() is None
        assert "coverage.py" in [sys.monitoring.get_tool(i) for i in range(6)]
    else:
        assert sys.gettrace() is not None
'''


def test_the_measurement_uses_sys_monitoring_where_there_is_one(  # type: ignore[no-untyped-def]
        tmp_path, monkeypatch) -> None:
    monkeypatch.delenv('COVERAGE_CORE', raising=False)
    _, measured = _measured(tmp_path, tests=CORE_TESTS)
    assert measured.tests[('src/m.py', 2)] == {'tests/test_m.py::test_the_core'}
