"""The pytest process of a reference or evidence run (``PytestChild``): the test
environment's interpreter started as ``python -I -S`` with the bootstrap that lets pytest
start, its environment, its output and its run record."""
from __future__ import annotations

import datetime
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from oracle_guard.config import under_any
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.gate import canaries
from oracle_guard.gate import reach
from oracle_guard.gate import stream
from oracle_guard.gate.processes import Reaper
from oracle_guard.gate.reference_tree import Tree
from oracle_guard.gate.sealed import exit_status_findings
from oracle_guard.gate.sealed import uses_hypothesis
from oracle_guard.runtime.drawing_code import SRC_ONLY_ENV
from oracle_guard.runtime.run_record import read_record
from oracle_guard.runtime.run_record import RECORD_ENV
from oracle_guard.runtime.run_record import RUN_ROOT_ENV
from oracle_guard.runtime.run_record import RunRecord


# Environment variables of the gate's job a pytest process would read as options.
DROPPED_ENV = ('PYTEST_ADDOPTS', 'PYTEST_PLUGINS', 'PYTEST_DISABLE_PLUGIN_AUTOLOAD',
               'PYTEST_CURRENT_TEST', 'PYTEST_XDIST_WORKER', 'PYTEST_XDIST_WORKER_COUNT',
               'PYTEST_RUN_FORKED', RECORD_ENV, SRC_ONLY_ENV)


# The child of the test environment's interpreter, started as ``python -I -S -c
# BOOTSTRAP`` (``ISOLATED``). `-I` keeps out what a checkout could use to run code before
# pytest does: the current folder on sys.path, PYTHONPATH/PYTHONSTARTUP/PYTHONHOME, the
# user site. `-S` keeps out what the install step could (rule 46): ``site`` runs
# every ``import`` line of the site folders' ``.pth`` files at start-up, and a ``.pth`` that
# a hand-written ``RECORD`` lists is no stray (OG727), yet its code would run in the gate's
# own runs before pytest and the plugin, and could change them in memory. So the bootstrap
# (``START_UP``) does ``site``'s work on sys.path itself: a venv's prefix from its
# ``pyvenv.cfg`` (the base interpreter's site folders too when it includes them), the site
# folders ``site.getsitepackages`` names for those prefixes (``site`` imported under -S only
# defines its functions), each followed by the folders its ``.pth`` files' path lines name,
# in ``site``'s order; it runs no ``import`` line, ``sitecustomize`` or ``usercustomize``.
# The project is then made importable by putting the tree's src roots on sys.path here,
# after pytest itself is imported (a `src/pytest.py` cannot stand in for it), and nothing
# else of the tree; no .pth file is written anywhere. They go after the standard library's
# folders (``_STDLIB``: the entries before the site folders) and before the site folders,
# where an installed project's modules are in production; and a finder ahead of
# ``PathFinder`` (``_StandardLibraryFirst``) finds a top-level module in the standard
# library's folders first, whatever pytest puts before them later (``pythonpath = ["src"]``,
# a rootdir of `prepend` imports): a module of src named like one of the standard
# library's (`src/statistics.py`) does not stand in for it for the oracle, as in production. The roots come as JSON in
# argv[1].
ISOLATED = ('-I', '-S')


