"""The sealed test run of ``oracle-guard ci``: the parts of the verdict the pull request's
own code cannot write.

1. Everything the gate needs is imported first (``preload``): the install step and the
   tests run the pull request's code as the same user, and could rewrite the gate's
   files on disk; a module already in memory is what judges.
2. The pull request's install step (``--install-command``) runs as a child of the gate, in
   the test environment (``--test-python``), never in the gate's.
3. The test environment is inspected (rule 46, ``gate/integrity.py``) after the install
   and again after the run.
4. The test command runs with the event stream open (``gate/stream.py``) and canaries
   planted (``gate/canaries.py``); the verdict is the gate's copy of the stream, canaries
   subtracted, and these findings (rule 45):

OG720 the stream contradicts itself (``gate/stream.py``)
OG721 the record files or the JUnit report say fewer tests failed than the stream did, or
      the record files or the JUnit report hold a failure the gate received as passed
OG722 the test command's exit status disagrees with the outcomes the stream holds
OG723 a pytest process stopped its session before its tests ran (the plugin's own stop
      is OG716, which names its reason; what follows from it is not reported again)
OG724 a canary ended otherwise than planted; OG725 a canary is missing from the run
OG726-OG728 the test machinery was changed (``gate/integrity.py``)
OG719 the pull request adds or edits a compiled Python file (``*.pyc``, ``*.pyo``)
OG729 the pull request adds a module named like the test machinery (``oracle_guard``,
      ``pytest``, ``_pytest``, ``pluggy``, ``hypothesis``, ``sitecustomize``,
      ``usercustomize``) outside its ``src`` roots: ``python -m pytest`` from the checkout
      would import it instead of the installed one
OG737 a file of the oracle was compiled from other bytes than the committed ones (the test
      command) or than the gate wrote into a reference tree (the reference run, the
      evidence runs): the plugin says the sha256 of what it compiled (pytest's rewriter
      for test files and conftests, ``runtime/source_code`` for every other module of the
      test roots, neither trusting a cache); or such a file ran without a compile in the
      run, or ran functions claiming it that its bytes do not compile to, or sys.modules
      held, under its module name, a module the plugin's import hook did not load
OG738 the pull request adds an entry point in the ``pytest11`` or ``hypothesis`` group
      (``pyproject.toml``, ``setup.cfg``, ``setup.py``, a committed ``entry_points.txt``):
      code that pytest or Hypothesis runs when it starts, before any test is compiled
"""
from __future__ import annotations

import hashlib
import importlib
import os
import pkgutil
import secrets
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.gate import canaries
from oracle_guard.gate import integrity
from oracle_guard.gate import stream
from oracle_guard.gate.timings import Timings
from oracle_guard.repo.changeset import ChangeSet
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.runtime.run_record import read_record
from oracle_guard.runtime.run_record import RunRecord

MACHINERY = ('oracle_guard', 'pytest', '_pytest', 'pluggy', 'hypothesis', 'sitecustomize',
             'usercustomize', 'py')
# Modules that import pytest or Hypothesis: they run inside the test process, not here.
NOT_PRELOADED = ('oracle_guard.runtime.pytest_plugin', 'oracle_guard.runtime.lock_runtime',
                 'oracle_guard.runtime.property_namespace', 'oracle_guard.runtime.canary_items',
                 'oracle_guard.runtime.collection_probe', 'oracle_guard.runtime.unfrozen')


def off_the_checkout(root: str) -> list[str]:
    """Take the checkout off the gate's ``sys.path`` (``python -m`` from the repository root
    puts it first): a ``yaml.py`` of the pull request must not be what the gate imports.
    A note when it was there: the gate should run as ``python -I``."""
    real = os.path.realpath(root)
    here = [p for p in sys.path if os.path.realpath(p or os.curdir) == real]
    if not here:
        return []
    sys.path[:] = [p for p in sys.path if p not in here]
    return ['oracle-guard ci: note: the checkout was on the gate\'s sys.path (python -m from '
            'the repository root); it was taken off, but run the gate as python -I from an '
            'environment of its own, so nothing of the checkout is imported before that']


def preload() -> str:
    """Import every module of the gate now, before any pull-request code runs; return the
    integrity probe's source, read now for the same reason."""
    import oracle_guard

    for info in pkgutil.walk_packages(oracle_guard.__path__, 'oracle_guard.'):
        if info.name in NOT_PRELOADED or info.name.endswith('__main__'):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional dependency the gate's environment lacks
            continue
    # The change rules ran before (with what they import); after the run only the audit
    # and the report remain, and they read YAML (the ledger).
    for name in ('yaml',):
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    with open(integrity.PROBE, encoding='utf-8') as f:
        return f.read()


