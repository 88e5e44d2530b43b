"""Silences that need no freeze: baselined, environment conditions, declared imports.

One judgement shared by check-named-freezes and the pytest plugin (rules 39-41). A
silence that carries an ``FZ`` id is judged by the ledger instead; everything not
accepted here falls through to the ledger too, where it needs one.
"""
from __future__ import annotations

import ast
from collections.abc import Callable

from oracle_guard.oracle.baseline import Baseline
from oracle_guard.oracle.baseline import BaselineEntry
from oracle_guard.oracle.baseline import empty_baseline
from oracle_guard.oracle.baseline import read_baseline
from oracle_guard.config import Config
from oracle_guard.reading.declared_dependencies import read_project_facts
from oracle_guard.reading.declared_dependencies import read_requires_python
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.reading.declared_dependencies import ProjectFacts
from oracle_guard.reading.env_conditions import ALWAYS
from oracle_guard.reading.env_conditions import ConditionReader
from oracle_guard.reading.env_conditions import ENVIRONMENT
from oracle_guard.reading.env_conditions import judge
from oracle_guard.reading.env_conditions import python_minors
from oracle_guard.reading.env_conditions import silence_conditions
from oracle_guard.findings import Finding
from oracle_guard.oracle.baseline import silence_digest
from oracle_guard.reading.scanner import Silence
from oracle_guard.oracle.records import FrozenRecord

BASELINE = 'baseline'
ENVIRONMENT_SKIP = 'environment'
DECLARED_IMPORT = 'declared import'


class Judgement(FrozenRecord):
    __slots__ = ('accepted', 'finding', 'detail', 'conditions', 'negate', 'moved_from')
    accepted: str | None  # BASELINE, ENVIRONMENT_SKIP or DECLARED_IMPORT
    finding: Finding | None  # rule 41: a silence in disguise
    detail: str  # for an environment condition: where it is false, or why unknown
    conditions: tuple[ast.expr, ...]  # to ask at run time whether it held
    negate: bool
    moved_from: str  # a baseline entry of a file that is gone: where it was (rule 39)

    def __init__(self, accepted: str | None = None, finding: Finding | None = None,
                 detail: str = '', conditions: tuple[ast.expr, ...] = (),
                 negate: bool = False, moved_from: str = '') -> None:
        self._set(accepted=accepted, finding=finding, detail=detail, conditions=conditions,
                  negate=negate, moved_from=moved_from)


def dotted_name(silence: Silence) -> str:
    return silence.code.split(' ', 1)[0]


def imported_module(silence: Silence) -> str | None:
    call = silence.call
    if silence.kind != 'importorskip' or call is None:
        return None
    arg = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg == 'modname'), None)
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.strip():
        return arg.value.strip()
    return None


class SilenceFacts(FrozenRecord):
    """What the judgement (rules 39-41) and the ledger (rules 14-17) read of one silence,
    without its syntax: the scan cache keeps these, so a warm run judges a file again (the
    ledger, the baseline, the declared dependencies, the date) without parsing it.

    ``digest`` is the baseline's ``silence_digest``, ``module`` what an importorskip
    imports, ``condition`` the verdict of an environment condition over the matrix of the
    project's Python versions, ``(kind, detail)``; all three are None for a silence that
    names a freeze (the ledger decides)."""

    __slots__ = ('line', 'col', 'kind', 'freeze_ids', 'targets', 'scope', 'code', 'digest',
                 'module', 'condition')
    line: int
    col: int
    kind: str
    freeze_ids: tuple[str, ...]
    targets: tuple[str, ...]
    scope: str
    code: str
    digest: str | None
    module: str | None
    condition: tuple[str, str] | None

    def __init__(self, line: int, col: int, kind: str, freeze_ids: tuple[str, ...],
                 targets: tuple[str, ...], scope: str, code: str, digest: str | None = None,
                 module: str | None = None, condition: tuple[str, str] | None = None) -> None:
        self._set(line=line, col=col, kind=kind, freeze_ids=tuple(freeze_ids),
                  targets=tuple(targets), scope=scope, code=code, digest=digest,
                  module=module, condition=None if condition is None else tuple(condition))

    @classmethod
    def bare(cls, silence: Silence) -> SilenceFacts:
        """Where, what and which freeze: all the ledger reads (no judge, no minors)."""
        return cls(silence.line, silence.col, silence.kind, silence.freeze_ids,
                   silence.targets, silence.scope, silence.code)


