"""forbid-mixed-oracle-diff: a change to ``src/`` does not also change the oracle."""
from __future__ import annotations

import posixpath
from collections.abc import Sequence

from oracle_guard.changeset import ChangeSet
from oracle_guard.hooks.check_fixture_manifest import base_manifest_or_none
from oracle_guard.config import Config
from oracle_guard.config import parse_toml
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


def _pytest_table(raw: bytes | None) -> object:
    """``[tool.pytest.ini_options]``: what pytest collects and how is oracle too."""
    if raw is None or b'pytest' not in raw:
        return None
    try:
        tool = parse_toml(raw.decode('utf-8-sig')).get('tool')
    except (ConfigError, UnicodeDecodeError):
        return ('unreadable', raw)
    return tool.get('pytest') if isinstance(tool, dict) else None


def _ini_section(raw: bytes | None, section: str) -> object:
    if raw is None or section.encode() not in raw:
        return None
    import configparser

    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(raw.decode('utf-8-sig'))
    except (configparser.Error, UnicodeDecodeError):
        return ('unreadable', raw)
    return dict(parser[section]) if parser.has_section(section) else None


def _collection_control(raw: bytes | None) -> object:
    """The parts of a conftest.py that decide which tests run and what their result is.

    Fixtures and helpers in a conftest change with the code all the time. A ``pytest_*``
    hook (collection, ``pytest_pyfunc_call``, ``pytest_runtest_*``, report wrappers), a
    ``pytest_*`` or ``collect_ignore*`` assignment and ``pytest_plugins`` can ignore,
    deselect or pass tests outright, so they are compared, as syntax.
    """
    if raw is None:
        return None
    import ast

    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ('unparsable', raw)

    def controls(name: str) -> bool:
        return name.startswith(('pytest_', 'collect_ignore'))

    parts = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
                controls(node.name):
            parts.append(ast.dump(node))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and controls(t.id) for t in targets):
                parts.append(ast.dump(node))
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and \
                any(controls((a.asname or a.name).split('.')[-1]) for a in node.names):
            parts.append(ast.dump(node))  # `from plugin import pytest_pyfunc_call`
    return parts


# pytest configuration files, found by name in any folder (pytest reads the one nearest
# the arguments it is given): the whole file, or the section pytest reads there.
# --ignore, --deselect, -p no:oracle_guard or a narrower testpaths silence tests as
# surely as a skip marker does.
PYTEST_FILES = ('pytest.ini', '.pytest.ini', 'pytest.toml', '.pytest.toml')
PYTEST_SECTIONS = {'tox.ini': 'pytest', 'setup.cfg': 'tool:pytest'}


def pytest_config_change(path: str, changes: ChangeSet) -> str | None:
    """What pytest configuration a touched file changes, if any."""
    name = posixpath.basename(path)
    if name in PYTEST_FILES:
        return 'pytest configuration file (what pytest runs)'
    section = PYTEST_SECTIONS.get(name)
    if section and _ini_section(changes.read_base(path), section) != \
            _ini_section(changes.read_new(path), section):
        return f'[{section}] section (what pytest runs)'
    if name == 'pyproject.toml' and path != PYPROJECT and \
            _pytest_table(changes.read_base(path)) != _pytest_table(changes.read_new(path)):
        return '[tool.pytest.ini_options] (what pytest runs)'
    if name == 'conftest.py' and _collection_control(changes.read_base(path)) != \
            _collection_control(changes.read_new(path)):
        return 'conftest hooks (pytest_*, collect_ignore, pytest_plugins)'
    return None


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
        if _pytest_table(base) != _pytest_table(new):
            found.append((PYPROJECT, '[tool.pytest.ini_options] (what pytest runs)'))
    for path in sorted(touched):
        what = pytest_config_change(path, changes)
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
