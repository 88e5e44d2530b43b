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

import ast
import datetime
import fnmatch
import os
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field

from oracle_guard.repo.changeset import ChangeSet
from oracle_guard.config import Config
from oracle_guard.findings import Finding
from oracle_guard.gate.helper_silences import helper_explanation
from oracle_guard.repo.gitrepo import TreeView
from oracle_guard.oracle.ledger import FreezeLedger
from oracle_guard.oracle.ledger import FreezeRow
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import identity_of
from oracle_guard.runtime.run_record import RunRecord
from oracle_guard.reading.scanner import is_test_module
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.scanner import test_functions

# pytest's default ``norecursedirs``: folders it never looks into.
NORECURSE = ('*.egg', '.*', '_darcs', 'build', 'CVS', 'dist', 'node_modules', 'venv',
             '{arch}')


@dataclass(frozen=True)
class TestDef:
    """One test of the inventory: where it is defined."""

    path: str
    identity: str  # Class::function
    line: int  # the `def` line
    first_line: int  # its first decorator (what the compiled code calls its first line)


@dataclass(frozen=True)
class SilenceOutcome:
    """A test that was skipped or xfailed in the run (or whose module was skipped)."""

    nodeid: str
    path: str  # repository-relative
    identity: str  # Class::function[params]
    kind: str  # skip, skipif, xfail, unittest-skip, expectedFailure, collection-skip
    reason: str
    where: tuple[str, int] | None  # the location pytest reported for the skip
    markers: tuple[tuple[str, str, str], ...]  # (name, args repr, kwargs repr)
    # the module its reason says could not be imported was loaded in that process (rule 41)
    imported: bool = False


@dataclass
class BaseCollection:
    """``path::identity`` of the base revision's own collection (rule 39b): what it kept,
    what it left out; ``error`` when it did not complete (then nothing recorded is
    accepted). Written by ``gate.base_collection``."""

    kept: frozenset[str] = frozenset()
    left_out: frozenset[str] = frozenset()
    error: str = ''
    # ``path::function`` -> the ``path::case`` ids of it in ``kept``.
    kept_functions: dict[str, frozenset[str]] = field(default_factory=dict)
    # Test files of the base -> their content, to tell an unchanged file.
    sources: dict[str, bytes] = field(default_factory=dict)
    # ``path::identity`` of kept tests with a ``skipif`` the base ran (none held there).
    unskipped: frozenset[str] = frozenset()