START_UP = '''\
import json, os, sys
_STDLIB = len(sys.path)
def _site_path():
    import site
    here = os.path.dirname(os.path.abspath(sys.executable))
    prefixes = [sys.prefix, sys.exec_prefix]
    for folder in (here, os.path.dirname(here)):
        cfg = os.path.join(folder, "pyvenv.cfg")
        if os.path.isfile(cfg):
            system = "true"
            with open(cfg, encoding="utf-8", errors="replace") as f:
                for line in f:
                    key, _, value = line.partition("=")
                    if value and key.strip().lower() == "include-system-site-packages":
                        system = value.strip().lower()
            sys.prefix = sys.exec_prefix = os.path.dirname(here)
            prefixes = [sys.prefix] + (prefixes if system == "true" else [])
            break
    known = {os.path.normcase(os.path.abspath(p)) for p in sys.path}
    def add(path):
        path = os.path.abspath(path)
        if os.path.normcase(path) not in known and os.path.exists(path):
            known.add(os.path.normcase(path))
            sys.path.append(path)
    for folder in site.getsitepackages(prefixes):
        if not os.path.isdir(folder):
            continue
        add(folder)
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".pth") or (name.startswith(".") and sys.version_info >= (3, 13)):
                continue
            try:
                with open(os.path.join(folder, name), "rb") as f:
                    lines = os.fsdecode(f.read()).splitlines()
            except OSError:
                continue
            for line in lines:
                if line.startswith(("#", "import ", "import\t")) or not line.strip():
                    continue
                add(os.path.join(folder, line.rstrip()))
    site.setquit()
    site.setcopyright()
    site.sethelper()
_site_path()
del _site_path
class _StandardLibraryFirst:
    import importlib.machinery
    finder = importlib.machinery.PathFinder
    paths = sys.path[:_STDLIB]
    src = []  # the src folders whose top-level modules give way to the standard library's
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if path is not None or not cls.src:
            return None
        mine = cls.finder.find_spec(name, cls.src)
        return None if mine is None else cls.finder.find_spec(name, cls.paths)
sys.meta_path.insert(len(sys.meta_path) - 1, _StandardLibraryFirst)
def _src_path(argument):
    argument = json.loads(argument)
    _StandardLibraryFirst.src = argument["src"]
    sys.path[_STDLIB:_STDLIB] = argument["path"]
'''


# pytest-cov's ``--cov`` in the project's addopts would start the project's own coverage in
# each of the gate's runs (after ``import pytest``: ``_NoProjectCoverage``): it would pause the
# reach measurement's (coverage.py records with one collector at a time), fail a run of a
# few tests by its ``--cov-fail-under`` and add its report to the output. Its plugin is not
# started there; its options still parse. The plain run keeps the project's coverage.
NO_PROJECT_COVERAGE = '''\
class _NoProjectCoverage:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_load_initial_conftests(self, early_config):
        if getattr(early_config.known_args_namespace, "cov_source", None):
            early_config.known_args_namespace.cov_source = []
        yield
'''


BOOTSTRAP = START_UP + (
    'import pytest\n'
) + NO_PROJECT_COVERAGE + (
    '_src_path(sys.argv[1])\n'
    'raise SystemExit(pytest.main(sys.argv[2:], plugins=[_NoProjectCoverage()]))\n'
)


OUTPUT_TAIL = 12  # lines of the child's output shown when a run did not complete
OUTPUT_KEPT = 64 * 1024  # bytes of the end of the child's output read back for them


# The gate's own runs look like a plain program run with its output sent to a file, where
# that costs the suite nothing (docs/threat-model.md, the bound): code of src that switches
# on what pytest changes in ordinary objects behaves there as it does in production.
# ``--capture=no`` leaves sys.stdout, sys.stderr and sys.stdin the process's own (its
# descriptors still go to the run's output file; the capsys and capfd fixtures still
# capture), and pytest's logging plugin, which puts its handlers on the root logger around
# every test, is left out unless a file of the tree outside the src roots (a test, a
# conftest, a helper, the pytest configuration) uses it: ``caplog``, a ``log_*`` option.
PLAIN_PROGRAM = ('--capture=no',)
USES_LOGGING_PLUGIN = re.compile(
    rb'\bcaplog\b|\blog_(?:level|format|date_format|cli|file|auto_indent|disable)|--log-'
    rb'|logging-plugin|LogCaptureHandler|_pytest\.logging')


def plain_program_options(tree: Tree, src: Sequence[str]) -> list[str]:
    """The options that make a run in ``tree`` look like a plain program (above)."""
    roots = tuple(src)
    for path in tree.sources:
        if under_any(path, roots):
            continue
        try:
            with open(os.path.join(tree.root, *path.split('/')), 'rb') as f:
                if USES_LOGGING_PLUGIN.search(f.read()):
                    return list(PLAIN_PROGRAM)
        except OSError:
            continue
    return [*PLAIN_PROGRAM, '-p', 'no:logging']


