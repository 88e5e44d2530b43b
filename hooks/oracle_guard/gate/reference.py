"""The reference run (rule 44) and the evidence for freezes and new tests (rules 48, 49).

The test command of ``oracle-guard ci`` runs the pull request's own tests, conftests and
``src/`` together, and its record is written by that process. The reference run takes the
tests from the task, not the patch (SWE-bench's rule): a fresh temporary tree holds the
**base revision's** human-owned oracle (the property files, the fixtures and manifest, the
data files under the tests roots, the domain lock, the ledger, the conftests and
``__init__.py`` files on the path of each test file, the test helper modules they import and
the modules outside the tests and src roots they import, the pytest configuration) and the
**pull request's** ``src/`` and other non-test files, all from git objects, never from the
working tree. None of the pull request's test code is on disk there. Its property tests run
in a fresh process of the test environment with the plugin on; every one must pass or be
explained by a freeze live at base.

The same tree is built twice more for evidence (rules 48, 49), with the pull request's own
tests placed in it (their conftests and ``__init__.py`` files still from the oracle side):

* a freeze row the pull request adds for a flaky class is rerun ``flaky-reruns`` times
  against the pull request's ``src/``: no pass in any run means broken, not flaky;
* tests the pull request adds or changes, when it also changes ``src/``, run against the
  base revision's ``src/``: those that pass there are listed ("passes without your
  change"), and are a finding with ``require-fail-to-pass = true``.

With an approval of the oracle change (rule 47) the oracle side is the pull request.

Codes:

OG730 a base oracle test failed against the pull request's src/ (every item of a property
      file: inherited tests, doctests, a state machine's TestCase, a plugin's items)
OG731 a base oracle test errored (set-up, teardown, or its module could not be collected)
OG732 a base oracle test was skipped or xfailed and no freeze live at base explains it
OG733 a base oracle test did not run (not collected, deselected, never started)
OG734 the reference run did not complete (no record, a crash, an early exit), its tree
      (or the tree of the freeze reruns or of the new-test run) was changed while it
      ran or was built from other bytes than the blobs listed before the install step,
      a run mechanism the audit names (OG707-OG717) was seen in it, or pytest exited
      non-zero while the run (canaries taken out) reported no failed test of the oracle
OG735 a freeze added for a flaky test whose test passed in none of the reruns
OG736 a test the pull request adds or changes passes without its src/ change
      (only with ``require-fail-to-pass = true``; otherwise listed in the review report)
OG737 (``gate/sealed.py``) a file of a tree, other than src, that its run compiled from
      other bytes than the gate wrote (``compiled_elsewhere``)
"""
from __future__ import annotations

import ast
import atexit
import datetime
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from oracle_guard.config import Config
from oracle_guard.config import load_config
from oracle_guard.config import under_any
from oracle_guard.context import RunContext
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.gate import audit
from oracle_guard.gate import audit_context
from oracle_guard.gate import inventory as gate_inventory
from oracle_guard.gate import reach
from oracle_guard.gate import stream
from oracle_guard.gate.filter_rates import judge_rates
from oracle_guard.gate.processes import Reaper
from oracle_guard.gate.reference_process import PytestChild
from oracle_guard.gate.reference_process import Run
from oracle_guard.gate.reference_process import run_pytest
from oracle_guard.gate.reference_tree import Approved
from oracle_guard.gate.reference_tree import BuildProducts
from oracle_guard.gate.reference_tree import Side
from oracle_guard.gate.reference_tree import Tree
from oracle_guard.gate.reference_tree import TreeBuilder
from oracle_guard.gate.sealed import compiled_from_other_bytes
from oracle_guard.gate.timings import children_cpu
from oracle_guard.gate.timings import Timings
from oracle_guard.gate.timings import watch_exit
from oracle_guard.oracle.ledger import FreezeLedger
from oracle_guard.oracle.ledger import FREEZABLE
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import identity_of
from oracle_guard.oracle.ledger import read_ledger
from oracle_guard.reading.scanner import is_test_module
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.scanner import test_functions
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.runtime.run_record import RunRecord

