"""Skips of the run that a helper module's silence explains: ``requires_network =
unittest.skip("no network")`` in ``tests/support.py``, applied as ``@requires_network`` in a
test module that imports it.

The scanner judges such a binding where it is written (a silence of the helper module), so
the baseline holds it there. The audit accepts a skip of a test when the test's file
imports that helper and the helper's accepted module-level silence is of the run's kind
and gives the very literal reason the run reported (a bare ``skip = unittest.skip`` there
explains nothing: it has no reason of its own).
"""
from __future__ import annotations

import posixpath
from typing import Any

from oracle_guard.reading import syntax as ast
from oracle_guard.reading.module_body import module_statements
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.silence_acceptance import BASELINE
from oracle_guard.reading.silence_acceptance import ENVIRONMENT_SKIP

_SKIPPED = 'Skipped: '


def imported_helpers(path: str, ctx: Any) -> list[str]:
    """The helper modules of the test roots the test file ``path`` imports by name."""
    source = ctx.head().read(path)
    try:
        tree = parse_python(source, path) if source is not None else None
    except ScanError:
        tree = None
    ctx.accepted(path)  # reads this side's helper modules once: ctx._helpers
    helpers = ctx._helpers
    folder = posixpath.dirname(path)
    found = []
    for node in module_statements(tree.body) if tree is not None else ():
        if isinstance(node, ast.ImportFrom):
            found.append(helpers.module(folder, node.module, node.level))
        elif isinstance(node, ast.Import):
            found.extend(helpers.module(folder, alias.name, 0) for alias in node.names)
    return [p for p in dict.fromkeys(found) if p is not None and p != path]


def helper_explanation(outcome: Any, ctx: Any, run_kinds: dict[str, tuple[str, ...]]
                       ) -> str | None:
    """Why a skip of the run is a silence a helper module binds and holds accepted."""
    reason = outcome.reason.strip()
    reason = reason[len(_SKIPPED):] if reason.startswith(_SKIPPED) else reason
    if not reason or outcome.kind == 'collection-skip':
        return None
    for helper in imported_helpers(outcome.path, ctx):
        for silence in ctx.accepted(helper).get('', ()):
            if silence.reason != reason or \
                    outcome.kind not in run_kinds.get(silence.kind, (silence.kind,)):
                continue
            if silence.why == BASELINE or (silence.why == ENVIRONMENT_SKIP and silence.held):
                return f'{silence.kind} bound in {helper} ({silence.why})'
    return None
