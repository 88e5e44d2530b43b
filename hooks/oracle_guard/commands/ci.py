"""``oracle-guard ci``: the pull-request gate that trusts neither the pull request's
configuration nor pytest's own report.

    oracle-guard ci --base REF [--format github] [--report FILE.md]
                    [--test-python PATH] [--install-command CMD] [--no-reference-run]
                    [--timings]
                    -- TEST COMMAND...

1. The change rules of every hook for ``REF...HEAD``, in this process (never through the
   pull request's ``.pre-commit-config.yaml``), with ``[tool.oracle-guard]`` read on both
   sides and the wider ``src``/``tests`` roots used.
2. The sealed test run (``gate/sealed.py``, rules 45 and 46): the install step in the test
   environment, the test command with the plugin forced on (``-p oracle_guard`` last on a
   pytest command line, where ``-p no:oracle_guard`` in addopts or PYTEST_ADDOPTS cannot
   undo it), its events streamed to the gate, canaries planted, the test environment
   checked against pip's RECORD files before and after.
3. The audit of the gate's copy of the run, canaries subtracted (``gate/audit.py``).
4. Approval (``gate/approval.py``): an oracle change fails unless a person approved it
   (the pull request's label, or ``--oracle-approved``).
5. The reference run of the base revision's oracle against the pull request's src/, and
   the evidence for new freezes and new tests (``gate/reference.py``).

Findings first, then always one line ``oracle-guard ci: N finding(s); test command
exited C``. Exit 1 when N > 0, otherwise C (the canaries' planted failures taken out); 2
for bad input (no base, a command that is not pytest, an environment that cannot be
inspected, a failed install step, bad configuration).
"""
from __future__ import annotations

import argparse
import datetime
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from collections.abc import Sequence

from oracle_guard.commands import GATE_ENV
from oracle_guard.config import Config
from oracle_guard.config import is_test_module
from oracle_guard.config import load_config
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.repo.gitrepo import git
from oracle_guard.repo.gitrepo import GitError
from oracle_guard.repo.gitrepo import repo_root
from oracle_guard.repo.gitrepo import resolve_or_none
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.oracle.baseline import read_baseline
from oracle_guard.oracle.ledger import read_ledger
from oracle_guard.report import FORMATS
from oracle_guard.report import write_error
from oracle_guard.report import printable
from oracle_guard.report import write_findings
from oracle_guard.context import RunContext
from oracle_guard.runner import iso_date
from oracle_guard.context import utc_today

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from oracle_guard.gate.timings import Timings
    from oracle_guard.gate.approval import Approval
    from oracle_guard.gate.processes import Reaper
    from oracle_guard.gate.review_report import Section

PLUGIN_ARGS = ('-p', 'oracle_guard')


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='oracle-guard ci',
        usage='oracle-guard ci --base REF [--format github] [--report FILE.md] -- TEST COMMAND...',
        description='The pull-request gate: change rules for REF...HEAD, the test command with '
                    'the plugin forced on, and an audit of what the run really did.',
    )
    parser.add_argument('--base', required=True, metavar='REF',
                        help='the pull request\'s base revision (e.g. origin/main)')
    parser.add_argument('--format', choices=FORMATS, default='text',
                        help='output format (default: text; github prints annotations)')
    parser.add_argument('--report', metavar='FILE.md',
                        help='write the review report (Markdown) of every oracle change here')
    parser.add_argument('--oracle-approved', action='store_true',
                        help='a maintainer approved the oracle changes of this pull request '
                             '(only from a job that only maintainers can start)')
    parser.add_argument('--test-python', metavar='PATH',
                        help='the interpreter of the test environment, where the install '
                             'command and the tests run and whose site-packages are checked '
                             '(default: the interpreter oracle-guard runs in)')
    parser.add_argument('--install-command', metavar='CMD',
                        help='install the project into the test environment (a shell '
                             'command, run by the gate after it has loaded everything it needs)')
    parser.add_argument('--today', type=iso_date, help='the date expiries are compared with')
    parser.add_argument('--no-reference-run', dest='reference_run', action='store_false',
                        help='skip the reference run of the base oracle and the evidence '
                             'for new freezes and new tests')
    parser.add_argument('--timings', action='store_true',
                        help='after the findings, print the wall and CPU time of each step '
                             'to stderr')
    parser.add_argument('--debug', action='store_true', help='show tracebacks of internal errors')
    return parser


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """(oracle-guard's own arguments, the test command after ``--``)."""
    argv = list(argv)
    if '--' in argv:
        at = argv.index('--')
        return argv[:at], argv[at + 1:]
    return argv, []