@dataclass
class AuditContext:
    cfg: Config  # the widened configuration (both sides of the change)
    record: RunRecord
    inventory: dict[tuple[str, str], TestDef]
    ledger: FreezeLedger | None
    today: datetime.date
    src_modules: dict[str, str] = field(default_factory=dict)  # top-level name -> path
    tracked: frozenset[str] = frozenset()  # files at HEAD, for what the record names
    junit_expected: str | None = None  # the JUnit file the run was asked to write
    view: TreeView | None = None  # HEAD: where the baseline and test files are read
    # The base revision's own collection (rule 39b): a BaseCollection, or None when the
    # baseline records nothing left out (or there is no base).
    base_collection: BaseCollection | None = None
    # Modules that lived under the src roots at the base revision and are gone from the
    # side that ran (``src_gone``): an importorskip of one explains no skip (rule 41).
    src_gone: frozenset[str] = frozenset()
    _accepted: dict[str, dict[str, list]] = field(default_factory=dict)  # type: ignore[type-arg]
    _judge: object = None
    _helpers: object = None
    _baseline: object = None

    def head(self) -> TreeView:
        return self.view or TreeView(self.cfg.root, None)

    def accepted(self, path: str) -> dict[str, list]:  # type: ignore[type-arg]
        """Rules 39-41: the silences of a test file that need no freeze (baselined,
        environment conditions, declared imports), as check-named-freezes judges them."""
        if path not in self._accepted:
            from oracle_guard.reading.silence_acceptance import accepted_silences
            from oracle_guard.reading.silence_acceptance import SilenceJudge

            from oracle_guard.reading.helper_modules import HelperModules

            if self._judge is None:
                self._judge = SilenceJudge.of_view(self.cfg, self.head())
                self._helpers = HelperModules.of(self.cfg, self.head())
            source = self.head().read(path)
            self._accepted[path] = {} if source is None else \
                accepted_silences(path, source, self._judge,  # type: ignore[arg-type]
                                  self._helpers)
        return self._accepted[path]

    def excluded_at_adoption(self) -> dict[str, str]:
        """nodeid -> what left it out, from the baseline's ``excluded`` list."""
        if self._baseline is None:
            from oracle_guard.oracle.baseline import read_baseline
            from oracle_guard.findings import ConfigError

            try:
                baseline = read_baseline(self.head(), self.cfg.baseline)
            except ConfigError:
                baseline = None  # check-named-freezes reports it
            self._baseline = baseline.excluded_nodeids() if baseline else {}
        return self._baseline  # type: ignore[return-value]

    def rows_for(self, path: str, identity: str) -> list[FreezeRow]:
        """Live ledger rows that name this test (its file, or a file that no longer
        defines it: the test was moved)."""
        if self.ledger is None:
            return []
        found = []
        for row in self.ledger.rows:
            if not row.identity or not row.is_live(self.today):
                continue
            if '[' in row.identity:
                if row.identity != identity:
                    continue
            elif function_of(identity) != row.identity:
                continue
            old_file = row.nodeid.split('::', 1)[0]
            if old_file == path or (old_file, row.identity) not in self.inventory:
                found.append(row)
        return found


# -- "is this silence explained": the one place reasons are accepted ----------------------
def silence_explanation(outcome: SilenceOutcome, ctx: AuditContext) -> str | None:
    """Why a skip or xfail in this run is accepted, or None when nothing explains it: a
    live freeze for that very test, a silence kind the repository allows
    (``allow-silences``), the baseline and environment conditions that held in this run
    (section 8 of the product contract), a helper module's silence (``helper_silences``)."""
    for row in ctx.rows_for(outcome.path, outcome.identity):
        return f'{row.id} live until {row.expires}'
    if outcome.kind in ctx.cfg.allow_silences:
        return f'allow-silences: {outcome.kind}'
    return adoption_explanation(outcome, ctx) or helper_explanation(outcome, ctx, _RUN_KINDS)


# What a skip of the run may be, for each kind of accepted silence in the file.
_RUN_KINDS = {'skip': ('skip',), 'skipif': ('skipif',), 'xfail': ('xfail',),
              'unittest-skip': ('unittest-skip', 'skip'), 'importorskip': ('skip',
                                                                            'collection-skip')}


def adoption_explanation(outcome: SilenceOutcome, ctx: AuditContext,
                         module_level: bool = True) -> str | None:
    """A baselined silence of that very test (rule 39), an environment condition of it
    that holds in this interpreter (rule 40), or an importorskip of a declared module
    whose import failed (rule 41). ``module_level=False``: only the test's own and its
    class's silences count, not the module's (a base class in a helper module)."""
    from oracle_guard.reading.silence_acceptance import BASELINE
    from oracle_guard.reading.silence_acceptance import DECLARED_IMPORT
    from oracle_guard.reading.silence_acceptance import ENVIRONMENT_SKIP

    from oracle_guard.reading.silence_acceptance import class_key

    if _import_of_removed_src(outcome, ctx):
        return None
    accepted = ctx.accepted(outcome.path)
    function = function_of(outcome.identity)
    keys = [function] if outcome.kind != 'collection-skip' else []
    if keys and '::' in function:  # a class-level silence covers the inherited tests too
        keys.append(class_key(function.rsplit('::', 1)[0]))
    if module_level:
        keys.append('')  # module level covers every test of the file
    for key in keys:
        for silence in accepted.get(key, ()):
            if outcome.kind not in _RUN_KINDS.get(silence.kind, (silence.kind,)):
                continue
            if silence.kind == 'importorskip' and not _raised_here(
                    outcome, ctx, outcome.path, silence.lines):
                continue  # importorskip's words from elsewhere, or an import that worked
            if silence.why == BASELINE:
                if silence.kind == 'skipif' and ran_at_base(outcome, ctx):
                    continue  # its condition did not hold at base: the change made it
                return f'baseline: {silence.kind}'
            if silence.why == ENVIRONMENT_SKIP and silence.held:
                return f'environment condition ({silence.kind}) held in this run'
            if silence.why == DECLARED_IMPORT and silence.module and \
                    silence.module.split('.')[0] in outcome.reason:
                return f'importorskip of the declared dependency {silence.module}'
        for silence in accepted.get(key, ()) if key else ():
            # unittest reports a skip at the test's own line wherever it was raised (its
            # setUp, a helper method): a baselined skipTest/SkipTest of this very test
            # is the one that ran when the run's reason is its literal reason.
            if silence.kind in _UNITTEST_IMPERATIVE and silence.why == BASELINE and \
                    outcome.kind == 'skip' and silence.reason and not outcome.imported and \
                    _skip_reason(outcome.reason) == silence.reason:
                return f'baseline: {silence.kind} ({silence.reason!r})'
    return _helper_importorskip(outcome, ctx, keys)


