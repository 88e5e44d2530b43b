"""forbid-mixed-oracle-diff: a change to ``src/`` does not also change the oracle."""
from __future__ import annotations

import posixpath

from oracle_guard.config import PYPROJECT
from oracle_guard.config import read_table
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.runner import run_hook

# A change without src/ returns before the manifest reader or the pytest-configuration
# reader (and ast) is needed: they are imported where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from oracle_guard.changeset import ChangeSet
    from oracle_guard.config import Config
    from oracle_guard.runner import RunContext

HOOK = 'forbid-mixed-oracle-diff'
SHOWN = 5


def _table(raw: bytes | None) -> object:
    if raw is None:
        return None
    try:
        return read_table(raw.decode('utf-8-sig'))
    except (ConfigError, UnicodeDecodeError):
        return ('unreadable', raw)


def pytest_config_change(path: str, changes: ChangeSet,
                         tests: tuple[str, ...] = ('tests/',)) -> str | None:
    """What test-run control a touched file changes, if any (rules 32 and 33)."""
    from oracle_guard.run_control import CONFIG_NAMES
    from oracle_guard.run_control import config_change
    from oracle_guard.run_control import is_run_control_file
    from oracle_guard.run_control import run_control_change

    name = posixpath.basename(path)
    if name in CONFIG_NAMES:
        def tracked(paths: list[str]) -> list[str]:
            return [e.path for e in changes.new.entries(paths)]

        if config_change(path, changes.read_base(path), changes.read_new(path),
                         changes.read_new, tracked):
            where = {'pyproject.toml': '[tool.pytest.ini_options]', 'tox.ini': '[pytest] section',
                     'setup.cfg': '[tool:pytest] section'}.get(name, 'pytest configuration file')
            return f'{where} (what pytest runs)'
        return None
    if is_run_control_file(path, tests):
        why = run_control_change(changes.read_base(path), changes.read_new(path))
        if why:
            kind = 'conftest hooks' if name == 'conftest.py' else 'tests __init__.py'
            return f'{kind}: test-run control changed ({"; ".join(why[:3])})'
    return None


def changed_manifest_rows(changes: ChangeSet, path: str) -> list[str]:
    """Rows that existed at the base and were edited or removed; new rows are fine."""
    from oracle_guard.hooks.check_fixture_manifest import base_manifest_or_none
    from oracle_guard.manifest import parse_manifest

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


def oracle_changes(cfgs: Sequence[Config], changes: ChangeSet) -> list[tuple[str, str]]:
    """(path, what) for every oracle file the change touches."""
    touched = changes.touched()
    properties = tuple(c.properties for c in cfgs)
    oracle_files = {p for c in cfgs for p in c.oracle_files()}
    found = []
    for path in sorted(touched):
        if path.startswith(properties):
            found.append((path, 'human-owned property test'))
        elif path in oracle_files:
            found.append((path, 'oracle file'))
    if PYPROJECT in touched:
        base, new = changes.read_base(PYPROJECT), changes.read_new(PYPROJECT)
        if _table(base) != _table(new):
            found.append((PYPROJECT, '[tool.oracle-guard] table'))
    tests = tuple(root for c in cfgs for root in c.tests)
    for path in sorted(touched):
        what = pytest_config_change(path, changes, tests)
        if what:
            found.append((path, what))
    for manifest in sorted({c.manifest for c in cfgs} & touched):
        rows = changed_manifest_rows(changes, manifest)
        if rows:
            found.append((manifest, f'existing manifest rows: {_shown(rows)}'))
    return found


def _shown(items: Sequence[str]) -> str:
    extra = f' (+{len(items) - SHOWN} more)' if len(items) > SHOWN else ''
    return ', '.join(items[:SHOWN]) + extra


def check(ctx: RunContext) -> list[Finding]:
    missing = ctx.missing_base(HOOK)
    if missing or not ctx.changes.has_base:
        return missing
    changes = ctx.changes
    cfgs = [ctx.cfg, ctx.base_cfg]
    src = changes.touched_under({root for c in cfgs for root in c.src})
    if not src:
        return []
    src_shown = _shown(src)
    return [
        Finding(
            path, 1, 1, 'OG201',
            f'{what} changed in the same change as production code: {src_shown}',
            'split it: commit the oracle change on its own so a person reviews it '
            f'(git restore --staged {path}), then the code change',
        )
        for path, what in oracle_changes(cfgs, changes)
    ]


def history_check(ctx: RunContext) -> list[Finding]:
    """One commit of history mode: every rule here is about the change, so all apply."""
    return check(ctx)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(check, argv, 'A change to src/ may not also change the test oracle.',
                    history=history_check)


if __name__ == '__main__':
    raise SystemExit(main())
