"""Whether a skip or xfail in the run is explained (rule 41): a live freeze, the adoption
baseline's entry and its environment conditions, a helper's importorskip, an import of src
the change removed; and whether a test left out of collection was left out at the base too."""
from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable

from oracle_guard.gate.audit_context import AuditContext
from oracle_guard.gate.audit_context import SilenceOutcome
from oracle_guard.gate.helper_silences import helper_explanation
from oracle_guard.oracle.ledger import function_of


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
    if '::' in function and outcome.kind == 'skip' and not outcome.imported:
        # A skip decorator on the class's setUp skips each of its tests at set-up, where
        # unittest reports it at the test: the baselined decorator explains it when the
        # run's reason is its literal reason.
        cls = function.rsplit('::', 1)[0]
        for silence in accepted.get(f'{cls}::setUp', ()):
            if silence.kind == 'unittest-skip' and silence.why == BASELINE and \
                    (not silence.reason or _skip_reason(outcome.reason) == silence.reason):
                return f'baseline: {silence.kind} on {cls}.setUp'
    if outcome.kind == 'skipif' and not outcome.imported:
        fixture = _fixture_param_skipif(outcome, ctx, accepted)
        if fixture:
            return fixture
    return _helper_importorskip(outcome, ctx, keys)


def _fixture_param_skipif(outcome: SilenceOutcome, ctx: AuditContext,
                          accepted: dict[str, list]) -> str | None:  # type: ignore[type-arg]
    """A ``skipif`` of a fixture's param in the test's file (``@pytest.fixture(params=
    [pytest.param(..., marks=pytest.mark.skipif(...))])``) marks each test that uses it:
    an accepted one explains the skip whose reason is written in that very silence."""
    from oracle_guard.reading.silence_acceptance import BASELINE
    from oracle_guard.reading.silence_acceptance import ENVIRONMENT_SKIP

    reason = _skip_reason(outcome.reason).strip()
    source = ctx.head().read(outcome.path) if reason else None
    if not source:
        return None
    lines = source.decode('utf-8', 'replace').splitlines()
    for key, silences in accepted.items():
        if not key or '::' in key or (outcome.path, key) in ctx.inventory:
            continue  # the module's, a class's or a test's own: judged above
        for silence in silences:
            if silence.kind != 'skipif' or not silence.lines:
                continue
            written = '\n'.join(lines[min(silence.lines) - 1:max(silence.lines)])
            if reason not in written:
                continue
            if silence.why == BASELINE:
                return f'baseline: skipif of the fixture {key}'
            if silence.why == ENVIRONMENT_SKIP and silence.held:
                return f'environment condition (skipif of the fixture {key}) held in this run'
    return None


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


def removed_note(outcome: SilenceOutcome, ctx: AuditContext) -> str:
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
