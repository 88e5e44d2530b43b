"""The review report: every oracle change of a pull request, in Markdown, for the person
who approves it (``oracle-guard ci --report FILE.md`` and ``$GITHUB_STEP_SUMMARY``).

The hooks let an oracle change through when it comes alone; this report is how a person
sees exactly what such a change loosens: lock entries (old -> new), freeze rows (owner,
class, expiry), baseline entries, fixtures added or rehashed, property files, test
identities that disappeared, and pytest configuration or conftest test-run control.
"""
from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from oracle_guard.repo.changeset import ChangeSet
from oracle_guard.config import Config
from oracle_guard.findings import ConfigError
from oracle_guard.repo.gitrepo import TreeView
from oracle_guard.context import RunContext

TITLE = '## oracle-guard: oracle changes in this pull request'
NO_CHANGE = 'No oracle change in this pull request.'
STATUS = {'A': 'added', 'M': 'modified', 'D': 'deleted', 'R': 'renamed', 'C': 'copied',
          'T': 'type changed'}


def _code(text: object) -> str:
    value = str(text).replace('`', "'").replace('\n', ' ')
    return f'`{value}`'


def _cell(text: object) -> str:
    return str(text).replace('|', '\\|').replace('\n', ' ')


def _read_both(changes: ChangeSet, path: str, parse: Callable[[bytes, str], Any]
               ) -> tuple[Any, Any, str | None]:
    """(base document, new document, why unreadable) of one oracle file."""
    try:
        base_raw, new_raw = changes.read_base(path), changes.read_new(path)
        base = parse(base_raw, path) if base_raw is not None else None
        new = parse(new_raw, path) if new_raw is not None else None
    except ConfigError as exc:
        return None, None, str(exc)
    return base, new, None


def lock_section(cfg: Config, changes: ChangeSet) -> list[str]:
    from oracle_guard.oracle.domain_lock import empty_lock
    from oracle_guard.oracle.domain_lock import loosened_entries
    from oracle_guard.oracle.domain_lock import parse_lock

    path = cfg.domain_lock
    if path not in changes.touched():
        return []
    base, new, problem = _read_both(changes, path, parse_lock)
    if problem:
        return [f'- {_code(path)} changed and cannot be read: {problem}']
    lines = [f'- {_code(identity)}: {what} ({_code(path)})'
             for identity, what, _ in loosened_entries(base or empty_lock(path),
                                                       new or empty_lock(path))]
    return lines


def ledger_sections(cfg: Config, changes: ChangeSet) -> tuple[list[str], list[str]]:
    """(rows added, rows changed or removed)."""
    from oracle_guard.oracle.ledger import parse_ledger

    path = cfg.ledger
    if path not in changes.touched():
        return [], []
    base, new, problem = _read_both(changes, path, parse_ledger)
    if problem:
        return [], [f'- {_code(path)} changed and cannot be read: {problem}']
    old_rows = {row.id: row for row in (base.rows if base else [])}
    new_rows = {row.id: row for row in (new.rows if new else [])}
    added = ['| id | test | class | owner | expires | evidence |',
             '|---|---|---|---|---|---|']
    for row_id, row in new_rows.items():
        if row_id not in old_rows:
            added.append(f'| {_cell(row.id)} | {_cell(row.nodeid)} | {_cell(row.freeze_class)} '
                         f'| {_cell(row.owner)} | {_cell(row.raw.get("expires"))} '
                         f'| {_cell(row.raw.get("evidence", ""))} |')
    changed = []
    for row_id, row in old_rows.items():
        if row_id not in new_rows:
            changed.append(f'- {_code(row_id)} removed (was {_code(row.nodeid)})')
            continue
        edits = [f'{key} {_code(row.raw.get(key))} -> {_code(new_rows[row_id].raw.get(key))}'
                 for key in sorted(set(row.raw) | set(new_rows[row_id].raw))
                 if row.raw.get(key) != new_rows[row_id].raw.get(key)]
        if edits:
            changed.append(f'- {_code(row_id)}: ' + ', '.join(edits))
    if base is not None and new is not None and base.budget != new.budget:
        changed.append(f'- budget {_code(base.budget)} -> {_code(new.budget)}')
    return (added if len(added) > 2 else []), changed


def baseline_section(cfg: Config, changes: ChangeSet) -> list[str]:
    path = getattr(cfg, 'baseline', None)
    if not path or path not in changes.touched():
        return []
    try:
        from oracle_guard.oracle.baseline import grown_entries
        from oracle_guard.oracle.baseline import grown_excluded
        from oracle_guard.oracle.baseline import parse_baseline
        from oracle_guard.oracle.baseline import empty_baseline
    except ImportError:
        return [f'- {_code(path)} changed']
    base, new, problem = _read_both(changes, path, parse_baseline)
    if problem:
        return [f'- {_code(path)} changed and cannot be read: {problem}']
    base, new = base or empty_baseline(path), new or empty_baseline(path)
    lines = [f'- {_code(entry.path)} {entry.kind} of {", ".join(entry.tests) or "the module"}: '
             f'{_code(entry.expression)}' for entry in grown_entries(base, new)]
    lines += [f'- excluded {_code(test.nodeid)} ({test.by})' for test in grown_excluded(base, new)]
    return lines


