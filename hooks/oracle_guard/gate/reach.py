"""What the oracle judges of the change: the reach of the base revision's human-owned tests
into the lines the pull request changed under ``src/``, and the mutants of those lines they
cannot tell from the change (the reference run, ``gate/reference.py``).

* **Reach.** When the change adds or edits a Python file of ``src/``, the reference run
  starts coverage.py (``bootstrap``) before pytest and before anything of the tree is
  imported, measuring only the changed files, with one coverage context per test (its node
  id); a change that edits no statement (a comment) starts no coverage and reaches 0 of 0. On Python 3.12+ coverage measures with ``sys.monitoring`` (``COVERAGE_CORE=sysmon``
  unless the environment names a core), which costs nothing in code it does not measure;
  the events it turns off after a line's first run are turned on again at each test, in
  the changed files' code objects only, so a line run by several tests is credited to
  each. Before 3.12 its C tracer sees every call. A changed statement
  (``gate/changed_lines.py``) is reached when the run executed one of its lines.
  ``require-oracle-reach = P``: fewer than P percent reached is OG744.
* **Mutants** (``gate/mutants.py``): for each reached changed statement, in file and line
  order, at most one mutant, written over the file in the reference tree and run as the
  base oracle, only the tests that reached the statement, ``-x``; then the file is put
  back. A mutant is killed when a test fails (or pytest stops on an error); it survives
  when they all pass. The runs stop when the budget is spent (``mutant-budget`` seconds;
  unset: the reference run's own wall time; 0: none run) and only after a reference run
  without findings. ``require-mutants-killed = P``: fewer than P percent killed is OG745.

The measurement runs in the process that runs the pull request's src (as the reference run
itself does): it is evidence for a reviewer, not a seal. Neither is a finding unless a
percent is required, and neither on a change that does not touch ``src/``.

OG744 fewer of the changed src statements than ``require-oracle-reach`` percent were run
      by the base oracle in the reference run
OG745 fewer of the mutants of the reached changed statements than
      ``require-mutants-killed`` percent were killed by the base oracle
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from oracle_guard.config import Config
from oracle_guard.findings import Finding
from oracle_guard.gate.changed_lines import changed_statements
from oracle_guard.gate.changed_lines import Statement
from oracle_guard.gate.mutants import Mutant
from oracle_guard.gate.mutants import mutate
from oracle_guard.repo.changeset import ChangeSet
from oracle_guard.repo.tree_view import TreeView

TITLE = 'What the oracle judges of this change'
LINE = 'oracle-guard ci: oracle reach: {reached} of {total} changed src lines run by the ' \
       'human-owned tests; mutants: {killed} of {run} killed'
# After the reference run's START_UP (sys.path as ``site`` would make it): coverage starts
# before pytest is imported, so every import of a changed module is measured. argv[1]: the
# src roots (JSON), argv[2]: the data file and the files to measure (JSON), then pytest's.
_MEASURED = '''\
import json
_reach = json.loads(sys.argv[2])
try:
    import coverage
except ImportError:
    coverage = None
_monitoring = getattr(sys, "monitoring", None)
_cov = None
_tools = []
if coverage is not None:
    _core = os.environ.get("COVERAGE_CORE")
    if _core is None and sys.version_info >= (3, 12):
        # read by Coverage() (by start() in older releases); the tests do not see it
        os.environ["COVERAGE_CORE"] = "sysmon"
    _taken = [_monitoring.get_tool(i) for i in range(6)] if _monitoring is not None else []
    try:
        _cov = coverage.Coverage(data_file=_reach["data_file"], include=_reach["include"],
                                 config_file=False, auto_data=False)
        # Contexts are switched here, not by coverage's dynamic contexts: its warning that
        # sys.monitoring does not support those would be an error under filterwarnings=error.
        _cov.set_option("run:disable_warnings", ["no-sysmon-context"])
        _cov.start()
    finally:
        if _core is None:
            os.environ.pop("COVERAGE_CORE", None)
    # the sys.monitoring tool coverage took (none with its C tracer)
    _tools = [i for i, name in enumerate(_taken) if name is None and _monitoring.get_tool(i)]
# With sys.monitoring, coverage turns a line's event off after the line's first run: at
# each test the events of the changed files' code objects (seen by a tool of our own at
# their first call) are turned on again, and only theirs. restart_events() would turn every
# event of the run back on, and each function the next test calls would cost a callback.
_codes = []
_rearm = None
if _tools and _reach["contexts"] and _monitoring.get_tool(4) is None:
    _rearm = _tools[0]
    _wanted = {os.path.normcase(p) for p in _reach["include"]}
    _files = {}
    def _code_started(code, offset):
        found = _files.get(code.co_filename)
        if found is None:
            found = _files[code.co_filename] = os.path.normcase(
                os.path.realpath(code.co_filename)) in _wanted
        if found:
            _codes.append(code)
        return _monitoring.DISABLE
    _monitoring.use_tool_id(4, "oracle-guard reach")
    _monitoring.register_callback(4, _monitoring.events.PY_START, _code_started)
    _monitoring.set_events(4, _monitoring.events.PY_START)
import pytest
%(plugins)s
_src_path(sys.argv[1])
def _switch(name):
    if _cov is None or not _reach["contexts"]:
        return
    _cov.switch_context(name)
    if _rearm is not None:
        for code in _codes:
            events = _monitoring.get_local_events(_rearm, code)
            if events:
                _monitoring.set_local_events(_rearm, code, 0)
                _monitoring.set_local_events(_rearm, code, events)
    elif _tools:
        _monitoring.restart_events()
class _Contexts:
    def pytest_runtest_logstart(self, nodeid, location):
        _switch(nodeid)
    def pytest_runtest_logfinish(self, nodeid, location):
        _switch("")
try:
    _code = pytest.main(sys.argv[3:], plugins=[_Contexts(), _NoProjectCoverage()])
finally:
    if _cov is not None:
        _cov.stop()
        _cov.save()
raise SystemExit(_code)
'''


def bootstrap(start_up: str, plugins: str) -> str:
    """The reference run's bootstrap with the measurement (``start_up``: its sys.path;
    ``plugins``: the code of ``_NoProjectCoverage``, the project's own coverage kept out)."""
    return start_up + _MEASURED.replace('%(plugins)s\n', plugins)


