"""forbid-mixed-oracle-diff: a change to ``src/`` does not also change the oracle."""
from __future__ import annotations

from collections.abc import Sequence

from oracle_guard.changeset import ChangeSet
from oracle_guard.check_fixture_manifest import base_manifest_or_none
from oracle_guard.config import Config
from oracle_guard.config import PYPROJECT
from oracle_guard.config import read_table
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.manifest import parse_manifest
from oracle_guard.runner import RunContext
from oracle_guard.runner import run_hook

HOOK = 'forbid-mixed-oracle-diff'
SHOWN = 5


def _table(raw: bytes | None) -> object:
    if raw is None:
        return None
    try:
        return read_table(raw.decode('utf-8-sig'))
    except (ConfigError, UnicodeDecodeError):
        return ('unreadable', raw)


def changed_manifest_rows(changes: ChangeSet, path: str) -> list[str]:
    """Rows that existed at the base and were edited or removed; new rows are fine."""
    base = base_manifest_or_none(changes, path)
    if base is None:
        return [] if changes.read_base(path) is None else ['(the whole manifest)']
    raw = changes.read_new(path)
    if raw is None:
        return sorted(base.rows)
    try:
        new = parse_manifest(raw, path)
    except ConfigError:
        return ['(the whole manifest)']
    return sorted(p for p, row in base.rows.items()
                  if p not in new.rows or new.rows[p].raw != row.raw)


def oracle_changes(cfg: Config, changes: ChangeSet) -> list[tuple[str, str]]:
    """(path, what) for every oracle file the change touches."""
    touched = changes.touched()
    found = []
    for path in sorted(touched):
        if path.startswith(cfg.properties):
            found.append((path, 'human-owned property test'))
        elif path in cfg.oracle_files():
            found.append((path, 'oracle file'))
    if PYPROJECT in touched and \
            _table(changes.read_base(PYPROJECT)) != _table(changes.read_new(PYPROJECT)):
        found.append((PYPROJECT, '[tool.oracle-guard] table'))
    if cfg.manifest in touched:
        rows = changed_manifest_rows(changes, cfg.manifest)
        if rows:
            shown = ', '.join(rows[:SHOWN]) + (f' (+{len(rows) - SHOWN} more)' if len(rows) > SHOWN else '')
            found.append((cfg.manifest, f'existing manifest rows: {shown}'))
    return found


def check(ctx: RunContext) -> list[Finding]:
    missing = ctx.missing_base(HOOK)
    if missing or not ctx.changes.has_base:
        return missing
    cfg, changes = ctx.cfg, ctx.changes
    src = changes.touched_under(cfg.src)
    if not src:
        return []
    src_shown = ', '.join(src[:SHOWN]) + (f' (+{len(src) - SHOWN} more)' if len(src) > SHOWN else '')
    return [
        Finding(
            path, 1, 1, 'OG201',
            f'{what} changed in the same change as production code: {src_shown}',
            'split it: commit the oracle change on its own so a person reviews it '
            f'(git restore --staged {path}), then the code change',
        )
        for path, what in oracle_changes(cfg, changes)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(check, argv, 'A change to src/ may not also change the test oracle.')


if __name__ == '__main__':
    raise SystemExit(main())