@dataclass
class SealedRun:
    record: RunRecord  # the gate's copy of the stream, canaries subtracted
    exit_code: int  # the test command's, with the canaries' planted failures taken out
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    canaries: int = 0  # how many the gate planted

    def report_section(self) -> str:
        """The review report's lines on the sealed run (the canaries are counted, never
        named: their names are the next run's secret too)."""
        lines = ['### The sealed run', '']
        if not self.findings:
            lines.append(f'The run proved itself: its {self.canaries} canaries ended as '
                         'planted, the exit status agrees with what the tests reported as '
                         'they ran, and the test machinery matches its `RECORD` files.')
        for finding in self.findings:
            lines.append(f'* `{finding.code}` {finding.message}')
        return '\n'.join([*lines, '', ''])


def shadowing_modules(changes: ChangeSet, src_roots: Sequence[str]) -> list[Finding]:
    """OG729: files the change adds or edits that Python would import as the machinery: a
    module ``NAME.py`` or a regular package ``NAME/__init__.py`` (a folder without one is a
    namespace portion, which never wins over an installed package)."""
    findings = []
    for change in changes.changes:
        if change.status == 'D' or change.path.startswith(tuple(src_roots)):
            continue
        parts = change.path.split('/')
        name = parts[-1][:-3] if parts[-1].endswith('.py') else ''
        if name == '__init__' and len(parts) > 1:
            name = parts[-2]
        if name in MACHINERY:
            findings.append(Finding(
                change.path, 1, 1, 'OG729', f'{change.path} is a module named like the test '
                f'machinery ({name}): run from the checkout, Python imports it instead of the '
                'installed one', 'rename it; a pull request cannot ship its own pytest, '
                'Hypothesis or oracle-guard'))
    return findings


def compiled_files(changes: ChangeSet) -> list[Finding]:
    """OG719: compiled Python the change adds or edits, the ``src`` roots included. A
    ``__pycache__`` file written with an unchecked hash is loaded instead of its source
    whatever the source says, so the code that runs is not the code that was reviewed."""
    return [Finding(
        change.path, 1, 1, 'OG719', f'{change.path} is compiled Python in the pull request: '
        'Python may run it instead of the source beside it, which is what review sees',
        f'git rm --cached {change.path} and ignore __pycache__/ and *.pyc')
        for change in changes.changes
        if change.status != 'D' and change.path.endswith(('.pyc', '.pyo'))]


def committed_digests(view: TreeView, paths: Iterable[str]) -> dict[str, frozenset[str]]:
    """path -> the sha256 a checkout of ``view`` may hold for it: the blob's, and the blob's
    with CRLF line ends (``core.autocrlf``). Read before the install step (rule 45)."""
    paths = list(paths)
    view.read_many(paths)
    found = {}
    for path in paths:
        data = view.read(path)
        if data is not None:
            found[path] = frozenset({hashlib.sha256(data).hexdigest(), hashlib.sha256(
                data.replace(b'\r\n', b'\n').replace(b'\n', b'\r\n')).hexdigest()})
    return found


def compiled_from_other_bytes(record: RunRecord, root: str,
                              expected: Mapping[str, str | frozenset[str]],
                              run: str = '') -> list[Finding]:
    """OG737: a file the run compiled (pytest's rewriter: test files, conftests) whose
    bytes, as the plugin read them for the compile, are not ``expected[path]``. A file
    rewritten before its compile and put back by its own first lines is the gate's again
    when the run ends; what was compiled is not (rules 44, 45)."""
    real_root = os.path.realpath(root)

    def rel_of(path: str) -> str:
        return os.path.relpath(os.path.realpath(path), real_root).replace(os.sep, '/')

    findings = []
    for path, digests in sorted(record.compiled.items()):
        rel = rel_of(path)
        want = expected.get(rel)
        if want is None:
            continue
        allowed = {want} if isinstance(want, str) else want
        if all(digest in allowed for digest in digests):
            continue
        whose = 'the bytes the gate wrote into its tree' if run else 'its committed bytes'
        findings.append(Finding(
            rel, 1, 1, 'OG737', f'{run}{rel}, a file of the oracle, was compiled from other '
            f'bytes than {whose} (sha256 {sorted(set(digests) - allowed)[0][:12]}): '
            'something rewrote it before pytest read it',
            'nothing may write the oracle\'s test files while the tests start (src run by '
            'a conftest or an entry point, a detached helper): remove what does'))
    return findings + not_compiled_here(record, rel_of, expected, run,
                                        {f.path for f in findings})