# Freeze classes whose freeze claims a flake, so a rerun can earn it (rule 48). The
# contract's "flaky" is these two; a literal `flaky` row is refused by check-freeze-ledger
# and, should one get this far, is rerun too.
FLAKY_CLASSES = (*FREEZABLE, 'flaky')
# The audit's codes that this module judges itself for the base oracle's tests.
_OWN_JUDGEMENT = {'OG703': 'OG733', 'OG704': 'OG733', 'OG705': 'OG733', 'OG706': 'OG732'}
_REFERENCE_HINT = ('the tests of this run are the base revision\'s oracle, not your '
                   'test files: fix src/ so they pass (a change to the oracle itself '
                   'needs a person\'s approval)')


@dataclass
class ReferenceResult:
    """What the three runs found, and what the review report says about them."""

    findings: list[Finding] = field(default_factory=list)
    report: list[tuple[str, list[str]]] = field(default_factory=list)


def _nodeids_by_test(record: RunRecord, root: str) -> dict[tuple[str, str], list[str]]:
    found: dict[tuple[str, str], list[str]] = {}
    for nodeid, item in record.items.items():
        path = os.path.relpath(os.path.realpath(item['path']), os.path.realpath(root))
        key = (path.replace(os.sep, '/'), function_of(identity_of(nodeid)))
        found.setdefault(key, []).append(nodeid)
    return found


def _failed_phase(record: RunRecord, nodeid: str) -> str:
    phases = record.reports.get(nodeid, {})
    for when in ('setup', 'call', 'teardown'):
        report = phases.get(when)
        if report is not None and report['outcome'] == 'failed':
            return when
    return 'call'


def test_outcome(record: RunRecord, nodeids: Sequence[str]) -> str:
    """One test function's outcome over its cases: failed, error, skipped, passed or
    'not run'."""
    if not nodeids:
        return 'not run'
    outcomes = [record.outcome(n) for n in nodeids]
    if 'failed' in outcomes:
        failed = [n for n, o in zip(nodeids, outcomes) if o == 'failed']
        return 'failed' if any(_failed_phase(record, n) == 'call' for n in failed) else 'error'
    if None in outcomes:
        return 'not run'
    if any(o in ('skipped', 'xfailed') for o in outcomes):
        return 'skipped'
    return 'passed'


# -- the reference run (rule 44) --------------------------------------------------------------
def _last_line(text: object) -> str:
    lines = [line.strip() for line in str(text or '').splitlines() if line.strip()]
    return lines[-1][:200] if lines else 'no reason given'


def _describe_failure(record: RunRecord, nodeid: str) -> str:
    """What the failed test raised, as the plugin saw its call, else the first line of
    the failed report's crash message (a doctest, a plugin's item)."""
    raised = (record.calls.get(nodeid) or {}).get('raised')
    if raised:
        return f'it raised {raised}'
    crash = (record.reports.get(nodeid, {}).get(_failed_phase(record, nodeid)) or {}).get('crash')
    first = str(crash or '').strip().splitlines()
    return first[0][:200] if first else 'see the test output above'


def _item_path(record: RunRecord, nodeid: str, root: str) -> str:
    """The repository path of a run's item (its node id's file when it was never
    collected, as a report of a session's teardown may be)."""
    item = record.items.get(nodeid)
    if item is None:
        return nodeid.split('::', 1)[0]
    path = os.path.relpath(os.path.realpath(item['path']), os.path.realpath(root))
    return path.replace(os.sep, '/')


def _unexplained_exit(run: Run, elsewhere: Sequence[str]) -> list[Finding]:
    """OG734: the reference run exited non-zero, and nothing it reported says why (rule
    44). Its must-fail canaries always make pytest's status 1: a 1 is theirs when the
    record, canaries taken out, holds no failed item and no module that failed to be
    collected; the sealed run's findings (``run.sealed``) say when a canary did not."""
    record = run.record
    failed_collection = [p for p in record.collect_problems if p.get('outcome') == 'failed']
    if run.exit_code == 0 or (run.exit_code == 1 and not elsewhere and not failed_collection):
        return []
    what = [*elsewhere, *[str(p.get('nodeid') or p.get('path') or '?')
                          for p in failed_collection]]
    more = f' and {len(what) - 5} more' if len(what) > 5 else ''
    told = f': {", ".join(what[:5])}{more} failed, outside the base oracle\'s test files' \
        if what else ''
    return [Finding('.', 1, 1, 'OG734', f'reference run: pytest exited {run.exit_code} but '
                    f'reported no failure of a test of the base oracle{told} '
                    f'({_last_line(run.tail())})',
                    'the reference run must pass: look at its output above for what ended '
                    'it (a conftest, a plugin, an error outside the tests)')]