_UNITTEST_IMPERATIVE = ('skipTest', 'SkipTest')


def _skip_reason(reported: str) -> str:
    """The reason a skip was raised with, as the run reports it (``Skipped: why``)."""
    return reported[len('Skipped: '):] if reported.startswith('Skipped: ') else reported


def _import_of_removed_src(outcome: SilenceOutcome, ctx: AuditContext) -> bool:
    """Whether the skip says a module could not be imported that lived under the src roots
    at the base revision and is gone from the code that ran (rule 41): the change removed
    or renamed it, so its importorskip is the change's own doing, not an optional
    dependency this environment lacks."""
    if not ctx.src_gone:
        return False
    for marker in ("could not import '", 'No module named '):
        start = outcome.reason.find(marker)
        if start < 0:
            continue
        rest = outcome.reason[start + len(marker):].lstrip("'\"")
        name = ''
        for char in rest:
            if not (char.isalnum() or char in '._'):
                break
            name += char
        parts = name.strip('.').split('.')
        if any('.'.join(parts[:n]) in ctx.src_gone for n in range(1, len(parts) + 1)):
            return True
    return False


def ran_at_base(outcome: SilenceOutcome, ctx: AuditContext) -> bool:
    """Whether the base revision's own collection (rule 39b) ran this test although it
    carries a ``skipif``: none of its conditions held there, against the base's ``src``."""
    base = ctx.base_collection
    return base is not None and not base.error and \
        f'{outcome.path}::{outcome.identity}' in base.unskipped


def _removed_note(outcome: SilenceOutcome, ctx: AuditContext) -> str:
    if outcome.kind == 'skipif' and ran_at_base(outcome, ctx):
        return (': its skipif held for none of its conditions at the base revision, which '
                'ran it, so the baselined skipif does not explain it')
    if not _import_of_removed_src(outcome, ctx):
        return ''
    return (': the module it could not import lived under the src roots at the base '
            'revision, and the change removed it')


def _where(outcome: SilenceOutcome, ctx: AuditContext) -> tuple[str, int] | None:
    """The repository-relative file and line pytest reported the skip at."""
    if outcome.where is None:
        return None
    where, line = outcome.where
    if os.path.isabs(where):
        where = os.path.relpath(os.path.realpath(where), os.path.realpath(ctx.cfg.root))
    return where.replace(os.sep, '/'), int(line)


def _raised_here(outcome: SilenceOutcome, ctx: AuditContext, path: str,
                 lines: Iterable[int]) -> bool:
    """An importorskip explains a skip only when pytest reports it at that very call
    (pytest hides importorskip's own frames, so a real one is reported at its caller's
    line, a helper that borrows its words at the helper's line) and the module did not
    load in that process (an import that worked explains nothing). Rule 41."""
    if outcome.imported:
        return False
    return _where(outcome, ctx) in {(path, line) for line in lines}