@dataclass
class Plan:
    """The changed statements of the src files, and where their measurement goes."""

    statements: dict[str, list[Statement]]  # repository path -> its changed statements
    data_file: str = ''
    # One coverage context per test: only the mutant runs need them (mutant-budget = 0:
    # none, and the run does not pay for telling the tests apart)
    contexts: bool = True

    def total(self) -> int:
        return sum(len(found) for found in self.statements.values())

    def measuring(self) -> bool:
        """Whether the reference run starts coverage: not for a change of src that changes
        no statement (a comment, a blank line), where there is nothing to measure and
        coverage, told to measure no file, would measure them all."""
        return self.total() > 0

    def argv(self, root: str) -> str:
        """argv[2] of the bootstrap for a tree at ``root``."""
        return json.dumps({'data_file': self.data_file, 'contexts': self.contexts, 'include': [
            os.path.join(os.path.realpath(root), *path.split('/')) for path in self.statements]})


def plan(changes: ChangeSet, base: TreeView | None, head: TreeView, cfg: Config,
         folder: str) -> Plan | None:
    """The measurement a change needs: None when it adds or edits no Python file of src."""
    found: dict[str, list[Statement]] = {}
    touched = False
    for change in changes.changes:
        path = change.path
        if change.status == 'D' or not path.endswith('.py') or not cfg.is_src(path) or \
                cfg.is_test(path):
            continue
        touched = True
        new = head.read(path)
        if new is None:
            continue
        old = None
        if change.status != 'A' and base is not None:
            old = base.read(change.old_path or path)
        statements = changed_statements(old, new, path)
        if statements:
            found[path] = statements
    if not touched:
        return None
    return Plan(found, os.path.join(folder, 'reach.coverage'), cfg.mutant_budget != 0)


@dataclass
class Measured:
    """What the reference run executed of the changed statements."""

    measured: bool  # whether coverage ran in the reference run
    # (path, first line) -> the node ids of the tests that ran it ('' among them: run
    # outside a test, at collection)
    tests: dict[tuple[str, int], set[str]] = field(default_factory=dict)

    def reached(self, statement: Statement) -> bool:
        return (statement.path, statement.line) in self.tests