def judge_reference(run: Run, tree: Tree, cfg: Config, oracle: TreeView, code: TreeView,
                    inventory: dict[tuple[str, str], gate_inventory.TestDef],
                    ledger: FreezeLedger | None, today: datetime.date,
                    base_collection: audit_context.BaseCollection | None = None,
                    src_gone: frozenset[str] = frozenset(),
                    failed: dict[str, tuple[Finding, str]] | None = None) -> list[Finding]:
    """The reference run's findings; ``failed`` gets the test of each OG730/OG731 finding
    on one test (its node id -> the finding and the phase that failed)."""
    record = run.record
    findings: list[Finding] = []
    if record.empty:
        return [Finding('.', 1, 1, 'OG734', 'the reference run left no record: pytest did not '
                        f'start in the test environment (exit {run.exit_code}): '
                        f'{run.tail() or "no output"}',
                        'run the gate with the test environment\'s interpreter '
                        '(--test-python) with oracle-guard and the project\'s test '
                        'dependencies installed')]
    ctx = audit_context.AuditContext(cfg=cfg.replace(root=tree.root), record=record,
                             inventory=inventory, ledger=ledger, today=today,
                             src_modules=gate_inventory.src_modules(code, cfg), view=oracle,
                             base_collection=base_collection, src_gone=src_gone)
    broken_modules = {}
    for problem in record.collect_problems:
        if problem.get('outcome') == 'failed':
            path = problem.get('path') or problem['nodeid'].split('::', 1)[0]
            rel = os.path.relpath(os.path.realpath(os.path.join(tree.root, path)),
                                  os.path.realpath(tree.root))
            broken_modules[rel.replace(os.sep, '/')] = problem
    for path, problem in sorted(broken_modules.items()):
        # Every oracle file, inventoried tests or not (a module of a state machine's
        # TestCase alone, rule 44).
        if not cfg.is_property(path):
            continue
        findings.append(Finding(path, 1, 1, 'OG731', f'reference run: {path}, a test file of '
                                'the base oracle, could not be collected against your src/ '
                                f'({_last_line(problem.get("reason"))})',
                                _REFERENCE_HINT))
    for finding in audit.audit(ctx):
        code_ = _OWN_JUDGEMENT.get(finding.code)
        if finding.path in broken_modules and code_ == 'OG733':
            continue  # said once, as OG731
        if code_ is None:  # a mechanism of the run (the lock check too): not the oracle's
            findings.append(Finding(finding.path, finding.line, 1, 'OG734',
                                    f'reference run: {finding.code} {finding.message}',
                                    finding.hint))
        else:
            findings.append(Finding(finding.path, finding.line, 1, code_,
                                    f'reference run: {finding.message}', _REFERENCE_HINT))
    # Every failed item of an oracle file, known to the inventory or not (an inherited test,
    # a doctest, a state machine's TestCase, a plugin's item: rule 44); no canary is here.
    elsewhere = []
    for nodeid in stream.failed_tests(record):
        path = _item_path(record, nodeid, tree.root)
        if not cfg.is_property(path):
            elsewhere.append(nodeid)
            continue
        test = inventory.get((path, function_of(identity_of(nodeid))))
        line = test.line if test is not None else 1
        phase = _failed_phase(record, nodeid)
        if phase == 'call' and not (record.calls.get(nodeid) or {}).get('lock'):
            findings.append(Finding(path, line, 1, 'OG730', f'reference run: '
                                    f'{nodeid}, a test of the base oracle, failed against '
                                    f'your src/ ({_describe_failure(record, nodeid)})',
                                    _REFERENCE_HINT))
        elif phase != 'call':  # (failed by the lock check at call: said as OG734 above)
            findings.append(Finding(path, line, 1, 'OG731', f'reference run: '
                                    f'{nodeid}, a test of the base oracle, errored in '
                                    f'{phase} against your src/ '
                                    f'({_describe_failure(record, nodeid)})',
                                    _REFERENCE_HINT))
        else:
            continue
        if failed is not None:
            failed[nodeid] = (findings[-1], phase)
    if not findings and not run.sealed:
        findings += _unexplained_exit(run, elsewhere)
    return findings


# -- evidence: freezes (rule 48) and new tests (rule 49) --------------------------------------
def added_flaky_freezes(base: FreezeLedger | None, head: FreezeLedger | None) -> list:
    """Ledger rows of a flaky class the pull request adds (a new id, or an id that now
    names another test)."""
    if head is None:
        return []
    old = {row.id: row.nodeid for row in (base.rows if base else [])}
    return [row for row in head.rows if row.freeze_class in FLAKY_CLASSES and row.nodeid
            and old.get(row.id) != row.nodeid]