def _conftests_above(path: str) -> list[str]:
    folder, found = posixpath.dirname(path), []
    while True:
        found.append(posixpath.join(folder, 'conftest.py') if folder else 'conftest.py')
        if not folder:
            return found
        folder = posixpath.dirname(folder)


_IMPERATIVE = ('skip', 'importorskip', 'SkipTest', 'skipTest')


def _raised_by_accepted(outcome: SilenceOutcome, ctx: AuditContext) -> str | None:
    """A skip pytest reports at the very call of a baselined (or declared) imperative
    silence in test code: ``raise SkipTest`` in a shared decorator of a helper module,
    ``pytest.skip`` in a helper function. The location proves which silence ran; a reason
    that says a module could not be imported while it is loaded explains nothing (rule 41)."""
    from oracle_guard.reading.silence_acceptance import BASELINE
    from oracle_guard.reading.silence_acceptance import DECLARED_IMPORT

    if outcome.where is None or 'wasxfail' in outcome.reason or outcome.imported:
        return None
    where, line = outcome.where
    if os.path.isabs(where):
        where = os.path.relpath(os.path.realpath(where), os.path.realpath(ctx.cfg.root))
    where = where.replace(os.sep, '/')
    if where.startswith('../') or not ctx.cfg.is_test_code(where):
        return None
    for key, silences in ctx.accepted(where).items():
        for silence in silences:
            if silence.kind in _IMPERATIVE and silence.why in (BASELINE, DECLARED_IMPORT) and \
                    int(line) in silence.lines:
                how = 'baseline' if silence.why == BASELINE else 'declared dependency'
                return f'{silence.kind} at {where}:{line} in {key or "<module>"} ({how})'
    return None


def _helper_importorskip(outcome: SilenceOutcome, ctx: AuditContext, keys: list[str]
                         ) -> str | None:
    """A skip raised by an accepted ``importorskip`` that is not in the test's own body:
    in a fixture, a helper or a set-up method of its file, or in a conftest.py that applies
    to it, baselined or of a declared dependency, whose module the skip's reason names.
    The hooks accepted that very call; the gate honours the same baseline (rule 39)."""
    from oracle_guard.reading.silence_acceptance import BASELINE
    from oracle_guard.reading.silence_acceptance import DECLARED_IMPORT

    raised = _raised_by_accepted(outcome, ctx)
    if raised is not None:
        return raised
    if outcome.kind not in ('skip', 'collection-skip'):
        return None
    # A fixture's skip is reported at the test's own line (its first decorator or def).
    test = ctx.inventory.get((outcome.path, function_of(outcome.identity)))
    test_lines = (test.first_line, test.line) if test is not None else ()
    for path in [outcome.path, *_conftests_above(outcome.path)]:
        for key, silences in ctx.accepted(path).items():
            if path == outcome.path and (key in keys or (path, key) in ctx.inventory):
                continue  # the test's own silences, or another test's
            for silence in silences:
                # A computed module name (importorskip(request.param)) is known only by
                # the reason importorskip gives when the import fails.
                named = f"'{silence.module}'" in outcome.reason if silence.module else \
                    silence.why == BASELINE and "could not import '" in outcome.reason
                if silence.kind == 'importorskip' and named and \
                        silence.why in (BASELINE, DECLARED_IMPORT) and \
                        (_raised_here(outcome, ctx, outcome.path, test_lines) or
                         _raised_here(outcome, ctx, path, silence.lines)):
                    how = 'baseline' if silence.why == BASELINE else 'declared dependency'
                    return f'importorskip({silence.module!r}) in {path}::{key or "<module>"} ({how})'
                # pytest reports a skip a fixture raised at the test's own line: the
                # baselined skip of a fixture is the one that ran when the reason is its.
                if silence.kind in _IMPERATIVE and silence.why == BASELINE and \
                        silence.reason and not outcome.imported and \
                        _skip_reason(outcome.reason) == silence.reason:
                    return f'{silence.kind}({silence.reason!r}) in {path}::{key} (baseline)'
    return None