def _numbers(numbits: bytes) -> list[int]:
    """coverage.py's ``numbits``: bit ``i`` of byte ``j`` set for the number ``8 * j + i``."""
    return [8 * at + bit for at, byte in enumerate(numbits) for bit in range(8)
            if byte & (1 << bit)]


def _contexts_by_line(data_file: str) -> dict[str, dict[int, list[str]]]:
    """file -> line -> contexts, read from coverage.py's data file (SQLite: its tables
    ``file``, ``context`` and ``line_bits``, the documented schema), so the gate itself
    imports nothing of coverage: it runs only in the reference run."""
    import sqlite3

    found: dict[str, dict[int, list[str]]] = {}
    with contextlib.closing(sqlite3.connect(f'file:{data_file}?mode=ro', uri=True)) as db:
        rows = db.execute('select file.path, context.context, line_bits.numbits from '
                          'line_bits join file on file.id = line_bits.file_id join context '
                          'on context.id = line_bits.context_id').fetchall()
    for path, context, numbits in rows:
        lines = found.setdefault(path, {})
        for number in _numbers(numbits):
            lines.setdefault(number, []).append(context)
    return found


def read_measurement(reach: Plan, root: str) -> Measured:
    """The coverage data the reference run wrote (its contexts: the tests' node ids). A
    plan that measures nothing (``Plan.measuring``) has its measurement at once: 0 of 0."""
    if not reach.measuring():
        return Measured(True)
    if not os.path.isfile(reach.data_file):
        return Measured(False)
    try:
        measured_files = _contexts_by_line(reach.data_file)
    except Exception:  # noqa: BLE001 -- sqlite3.Error: a data file coverage did not finish
        return Measured(False)
    real_root = os.path.realpath(root)
    by_path: dict[str, dict[int, list[str]]] = {}
    for measured, lines in measured_files.items():
        rel = os.path.relpath(os.path.realpath(measured), real_root).replace(os.sep, '/')
        by_path[rel] = lines
    found = Measured(True)
    for path, statements in reach.statements.items():
        lines = by_path.get(path, {})
        for statement in statements:
            tests: set[str] = set()
            ran = False
            for number in statement.lines():
                if number in lines:
                    ran = True
                    tests.update(lines[number])
            if ran:
                found.tests[(path, statement.line)] = tests
    return found


@dataclass
class MutantRun:
    mutant: Mutant
    tests: list[str]
    outcome: str  # 'killed', 'survived', 'not judged' (pytest found nothing to run)
    why: str = ''  # not judged: the end of pytest's output


@dataclass
class Mutants:
    runs: list[MutantRun] = field(default_factory=list)
    left: int = 0  # mutants not run: the budget was spent
    budget: float = 0.0
    why_none: str = ''

    def killed(self) -> int:
        return sum(1 for run in self.runs if run.outcome == 'killed')

    def judged(self) -> int:
        return sum(1 for run in self.runs if run.outcome in ('killed', 'survived'))


# (args for pytest) -> a started child with ``proc`` (a Popen) and ``wait() -> Run``
StartChild = Callable[[list[str]], object]


def _tests_of(tests: set[str], oracle_tests: Sequence[str]) -> list[str]:
    """The node ids of the oracle's tests among a statement's contexts (not the canaries
    the sealed run planted beside them); none (run at import only): the oracle's files."""
    files = set(oracle_tests)
    named = sorted(t for t in tests if t.split('::', 1)[0] in files)
    return named or list(oracle_tests)


def _pycache_of(full: str) -> list[str]:
    folder = os.path.join(os.path.dirname(full), '__pycache__')
    stem = os.path.basename(full)[:-3] + '.'
    try:
        return [os.path.join(folder, n) for n in os.listdir(folder) if n.startswith(stem)]
    except OSError:
        return []


def _forget_compiled(full: str) -> None:
    """Remove a module's compiled files: a mutant of the same size written in the same
    second as the original would otherwise be loaded from the original's."""
    for path in _pycache_of(full):
        try:
            os.remove(path)
        except OSError:
            pass