def changed_tests(base: TreeView | None, head: TreeView, paths: Iterable[str]
                  ) -> dict[str, list[str]]:
    """Test file -> identities the pull request adds or whose body it changes."""
    def functions(view: TreeView | None, path: str) -> dict[str, str]:
        source = view.read(path) if view is not None else None
        if source is None:
            return {}
        try:
            tree = parse_python(source, path)
        except ScanError:
            return {}
        return {identity: ast.dump(node) for identity, node in test_functions(tree)}

    found: dict[str, list[str]] = {}
    for path in sorted(paths):
        before, after = functions(base, path), functions(head, path)
        inventory = {t.identity
                     for t in gate_inventory.file_inventory(head.read(path) or b'', path)}
        new = [i for i, body in after.items() if before.get(i) != body and i in inventory]
        if new:
            found[path] = new
    return found


def _code_list(paths: Sequence[str], limit: int = 0) -> str:
    shown = [f'`{p}`' for p in (paths[:limit] if limit else paths)]
    more = len(paths) - len(shown)
    return ', '.join(shown) + (f' and {more} more' if more > 0 else '')


class ReferenceRuns:
    def __init__(self, ctx: RunContext, python: str, approved: bool,
                 approved_files: Iterable[str] | None = None,
                 timings: Timings | None = None, switched_off: Sequence[str] = ()) -> None:
        self.ctx = ctx
        self.python = python
        # The plugins the test command switches off (``-p no:NAME``), off in every run here.
        self.switched_off = tuple(switched_off)
        changes = ctx.changes
        assert changes.base is not None and ctx.judged is not None
        # Both sides listed now, before the install step, and read through that listing
        # from here on (rule 44): the judge reads the ledgers, the baseline, the test code
        # and the src listing after the test command, when git may give other bytes.
        self.base = Side(TreeView(ctx.cfg.root, changes.base), pin=True)
        self.head = Side(ctx.judged, pin=True)
        self.base_view = self.base.view
        self.head_view = self.head.view
        # An approval takes the approved files from the pull request (all of its oracle
        # when no list is given), every other oracle file still from the base.
        self.oracle = self.base
        if approved:
            self.oracle = self.head if approved_files is None else \
                Approved(self.base, self.head, approved_files)
        self.approved = approved
        # The oracle side's own configuration says where its files are; the tests roots
        # of both sides keep the pull request's test code out.
        oracle_cfg = load_config(ctx.cfg.root, self.oracle.view_of('pyproject.toml'))
        self.cfg = oracle_cfg.replace(tests=tuple(dict.fromkeys([*oracle_cfg.tests,
                                                                 *ctx.cfg.tests])),
                                      src=ctx.cfg.src)
        self.result = ReferenceResult()
        self.pending: tuple = ()  # type: ignore[type-arg]  # the started reference run
        self.folder = ''  # made when the first tree is built (after the install step)
        self.timings = timings if timings is not None else Timings()
        self.watcher: threading.Thread | None = None
        # The base revision's own collection (rule 39b), when the gate ran one.
        self.base_collection: audit_context.BaseCollection | None = None
        # Kills what an evidence run leaves running before the next one (OG718).
        self.reaper: Reaper | None = None
        self.reach_plan: reach.Plan | None = None  # the reference run's measurement
        # The reference run's OG730/OG731 findings on one test: node id -> (finding, phase).
        self.failed: dict[str, tuple[Finding, str]] = {}

    def close(self) -> None:
        child = self.pending[3] if self.pending else None
        if child is not None:
            if child.proc is not None and child.proc.poll() is None:
                child.proc.kill()
                child.proc.wait()
            child.close()
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
        atexit.unregister(self.close)

    def pid(self) -> int | None:
        """The reference run's pytest process, while it runs."""
        child = self.pending[3] if self.pending else None
        return child.proc.pid if child is not None and child.proc is not None else None

    def forged_findings(self) -> list[Finding]:
        """OG734: git gave the judge of these runs other bytes for a file than the blob its
        revision listed before the install step (``ListedView``): what it judged with is
        not the revision's."""
        shown = [f'`{path}` ({name} `{side.view.label}`)'
                 for name, side in (('base', self.base), ('the pull request', self.head))
                 for path in sorted(set(getattr(side.view, 'forged', ())))]
        if not shown:
            return []
        more = f' and {len(shown) - 5} more' if len(shown) > 5 else ''
        return [Finding('.', 1, 1, 'OG734', 'reference and evidence runs: git gave other bytes '
                        f'for {", ".join(shown[:5])}{more} than the blobs the revisions named '
                        'when the gate listed them before the install step, when the gate read '
                        'them to judge the runs (the ledger, the baseline, the test code): '
                        'git\'s objects were changed',
                        'nothing may write into .git/objects (or its alternates): remove what '
                        'does from the install step and the tests')]

    def ledger(self, side: Side) -> FreezeLedger | None:
        try:
            return read_ledger(side.view_of(self.cfg.ledger), self.cfg.ledger)
        except ConfigError:
            return None  # check-freeze-ledger has reported it

    def build(self, name: str, code: Side, tests: Iterable[str] = (),
              tests_side: Side | None = None) -> Tree:
        builder = TreeBuilder(self.cfg, self.oracle, code)
        builder.add_code()
        builder.add_build_products(BuildProducts(self.cfg, code))
        builder.add_oracle_documents(tests_side or self.oracle)
        builder.add_pytest_config()
        builder.add_tests([p for p in self.oracle.files if self.cfg.is_property(p)], self.oracle)
        if tests_side is not None:
            builder.add_tests(tests, tests_side)
        if not self.folder:
            self.folder = tempfile.mkdtemp(prefix='oracle-guard-reference-')
        root = os.path.join(self.folder, name)
        os.mkdir(root)
        return builder.write(root)

    def files_section(self, tree: Tree) -> list[str]:
        """The files of a tree by the revision they were read from (base or head)."""
        lines = []
        for rev, paths in tree.by_side().items():
            side = f'base `{rev}`' if rev == self.base.label else f'the pull request `{rev}`'
            if rev == TreeView(self.cfg.root, None).label:
                side = 'the checkout, untracked and git-ignored (built by the install)'
            src = [p for p in paths if self.cfg.is_src(p)]
            rest = [p for p in paths if not self.cfg.is_src(p)]
            if src:
                lines.append(f'- src from {side}: {_code_list(src, 40)}')
            if rest:
                lines.append(f'- other files from {side}: {_code_list(rest, 60)}')
        lines += [f'- not placed: {why}' for why in tree.skipped]
        return lines

    # -- rule 44 -----------------------------------------------------------------------
    def start_reference(self) -> None:
        """Build the tree and start its pytest process; ``finish_reference`` judges it."""
        with self.timings.step('reference tree build'):
            tree = self.build('reference', self.head)
            oracle_tests = sorted(p for p in tree.sources if self.cfg.is_property(p)
                                  and is_test_module(p) and not gate_inventory.skipped_folder(p))
            inventory: dict[tuple[str, str], gate_inventory.TestDef] = {}
            for path in oracle_tests:
                source = self.oracle.view_of(path).read(path)
                for test in gate_inventory.file_inventory(source or b'', path):
                    inventory[(path, test.identity)] = test
        child = None
        # A property file the static inventory finds no test in (a state machine's
        # TestCase, doctests) runs too: its items are judged all the same (rule 44).
        if oracle_tests:
            step = self.timings.get('reference run')
            step.started = time.perf_counter()
            # What of the change it runs is measured (gate/reach.py)
            self.reach_plan = reach.plan(self.ctx.changes, self.base_view, self.head_view,
                                         self.cfg, self.folder)
            child = PytestChild(tree, self.python, self.cfg.src, oracle_tests, self.ctx.today,
                                self.switched_off, sealed=True, measure=self.reach_plan
                                if self.reach_plan is not None and self.reach_plan.measuring()
                                else None)
            if child.proc is not None:
                self.watcher = watch_exit(child.proc.pid, step)
                # The test command, which runs the pull request's test code, starts only
                # once this run has collected: the oracle's modules (conftests, helpers,
                # canaries) are compiled from the bytes written above by then, and a test
                # command that rewrites the tree changes nothing they run (rule 44). The
                # collection is the one the plugin reports on its own connection, which
                # src in that process cannot open (rule 45: gate/stream.py).
                proc, listener = child.proc, child.listener
                assert listener is not None
                listener.wait_for_collection(proc.pid, lambda: proc.poll() is None)
        self.pending = (tree, oracle_tests, inventory, child)

    def finish_reference(self) -> None:
        tree, oracle_tests, inventory, child = self.pending
        lines = self.files_section(tree)
        if child is None:
            self.result.report.append(('Reference run', [
                '- no test of the oracle\'s properties to run (check-properties-present '
                'judges that)', *lines]))
            return
        step = self.timings.get('reference run')
        cpu, children = time.process_time(), children_cpu()
        rates: list[Finding] = []
        try:
            run = child.wait()
            found = tampered(tree, self.cfg) + compiled_elsewhere(run, tree, self.cfg) + \
                run.sealed + judge_reference(run, tree, self.cfg, self.oracle.view,
                                             self.head.view, inventory,
                                             self.ledger(self.oracle), self.ctx.today,
                                             self.base_collection,
                                             gate_inventory.src_gone(self.base_view,
                                                                     self.head_view, self.cfg),
                                             self.failed)
            rates = judge_rates(run.record, tree.root, self.cfg, inventory)  # rule 55
            found += rates
        finally:
            # Its CPU is counted when it is reaped; its wall time ends when it exited.
            if self.watcher is not None:
                self.watcher.join(timeout=1.0)
            if step.ended < step.started:
                step.ended = time.perf_counter()
            step.wall = step.ended - step.started
            step.cpu += time.process_time() - cpu
            step.children += children_cpu() - children
            step.ran = True
        self.result.findings += found
        verdict = (f'{len(inventory)} oracle test(s) of {len(oracle_tests)} file(s): '
                   + (f'{len(found)} finding(s)' if found else 'all passed or frozen at base'))
        self.result.report.append(('Reference run', [
            f'- {verdict}', *(f'- {finding.message}' for finding in rates), *lines]))

    def reference(self) -> None:
        self.start_reference()
        self.finish_reference()

    def shared_failures(self, test_run: RunRecord | None) -> None:
        """A base oracle test the reference run failed that the test command failed in the
        same phase and that fails so against the base revision's own src/ too is the test
        environment's (a locale or a service the machine lacks), not the change's: no
        finding (SPEC section 10); the test command's exit status reports it, and the
        review report lists it."""
        same = sorted(n for n, (_, phase) in self.failed.items() if test_run is not None
                      and test_run.outcome(n) == 'failed' and _failed_phase(test_run, n) == phase)
        if not same:
            return
        tree = self.build('base-rerun', self.base)
        run = run_pytest(tree, self.python, self.cfg.src, same, self.ctx.today,
                         self.switched_off, reaper=self.reaper, leftovers=self.result.findings)
        self.result.findings += tampered(tree, self.cfg, 'base rerun', 'the tree of the base '
                                         'rerun') + compiled_elsewhere(run, tree, self.cfg,
                                                                       'base rerun')
        shared = [n for n in same if run.record.outcome(n) == 'failed' and
                  _failed_phase(run.record, n) == self.failed[n][1]]
        said = {id(self.failed[n][0]) for n in shared}
        self.result.findings = [f for f in self.result.findings if id(f) not in said]
        lines = [f'- `{n}`: {self.failed[n][1]} failed against the base src/ too, and in the '
                 f'test command: the environment\'s ({_describe_failure(run.record, n)})'
                 for n in shared[:40]]
        if len(shared) > 40:
            lines.append(f'- and {len(shared) - 40} more')
        if not shared:
            lines.append(f'- none of the {len(same)} failing oracle test(s) fails against the '
                         'base src/')
        self.result.report.append(('Oracle failures the base revision shares',
                                   lines + self.files_section(tree)))

    # -- rule 48 -----------------------------------------------------------------------
    def freezes(self) -> None:
        rows = added_flaky_freezes(self.ledger(self.base), self.ledger(self.head))
        if not rows:
            return
        files = sorted({row.nodeid.split('::', 1)[0] for row in rows})
        tree = self.build('freezes', self.head, files, self.head)
        reruns = self.cfg.flaky_reruns
        outcomes: dict[str, list[str]] = {row.id: [] for row in rows}
        for _ in range(reruns):
            run = run_pytest(tree, self.python, self.cfg.src,
                             sorted({row.nodeid for row in rows}), self.ctx.today,
                             ('oracle_guard.runtime.unfrozen', *self.switched_off), self.reaper,
                             self.result.findings)
            # The same digests as the reference tree's (rule 44): a rerun whose tree was
            # rewritten proves nothing about the freeze.
            for finding in tampered(tree, self.cfg, 'freeze reruns (rule 48)',
                                    'the tree of the reruns') + compiled_elsewhere(
                                        run, tree, self.cfg, 'freeze reruns (rule 48)'):
                if finding not in self.result.findings:
                    self.result.findings.append(finding)
            by_test = _nodeids_by_test(run.record, tree.root)
            for row in rows:
                path = row.nodeid.split('::', 1)[0]
                outcomes[row.id].append(test_outcome(
                    run.record, by_test.get((path, function_of(row.identity)), [])))
        lines = []
        for row in rows:
            seen = outcomes[row.id]
            summary = ', '.join(seen)
            passed, failed = seen.count('passed'), seen.count('failed') + seen.count('error')
            where = f'{self.cfg.ledger} {row.id} ({row.nodeid}, {row.freeze_class})'
            if not passed:
                self.result.findings.append(Finding(
                    self.cfg.ledger, row.line_of('id'), 1, 'OG735',
                    f'{row.id} freezes {row.nodeid} as {row.freeze_class}, but it passed in '
                    f'none of {reruns} reruns against your src/ ({summary}): broken, not '
                    'flaky', 'fix the test or the code; a flaky freeze needs a run where it '
                    'passed'))
                lines.append(f'- {where}: passed 0 of {reruns}: {summary} (broken, not flaky)')
            elif failed:
                lines.append(f'- {where}: passed {passed} and failed {failed} of {reruns} '
                             f'reruns: {summary} (a measured flip)')
            else:
                lines.append(f'- {where}: passed {passed} of {reruns} reruns: {summary} '
                             '(no flip seen)')
        self.result.report.append(('Freeze evidence (reruns against the pull request\'s src)',
                                   lines + self.files_section(tree)))

    # -- rule 49 -----------------------------------------------------------------------
    def new_tests(self) -> None:
        changes = self.ctx.changes
        touched = changes.touched()
        if not any(self.ctx.cfg.is_src(p) for p in touched):
            return  # no src/ change: nothing a new test could be testing
        candidates = [p for p in changes.added_or_modified() if is_test_module(p) and
                      (under_any(p, self.cfg.tests) or self.cfg.is_property(p))]
        tests = changed_tests(self.base_view, self.head_view, candidates)
        if not tests:
            return
        tree = self.build('new-tests', self.base, sorted(tests), self.head)
        nodeids = [f'{path}::{identity}' for path, identities in sorted(tests.items())
                   for identity in identities]
        run = run_pytest(tree, self.python, self.cfg.src, nodeids, self.ctx.today,
                         self.switched_off, reaper=self.reaper, leftovers=self.result.findings)
        self.result.findings += tampered(tree, self.cfg, 'new-test run (rule 49)',
                                         'the tree of the new tests') + compiled_elsewhere(
                                             run, tree, self.cfg, 'new-test run (rule 49)')
        by_test = _nodeids_by_test(run.record, tree.root)
        passing = [n for n in nodeids if test_outcome(
            run.record, by_test.get((n.split('::', 1)[0], n.split('::', 1)[1]), [])) ==
            'passed']
        lines = [f'- `{n}`: passes without your change' for n in passing]
        if self.cfg.require_fail_to_pass:
            inventory = gate_inventory.static_inventory(
                self.head_view, self.cfg.replace(tests=tuple(sorted(tests)), properties=()))
            for nodeid in passing:
                path, identity = nodeid.split('::', 1)
                test = inventory.get((path, identity))
                self.result.findings.append(Finding(
                    path, test.line if test else 1, 1, 'OG736',
                    f'{nodeid} passes against the base revision\'s src/ too: it does not test '
                    'your change (require-fail-to-pass = true)',
                    'make the test fail on the old code (assert what the change fixes)'))
        if run.record.empty:
            lines.append(f'- the run against the base src did not start: {run.tail()}')
        elif not passing:
            lines.append(f'- none of the {len(nodeids)} new or changed test(s) passes '
                         'without your change')
        self.result.report.append(('New tests against the base src', lines +
                                   self.files_section(tree)))