class SilenceJudge:
    """Judges the silences of one run; the baseline and project facts are read once, lazily."""

    def __init__(self, baseline: Callable[[], Baseline], facts: Callable[[], ProjectFacts],
                 exists: Callable[[str], bool],
                 requires_python: Callable[[], str | None] | None = None) -> None:
        self._baseline_loader = baseline
        self._facts_loader = facts
        # Environment conditions need only requires-python (rule 40); the declared
        # dependencies (rule 41) list every tracked path for its requirements files.
        self._requires_python_loader = requires_python
        self.exists = exists
        self._loaded: Baseline | None = None
        self._project: ProjectFacts | None = None
        self._minors: tuple[int, ...] | None = None

    @classmethod
    def of_view(cls, cfg: Config, view: TreeView) -> SilenceJudge:
        # Rules 39-41 never name a baseline entry's line: read without them (faster).
        return cls(lambda: read_baseline(view, cfg.baseline, lines=False) or
                   empty_baseline(cfg.baseline),
                   lambda: read_project_facts(view, cfg), lambda p: view.read(p) is not None,
                   lambda: read_requires_python(view))

    def _baseline(self) -> Baseline:
        if self._loaded is None:
            self._loaded = self._baseline_loader()
        return self._loaded

    def _facts(self) -> ProjectFacts:
        if self._project is None:
            self._project = self._facts_loader()
        return self._project

    def stale_entries(self) -> list[BaselineEntry]:
        baseline = self._baseline()
        return [entry for entry in baseline.entries if entry not in baseline.used]

    def minors(self) -> tuple[int, ...]:
        """The Python 3 minor versions the project supports: the matrix conditions meet."""
        if self._minors is None:
            if self._project is not None or self._requires_python_loader is None:
                requires_python = self._facts().requires_python
            else:
                requires_python = self._requires_python_loader()
            self._minors = python_minors(requires_python)
        return self._minors

    def facts_of(self, silence: Silence, reader: Callable[[], ConditionReader]
                 ) -> SilenceFacts:
        """The facts ``judge_facts`` reads, worked out from the silence's syntax."""
        if silence.freeze_ids:
            return SilenceFacts.bare(silence)  # named: the ledger decides
        condition = None
        found = silence_conditions(dotted_name(silence), silence.call)
        if found is not None:
            conditions, negate = found
            verdict = judge(reader(), conditions, self.minors(), negate)
            condition = (verdict.kind, verdict.detail)
        return SilenceFacts(silence.line, silence.col, silence.kind, silence.freeze_ids,
                            silence.targets, silence.scope, silence.code,
                            silence_digest(silence), imported_module(silence), condition)

    def judge(self, path: str, silence: Silence, reader: Callable[[], ConditionReader]
              ) -> Judgement:
        judgement = self.judge_facts(path, self.facts_of(silence, reader))
        if judgement.accepted == ENVIRONMENT_SKIP:  # what the run-time checks ask again
            conditions, negate = silence_conditions(dotted_name(silence), silence.call)  # type: ignore[misc]
            judgement = Judgement(accepted=ENVIRONMENT_SKIP, detail=judgement.detail,
                                  conditions=tuple(conditions), negate=negate)
        return judgement

    def judge_facts(self, path: str, facts: SilenceFacts) -> Judgement:
        """Rules 39-41 for one silence (without the conditions' syntax)."""
        if facts.freeze_ids:
            return Judgement()  # named: the ledger decides
        entry = self._baseline().match(path, facts, self.exists, facts.digest)
        if entry is not None:
            return Judgement(accepted=BASELINE,
                             moved_from=entry.path if entry.path != path else '')
        if facts.condition is not None:
            kind, detail = facts.condition
            if kind == ENVIRONMENT:
                return Judgement(accepted=ENVIRONMENT_SKIP, detail=detail)
            if kind == ALWAYS:
                return Judgement(finding=Finding(
                    path, facts.line, facts.col, 'OG320',
                    f'{facts.code}: the condition is true on every platform, implementation, '
                    'bitness and Python version the project supports: a silence in disguise',
                    'fix the test; or name the freeze (FZ-<n> in the reason, a ledger row)',
                ))
            return Judgement(detail=detail)
        module = facts.module
        if module is not None:
            if self._facts().declares(module):
                return Judgement(accepted=DECLARED_IMPORT)
            return Judgement(finding=Finding(
                path, facts.line, facts.col, 'OG321',
                f'importorskip({module!r}): {module} is neither a declared dependency nor in '
                'optional-modules, so this test runs nowhere: a silence in disguise',
                'declare the dependency (pyproject.toml, a requirements file), or add the '
                'module to optional-modules in a change of its own',
            ))
        return Judgement()