def fixtures_section(cfg: Config, changes: ChangeSet) -> list[str]:
    from oracle_guard.oracle.manifest import parse_manifest

    path = cfg.manifest
    if path not in changes.touched():
        return []
    base, new, problem = _read_both(changes, path, parse_manifest)
    if problem:
        return [f'- {_code(path)} changed and cannot be read: {problem}']
    old_rows = base.rows if base else {}
    new_rows = new.rows if new else {}
    lines = []
    for key, row in sorted(new_rows.items()):
        old = old_rows.get(key)
        source = row.source or '?'
        if old is None:
            what = f'added, source {source}'
            if row.get('purpose'):
                what += f', purpose "{row.get("purpose")}"'
            lines.append(f'- {_code(row.key)}: {what}')
        elif old.raw != row.raw:
            parts = []
            if old.sha256 != row.sha256:
                parts.append(f'rehashed {old.sha256[:12]}… -> {row.sha256[:12]}…')
            for field in ('source', 'purpose', 'trace_id', 'schema', 'rewritable_by_agent',
                          'role'):
                if old.get(field) != row.get(field):
                    parts.append(f'{field} {_code(old.get(field))} -> {_code(row.get(field))}')
            lines.append(f'- {_code(row.key)}: ' + ', '.join(parts or ['row edited']))
    lines += [f'- {_code(old_rows[key].key)}: row removed'
              for key in sorted(set(old_rows) - set(new_rows))]
    return lines


def properties_section(cfgs: Sequence[Config], changes: ChangeSet) -> list[str]:
    roots = tuple(c.properties for c in cfgs)
    lines = []
    for change in sorted(changes.changes, key=lambda c: c.path):
        paths = [change.path, change.old_path or '']
        if any(p.startswith(roots) for p in paths if p):
            what = STATUS.get(change.status, change.status)
            if change.old_path:
                what += f' from {_code(change.old_path)}'
            lines.append(f'- {_code(change.path)}: {what}')
    return lines


def _identities(view: TreeView | None, paths: Sequence[str]) -> set[str]:
    from oracle_guard.gate.audit import file_inventory

    found: set[str] = set()
    if view is None:
        return found
    for path in paths:
        source = view.read(path)
        if source is not None:
            found.update(test.identity for test in file_inventory(source, path))
    return found


def removed_tests_section(cfgs: Sequence[Config], changes: ChangeSet) -> list[str]:
    """Test identities defined at the base in a touched test file and nowhere after."""
    from oracle_guard.reading.scanner import is_test_module

    tests = tuple(root for c in cfgs for root in c.tests)
    touched = sorted(p for p in changes.touched() if p.startswith(tests) and is_test_module(p))
    if not touched:
        return []
    lines = []
    after = _identities(changes.new, touched)
    for path in touched:
        gone = _identities(changes.base_view, [path]) - after
        lines += [f'- {_code(f"{path}::{identity}")}' for identity in sorted(gone)]
    return lines


def control_section(cfgs: Sequence[Config], changes: ChangeSet) -> list[str]:
    """pytest configuration, conftest test-run control, the guard's own configuration."""
    from oracle_guard.hooks.forbid_mixed_oracle_diff import oracle_changes

    detailed = {c.ledger for c in cfgs} | {c.domain_lock for c in cfgs} | \
        {c.manifest for c in cfgs} | {getattr(c, 'baseline', '') for c in cfgs}
    properties = tuple(c.properties for c in cfgs)
    lines = []
    for path, what in oracle_changes(cfgs, changes):
        if path in detailed or path.startswith(properties):
            continue  # shown in their own section
        lines.append(f'- {_code(path)}: {what}')
    return lines


def review_report(ctx: RunContext) -> str:
    changes = ctx.changes
    cfgs = [ctx.cfg, ctx.base_cfg]
    cfg = ctx.cfg
    added, changed = ledger_sections(cfg, changes)
    sections = [
        ('Lock entries loosened', lock_section(cfg, changes)),
        ('Freeze rows added', added),
        ('Freeze rows changed or removed', changed),
        ('Baseline grown', baseline_section(cfg, changes)),
        ('Fixtures added or rehashed', fixtures_section(cfg, changes)),
        ('Properties edited', properties_section(cfgs, changes)),
        ('Tests removed', removed_tests_section(cfgs, changes)),
        ('Test-run control and configuration changed', control_section(cfgs, changes)),
    ]
    where = f'{changes.description}' + (f' (merge-base `{changes.base[:12]}`)'
                                         if changes.base else '')
    out = [TITLE, '', f'Range: {where}.', '']
    shown = [(title, lines) for title, lines in sections if lines]
    if not shown:
        out += [NO_CHANGE, '']
    for title, lines in shown:
        out += [f'### {title}', '', *lines, '']
    return '\n'.join(out)