def switched_off_plugins(command: Sequence[str], addopts: str = '') -> tuple[str, ...]:
    """The ``-p no:NAME`` options of the test command and of ``PYTEST_ADDOPTS`` (``addopts``),
    as ``no:NAME``: the gate's own runs of the tests switch those plugins off too, so a run
    of the base oracle meets the plugins the test command's run meets (an order-dependent
    suite that switches pytest-randomly off would fail under it). The gate's own plugin is
    never switched off. The test command and the job's environment are the workflow's."""
    try:
        words = [*command, *shlex.split(addopts)]
    except ValueError:  # an unbalanced quote: pytest would refuse PYTEST_ADDOPTS too
        words = list(command)
    found: list[str] = []
    for i, word in enumerate(words):
        if word == '-p' and i + 1 < len(words):
            value = words[i + 1]
        elif word.startswith('-p') and len(word) > 2 and not word.startswith('-p='):
            value = word[2:]
        else:
            continue
        name = value[3:].strip() if value.startswith('no:') else ''
        if name and name != 'oracle_guard' and f'no:{name}' not in found:
            found.append(f'no:{name}')
    return tuple(found)


@dataclass
class Run:
    record: RunRecord
    exit_code: int
    output: str
    # The sealed run's findings on this run (rule 45): its stream, exit status, canaries.
    sealed: list[Finding] = field(default_factory=list)

    def tail(self) -> str:
        lines = [line for line in self.output.splitlines() if line.strip()]
        return '\n'.join(lines[-OUTPUT_TAIL:])


# -- running pytest in a tree -----------------------------------------------------------------
def import_roots(tree: str, src: Sequence[str]) -> list[str]:
    """sys.path entries that make the tree's src roots importable: a src root that is a
    package itself (``mypkg/__init__.py``) or one module (``parse.py``) is imported from
    its parent."""
    roots = []
    for root in src:
        folder = os.path.join(tree, *[p for p in root.split('/') if p])
        if os.path.isfile(os.path.join(folder, '__init__.py')) or \
                (root.endswith('.py') and not root.endswith('/')):
            folder = os.path.dirname(folder.rstrip(os.sep))
        roots.append(folder)
    return list(dict.fromkeys(roots))


def path_argument(tree: str, src: Sequence[str]) -> str:
    """argv[1] of the bootstrap: the import roots (``path``) and the src folders whose
    top-level modules give way to the standard library's (``src``: a root that is a
    package or one module has only its own name, never the standard library's)."""
    folders = [os.path.join(tree, *[p for p in root.split('/') if p]) for root in src]
    plain = [f for f in folders if not os.path.isfile(os.path.join(f, '__init__.py'))
             and os.path.isdir(f)]
    return json.dumps({'path': import_roots(tree, src), 'src': plain})