def exclusion_explanation(path: str, identity: str, ctx: AuditContext) -> str | None:
    """Why a test of the inventory may be missing from the run (not collected,
    deselected), or None: a live freeze, or the baseline's record of the tests the
    configuration already left out at adoption (rule 39b), by identity only."""
    for row in ctx.rows_for(path, identity):
        return f'{row.id} live until {row.expires}'
    excluded = ctx.excluded_at_adoption()
    # An entry names one case (``test_x[3]``) or, when adoption's collection lost every
    # case, the function (rule 39b): any case of it, however the pull request
    # parametrizes it, is one that did not run before either.
    by = excluded.get(f'{path}::{identity}')
    if by is None:
        by = excluded.get(f'{path}::{function_of(identity)}')
    if by is not None and left_out_at_base(path, identity, ctx):
        return f'left out at adoption ({by}), recorded in {ctx.cfg.baseline}'
    return None


def _unnumbered(case: str) -> str:
    """``path::test_x[fast0]`` -> ``path::test_x[fast]``: the id before the number pytest
    appends to tell equal ids apart (``fast0``, ``fast_0``); the case itself otherwise."""
    if not case.endswith(']'):
        return case
    stem = case[:-1].rstrip('0123456789')
    if stem == case[:-1] or stem.endswith('['):
        return case
    return (stem[:-1] if stem.endswith('_') else stem) + ']'


def left_out_at_base(path: str, identity: str, ctx: AuditContext) -> bool:
    """Rule 39b: the record accepts an identity only while the base revision's own
    collection leaves it out too (deselected there, or no case of its function collected
    there): a test that ran on the base runs in the pull request, whatever the record
    says, and a case that did not exist at the base is not the record's."""
    base = ctx.base_collection
    if base is None:
        return True  # no base to ask (a run without one): the record as it is
    if base.error:
        return False
    if f'{path}::{identity}' in base.left_out:
        return True
    return f'{path}::{function_of(identity)}' not in base.kept_functions


# -- the inventory -------------------------------------------------------------------------
def _skipped_folder(path: str) -> bool:
    parts = path.split('/')[:-1]
    return any(fnmatch.fnmatchcase(part, pattern) for part in parts for pattern in NORECURSE)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f'{_dotted(node.value)}.{node.attr}'
    return ''


def _collected_classes(tree: ast.Module) -> set[str]:
    """Top-level classes pytest collects by default: ``Test*`` and unittest cases."""
    cases: set[str] = set()
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    changed = True
    while changed:  # a TestCase subclass of a TestCase subclass in the same file
        changed = False
        for cls in classes:
            if cls.name in cases:
                continue
            bases = [_dotted(b).rsplit('.', 1)[-1] for b in cls.bases]
            if any(b.endswith('TestCase') or b in cases for b in bases):
                cases.add(cls.name)
                changed = True
    return cases | {c.name for c in classes if c.name.startswith('Test')}


def _first_line(node: ast.AST) -> int:
    lines = [node.lineno] + [d.lineno for d in getattr(node, 'decorator_list', ())]  # type: ignore[attr-defined]
    return min(lines)


def file_inventory(source: bytes, path: str) -> list[TestDef]:
    """The tests pytest's default rules collect from one test file."""
    try:
        tree = parse_python(source, path)
    except ScanError:
        return []
    classes = _collected_classes(tree)
    tests = []
    for identity, node in test_functions(tree):
        parts = identity.split('::')
        if len(parts) > 1:
            if parts[0] not in classes:
                continue
            if len(parts) > 2 and not all(p.startswith('Test') for p in parts[1:-1]):
                continue
        tests.append(TestDef(path, identity, node.lineno, _first_line(node)))  # type: ignore[attr-defined]
    return tests