def run_mutants(reach: Plan, measured: Measured, root: str, oracle_tests: Sequence[str],
                cfg: Config, start: StartChild, budget: float,
                failing: Sequence[str] = ()) -> Mutants:
    """Run one mutant per reached changed statement within ``budget`` seconds. ``failing``:
    the oracle's tests that failed in the reference run, without any mutant (the machine's
    failures the base shares among them): left out of every mutant run, since their failure
    kills nothing."""
    result = Mutants(budget=budget)
    failing = sorted(set(failing))
    left_out = [a for nodeid in failing for a in ('--deselect', nodeid)]
    pending: list[tuple[Mutant, list[str]]] = []
    for path, statements in sorted(reach.statements.items()):
        full = os.path.join(root, *path.split('/'))
        try:
            with open(full, 'rb') as f:
                source = f.read()
        except OSError:
            continue
        for statement in statements:
            if not measured.reached(statement):
                continue
            mutant = mutate(source, path, statement.line)
            if mutant is None:
                continue
            tests = _tests_of(measured.tests[(path, statement.line)], oracle_tests)
            if tests and all(t in failing for t in tests):
                result.runs.append(MutantRun(mutant, tests, 'not judged', 'every test '
                                             'that runs it fails without it'))
                continue
            pending.append((mutant, [t for t in tests if t not in failing]))
    if budget <= 0:
        result.left = len(pending)
        result.why_none = 'mutant-budget = 0'
        return result
    ends = time.perf_counter() + budget
    for at, (mutant, tests) in enumerate(pending):
        remaining = ends - time.perf_counter()
        if remaining <= 0:
            result.left = len(pending) - at
            break
        full = os.path.join(root, *mutant.path.split('/'))
        with open(full, 'rb') as f:
            original = f.read()
        try:
            _forget_compiled(full)
            with open(full, 'wb') as f:
                f.write(mutant.source)
            outcome, why = _run_one(start, [*tests, *left_out], remaining)
        finally:
            with open(full, 'wb') as f:
                f.write(original)
            _forget_compiled(full)
        if outcome is None:  # the budget ended while it ran
            result.left = len(pending) - at
            break
        result.runs.append(MutantRun(mutant, tests, outcome, why))
    return result


def _run_one(start: StartChild, tests: list[str], timeout: float
             ) -> tuple[str | None, str]:
    child = start(['-x', *tests])
    proc = child.proc  # type: ignore[attr-defined]
    if proc is not None:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:  # the budget is spent: stopped, not judged
            proc.kill()
            proc.wait()
            child.wait()  # type: ignore[attr-defined]
            return None, ''
    try:
        run = child.wait()  # type: ignore[attr-defined]
    except Exception as exc:  # noqa: BLE001 -- an interpreter that cannot start
        return 'not judged', str(exc)
    if run.exit_code in (1, 2, 3):  # tests failed, or pytest stopped on an error
        return 'killed', ''
    if run.exit_code == 0:
        return 'survived', ''
    return 'not judged', f'pytest exited {run.exit_code}: {run.tail()[-300:]}'


@dataclass
class Judged:
    findings: list[Finding]
    lines: list[str]  # the review report's section
    note: str  # the line printed before the summary


def _ranges(numbers: Sequence[int]) -> str:
    spans: list[list[int]] = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ', '.join(str(a) if a == b else f'{a}-{b}' for a, b in spans)