class AcceptedSilence(FrozenRecord):
    """A silence of a test file that needs no freeze, as the run-time checks see it."""

    __slots__ = ('kind', 'why', 'scope', 'module', 'held', 'lines', 'reason')
    kind: str
    why: str  # BASELINE, ENVIRONMENT_SKIP or DECLARED_IMPORT
    scope: str
    module: str | None  # what an importorskip imports
    held: bool | None  # an environment condition in this interpreter; None otherwise
    # Where pytest may report a skip this silence raises: the lines of its call, and the
    # first line of the function holding it (pytest names the frame's code there).
    lines: tuple[int, ...]
    # The reason it gives, when written as a literal: a unittest skip is reported at the
    # test's own line wherever it was raised (a setUp), so the reason names the silence.
    reason: str | None

    def __init__(self, kind: str, why: str, scope: str, module: str | None,
                 held: bool | None, lines: tuple[int, ...] = (),
                 reason: str | None = None) -> None:
        self._set(kind=kind, why=why, scope=scope, module=module, held=held, lines=lines,
                  reason=reason)


def literal_reason(silence: Silence) -> str | None:
    """The literal reason of a silence's call (``skipTest("no frozendict")``), or None."""
    call = silence.call
    if call is None:
        return None
    arg = call.args[0] if call.args else next(
        (k.value for k in call.keywords if k.arg in ('reason', 'msg')), None)
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value.strip():
        return arg.value
    return None


def _report_lines(tree: ast.AST, silence: Silence) -> tuple[int, ...]:
    end = getattr(silence.call, 'end_lineno', None) or silence.line
    lines = set(range(silence.line, end + 1))
    inner = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= silence.line <= (node.end_lineno or node.lineno):
            if inner is None or node.lineno >= inner.lineno:
                inner = node
    if inner is not None:
        lines.add(inner.lineno)
        lines.update(d.lineno for d in inner.decorator_list[:1])
    return tuple(sorted(lines))


def accepted_silences(path: str, source: bytes, judge: SilenceJudge, helpers=None,
                      ) -> dict[str, list[AcceptedSilence]]:  # type: ignore[no-untyped-def]
    """Function identity -> the accepted silences that cover it; module-level ones also
    under ``''``. The pytest plugin and the audit of ``oracle-guard ci`` ask this, with
    the ``HelperModules`` of the side they read (names imported from test helpers)."""
    from oracle_guard.reading.env_conditions import holds_now
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import scan_silences
    from oracle_guard.reading.scanner import source_text
    from oracle_guard.oracle.ledger import function_of

    found: dict[str, list[AcceptedSilence]] = {}
    try:
        tree = parse_python(source, path)
        silences = scan_silences(tree, source_text(source),
                                 helpers=None if helpers is None else helpers.seen_from(path))
    except ScanError:
        return found  # check-named-freezes reports it (OG307)
    readers: list[ConditionReader] = []

    def reader() -> ConditionReader:
        if not readers:
            readers.append(ConditionReader.of_tree(tree))
        return readers[0]

    for silence in silences:
        judgement = judge.judge(path, silence, reader)
        if not judgement.accepted:
            continue
        held = None
        if judgement.accepted == ENVIRONMENT_SKIP:
            held = holds_now(reader(), list(judgement.conditions), judgement.negate)
        accepted = AcceptedSilence(silence.kind, judgement.accepted, silence.scope,
                                   imported_module(silence), held,
                                   _report_lines(tree, silence), literal_reason(silence))
        keys = {function_of(t) for t in silence.targets}
        if silence.scope == 'module':
            keys.add('')
        if silence.owner:
            keys.add(class_key(silence.owner))  # the tests the class inherits too
        for key in keys:
            found.setdefault(key, []).append(accepted)
    _through_decorators(tree, found)
    return found


def class_key(owner: str) -> str:
    """The key of ``accepted_silences`` for what a class-level silence of ``owner``
    (``Outer::Inner``) covers: every test of that class, its inherited ones too."""
    return f'{owner}::'