def static_inventory(view: TreeView, cfg: Config) -> dict[tuple[str, str], TestDef]:
    """Every test under the test roots on one side, keyed by (path, identity)."""
    inventory: dict[tuple[str, str], TestDef] = {}
    roots = cfg.test_roots()
    for entry in view.entries(list(roots)) if roots else []:
        path = entry.path
        if entry.is_symlink or entry.is_submodule or not is_test_module(path) or \
                not cfg.is_test_code(path) or _skipped_folder(path):
            continue
        source = view.read(path)
        if source is None:
            continue
        for test in file_inventory(source, path):
            inventory[(path, test.identity)] = test
    return inventory


def moved_out_of_collection(changes: ChangeSet, cfg: Config
                            ) -> dict[tuple[str, str], TestDef]:
    """Tests of a test module the change deleted or renamed that now live in a file
    pytest's default rules do not collect (``git mv tests/test_core.py
    tests/check_core.py``): they still exist, they just stopped running."""
    gone: set[str] = set()
    for change in changes.changes:
        old = change.old_path if change.status == 'R' else (
            change.path if change.status == 'D' else None)
        if old and cfg.is_test(old) and is_test_module(old):
            source = changes.read_base(old)
            if source is not None:
                gone.update(test.identity for test in file_inventory(source, old))
    found: dict[tuple[str, str], TestDef] = {}
    if not gone:
        return found
    for change in changes.changes:
        path = change.path
        if change.status == 'D' or not cfg.is_test_code(path) or is_test_module(path):
            continue
        source = changes.read_new(path)
        for test in file_inventory(source or b'', path):
            if test.identity in gone:
                found[(path, test.identity)] = test
    return found


def src_modules(view: TreeView, cfg: Config) -> dict[str, str]:
    """Top-level import names defined under the ``src`` roots -> their path."""
    found: dict[str, str] = {}
    for root in cfg.src_roots():
        for path in view.paths([root]):
            if not cfg.is_src(path):
                continue
            rest = path[len(root):]
            first = rest.split('/', 1)[0]
            if '/' in rest:
                if rest.split('/', 1)[1] == '__init__.py' and first.isidentifier():
                    found.setdefault(first, root + first)
            elif first.endswith('.py') and first[:-3].isidentifier():
                found.setdefault(first[:-3], path)
    return found


def src_module_names(view: TreeView, cfg: Config) -> set[str]:
    """The dotted import names of every module and package under the ``src`` roots on
    one side (a src root that is a package itself is imported from its parent)."""
    names: set[str] = set()
    files = set(view.paths(list(cfg.src_roots())))
    for root in cfg.src_roots():
        prefix: list[str] = []
        if root.endswith('/') and f'{root}__init__.py' in files:
            prefix = [root.rstrip('/').rsplit('/', 1)[-1]]
        for path in files:
            if not path.startswith(root) or not path.endswith('.py') or not cfg.is_src(path):
                continue
            if root and not root.endswith('/'):  # a src root that is one module
                parts = [posixpath.basename(path)[:-3]]
            else:
                parts = [*prefix, *path[len(root):-3].split('/')]
            if parts[-1] == '__init__':
                parts.pop()
            for n in range(1, len(parts) + 1):  # its packages (namespace ones too)
                if all(p.isidentifier() for p in parts[:n]):
                    names.add('.'.join(parts[:n]))
    return names


def src_gone(base: TreeView, head: TreeView, cfg: Config) -> frozenset[str]:
    """Modules under the ``src`` roots at the base revision that the pull request's side
    no longer has (rule 41: their importorskip explains no skip)."""
    return frozenset(src_module_names(base, cfg) - src_module_names(head, cfg))


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
                             f'collection ({problem.get("reason")}){_removed_note(outcome, ctx)}',
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
                 f'{_removed_note(outcome, self.ctx)}',
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
                identity: (_first_line(node), node.lineno)  # type: ignore[attr-defined]
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
            if name != function_of(identity).rsplit('::', 1)[-1] or \
                    not test.first_line <= first <= test.line:
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