def not_compiled_here(record: RunRecord, rel_of: Callable[[str], str],
                      expected: Mapping[str, object], run: str,
                      reported: set[str]) -> list[Finding]:
    """OG737 without a digest to compare: a file of the oracle that a pytest process
    collected tests from or imported without compiling it from its bytes (the plugin
    compiles every module of the test roots from source, so a module run from pytest's
    cache of rewritten modules or a ``__pycache__`` file sends no compile), and one whose
    module holds functions that claim it but that its bytes do not compile to."""
    findings = []
    judged = set(reported)  # a file compiled from other bytes: that finding says enough
    for process in record.processes:
        compiled = {rel_of(p) for p in process.compiled}
        for path in sorted(process.collected_files | process.imported):
            rel = rel_of(path)
            if not rel.endswith('.py') or rel not in expected or rel in compiled or \
                    rel in reported:
                continue  # a test collected from another kind of file is not compiled
            reported.add(rel)
            findings.append(Finding(
                rel, 1, 1, 'OG737', f'{run}{rel}, a file of the oracle, ran without being '
                'compiled from its bytes in the run (a cached compile was loaded: pytest\'s '
                'cache of rewritten modules or a __pycache__ file, which the code under '
                'test can write)', 'nothing may write compiled files into the test tree: '
                'remove what does (src run by a conftest or an entry point, the install step)'))
        for found, seen, says, fix in (
                (process.impostors, reported, lambda name: (
                    f'did not run under its module name {name!r}: sys.modules held a module '
                    'that the plugin\'s import hook did not load from it, so an import of the '
                    'name bound something else'),
                 'nothing may put modules in sys.modules under the oracle\'s module names: '
                 'remove what does (src run by a conftest or an entry point)'),
                (process.foreign, judged, lambda names: (
                    f'ran code its bytes do not compile to ({", ".join(names[:3])}): its module '
                    'was run from a planted compile, or a function was built under its name'),
                 'remove what writes compiled files into the test tree or builds code under '
                 'the oracle\'s file names')):
            for path, what in sorted(found.items()):
                rel = rel_of(path)
                if rel not in expected or rel in seen:
                    continue
                seen.add(rel)
                findings.append(Finding(rel, 1, 1, 'OG737', f'{run}{rel}, a file of the oracle, '
                                        f'{says(what)}', fix))
    return findings


ENTRY_POINT_GROUPS = ('pytest11', 'hypothesis')
TOOLS = {'pytest11': 'pytest', 'hypothesis': 'Hypothesis'}
# The group of a declaration no reading of the file can resolve (setup.py computes it).
COMPUTED = 'pytest11 or hypothesis'


def entry_points_in(path: str, data: bytes) -> set[tuple[str, str]]:
    """(group, entry) of the ``pytest11`` and ``hypothesis`` entry points a file declares:
    ``pyproject.toml`` (PEP 621 and Poetry), ``setup.cfg``, ``setup.py`` (dict keys and
    ``[group]`` sections in its strings), an ``entry_points.txt`` of package metadata."""
    name = path.rsplit('/', 1)[-1]
    text = data.decode('utf-8', 'replace')
    found: set[tuple[str, str]] = set()
    if name == 'pyproject.toml':
        from oracle_guard.config import parse_toml
        from oracle_guard.findings import ConfigError

        try:
            doc = parse_toml(text, path)
        except ConfigError:
            return found  # the change rules report a pyproject.toml that does not parse
        project = doc.get('project') if isinstance(doc.get('project'), dict) else {}
        poetry = doc.get('tool', {}).get('poetry', {}) if isinstance(doc.get('tool'), dict) \
            else {}
        for table in (project.get('entry-points'), poetry.get('plugins') if
                      isinstance(poetry, dict) else None):
            if not isinstance(table, dict):
                continue
            for group in ENTRY_POINT_GROUPS:
                entries = table.get(group)
                if isinstance(entries, dict):
                    found.update((group, f'{k} = {v}') for k, v in entries.items())
    elif name == 'setup.py':
        import ast

        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            return {(group, '(setup.py does not parse)') for group in ENTRY_POINT_GROUPS
                    if group in text}
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values):
                    if isinstance(key, ast.Constant) and key.value in ENTRY_POINT_GROUPS:
                        found.update((str(key.value), e) for e in _entries(value))
                    elif key is None or not isinstance(key, ast.Constant):
                        # a computed key ({'hypo' + 'thesis': ...}) or a ** spread
                        found.add((COMPUTED, f'a computed key: {_shown(node)}'))
            elif isinstance(node, ast.Call) and _named(node.func) == 'dict':
                for keyword in node.keywords:
                    if keyword.arg in ENTRY_POINT_GROUPS:
                        found.update((keyword.arg, e) for e in _entries(keyword.value))
                    elif keyword.arg is None:
                        found.add((COMPUTED, f'a computed key: {_shown(node)}'))
                if node.args:
                    found.add((COMPUTED, f'dict() of a computed value: {_shown(node)}'))
            elif isinstance(node, ast.keyword) and node.arg == 'entry_points' and \
                    not isinstance(node.value, (ast.Dict, ast.Constant)) and not (
                        isinstance(node.value, ast.Call) and _named(node.value.func) == 'dict'):
                # setup(entry_points=...) given a name, a file read, a call: no reading of
                # the file says what it declares
                found.add((COMPUTED, f'entry_points={_shown(node.value)}'))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.update(_ini_entry_points(node.value))
    elif name == 'setup.cfg':
        found.update(_ini_entry_points(text, 'options.entry_points'))
    elif name == 'entry_points.txt':
        found.update(_ini_entry_points(text))
    return found