def _through_decorators(tree: ast.Module, found: dict[str, list[AcceptedSilence]]) -> None:
    """A test decorated with a function of its own file that applies a silence
    (``@mark_tzlocal_nix``, whose body applies ``pytest.mark.skipif``) carries that
    function's accepted silences: the marker pytest sees is the one judged there."""
    from oracle_guard.reading.scanner import test_functions

    appliers = {node.name for node in tree.body
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name in found}
    if not appliers:
        return

    def applied(node: ast.AST) -> list[AcceptedSilence]:
        names = [d.func if isinstance(d, ast.Call) else d
                 for d in getattr(node, 'decorator_list', ())]
        return [a for d in names if isinstance(d, ast.Name) and d.id in appliers
                for a in found[d.id]]

    for identity, node in test_functions(tree):
        carried = applied(node)
        if carried:
            found.setdefault(identity, []).extend(carried)
    for node in tree.body:
        carried = applied(node) if isinstance(node, ast.ClassDef) else []
        if carried:
            found.setdefault(class_key(node.name), []).extend(carried)


def added_environment_conditions(path: str, accepted: list[Silence], base_source: bytes | None,
                                 base_helpers=None,  # type: ignore[no-untyped-def]
                                 ) -> list[Finding]:
    """Rule 40b: an environment condition (accepted by rule 40) on a test that existed at the
    base revision in this file without that very condition. The test ran where the project's
    CI runs and now does not: a silence that needs a freeze. New tests may carry one.
    ``base_helpers``: the base's helper modules as this file imports them, so a condition
    spelled through a helper at both revisions is the same condition."""
    return [Finding(path, silence.line, silence.col, 'OG322',
                    f'{silence.code}: an environment condition added to {shown}, which ran '
                    'without it at the base revision: the test no longer runs where it ran',
                    'fix the test; or name the freeze (FZ-<n> in the reason, a ledger row) in '
                    'a change without src/')
            for silence, shown in _added_to_existing(path, accepted, base_source, base_helpers)]


def inherited_baseline_silences(path: str, inherited: list[tuple[Silence, str]],
                                base_source: bytes | None,
                                base_helpers=None,  # type: ignore[no-untyped-def]
                                ) -> list[Finding]:
    """Rule 39: a baseline entry follows its file when the file is gone (moved), but only
    onto tests that did not exist at the base revision in this file. A test that existed
    here without that silence never inherits one: a baselined skip "moved" over a running
    test of the same name is a new silence."""
    origin = {id(silence): old for silence, old in inherited}
    return [Finding(path, silence.line, silence.col, 'OG323',
                    f'{silence.code}: the baseline entry of {origin[id(silence)]} (a file that '
                    f'is gone) matched on {shown}, which existed at the base revision without '
                    'it: a baselined silence follows a moved file only to tests new there',
                    'fix the test; or name the freeze (FZ-<n> in the reason, a ledger row) in '
                    'a change without src/')
            for silence, shown in _added_to_existing(path, [s for s, _ in inherited],
                                                     base_source, base_helpers)]


def _added_to_existing(path: str, accepted: list[Silence], base_source: bytes | None,
                       base_helpers=None,  # type: ignore[no-untyped-def]
                       ) -> list[tuple[Silence, str]]:
    """(silence, the tests it names) for each silence on a test that existed at the base in
    this file without that very silence (same kind, same normalized expression)."""
    if not accepted or base_source is None:
        return []
    from oracle_guard.oracle.baseline import silence_digest
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import scan_silences
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import source_text
    from oracle_guard.reading.scanner import test_functions

    try:
        tree = parse_python(base_source, path)
        before = {(target, s.kind, silence_digest(s))
                  for s in scan_silences(tree, source_text(base_source), helpers=base_helpers)
                  for target in s.targets}
    except ScanError:
        return []  # a base nobody could parse ran no test we could name
    existed = {identity for identity, _ in test_functions(tree)}
    findings: list[tuple[Silence, str]] = []
    for silence in accepted:
        digest = silence_digest(silence)
        ran = [t for t in silence.targets
               if t in existed and (t, silence.kind, digest) not in before]
        if ran:
            shown = ', '.join(ran[:3]) + (f' (+{len(ran) - 3} more)' if len(ran) > 3 else '')
            findings.append((silence, shown))
    return findings