def tampered(tree: Tree, cfg: Config, run: str = 'reference run',
             name: str = 'the reference tree') -> list[Finding]:
    """OG734: a file of the tree, other than src, that is not what the gate wrote when
    the run ended (the test command ran beside the reference run, as the same user; an
    evidence run runs the pull request's own tests in its tree)."""
    found = []
    if tree.forged:
        shown = _code_list(sorted(tree.forged), 5)
        found.append(Finding('.', 1, 1, 'OG734', f'{run}: git gave other bytes for {shown} '
                             'than the blobs the revisions named when the gate listed them '
                             'before the install step: git\'s objects were changed',
                             'nothing may write into .git/objects (or its alternates): '
                             'remove what does from the install step and the tests'))
    changed = tree.changed(p for p in tree.sources if not cfg.is_src(p))
    if not changed:
        return found
    shown = ', '.join(changed[:5]) + (f' and {len(changed) - 5} more' if len(changed) > 5
                                       else '')
    return found + [Finding('.', 1, 1, 'OG734', f'{run}: {name} was changed while it ran: '
                            f'{shown}', 'nothing may write into the gate\'s reference tree: '
                            'remove what does (a test or conftest that looks for it)')]


def compiled_elsewhere(run: Run, tree: Tree, cfg: Config,
                       name: str = 'reference run') -> list[Finding]:
    """OG737: a file of the tree, other than src, that the run compiled from other bytes
    than the gate wrote (rewritten before its compile, put back after: ``tampered``
    cannot see it)."""
    expected = {p: d for p, d in tree.digests.items() if not cfg.is_src(p)}
    return compiled_from_other_bytes(run.record, tree.root, expected, f'{name}: ')


