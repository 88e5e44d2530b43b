"""The audit of a verified run (``oracle-guard ci``): did the run prove itself?

pytest's own exit code and report can be bent from inside the run (a conftest hook, a
patched pytest internal, an early exit). The audit instead compares three things the
run cannot edit after the fact:

* the **inventory**: every test function or method under the test roots that pytest's
  default naming rules collect, read from the files at HEAD;
* the **run record** the plugin wrote while the tests ran (``run_record.py``);
* the **ledger** of live freezes (and, with adoption, the baseline and environment
  conditions), the only accepted reasons for a test not to run or not to pass.

Codes (each finding names the test and the mechanism):

OG701 no run record: the plugin never ran in the test command
OG702 the run did not finish (pytest.exit, os._exit, a crash, SystemExit at start-up)
OG703 a test of the inventory was not collected
OG704 a test was deselected
OG705 a collected test never ran
OG706 a skip or xfail that no live freeze explains
OG707 a test reported as passed whose own function was never entered
OG708 the code that ran is not the code compiled from the test file
OG709 a test reported as passed although its call raised
OG710 a Hypothesis property that generated no example
OG711 a Hypothesis property weaker than its lock at call time
OG712 a module under the test roots shadows the package under ``src``
OG713 the pytest configuration tries to switch the plugin (or the JUnit report) off
OG714 a property called code other than what its imports bind (a name rebound, a function
      under ``src`` replaced by test code, a builtin replaced)
OG715 pytest loaded a plugin whose package metadata is committed in the repository
OG716 the oracle-guard plugin itself stopped the session (a ledger or silence problem, a
      lock it cannot read): its reason, never an early exit or a canary that did not run
OG717 code under ``src`` threw away a property's generated examples (it raised
      Hypothesis's ``UnsatisfiedAssumption``, or changed Hypothesis's drawing code in
      memory, rule 43 at run time)
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable

from oracle_guard.findings import Finding
from oracle_guard.gate.audit_context import AuditContext
from oracle_guard.gate.audit_context import SilenceOutcome
from oracle_guard.gate.inventory import first_line
from oracle_guard.gate.inventory import TestDef
from oracle_guard.gate.silence_explanation import adoption_explanation
from oracle_guard.gate.silence_explanation import exclusion_explanation
from oracle_guard.gate.silence_explanation import removed_note
from oracle_guard.gate.silence_explanation import silence_explanation
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import identity_of
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.scanner import test_functions


def _unnumbered(case: str) -> str:
    """``path::test_x[fast0]`` -> ``path::test_x[fast]``: the id before the number pytest
    appends to tell equal ids apart (``fast0``, ``fast_0``); the case itself otherwise."""
    if not case.endswith(']'):
        return case
    stem = case[:-1].rstrip('0123456789')
    if stem == case[:-1] or stem.endswith('['):
        return case
    return (stem[:-1] if stem.endswith('_') else stem) + ']'


# -- the audit -----------------------------------------------------------------------------
def _pair(where: object) -> tuple[str, int] | None:
    if isinstance(where, (list, tuple)) and len(where) == 2:
        return str(where[0]), where[1]  # type: ignore[return-value]
    return None


def _rel(path: str, roots: Iterable[str]) -> str:
    for root in roots:
        try:
            rel = os.path.relpath(_realpath(path), _realpath(root))
        except ValueError:
            continue
        if not rel.startswith('..'):
            return rel.replace(os.sep, '/')
    return path.replace(os.sep, '/')


# path -> os.path.realpath(path), while ``audit`` runs (None otherwise)
_REAL: dict[str, str] | None = None


def _realpath(path: str) -> str:
    """``os.path.realpath``, looked up once per path during an audit: every test of the
    record asks it of its file and of each root (it walks the file system each time)."""
    kept = _REAL
    if kept is None or type(path) is not str:
        return os.path.realpath(path)
    found = kept.get(path)
    if found is None:
        found = kept[path] = os.path.realpath(path)
    return found


def _silence_kind(report: dict, markers: tuple) -> str:  # type: ignore[type-arg]
    if report.get('unittest'):
        return str(report['unittest'])
    names = [m[0] for m in markers]
    if 'wasxfail' in report:
        return 'xfail'
    reason = str(report.get('reason', ''))
    if reason.startswith('Skipped: '):
        reason = reason[len('Skipped: '):]
    for name in ('skipif', 'skip'):
        marks = [m for m in markers if m[0] == name]
        # The marker skipped the test only when the skip carries its reason (or, without
        # one, pytest's "condition: ..."): an imperative skip in the body of a test that
        # also carries a marker is a skip of its own.
        if marks and (not reason or reason.startswith('condition: ') or any(
                reason in text or repr(reason)[1:-1] in text
                for m in marks for text in m[1:])):
            return name
    return 'skip'


class _Audit:
    def __init__(self, ctx: AuditContext) -> None:
        self.ctx = ctx
        self.record = ctx.record
        self.roots = sorted(self.record.roots | {ctx.cfg.root})
        self.findings: list[Finding] = []
        self._defined: dict[str, dict[str, tuple[int, int]]] = {}

    def add(self, path: str, line: int, code: str, message: str, hint: str) -> None:
        self.findings.append(Finding(path, line, 1, code, message, hint))

    def place(self, nodeid: str) -> tuple[str, int, str, str]:
        """(path, def line, identity, function identity) of a collected test."""
        item = self.record.items.get(nodeid)
        path = _rel(item['path'], self.roots) if item else nodeid.split('::', 1)[0]
        identity = identity_of(nodeid)
        test = self.ctx.inventory.get((path, function_of(identity)))
        return path, test.line if test else 1, identity, function_of(identity)

    # -- the run finished ------------------------------------------------------------------
    def finished(self) -> bool:
        record = self.record
        if record.empty:
            self.add('.', 1, 'OG701', 'the test command wrote no run record: the oracle-guard '
                     'plugin did not run (`-p no:oracle_guard`, PYTEST_DISABLE_PLUGIN_AUTOLOAD '
                     'without -p, or the command does not run pytest in this environment)',
                     'run pytest in the environment oracle-guard is installed in, and do not '
                     'disable the plugin; the run must prove itself')
            return False
        ok = True
        stops = list(dict.fromkeys(p for process in record.processes
                                   for p in process.guard_stopped))
        for problem in stops:
            ok = False
            self.add('.', 1, 'OG716', f'the oracle-guard plugin stopped the session before any '
                     f'test ran: {problem}', 'fix what it names (a silence without a freeze, a '
                     'ledger row); the guard stopped this run, not the tested code')
        attempts = sorted({a for p in record.processes for a in p.switched_off})
        for attempt in attempts:
            self.add('.', 1, 'OG713', f'{attempt}: the pull request tries to switch off '
                     'the oracle-guard run record (oracle-guard ci forced it on again)',
                     'remove it; a guarded repository runs its tests with the plugin')
        for process in record.processes:
            who = f'pytest process {process.file}' + (
                f' (worker {process.worker})' if process.worker else '')
            running = process.running
            path, line = ('.', 1)
            if running:
                path, line, _, _ = self.place(running)
            during = f' during {running}' if running else ''
            for stop in process.interrupted:
                ok = False
                if stops and str(stop.get('message', '')).startswith('oracle-guard: '):
                    continue  # the guard's own stop, named above (xdist re-raises it)
                what = stop.get('what')
                if what == 'Exit':
                    how = (f'pytest.exit({stop.get("message")!r}, returncode='
                           f'{stop.get("returncode")}) ended the session{during}')
                else:
                    how = f'{what} interrupted the session{during}'
                self.add(path, line, 'OG702', f'the run did not finish: {how}',
                         'remove the early exit; every test must run to its end')
            if process.interrupted or process.guard_stopped:
                continue
            if not process.finished:
                ok = False
                if not process.configured:
                    how = (f'{who} stopped during start-up, before pytest was configured '
                           '(SystemExit or os._exit in a conftest or plugin?)')
                elif running:
                    how = f'{who} ended while {running} was running (os._exit, a crash or a kill)'
                else:
                    how = f'{who} ended before the session finished (os._exit, SystemExit, a crash)'
                self.add(path, line, 'OG702', f'the run did not finish: {how}',
                         'remove the exit; the session must reach its end so the run is recorded')
            elif not process.loop_completed and not process.shouldfail:
                ok = False
                self.add(path, line, 'OG702', f'the run did not finish: the test loop of {who} '
                         f'was aborted{during}', 'let the session run every test')
        junit = self.ctx.junit_expected
        if ok and junit and not os.path.isfile(junit):
            ok = False
            self.add('.', 1, 'OG702', 'the run did not finish: pytest wrote no JUnit report '
                     '(-p no:junitxml, or the session ended early)',
                     'do not disable pytest\'s junitxml plugin')
        return ok

    # -- inventory -----------------------------------------------------------------------
    def inventory(self) -> None:
        ctx = self.ctx
        collected: dict[tuple[str, str], list[str]] = {}
        for nodeid, item in self.record.items.items():
            key = (_rel(item['path'], self.roots), function_of(identity_of(nodeid)))
            collected.setdefault(key, []).append(nodeid)
        deselected: dict[tuple[str, str], list[str]] = {}
        for nodeid, path in self.record.deselected.items():
            key = (_rel(path, self.roots), function_of(identity_of(nodeid)))
            deselected.setdefault(key, []).append(nodeid)
        skipped_modules, broken_modules = {}, {}
        for problem in self.record.collect_problems:
            module = problem['nodeid'].split('::', 1)[0]
            where = _rel(problem.get('path') or module, self.roots)
            if problem.get('outcome') == 'skipped':
                skipped_modules[where] = problem
            elif problem.get('outcome') == 'failed':
                broken_modules.setdefault(where, problem)
        # One module that cannot be imported is one finding that names why, not one a test
        # (dateutil without freezegun: 577 tests "not collected" after the plugin's stop).
        missing: dict[str, list[TestDef]] = {}
        for key, test in sorted(ctx.inventory.items()):
            path, identity = key
            lost = [nodeid for nodeid in sorted(deselected.get(key, ()))
                    if nodeid not in self.record.items  # deselected in one worker's view only
                    and exclusion_explanation(path, identity_of(nodeid), ctx) is None]
            if lost:
                # One finding a test function, however many of its cases were deselected
                # (click parametrizes a stress test 10,000 times).
                what = lost[0] if len(lost) == 1 else (
                    f'{len(lost)} cases of {path}::{identity} ({", ".join(lost[:3])}'
                    f'{", ..." if len(lost) > 3 else ""})')
                self.add(path, test.line, 'OG704',
                         f'{what} {"was" if len(lost) == 1 else "were"} deselected (addopts '
                         '--deselect, -k, -m or a pytest_collection_modifyitems hook)',
                         'a pull request runs every test; freeze it in the ledger if it '
                         'must not run')
            if key in collected or key in deselected:
                self.vanished_cases(path, identity, test,
                                    collected.get(key, []) + deselected.get(key, []))
                continue
            if path in skipped_modules:
                problem = skipped_modules[path]
                outcome = SilenceOutcome(f'{path}::{identity}', path, identity,
                                         'collection-skip', str(problem.get('reason', '')),
                                         _pair(problem.get('where')), (),
                                         bool(problem.get('imported')))
                if silence_explanation(outcome, ctx) is None:
                    self.add(path, test.line, 'OG706',
                             f'{path}::{identity} was skipped with its whole module at '
                             f'collection ({problem.get("reason")}){removed_note(outcome, ctx)}',
                             'a silence needs a live freeze in the ledger')
                continue
            if exclusion_explanation(path, identity, ctx) is None:
                missing.setdefault(path, []).append(test)
        for path, tests in sorted(missing.items()):
            broken = broken_modules.get(path)
            if broken is not None:
                reason = ' '.join(str(broken.get('reason', '')).split())[-200:]
                self.add(path, 1, 'OG703', f'{path} could not be collected, so its '
                         f'{len(tests)} test(s) did not run: {reason or "a collection error"}',
                         'make the module importable in the test environment (a missing '
                         'test dependency?); a pull request runs every test')
                continue
            for test in tests:
                self.add(path, test.line, 'OG703',
                         f'{path}::{test.identity} was not collected (--ignore, collect_ignore, '
                         'a narrower testpaths/python_files, a file name pytest does not '
                         'collect, __test__ = False, a collection hook, or it was not in '
                         'the run)',
                         'a pull request runs every test that pytest\'s default rules find '
                         'under the test roots; freeze it in the ledger if it must not run')

    def vanished_cases(self, path: str, identity: str, test: TestDef,
                       present: list[str]) -> None:
        """Rule 39b: a case the base revision's collection kept that is gone from this
        run (neither collected nor deselected) did not run, though other cases of its
        function did: the ids of a parametrization read from src/ are src/'s to move.
        Judged for a test file the pull request leaves as it is at the base."""
        base = self.ctx.base_collection
        if base is None or base.error:
            return
        source = base.sources.get(path)
        if source is None or source != self.ctx.head().read(path):
            return
        here = {f'{path}::{identity_of(nodeid)}' for nodeid in present}
        # pytest tells equal ids apart by a number: a case src adds beside `[fast]` with
        # the same id makes it `[fast0]` and `[fast1]`, and `[fast]` still runs.
        numbered = {_unnumbered(k) for k in here}
        function = f'{path}::{identity}'
        gone = sorted(k for k in base.kept_functions.get(function, ())
                      if k not in here and k != function and k not in numbered)
        if not gone:
            return
        what = gone[0] if len(gone) == 1 else (
            f'{len(gone)} cases of {function} ({", ".join(gone[:3])}'
            f'{", ..." if len(gone) > 3 else ""})')
        self.add(path, test.line, 'OG703',
                 f'{what} ran in the base revision\'s collection and '
                 f'{"is" if len(gone) == 1 else "are"} gone from this run (a parameter '
                 'renamed or dropped by src/)',
                 'a pull request runs every case the base ran; freeze it in the ledger if '
                 'it must not run')

    # -- outcomes ------------------------------------------------------------------------
    def outcomes(self, finished: bool) -> None:
        record = self.record
        stopped = any(p.shouldfail for p in record.processes)
        for nodeid in sorted(record.items):
            path, line, identity, _ = self.place(nodeid)
            outcome = record.outcome(nodeid)
            if outcome is None:
                if finished and not stopped and nodeid not in record.deselected:
                    self.add(path, line, 'OG705', f'{nodeid} was collected but never ran '
                             '(a pytest_runtestloop or pytest_runtest_protocol hook, or '
                             'session.shouldstop)', 'let the session run every collected test')
                continue
            self.hypothesis(nodeid, path, line)
            if outcome in ('skipped', 'xfailed'):
                self.silence(nodeid, path, line, identity)
            elif outcome in ('passed', 'xpassed'):
                self.execution(nodeid, path, line, identity)

    def silence(self, nodeid: str, path: str, line: int, identity: str) -> None:
        phases = self.record.reports[nodeid]
        report = next(r for r in (phases.get('setup'), phases.get('call'),
                                  phases.get('teardown'))
                      if r is not None and r['outcome'] == 'skipped')
        markers = tuple(tuple(m) for m in report.get('markers', ()))
        where = report.get('where')
        outcome = SilenceOutcome(
            nodeid, path, identity, _silence_kind(report, markers),
            str(report.get('reason', report.get('wasxfail', ''))),
            (where[0], where[1]) if where else None, markers,  # type: ignore[arg-type]
            bool(report.get('imported')),
        )
        if silence_explanation(outcome, self.ctx) is not None:
            return
        inherited = self.inherited(nodeid, path, identity)
        if inherited is not None and adoption_explanation(SilenceOutcome(
                nodeid, inherited[0], inherited[1], outcome.kind, outcome.reason,
                outcome.where, outcome.markers), self.ctx) is not None:
            return
        # A class-level silence of a class the test's class derives from (a base class
        # marked `skipif(not WINDOWS)` in psutil's tests/test_windows.py).
        name = function_of(identity).rsplit('::', 1)[-1]
        for filename, base in self.record.items.get(nodeid, {}).get('bases') or ():
            where = _rel(str(filename), self.roots)
            # Only the base class's own marker: the base's module-level entries are not
            # this test's (pyflakes' harness.py baselines its `skip = unittest.skip`
            # re-export, which would otherwise explain any skip of any TestCase subclass).
            if self.ctx.cfg.is_test_code(where) and adoption_explanation(SilenceOutcome(
                    nodeid, where, f'{base}::{name}', outcome.kind, outcome.reason,
                    None, outcome.markers), self.ctx, module_level=False) is not None:
                return
        verb = 'xfailed' if 'wasxfail' in report else 'skipped'
        self.add(path, line, 'OG706',
                 f'{nodeid} was {verb} ({outcome.kind} in {report["when"]}: '
                 f'{outcome.reason.strip()[:200] or "no reason"}) and no live freeze explains it'
                 f'{removed_note(outcome, self.ctx)}',
                 'fix the test, or freeze it with a ledger row (FZ id, owner, class, expiry) '
                 'in a change of its own')

    def inherited(self, nodeid: str, path: str, identity: str) -> tuple[str, str] | None:
        """(file, identity) of the test a class of ``path`` inherits from a class of another
        test file, as the plugin recorded it, when that file defines it at the line its code
        names and ``path`` does not define it: a silence decorating it is that file's."""
        found = self.record.items.get(nodeid, {}).get('inherited')
        if not isinstance(found, list) or len(found) != 3 or \
                (path, function_of(identity)) in self.ctx.inventory:
            return None
        filename, line, origin = found
        where = _rel(str(filename), self.roots)
        defined = self.defined(where).get(str(origin))
        if defined is None or not isinstance(line, int) or \
                not defined[0] <= line <= defined[1] or \
                str(origin).rsplit('::', 1)[-1] != function_of(identity).rsplit('::', 1)[-1]:
            return None
        params = identity[len(function_of(identity)):]
        return where, f'{origin}{params}'

    def defined(self, path: str) -> dict[str, tuple[int, int]]:
        """Identity -> (first decorator line, ``def`` line) of every test function a test
        file at HEAD defines, in any class (a mixin too)."""
        if path not in self._defined:
            source = self.ctx.head().read(path) if self.ctx.cfg.is_test_code(path) else None
            try:
                tree = parse_python(source, path) if source is not None else None
            except ScanError:
                tree = None
            self._defined[path] = {} if tree is None else {
                identity: (first_line(node), node.lineno)  # type: ignore[attr-defined]
                for identity, node in test_functions(tree)}
        return self._defined[path]

    def hypothesis(self, nodeid: str, path: str, line: int) -> None:
        """What the record saw of a Hypothesis property, whatever its outcome: the plugin
        may have failed it already, but the finding names the mechanism."""
        call = self.record.calls.get(nodeid)
        if call is None:
            return
        for problem in call.get('lock') or ():
            self.add(path, line, 'OG711', f'{nodeid}: at call time: {problem}', (
                'a person locks a new property: `oracle-guard lock`, then commit the lock')
                if ': unlocked ' in problem else 'restore the settings and strategies the '
                'lock records; loosening the lock is a change of its own')
        discarded = call.get('discarded_by_src') or {}
        if discarded:
            where = ', '.join(f'{at} ({n})' for at, n in discarded.items())
            self.add(path, line, 'OG717', f'{nodeid}: generated examples were thrown away by '
                     'code under src, or by an exception Hypothesis did not raise itself '
                     f'(UnsatisfiedAssumption, StopTest, BackendCannotProceed): {where}',
                     'production code must not discard the property\'s inputs: remove what '
                     'raises it; a project whose src ships Hypothesis strategies lists '
                     'hypothesis in src-test-imports')
        for change in call.get('drawing_replaced') or ():
            self.add(path, line, 'OG717', f'{nodeid}: {change}: the property\'s examples '
                     'were drawn past the judge of what code under src throws away',
                     'production code must not change how Hypothesis draws or runs test '
                     'cases: remove what replaces it')
        examples = call.get('examples')
        if examples is not None and not call.get('raised') and \
                examples - (call.get('explicit') or 0) <= 0:
            self.add(path, line, 'OG710', f'{nodeid}: the Hypothesis property generated no '
                     'example in this run', 'restore the generate phase and max_examples')

    def execution(self, nodeid: str, path: str, line: int, identity: str) -> None:
        item = self.record.items.get(nodeid, {})
        if item.get('type') not in ('Function', 'TestCaseFunction'):
            return  # doctests and other plugins' items have no function of their own
        call = self.record.calls.get(nodeid)
        test = self.ctx.inventory.get((path, function_of(identity)))
        if call is None:
            self.add(path, line, 'OG707', f'{nodeid} was reported as passed, but its own '
                     'function never ran: pytest never called it (a pytest_runtest_call or '
                     'pytest_runtest_protocol hook of its own)',
                     'remove what replaces pytest\'s test call')
            return
        if call.get('raised'):
            self.add(path, line, 'OG709', f'{nodeid} was reported as passed, but its call '
                     f'raised {call["raised"]} (a report rewritten by a hook)',
                     'remove the hook that rewrites test reports')
        for problem in call.get('replaced') or ():
            self.add(path, line, 'OG714', f'{nodeid}: at call time, {problem}',
                     'a property must call the code under src its imports bind: remove what '
                     'rebinds or replaces it (a fixture, a plugin, another test module)')
        own = call.get('own')
        if own is None:
            if test is not None:
                self.add(path, line, 'OG708', f'{nodeid}: the function pytest called is not '
                         f'defined in {path} (the test function was swapped)',
                         'remove what replaces the test function')
            return
        if not call.get('entered'):
            self.add(path, line, 'OG707', f'{nodeid} was reported as passed, but its own '
                     'function never ran (a patched Function.runtest, a pytest_pyfunc_call hook '
                     'returning early, or a wrapper that does not call it)', 'remove what bypasses the test body')
            return
        if test is not None:
            name, first = own
            spans = ((test.first_line, test.line), *test.alternatives)
            if name != function_of(identity).rsplit('::', 1)[-1] or \
                    not any(start <= first <= end for start, end in spans):
                self.add(path, line, 'OG708', f'{nodeid}: the code that ran is {name} at '
                         f'line {first}, not the test defined at line {test.line} '
                         '(__code__ or the function replaced)',
                         'remove the assignment that replaces the test')
                return
        verdict = self.record.code.get(nodeid)
        if verdict is not None and not verdict.get('same'):
            self.add(path, line, 'OG708', f'{nodeid}: the code that ran is not the code '
                     f'compiled from {path} (__code__ replaced at import time)',
                     'remove the assignment to __code__; the code reviewed must be the code run')

    # -- shadowing -----------------------------------------------------------------------
    def shadowing(self) -> None:
        cfg = self.ctx.cfg
        for name, where in sorted(self.record.modules.items()):
            expected = self.ctx.src_modules.get(name)
            if expected is None or cfg.is_src(where):
                continue
            self.add(where, 1, 'OG712', f'the tests imported {name!r} from {where}, not from '
                     f'{expected}: a module outside the src roots shadows the code under test',
                     f'rename or remove {posixpath.dirname(where) or where}; the tests must '
                     'import the code under src')


    def committed_plugins(self) -> None:
        root = os.path.realpath(self.ctx.cfg.root)
        for dist in sorted(self.record.plugin_dists):
            rel = os.path.relpath(dist, root).replace(os.sep, '/')
            if rel.startswith('..'):
                continue
            entry_points = f'{rel}/entry_points.txt'
            if entry_points in self.ctx.tracked:
                self.add(entry_points, 1, 'OG715', f'pytest loaded a plugin through '
                         f'{entry_points}, package metadata committed in the repository: '
                         'it runs like a conftest, unreviewed as one',
                         'remove the committed .dist-info/.egg-info; install plugins as '
                         'dependencies')


def audit(ctx: AuditContext) -> list[Finding]:
    global _REAL
    _REAL = {}
    try:
        run = _Audit(ctx)
        finished = run.finished()
        if ctx.record.empty:
            return run.findings
        run.inventory()
        run.outcomes(finished)
        run.shadowing()
        run.committed_plugins()
        return run.findings
    finally:
        _REAL = None
