"""The fixture manifest (SPEC §3.1): one row per fixture file, keyed by path."""
from __future__ import annotations

import posixpath
import re
from typing import Any

from oracle_guard.oracle.documents import LinedDict
from oracle_guard.oracle.documents import load_json
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.oracle.records import FrozenRecord
from oracle_guard.oracle.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from oracle_guard.repo.changeset import ChangeSet

SOURCES = ('human', 'recorded', 'synthetic', 'untrusted')
ROLES = ('input', 'oracle')
ROW_FIELDS = ('sha256', 'source', 'purpose', 'trace_id', 'schema', 'rewritable_by_agent', 'role')
TOP_FIELDS = ('version', 'fixtures')
SHA256 = re.compile(r'^[0-9a-f]{64}$')


class FixtureRow(FrozenRecord):
    __slots__ = ('key', 'path', 'line', 'raw')
    key: str  # as written: relative to the manifest's key folder
    path: str  # relative to the repository root
    line: int
    raw: dict[str, Any]

    def __init__(self, key: str, path: str, line: int, raw: dict[str, Any]) -> None:
        self._set(key=key, path=path, line=line, raw=raw)

    @property
    def sha256(self) -> str:
        value = self.raw.get('sha256')
        return value if isinstance(value, str) else ''

    @property
    def source(self) -> str:
        value = self.raw.get('source')
        return value if isinstance(value, str) else ''

    def get(self, key: str) -> Any:
        return self.raw.get(key)

    def line_of(self, key: str) -> int:
        raw = self.raw
        return raw.line_of(key) if isinstance(raw, LinedDict) else self.line


class FixtureManifest(Record):
    __slots__ = ('path', 'rows', 'problems', 'folder')
    path: str
    rows: dict[str, FixtureRow]  # by repository path
    problems: list[Finding]  # rows that are present but malformed
    # What the keys are relative to: the manifest's own folder, or the repository root
    # ('') when the configuration names several fixture folders (Config.manifest_folder).
    folder: str

    def __init__(self, path: str, rows: dict[str, FixtureRow], problems: list[Finding],
                 folder: str | None = None) -> None:
        self.path = path
        self.rows = rows
        self.problems = problems
        if folder is None:
            folder = posixpath.dirname(path)
            folder = f'{folder}/' if folder else ''
        self.folder = folder


def row_key_problem(key: str) -> str | None:
    """Why a manifest key is not a safe path below the manifest's folder, if it is not."""
    if not key or key.strip() != key:
        return 'empty or padded path'
    if key.startswith('/') or re.match(r'^[A-Za-z]:', key):
        return 'absolute path'
    if '\\' in key:
        return 'backslash in path (use /)'
    parts = key.split('/')
    if '..' in parts:
        return "path with '..'"
    if any(p in ('', '.') for p in parts):
        return 'path with empty or "." segments'
    return None


def _row_problems(manifest_path: str, key: str, row: dict[str, Any], line: int) -> list[Finding]:
    def finding(message: str, field: str | None = None, hint: str = '') -> Finding:
        at = row.line_of(field) if field and isinstance(row, LinedDict) else line
        return Finding(manifest_path, at, 1, 'OG107', f'{key}: {message}', hint)

    problems = []
    for name in row:
        if name not in ROW_FIELDS:
            problems.append(finding(f'unknown field {name!r}', name,
                                    f'allowed fields: {", ".join(ROW_FIELDS)}'))
    sha = row.get('sha256')
    if not isinstance(sha, str) or not SHA256.match(sha):
        problems.append(finding('sha256 must be 64 lowercase hex digits', 'sha256',
                                f'oracle-guard fixtures rehash {key!r} --purpose "…"'))
    source = row.get('source')
    if source not in SOURCES:
        problems.append(finding(f'source {source!r} is not one of {", ".join(SOURCES)}',
                                'source'))
    for name in ('purpose', 'trace_id', 'schema'):
        if name in row and not isinstance(row[name], str):
            problems.append(finding(f'{name} must be a string', name))
    if 'rewritable_by_agent' in row and not isinstance(row['rewritable_by_agent'], bool):
        problems.append(finding('rewritable_by_agent must be true or false',
                                'rewritable_by_agent'))
    if 'role' in row and row['role'] not in ROLES:
        problems.append(finding(f'role must be one of {", ".join(ROLES)}', 'role'))
    return problems


def parse_manifest(raw: bytes, path: str, folder: str | None = None) -> FixtureManifest:
    """Parse a manifest; a document that is not a manifest at all is a ConfigError.
    ``folder``: what the keys are relative to (default: the manifest's own folder)."""
    data = load_json(raw, path)
    if not isinstance(data, dict):
        raise ConfigError(path, 1, 'the manifest must be a JSON object with "version" and "fixtures"')
    for name in data:
        if name not in TOP_FIELDS:
            raise ConfigError(path, data.line_of(name), f'unknown top-level key {name!r}',
                              'a manifest holds only "version" and "fixtures"')
    if data.get('version') != 1:
        raise ConfigError(path, data.line_of('version'), 'unsupported manifest version '
                          f'{data.get("version")!r}; expected 1')
    fixtures = data.get('fixtures', {})
    if not isinstance(fixtures, dict):
        raise ConfigError(path, data.line_of('fixtures'), '"fixtures" must be an object')
    manifest = FixtureManifest(path, {}, [], folder)
    folder = manifest.folder
    for key, row in fixtures.items():
        line = fixtures.line_of(key)
        if not isinstance(row, dict):
            manifest.problems.append(Finding(path, line, 1, 'OG107', f'{key}: a row must be an object'))
            continue
        why = row_key_problem(key)
        if why:
            manifest.problems.append(Finding(
                path, line, 1, 'OG105', f'{key!r}: {why}; fixtures must live below {folder or "the repository root"}',
                'key each row by its path relative to the manifest folder',
            ))
            continue
        manifest.problems.extend(_row_problems(path, key, row, line))
        repo_path = folder + key
        manifest.rows[repo_path] = FixtureRow(key, repo_path, line, row)
    return manifest


def base_manifest_or_none(changes: ChangeSet, path: str,
                          folder: str | None = None) -> FixtureManifest | None:
    """The manifest at the base revision; None when there is none or it does not parse."""
    raw = changes.read_base(path)
    if raw is None:
        return None
    try:
        return parse_manifest(raw, path, folder)
    except ConfigError:
        return None