def _entries(node: ast.expr) -> list[str]:
    """The entries of a group's value in setup.py: each string of a literal list, or the
    value as written."""
    import ast

    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
        return [str(e.value) for e in node.elts]  # type: ignore[attr-defined]
    return [ast.unparse(node)]


def _named(node: ast.expr) -> str:
    import ast

    return node.id if isinstance(node, ast.Name) else \
        node.attr if isinstance(node, ast.Attribute) else ''


def _shown(node: ast.AST) -> str:
    import ast

    text = ' '.join(ast.unparse(node).split())
    return text if len(text) < 60 else text[:57] + '...'


def _ini_entry_points(text: str, section: str | None = None) -> set[tuple[str, str]]:
    """Entries of the groups in INI text: sections ``[group]`` (entry_points.txt), or the
    options of one section (setup.cfg's ``[options.entry_points]``)."""
    found: set[tuple[str, str]] = set()
    current = group = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(('#', ';')):
            continue
        if line.startswith('[') and line.endswith(']'):
            current, group = line[1:-1].strip(), None
            continue
        if section is not None:
            if current != section:
                continue
            # configparser takes ``group: ...`` as it takes ``group = ...``
            at = min((i for i in (line.find('='), line.find(':')) if i >= 0), default=-1)
            key, eq, value = (line[:at], line[at], line[at + 1:]) if at >= 0 else \
                (line, '', '')
            if eq and not raw[:1].isspace():
                group = key.strip()
                line = value.strip()
            if group in ENTRY_POINT_GROUPS and line:
                found.add((group, line))
        elif current in ENTRY_POINT_GROUPS:
            found.add((current, line))
    return found


def added_entry_points(changes: ChangeSet, head: TreeView) -> list[Finding]:
    """OG738: an entry point of the ``pytest11`` or ``hypothesis`` group the change adds.
    pytest loads the first at start-up, Hypothesis runs the second when it is imported:
    either runs the pull request's code before a test file is compiled (rule 46)."""
    base = changes.base_view
    findings = []
    for change in changes.changes:
        name = change.path.rsplit('/', 1)[-1]
        if change.status == 'D' or name not in ('pyproject.toml', 'setup.cfg', 'setup.py',
                                                'entry_points.txt'):
            continue
        new = entry_points_in(change.path, head.read(change.path) or b'')
        old_path = change.old_path or change.path
        old_data = base.read(old_path) if base is not None and change.status != 'A' else None
        added = new - entry_points_in(old_path, old_data or b'')
        for group, entry in sorted(added):
            shown = entry if len(entry) < 80 else entry[:77] + '...'
            findings.append(Finding(
                change.path, 1, 1, 'OG738', f'{change.path} adds an entry point in the '
                f'{group} group ({shown}): {TOOLS.get(group, "pytest or Hypothesis")} '
                'runs it when it starts, before any test file is compiled' if group != COMPUTED
                else f'{change.path} declares entry points the gate cannot read ({shown}): '
                'one in the pytest11 or hypothesis group would run when pytest or Hypothesis '
                'starts, before any test file is compiled',
                'a plugin of the test machinery is a change of its own that a maintainer '
                'makes; remove it from this pull request'))
    return findings