def prepare_reference_runs(ctx: RunContext, python: str, approved: bool = False,
                           approved_files: Iterable[str] | None = None,
                           timings: Timings | None = None,
                           switched_off: Sequence[str] = ()) -> ReferenceRuns:
    """List both revisions' files and their blob ids (and read the oracle side's
    configuration) now, before the install step runs the pull request's code: every blob a
    tree is later built from is checked against these ids (OG734). ``start_reference_runs``
    with ``prepared`` builds the reference tree and starts its run."""
    if not ctx.changes.has_base:
        raise ConfigError('--base', 0, 'the reference run needs the base revision',
                          'fetch full history (actions/checkout fetch-depth: 0)')
    runs = ReferenceRuns(ctx, python, approved, approved_files, timings, switched_off)
    # However the gate ends (bad input in a later step is exit 2), the child and the tree
    # go with it.
    atexit.register(runs.close)
    return runs


def start_reference_runs(ctx: RunContext, python: str, approved: bool = False,
                         approved_files: Iterable[str] | None = None,
                         timings: Timings | None = None,
                         prepared: ReferenceRuns | None = None) -> ReferenceRuns:
    """Build the reference tree from git objects and start the reference run (rule 44),
    before the test command runs: it runs beside it once it has collected (its modules are
    compiled from the tree as written), and a file of the tree's oracle side that is not
    what was written when it ends is OG734. ``finish_reference_runs`` waits for it,
    then reruns newly frozen flaky tests (rule 48) and runs the pull request's new or
    changed tests against the base src/ (rule 49)."""
    runs = prepared or prepare_reference_runs(ctx, python, approved, approved_files, timings)
    runs.start_reference()
    return runs