def judge(reach: Plan, measured: Measured, mutants: Mutants | None, cfg: Config) -> Judged:
    """The findings (only with a required percent), the report's lines and the line."""
    statements = [s for found in reach.statements.values() for s in found]
    total = len(statements)
    reached = [s for s in statements if measured.reached(s)]
    runs = mutants.runs if mutants is not None else []
    killed = mutants.killed() if mutants is not None else 0
    judged = mutants.judged() if mutants is not None else 0
    note = LINE.format(reached=len(reached), total=total, killed=killed, run=judged)
    lines = [f'- {len(reached)} of {total} changed src lines (statements) run by the '
             'human-owned tests of the base revision']
    if not measured.measured:
        note += (' (not measured: the reference run wrote no coverage data; coverage.py is '
                 'not installed in the test environment?)')
        lines = ['- not measured: the reference run wrote no coverage data (coverage.py, a '
                 'dependency of oracle-guard, is not installed in the test environment, or '
                 'the run ended before it could write)']
    missed: dict[tuple[str, str], list[Statement]] = {}
    for statement in statements:
        if measured.measured and not measured.reached(statement):
            missed.setdefault((statement.path, statement.function), []).append(statement)
    if missed:
        lines.append('- changed lines no human-owned test runs, by function:')
        for (path, function), found in sorted(missed.items()):
            numbers = [n for s in found for n in s.lines()]
            lines.append(f'  - `{path}` `{function}`: line {_ranges(numbers)} '
                         f'(`{found[0].text[:60]}`)')
    if mutants is not None and mutants.why_none:
        lines.append(f'- no mutant run: {mutants.why_none}' + (
            f' ({mutants.left} mutant(s) of the reached changed lines)' if mutants.left else ''))
    elif mutants is not None:
        budget = f'{mutants.budget:.0f}s'
        lines.append(f'- mutants of the reached changed lines: {killed} of {judged} killed '
                     f'(budget {budget}' + (f'; {mutants.left} not run' if mutants.left
                                            else '') + ')')
        for run in runs:
            if run.outcome == 'survived':
                shown = ', '.join(f'`{t}`' for t in run.tests[:3]) + (
                    f' and {len(run.tests) - 3} more' if len(run.tests) > 3 else '')
                lines.append(f'  - survived: `{run.mutant.path}:{run.mutant.line}` '
                             f'{run.mutant.describe()} (ran {shown})')
            elif run.outcome == 'not judged':
                lines.append(f'  - not judged: `{run.mutant.path}:{run.mutant.line}` '
                             f'{run.mutant.describe()} ({" ".join(run.why.split())})')
    findings: list[Finding] = []
    if cfg.require_oracle_reach is not None and measured.measured and total and \
            100 * len(reached) < cfg.require_oracle_reach * total:
        first = next(s for s in statements if not measured.reached(s))
        findings.append(Finding(
            first.path, first.line, 1, 'OG744', f'the human-owned tests run {len(reached)} of '
            f'the {total} src lines this change adds or edits '
            f'({100 * len(reached) // total}%, require-oracle-reach = '
            f'{cfg.require_oracle_reach}): what they do not run, no test of the oracle '
            'judges', 'the lines are listed in the review report: a property that calls '
            'them needs a person\'s change to the oracle, or the change is elsewhere'))
    if cfg.require_mutants_killed is not None and judged and \
            100 * killed < cfg.require_mutants_killed * judged:
        survivor = next(run.mutant for run in runs if run.outcome == 'survived')
        findings.append(Finding(
            survivor.path, survivor.line, 1, 'OG745', f'the human-owned tests kill {killed} of '
            f'{judged} mutants of the lines this change adds or edits '
            f'({100 * killed // judged}%, require-mutants-killed = '
            f'{cfg.require_mutants_killed}); survived here: {survivor.describe()}',
            'the surviving mutants are listed in the review report: code the tests cannot '
            'tell from a changed copy is code they do not judge (inputs special-cased?)'))
    return Judged(findings, lines, note)


def judge_reference_run(runs: Any, child_of: Callable[..., object]) -> None:
    """After the reference run of ``runs`` (``gate/reference.py``'s ``ReferenceRuns``),
    before its tree is removed: read the measurement, run the mutants, add the findings,
    the report's section and the printed line. ``child_of`` is its ``PytestChild``."""
    reach = runs.reach_plan
    if reach is None or not runs.pending or runs.pending[3] is None:
        return
    tree, oracle_tests = runs.pending[0], runs.pending[1]
    timings = runs.timings
    with timings.step('oracle reach'):
        measured = read_measurement(reach, tree.root)
    mutants = None
    if measured.measured and runs.result.findings:
        # the oracle fails against the change already: a mutant would prove nothing
        mutants = Mutants(why_none='the reference run has findings')
    elif measured.measured:
        budget = runs.cfg.mutant_budget
        if budget is None:
            budget = timings.get('reference run').wall
        with timings.step('mutant runs'):
            mutants = run_mutants(reach, measured, tree.root, oracle_tests, runs.cfg,
                                  lambda args: child_of(tree, runs.python, runs.cfg.src, args,
                                                        runs.ctx.today, runs.switched_off),
                                  budget, failing=list(runs.failed))
    judged = judge(reach, measured, mutants, runs.cfg)
    runs.result.findings += judged.findings
    runs.result.report.append((TITLE, judged.lines))
    runs.ctx.notes.append(judged.note)