class PytestChild:
    """One pytest process in a reference tree, started at once; ``wait`` gives its Run.
    Its output goes to a file, so the gate need not read it while it runs."""

    def __init__(self, tree: Tree, python: str, src: Sequence[str], args: Sequence[str],
                 today: datetime.date, extra_plugins: Sequence[str] = (),
                 sealed: bool = False, measure: reach.Plan | None = None) -> None:
        self.work = tempfile.mkdtemp(prefix='oracle-guard-record-')
        record = os.path.join(self.work, 'record')
        os.mkdir(record)
        self.record_folder = record
        env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        env[RECORD_ENV] = record
        env[RUN_ROOT_ENV] = tree.root
        # The reference run is sealed like the test command (rule 45): its record is the
        # gate's copy of the stream, and canaries planted from a secret of its own prove
        # that the pull request's src/ in it did not make failures pass.
        self.listener: stream.EventListener | None = None
        self.plan: canaries.CanaryPlan | None = None
        if sealed:
            def read(path: str) -> bytes | None:
                try:
                    with open(os.path.join(tree.root, path), 'rb') as f:
                        return f.read()
                except OSError:
                    return None

            tests = [p for p in args if p in tree.sources]
            self.plan = canaries.plant_canaries(
                os.path.join(self.work, 'canaries'), secrets.token_hex(16), root=tree.root,
                test_files=tests, oracle_files=tests, read=read,
                hypothesis=uses_hypothesis(tests, read))
            self.listener = stream.EventListener(self.work).__enter__()
            env.update({**self.listener.env(), **self.plan.env()})
            env[SRC_ONLY_ENV] = '1'  # only src of the pull request runs here (rule 54)
        boot = BOOTSTRAP if measure is None else reach.bootstrap(START_UP, NO_PROJECT_COVERAGE)
        command = [python, *ISOLATED, '-c', boot, path_argument(tree.root, src),
                   *([] if measure is None else [measure.argv(tree.root)]),
                   '-q', '-p', 'no:cacheprovider', f'--rootdir={tree.root}',
                   # One module that cannot be imported must not hide the others' outcomes.
                   '--continue-on-collection-errors', *plain_program_options(tree, src),
                   f'--oracle-guard-today={today.isoformat()}',
                   *[a for p in extra_plugins for a in ('-p', p)], *args, '-p', 'oracle_guard']
        self.output = open(os.path.join(self.work, 'output.txt'), 'w+b')  # noqa: SIM115
        self.proc: subprocess.Popen[bytes] | None = None
        # An interpreter that cannot be started is bad input, said when the run is waited
        # for: the sealed run's own inspection of the test environment says it first.
        self.error: ConfigError | None = None
        try:
            self.proc = subprocess.Popen(command, cwd=tree.root, env=env,
                                         stdin=subprocess.DEVNULL, stdout=self.output,
                                         stderr=subprocess.STDOUT)
        except OSError as exc:
            self.error = ConfigError('--test-python', 0,
                                     f'cannot run {python!r}: {exc.strerror}',
                                     'give the interpreter of the test environment')

    def wait(self) -> Run:
        try:
            if self.proc is None:
                assert self.error is not None
                raise self.error
            code = self.proc.wait()
            code = 128 - code if code < 0 else code
            # Without capture, what the tests print is in the output too: its end is enough.
            self.output.seek(max(0, self.output.seek(0, os.SEEK_END) - OUTPUT_KEPT))
            text = self.output.read().decode('utf-8', 'replace')
            if self.listener is None or self.plan is None:
                return Run(read_record(self.record_folder), code, text)
            self.listener.close()
            full = self.listener.record()
            found = [*stream.contradictions(self.listener.streams),
                     *stream.cross_checks(full, read_record(self.record_folder), None),
                     *exit_status_findings(full, code),
                     *canaries.judge_canaries(self.plan, full)]
            found = [Finding(f.path, f.line, f.col, f.code, f'reference run: {f.message}', f.hint)
                     for f in found]
            return Run(self.plan.without(full), code, text, found)
        finally:
            self.close()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
        self.output.close()
        shutil.rmtree(self.work, ignore_errors=True)


def run_pytest(tree: Tree, python: str, src: Sequence[str], args: Sequence[str],
               today: datetime.date, extra_plugins: Sequence[str] = (),
               reaper: Reaper | None = None, leftovers: list[Finding] | None = None) -> Run:
    """One pytest process in ``tree``, waited for; with ``reaper``, what it leaves running
    is killed and said in ``leftovers`` (OG718)."""
    mark = reaper.mark() if reaper is not None else frozenset()
    run = PytestChild(tree, python, src, args, today, extra_plugins).wait()
    if reaper is not None and leftovers is not None:
        for finding in reaper.leftovers(mark, 'an evidence run (rules 48, 49)'):
            if finding not in leftovers:
                leftovers.append(finding)
    return run