def finish_reference_runs(runs: ReferenceRuns, reaper: Reaper | None = None,
                          mark: frozenset[tuple[int, str]] | None = None,
                          test_run: RunRecord | None = None) -> ReferenceResult:
    """Wait for the reference run and judge it, then the evidence runs; with ``reaper``,
    what each of them leaves running is killed before the next one starts (OG718). ``mark``
    is the gate's children before the reference run started (now, without it);
    ``test_run`` the record of the test command (``shared_failures``)."""
    runs.reaper = reaper
    try:
        if mark is None:
            mark = reaper.mark() if reaper is not None else frozenset()
        runs.finish_reference()
        if reaper is not None:
            runs.result.findings += reaper.leftovers(mark, 'the reference run')
        with runs.timings.step('base rerun'):
            runs.shared_failures(test_run)
        reach.judge_reference_run(runs, PytestChild)  # what the oracle judges of the change
        with runs.timings.step('freeze reruns'):
            runs.freezes()
        with runs.timings.step('new-test run'):
            runs.new_tests()
        runs.result.findings += runs.forged_findings()
    finally:
        runs.close()
    return runs.result


def reference_runs(ctx: RunContext, python: str, approved: bool = False,
                   approved_files: Iterable[str] | None = None) -> ReferenceResult:
    """All three, one after the other."""
    return finish_reference_runs(start_reference_runs(ctx, python, approved, approved_files))