def run_install(command: str, test_python: str, root: str) -> None:
    """The pull request's install step, a child of the gate, in the test environment."""
    bin_dir = os.path.dirname(test_python)
    env = dict(os.environ)
    env['PATH'] = bin_dir + os.pathsep + env.get('PATH', '')
    prefix = os.path.dirname(bin_dir)
    if os.path.isfile(os.path.join(prefix, 'pyvenv.cfg')):
        env['VIRTUAL_ENV'] = prefix
    sys.stdout.flush()
    try:
        code = subprocess.run(command, shell=True, cwd=root, env=env).returncode
    except OSError as exc:
        raise ConfigError('--install-command', 0, f'cannot run {command!r}: {exc}') from None
    if code:
        raise ConfigError('--install-command', 0, f'{command!r} exited {code}',
                          'the project must install into the test environment')


def exit_status_findings(record: RunRecord, exit_code: int) -> list[Finding]:
    """OG722 and OG723, on the whole stream (canaries included)."""
    findings = []
    failed = stream.failed_tests(record)
    statuses = sorted({p.exitstatus for p in record.processes if p.exitstatus})
    if exit_code == 0 and (failed or statuses):
        told = f'{len(failed)} failed test(s)' if failed else \
            f'a session exit status of {statuses[0]}'
        findings.append(Finding(
            '.', 1, 1, 'OG722', f'forged run: the test command exited 0, but the run reported '
            f'{told} as it happened (an exit forced at exit time: atexit, os._exit, '
            'sys.exit in a hook)', 'remove what forces the exit status'))
    for process in record.processes:
        # The plugin's own stop is named by the audit with its reason (OG716).
        if process.shouldfail and not process.loop_completed and not process.guard_stopped:
            why = '; '.join(process.problems[:3]) or process.stopped or 'no reason given'
            findings.append(Finding(
                '.', 1, 1, 'OG723', f'the session of pytest process {process.file} was '
                f'stopped before its tests ran ({why}): no test proved anything',
                'fix what the plugin reports (a silence without a freeze, a lock drift) or '
                'remove what stops the session'))
    return findings


def uses_hypothesis(paths: Sequence[str], read: Callable[[str], bytes | None]) -> bool:
    """Whether the project's tests use Hypothesis: only then is a failing property planted
    (Hypothesis writes a ``.hypothesis`` folder where it runs)."""
    from oracle_guard.reading.silence_prefilter import as_python_reads

    return any(b'hypothesis' in as_python_reads(read(path) or b'')
               for path in dict.fromkeys(paths))


def sealed_run(command: list[str], *, folder: str, root: str, test_files: Sequence[str],
               oracle_files: Sequence[str], read: Callable[[str], bytes | None],
               test_python: str, probe_source: str,
               run: Callable[[list[str], str, str, dict[str, str]], int],
               timings: Timings | None = None,
               probe_before: integrity.Probe | None = None) -> SealedRun:
    """Run the test command sealed; ``run(command, record_folder, junit, env) -> code``.
    ``probe_before``: the integrity probe, started earlier (no install step since)."""
    timings = timings if timings is not None else Timings()
    with timings.step('integrity probe before'):
        before = (probe_before or integrity.Probe(test_python, probe_source)).result()
    record_folder = os.path.join(folder, 'record')
    os.mkdir(record_folder)
    junit = os.path.join(folder, 'junit.xml')
    plan = canaries.plant_canaries(
        os.path.join(folder, 'canaries'), secrets.token_hex(16), root=root,
        test_files=test_files, oracle_files=oracle_files, read=read,
        hypothesis='hypothesis' in before.present and uses_hypothesis(
            [*oracle_files, *test_files], read))
    with timings.step('test command'), stream.EventListener(folder) as listener:
        exit_code = run(command, record_folder, junit, {**listener.env(), **plan.env()})
    with timings.step('integrity probe after'):
        after = integrity.inspect_environment(test_python, probe_source, since=before)
    full = listener.record()
    findings = [*stream.contradictions(listener.streams),
                *stream.cross_checks(full, read_record(record_folder), junit),
                *exit_status_findings(full, exit_code),
                *canaries.judge_canaries(plan, full),
                *integrity.integrity_findings(('before the run', before),
                                              ('after the run', after))]
    judged = plan.without(full)
    if exit_code == 1 and not stream.failed_tests(judged) and stream.failed_tests(full):
        exit_code = 0  # pytest's status had the gate planted no failing canary
    notes = [*integrity.integrity_notes(before), *canaries.dropped_notes(plan, full),
             *canaries.inconclusive_notes(plan, full)]
    return SealedRun(judged, exit_code, findings, notes, len(plan.canaries))