def widened(head: Config, base: Config) -> Config:
    """Both sides' roots: a pull request that narrows ``src`` or ``tests`` cannot use the
    narrower value to escape the rules or the inventory."""
    def union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys([*a, *b]))

    return head.replace(src=union(head.src, base.src), tests=union(head.tests, base.tests),
                        properties=union(head.properties, base.properties))


def is_pytest_command(command: Sequence[str]) -> bool:
    """``pytest ...``, ``py.test ...`` or ``python -m pytest ...`` (also under coverage)."""
    if not command:
        return False
    if os.path.basename(command[0]) in ('pytest', 'py.test', 'pytest.exe'):
        return True
    return any(a == '-m' and b == 'pytest' for a, b in zip(command, command[1:]))


def test_environment(record: str, junit: str | None,
                     extra_env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the test command: the record folder, and the plugin forced on
    for pytest processes whose command line oracle-guard does not write (tox, make)."""
    env = {**os.environ, **(extra_env or {})}
    from oracle_guard.runtime.drawing_code import SRC_ONLY_ENV
    from oracle_guard.runtime.run_record import RECORD_ENV
    from oracle_guard.runtime.run_record import RUN_ROOT_ENV

    env.pop(SRC_ONLY_ENV, None)  # the pull request's test code runs here
    env[RECORD_ENV] = record
    env[RUN_ROOT_ENV] = repo_root()
    env[GATE_ENV] = '1'  # the human-run commands refuse to write oracle files in here
    extra = [*PLUGIN_ARGS]
    if junit:
        extra.append(f'--junitxml={junit}')
    env['PYTEST_ADDOPTS'] = ' '.join(
        [env.get('PYTEST_ADDOPTS', ''), *map(shlex.quote, extra)]).strip()
    return env


def run_tests(command: list[str], record: str, junit: str,
              extra_env: dict[str, str] | None = None) -> int:
    """Run the test command; its exit code (128 + N for a signal)."""
    pytest_command = is_pytest_command(command)
    if pytest_command:
        # Last on the command line: pytest reads -p in order, after addopts and
        # PYTEST_ADDOPTS, so nothing before can switch the plugin off again. Every test
        # runs (the canaries too): -x or --maxfail in the configuration is undone.
        command = [*command, *PLUGIN_ARGS, *([f'--junitxml={junit}'] if junit else []),
                   '--maxfail=0']
    env = test_environment(record, None if pytest_command else junit or None, extra_env)
    sys.stdout.flush()
    try:
        proc = subprocess.run(command, env=env)
    except OSError as exc:
        raise ConfigError('test command', 0, f'cannot run {command[0]!r}: {exc.strerror}',
                          'give the test command after --, e.g. -- python -m pytest') from None
    code = proc.returncode
    return 128 - code if code < 0 else code


def name_not_utf8(paths: Iterable[str]) -> str | None:
    """A Python file whose name is not UTF-8 (git's bytes, kept as surrogate escapes):
    pytest's JUnit report cannot be written once it names a test of such a file."""
    for path in sorted(paths):
        if path.endswith('.py'):
            try:
                path.encode('utf-8')
            except UnicodeEncodeError:
                return path
    return None


def run_tests_without_junit(command: list[str], record: str, junit: str,
                            extra_env: dict[str, str] | None = None) -> int:
    return run_tests(command, record, '', extra_env)


def change_rules(ctx: RunContext) -> list[Finding]:
    from oracle_guard.hooks import available_hooks

    findings: list[Finding] = []
    for module in available_hooks().values():
        findings.extend(module.check(ctx))  # type: ignore[attr-defined]
    return findings


def range_context(base_ref: str, today: datetime.date | None = None) -> RunContext:
    """The change ``BASE...HEAD`` with the configuration widened over both sides."""
    root = repo_root()
    base = resolve_or_none(base_ref, root)
    if base is None:
        raise ConfigError('--base', 0, f'{base_ref!r} is not a revision in this clone',
                          'fetch the base branch with full history (actions/checkout '
                          'fetch-depth: 0)')
    head = resolve_or_none('HEAD', root)
    if head is None:
        raise ConfigError('HEAD', 0, 'the repository has no commits')
    try:
        merge_base = git('merge-base', base, head, cwd=root).decode().strip()
    except GitError:
        raise ConfigError('--base', 0, f'{base_ref} and HEAD share no history in this clone',
                          'fetch full history (actions/checkout fetch-depth: 0)') from None
    head_view = TreeView(root, head)
    cfg = widened(load_config(root, head_view), load_config(root, TreeView(root, merge_base)))
    return RunContext(cfg=cfg, from_ref=base_ref, to_ref=head, require_base=True,
                      judged=head_view, today=today or utc_today())


def ci(args: argparse.Namespace, command: list[str]) -> int:
    from oracle_guard.gate.sealed import off_the_checkout
    from oracle_guard.gate.timings import STEPS
    from oracle_guard.gate.timings import Timings

    from oracle_guard.gate.processes import Reaper

    timings = Timings.of(STEPS)
    off_path = off_the_checkout(repo_root())  # before anything is imported lazily
    with timings.step('change rules'):
        ctx = range_context(args.base, args.today)
        ctx.notes.extend(off_path)
        findings = change_rules(ctx)
    # The gate adopts every process a step of the pull request's code detaches (rule 45).
    reaper = Reaper()
    try:
        with reaper:
            code = _judge(args, command, ctx, findings, timings, reaper)
    finally:
        # What the Reaper killed on its way out was still running after every sweep of
        # the verdict: said, and the gate fails, however it ended.
        if reaper.late:
            sys.stdout.flush()
            write_findings(reaper.late, args.format, sys.stdout)
            sys.stdout.write(f'oracle-guard ci: {len(reaper.late)} more finding(s) after '
                             'the verdict: the gate fails\n')
    if reaper.late:
        code = 1
    if args.timings:
        sys.stdout.flush()
        sys.stderr.write(''.join(f'{line}\n' for line in timings.lines()))
    return code


def _judge(args: argparse.Namespace, command: list[str], ctx: RunContext,
           findings: list[Finding], timings: Timings, reaper: Reaper) -> int:
    cfg, today = ctx.cfg, ctx.today
    head_view = ctx.judged
    assert head_view is not None

    # Everything the gate needs is imported before the install step and the test command
    # run: the pull request's code runs there and could rewrite files on disk.
    from oracle_guard.gate import review_report
    from oracle_guard.gate import audit
    from oracle_guard.gate import audit_context
    from oracle_guard.gate import inventory as gate_inventory
    from oracle_guard.gate import sealed
    from oracle_guard.gate import reference
    from oracle_guard.gate import reference_tree
    from oracle_guard.gate import base_collection
    from oracle_guard.gate import installed_plugins
    from oracle_guard.gate import integrity
    from oracle_guard.gate import interpreter
    from oracle_guard.gate.approval import decide
    from oracle_guard.gate.reference_process import switched_off_plugins

    sections = review_report.report_sections(ctx)
    approval = decide(ctx, sections, args.oracle_approved, os.environ)
    with timings.step('preload'):
        probe = sealed.preload()
    findings.extend(sealed.shadowing_modules(ctx.changes, cfg.src_roots()))
    findings.extend(sealed.compiled_files(ctx.changes))
    findings.extend(sealed.added_entry_points(ctx.changes, head_view))  # rule 46
    # The oracle's bytes as committed, read before the pull request's code runs: what the
    # test command compiles of them is compared with these (rule 45, OG737).
    committed = sealed.committed_digests(head_view, [
        p for p in head_view.paths() if cfg.is_property(p) and p.endswith('.py')])
    # A relative path names a file of the working folder: the gate's runs start elsewhere.
    test_python = args.test_python or sys.executable
    if '/' in test_python or os.sep in test_python:
        test_python = os.path.abspath(test_python)
    # Without an install step the test environment is what it is now: the probe runs
    # while the revisions are read, before any code of the pull request's.
    probe_before = None if args.install_command else \
        integrity.Probe(test_python, probe)
    if not args.test_python:
        ctx.notes.append('oracle-guard ci: note: no --test-python: the tests run in the '
                         'gate\'s own environment; give the interpreter of a separate test '
                         'environment so the pull request cannot reach the gate')
    # Both revisions listed, with their blob ids, before the pull request's code runs
    # (rule 44): the trees are built from git after it, and checked against these.
    # The plugins the test command switches off are off in the gate's own runs too.
    switched_off = switched_off_plugins(command, os.environ.get('PYTEST_ADDOPTS', ''))
    prepared = reference.prepare_reference_runs(
        ctx, test_python, approved=approval.approved and bool(approval.oracle_changes),
        approved_files=[item.path for item in approval.oracle_changes],
        timings=timings, switched_off=switched_off) if args.reference_run else None
    # What the audit believes of the revisions (the inventory, the freeze ledger, the
    # baseline, the test code, the src modules) is read now, before the pull request's code
    # runs (rule 44): after the install step git may give other bytes for a blob (its loose
    # object rewritten), and the audit would take forged freezes for the ledger's. The
    # views keep what they read; the reference trees are checked against the blob ids.
    inventory = {**gate_inventory.static_inventory(head_view, cfg),
                 **gate_inventory.moved_out_of_collection(ctx.changes, cfg)}
    test_files = sorted({path for path, _ in inventory})
    oracle_files = [p for p in test_files if cfg.is_property(p)]
    tracked = frozenset(head_view.paths())
    # Python code the audit reads (the test code, every conftest, the root's modules); a
    # helper module elsewhere is read when the audit asks for it.
    head_view.read_many([p for p in sorted(tracked) if p.endswith('.py') and (
        cfg.is_test(p) or '/' not in p or p.rsplit('/', 1)[-1] == 'conftest.py')])
    try:
        ledger = read_ledger(head_view, cfg.ledger)
    except ConfigError:
        ledger = None  # check-freeze-ledger has reported it; nothing is frozen
    try:
        read_baseline(head_view, cfg.baseline)  # kept by the view for the audit
    except ConfigError:
        pass  # check-named-freezes reports it
    src_modules = gate_inventory.src_modules(head_view, cfg)
    src_gone = gate_inventory.src_gone(TreeView(cfg.root, ctx.changes.base), head_view, cfg) \
        if ctx.changes.has_base else frozenset()  # rule 41
    base_side = ctx.changes.base_view
    plugin_rules = (installed_plugins.project_names(base_side, head_view),
                    installed_plugins.declared(base_side),
                    installed_plugins.requirements(base_side))
    # The pytest11 and hypothesis entry points of the test environment, before the install
    # step and after it (rule 46): what a computed setup.py declares shows only there. They
    # are looked for where a test run looks: besides the checkout and the site folders, the
    # folders the pytest configuration (both sides'), the test files and the start-up
    # code of the environment (asked now, before the pull request's code runs) put on
    # sys.path before Hypothesis is imported.
    plugin_folders = [*installed_plugins.search_folders(cfg.root, (base_side, head_view),
                                                        tracked),
                      *installed_plugins.start_up_path(test_python)]
    plugins_before = installed_plugins.installed(test_python, probe, cfg.root,
                                                 folders=plugin_folders) \
        if args.install_command else None
    python_was = interpreter.identity(test_python)  # rule 46: the interpreter itself
    # Rule 39b's base collection: whether it is needed, and the base's listing with its blob
    # ids, taken now (rule 44): its tree is written after the install step, and a blob or
    # tree object rewritten by then would make it collect what the pull request wrote.
    base_view = base_listed = collected_scope = None
    if ctx.changes.has_base:
        base_view = TreeView(cfg.root, ctx.changes.base)
        if base_collection.needed(head_view, cfg, base_view):
            collected_scope = base_collection.scope(head_view, cfg, base_view)
            base_listed = reference_tree.Side(base_view)
    if args.install_command:
        with timings.step('install step'):
            mark = reaper.mark()
            sealed.run_install(args.install_command, test_python, ctx.cfg.root)
            # Nothing it started may still run when the reference tree is written.
            findings.extend(reaper.leftovers(mark, 'the install step'))
    # After the install step the gate's own interpreter reads the test environment's site
    # folders (the test interpreter may have been replaced by then).
    plugins_after = installed_plugins.installed(test_python, probe, cfg.root,
                                                folders=plugin_folders) \
        if plugins_before is None else \
        installed_plugins.installed(sys.executable, probe, cfg.root, plugins_before.sites,
                                    plugin_folders)
    plugin_findings, plugin_notes = installed_plugins.judged(
        plugins_before, plugins_after, cfg.root, *plugin_rules,
        tracked=tracked | frozenset(base_side.paths() if base_side is not None else ()))
    findings.extend(plugin_findings)
    ctx.notes.extend(plugin_notes)
    if plugins_before is not None:
        ctx.notes.extend(installed_plugins.start_up_notes(plugins_before, plugins_after))
    if args.install_command:
        findings.extend(interpreter.changed(test_python, python_was, 'after the install step'))

    # The reference tree is written from git objects before the test command starts, and
    # its run goes on beside the test command (after the install step: the test
    # environment then holds the project's test dependencies). One mark for both: what the
    # reference run detaches before it has collected (the test command waits for that) is a
    # leftover of the test command's step and of its own, not part of a later mark.
    if args.install_command:
        # Nothing of the pull request's may be in that mark: what the install step's sweep
        # could not end is killed and said again here, before the reference tree is written.
        findings.extend(reaper.leftovers(reaper.start, 'the install step (found before the '
                                         'reference run)', grace=0.0))
    early = reaper.mark()
    started = reference.start_reference_runs(
        ctx, test_python, timings=timings, prepared=prepared) if prepared else None
    if started is not None and started.pid() is not None:
        reaper.own.add(started.pid())  # type: ignore[arg-type]
    # Rule 39b: what the baseline records as left out at adoption is accepted only while
    # the base revision's own collection leaves it out too, and a case of a property whose
    # parameters come from code (src/) that the base ran must run; that collection runs
    # beside the test command, in a tree of the base revision written from git objects now.
    collector = None
    if base_listed is not None and base_view is not None:
        with timings.step('base collection'):
            collector = base_collection.BaseCollector(
                cfg, base_view, test_python, only=collected_scope, side=base_listed,
                switched_off=switched_off)
            if collector.proc is not None:
                reaper.own.add(collector.proc.pid)
        findings.extend(collector.forged_findings())
    # Only a name the base revision had: a pull request cannot switch the cross-check off.
    had = frozenset(base_side.paths()) if base_side is not None else frozenset()
    unnamed = name_not_utf8(p for p in tracked if p in had and
                            (cfg.is_test_code(p) or is_test_module(p)))
    if unnamed is not None:
        ctx.notes.append(f'oracle-guard ci: note: the name of {unnamed} is not UTF-8, so '
                         'pytest cannot write a JUnit report of its tests: the run is judged '
                         'without that report (the stream and the record files still agree)')
    with tempfile.TemporaryDirectory(prefix='oracle-guard-ci-') as folder:
        junit = os.path.join(folder, 'junit.xml')
        run = sealed.sealed_run(command, folder=folder, root=cfg.root, test_files=test_files,
                                oracle_files=oracle_files, read=head_view.read,
                                test_python=test_python, probe_source=probe,
                                run=run_tests if unnamed is None else run_tests_without_junit,
                                timings=timings, probe_before=probe_before)
        # The reference process and the base collection may still run: spared by pid.
        findings.extend(reaper.leftovers(early, 'the test command' + (
            ' (or the reference run beside it)' if started is not None else ''),
            spare=[started.pid() if started is not None else None,
                   collector.proc.pid if collector is not None and collector.proc else None]))
        findings.extend(run.findings)
        findings.extend(sealed.compiled_from_other_bytes(run.record, cfg.root, committed))
        for finding in interpreter.changed(test_python, python_was, 'after the run'):
            if not any(f.code == 'OG726' and 'test interpreter' in f.message for f in findings):
                findings.append(finding)
        ctx.notes.extend(run.notes)
        exit_code, record = run.exit_code, run.record
        audit_ctx = audit_context.AuditContext(
            cfg=cfg, record=record, inventory=inventory,
            ledger=ledger, today=today, src_modules=src_modules,
            junit_expected=junit if is_pytest_command(command) and unnamed is None else None,
            view=head_view,
            tracked=tracked, src_gone=src_gone,
        )
        if collector is not None:
            with timings.step('base collection'):
                audit_ctx.base_collection = collector.wait()
            if audit_ctx.base_collection.error:
                ctx.notes.append(
                    'oracle-guard ci: note: the base revision\'s collection did not '
                    f'complete ({audit_ctx.base_collection.error}): no test the baseline '
                    'records as left out at adoption is accepted (rule 39b)')
        if started is not None:
            started.base_collection = audit_ctx.base_collection
        with timings.step('audit'):
            findings.extend(lock_said_once(audit.audit(audit_ctx), findings))
    findings.extend(approval.findings())

    evidence = reference.finish_reference_runs(started, reaper, early, record) if started \
        else None
    if evidence:
        findings.extend(lock_said_once(evidence.findings, findings))
    # Every step is done: whatever child still runs is killed and said (rule 45).
    findings.extend(reaper.leftovers(reaper.start, 'a step of the gate'))
    timings.note_overlap('reference run', 'test command')
    with timings.step('report'):
        _write_review(args, ctx, approval, sections, run.report_section(),
                      evidence.report if evidence else ())
        write_findings(findings, args.format, sys.stdout)
        for note in ctx.notes:
            sys.stdout.write(printable(f'{note}\n'))
        count = len(set(findings))
        sys.stdout.write(f'oracle-guard ci: {count} finding(s); test command exited '
                         f'{exit_code}\n')
    return 1 if count else exit_code


def _write_review(args: argparse.Namespace, ctx: RunContext, approval: Approval,
                  sections: Sequence[Section], sealed_section: str = '',
                  evidence: Sequence[tuple[str, list[str]]] = ()) -> None:
    summary = os.environ.get('GITHUB_STEP_SUMMARY')
    if not args.report and not summary:
        return
    from oracle_guard.gate.review_report import review_report

    # A path that is not UTF-8 is written escaped, as in the findings.
    text = printable(review_report(ctx, approval, sections, evidence) + sealed_section)
    if args.report:
        with open(args.report, 'w', encoding='utf-8') as f:
            f.write(text)
    if summary:
        with open(summary, 'a', encoding='utf-8') as f:
            f.write(text)


def lock_said_once(found: list[Finding], said: list[Finding]) -> list[Finding]:
    """``found`` without a lock problem ``said`` already names: the property the hooks
    call unlocked (OG601) that the plugin then failed (OG711), the reference run's copy of
    the test command's OG711 (OG734). The same property against the same lock is one
    cause."""
    unlocked = {(f.path, f.line) for f in said if f.code == 'OG601' and
                f.message.startswith('unlocked property: ')}
    copies = {(f.path, f'reference run: {f.code} {f.message}') for f in said
              if f.code == 'OG711'}
    return [f for f in found if not (
        f.code == 'OG734' and (f.path, f.message) in copies or
        f.code == 'OG711' and ': unlocked property: ' in f.message and
        (f.path, f.line) in unlocked)]


def main(argv: Sequence[str] | None = None) -> int:
    own, command = split_command(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(own)
    if not command:
        parser.print_usage(sys.stderr)
        sys.stderr.write('oracle-guard ci: error: give the test command after --, '
                         'e.g. -- python -m pytest\n')
        return 2
    if not is_pytest_command(command):
        sys.stderr.write(f'oracle-guard ci: error: the test command must run pytest '
                         f'(pytest ... or python -m pytest ...), not {command[0]!r}: the gate '
                         'plants its canaries and reads its stream through pytest\'s command '
                         'line\n')
        return 2
    try:
        return ci(args, command)
    except ConfigError as exc:
        sys.stdout.flush()
        write_error(exc, args.format, sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 -- the promise is: no traceback
        if args.debug:
            raise
        sys.stderr.write(f'oracle-guard ci: internal error: {type(exc).__name__}: {exc}\n'
                         '    rerun with --debug for the traceback and report it\n')
        return 3


if __name__ == '__main__':
    raise SystemExit(main())
