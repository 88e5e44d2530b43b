"""Fixture provenance (SPEC §3.1, decision rows 5-9): where a fixture's answer came from.

The hash rules say the bytes did not move; these rules say the label on the bytes
is honest. A ``recorded`` fixture points at a trace id a person recorded *before*
the change, a ``synthetic`` one is pinned to a JSON Schema, and a row the change
touches cannot quietly become agent-writable or get new bytes without a new
purpose. The hook (check-fixture-manifest) and the human-run commands
(``oracle-guard fixtures``) share everything in this module.
"""
from __future__ import annotations

import datetime
import os
import posixpath
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

from oracle_guard.oracle.documents import LinedDict
from oracle_guard.oracle.documents import load_json
from oracle_guard.oracle.documents import load_yaml
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.oracle.ledger import FreezeLedger
from oracle_guard.oracle.ledger import FreezeRow
from oracle_guard.oracle.ledger import parse_ledger
from oracle_guard.oracle.manifest import FixtureManifest
from oracle_guard.oracle.manifest import FixtureRow
from oracle_guard.oracle.manifest import row_key_problem
from oracle_guard.oracle.manifest import SHA256

PURPOSE_PLACEHOLDER = '"…"'


def body_format(path: str) -> str | None:
    """'JSON' or 'YAML' for a fixture whose file type identify names so (``.json``,
    ``.geojson``, ``.jsonld``, ``.ipynb``, ``.yaml``, ``.yml``, ...), None for any other: its
    bytes are held to the hash alone. identify is imported here, on the first synthetic row,
    never on a commit's hot path."""
    from identify.identify import tags_from_filename

    tags = tags_from_filename(path)
    if 'json' in tags:
        return 'JSON'
    if 'yaml' in tags:
        return 'YAML'
    return None


# -- the trace store ------------------------------------------------------------------

def parse_traces(raw: bytes | None, path: str, *, strict: bool = True) -> dict[str, int]:
    """Trace ids (id -> line) from the trace store: one id a line, ``#`` starts a comment.

    ``strict=False`` is for the base revision: a store that was already malformed
    there is not this change's fault, so unreadable lines are simply not evidence.
    """
    if raw is None:
        return {}
    try:
        text = raw.decode('utf-8-sig')
    except UnicodeDecodeError as exc:
        if not strict:
            text = raw.decode('utf-8', 'replace')
        else:
            raise ConfigError(path, raw.count(b'\n', 0, exc.start) + 1,
                              'the trace store is not valid UTF-8', 'save it as UTF-8') from None
    ids: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        value = line.split('#', 1)[0].strip()
        if not value:
            continue
        if len(value.split()) != 1:
            if strict:
                raise ConfigError(path, number, f'trace store line {value!r} holds more than one id',
                                  'write one trace id a line; "#" starts a comment')
            continue
        ids.setdefault(value, number)
    return ids


# -- schemas for synthetic fixtures ---------------------------------------------------

def _line_at(document: Any, steps: Iterable[Any], default: int) -> int:
    """The line of the deepest key on a path into a parsed document, as far as known."""
    line = getattr(document, 'line', 0) or default
    node = document
    for step in steps:
        if isinstance(node, LinedDict) and step in node:
            line = node.line_of(step)
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
            line = getattr(node, 'line', 0) or line
        else:
            break
    return line


def _config_error_in(exc: BaseException) -> ConfigError | None:
    """The ConfigError a failed $ref retrieval was wrapped around, if any."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ConfigError):
            return current
        todo.extend((current.__cause__, current.__context__, getattr(current, '_wrapped', None)))
    return None


class SchemaBook:
    """JSON Schemas read from one side of the change, each loaded and checked once.

    jsonschema is imported on the first synthetic row, never before. ``$ref`` to
    another file resolves inside the repository only: the hooks run offline, and
    jsonschema's default would fetch ``http`` references from the network.
    """

    def __init__(self, view: TreeView, *, require_tracked: bool = True) -> None:
        self.view = view
        # The hook judges what git records; the human-run commands accept a schema
        # that is on disk but not yet added.
        self.require_tracked = require_tracked
        self._validators: dict[str, Any] = {}
        self._problems: dict[str, str] = {}

    def problem(self, schema_path: str) -> str | None:
        """Why ``schema_path`` cannot serve as a schema (not a tracked regular file)."""
        if schema_path not in self._problems:
            self._problems[schema_path] = self._find_problem(schema_path) or ''
        return self._problems[schema_path] or None

    def _find_problem(self, schema_path: str) -> str | None:
        why = row_key_problem(schema_path)
        if why:
            return f'schema {schema_path!r}: {why}; use a path relative to the repository root'
        if not self.require_tracked and self.view.rev is None:
            full = os.path.join(self.view.root, schema_path)
            if os.path.islink(full) or not os.path.isfile(full):
                return f'schema {schema_path} is not a regular file'
            return None
        entries = self.view.entries([schema_path])
        entry = next((e for e in entries if e.path == schema_path), None)
        if entry is None:
            return f'schema {schema_path} is not a file in the repository'
        if entry.is_symlink or entry.is_submodule:
            return f'schema {schema_path} is a symlink or submodule, not a regular file'
        return None

    def _document(self, schema_path: str) -> Any:
        raw = self.view.read(schema_path)
        if raw is None:
            raise ConfigError(schema_path, 0, 'the schema file cannot be read')
        return load_json(raw, schema_path)

    def validator(self, schema_path: str) -> Any:
        """A jsonschema validator for the schema; an invalid schema is a ConfigError."""
        if schema_path in self._validators:
            return self._validators[schema_path]
        try:
            import jsonschema
            import referencing
            import referencing.jsonschema
        except ImportError:
            raise ConfigError(
                schema_path, 0, 'checking a synthetic fixture needs the jsonschema library',
                'pip install "jsonschema>=4.18" (or add it to additional_dependencies)',
            ) from None
        schema = self._document(schema_path)
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ConfigError(
                schema_path, _line_at(schema, exc.path, 1),
                f'not a valid JSON Schema: {exc.message} (at {"/".join(map(str, exc.path)) or "the top"})',
                'fix the schema; every synthetic fixture that names it is checked against it',
            ) from None

        def retrieve(uri: str) -> Any:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(schema_path), uri))
            if ':' in uri.split('/', 1)[0] or uri.startswith('//') or row_key_problem(target):
                raise ConfigError(
                    schema_path, 0, f'$ref {uri!r} points outside the repository; '
                    'oracle-guard runs offline', 'vendor the referenced schema into the '
                    'repository and $ref it by a relative path',
                )
            if self.problem(target):
                raise ConfigError(schema_path, 0, f'$ref {uri!r}: {self.problem(target)}')
            return referencing.Resource.from_contents(
                self._document(target), default_specification=referencing.jsonschema.DRAFT202012,
            )

        validator = cls(schema, registry=referencing.Registry(retrieve=retrieve))
        self._validators[schema_path] = validator
        return validator

    def body_problem(self, row: FixtureRow, schema_path: str) -> tuple[int, str] | None:
        """(line, why) when a JSON/YAML fixture's body does not satisfy its schema."""
        path = row.path
        kind = body_format(path)
        if kind is None:
            return None  # only structured bodies have a schema to satisfy
        load = load_json if kind == 'JSON' else load_yaml
        validator = self.validator(schema_path)
        raw = self.view.read(path)
        if raw is None:
            return None  # a missing file is reported by the hash rules
        try:
            body = load(raw, path)
        except ConfigError as exc:
            return exc.line or 1, f'is not valid {kind}: {exc.message}'
        import jsonschema.exceptions
        import referencing.exceptions
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(body))
        except referencing.exceptions.Unresolvable as exc:
            raise _config_error_in(exc) or ConfigError(
                schema_path, 0, f'cannot resolve $ref: {exc}',
            ) from None
        if error is None:
            return None
        why = f'does not match {schema_path} at {error.json_path}: {error.message}'
        return _line_at(body, error.absolute_path, 1), why


# -- freezes that pin a fixture's provenance ------------------------------------------

def ledger_or_none(raw: bytes | None, path: str, *, strict: bool) -> FreezeLedger | None:
    if raw is None:
        return None
    try:
        return parse_ledger(raw, path)
    except ConfigError:
        if strict:
            raise
        return None


def freezes_listing(ledgers: Sequence[FreezeLedger | None], row: FixtureRow,
                    today: datetime.date) -> list[FreezeRow]:
    """Live freezes (in any of the ledgers) whose ``fixtures`` name this fixture.

    A freeze may name the fixture by its manifest key or by its repository path.
    """
    found: dict[str, FreezeRow] = {}
    for ledger in ledgers:
        if ledger is None:
            continue
        for freeze in ledger.rows:
            if freeze.is_live(today) and (row.key in freeze.fixtures or row.path in freeze.fixtures):
                found.setdefault(freeze.id or f'line {freeze.line}', freeze)
    return [found[k] for k in sorted(found)]


def same_purpose(old: Any, new: Any) -> bool:
    """Purposes compared as prose: re-spacing a sentence does not explain new bytes."""
    def norm(value: Any) -> str:
        return ' '.join(value.split()) if isinstance(value, str) else ''
    return norm(old) == norm(new)


def has_purpose(row: FixtureRow) -> bool:
    purpose = row.get('purpose')
    return isinstance(purpose, str) and bool(purpose.strip())


def rehash_command(row: FixtureRow, extra: str = '') -> str:
    return f'oracle-guard fixtures rehash {row.path}{extra} --purpose {PURPOSE_PLACEHOLDER}'


# -- the rules ------------------------------------------------------------------------

class ProvenanceCheck:
    """Rows 5-9 for the rows one run judges.

    ``judged`` rows get the rules about the row as it stands (trace id known,
    schema satisfied); ``changed`` rows, those the change adds or edits against
    ``base``, get the rules about the edit itself. Both lists are already cut
    down to the change in commit context, so the cost follows the change.
    """

    def __init__(self, manifest_path: str, traces_path: str, ledger_path: str,
                 view: TreeView, today: datetime.date,
                 read_base: Any = None) -> None:
        self.manifest_path = manifest_path
        self.traces_path = traces_path
        self.ledger_path = ledger_path
        self.view = view
        self.today = today
        self.read_base = read_base  # path -> bytes | None at the base revision, or None
        self.schemas = SchemaBook(view)
        self._new_traces: dict[str, int] | None = None
        self._base_traces: dict[str, int] | None = None

    def finding(self, row: FixtureRow, field: str, code: str, message: str, hint: str) -> Finding:
        return Finding(self.manifest_path, row.line_of(field), 1, code, f'{row.path}: {message}', hint)

    @property
    def new_traces(self) -> dict[str, int]:
        if self._new_traces is None:
            self._new_traces = parse_traces(self.view.read_document(self.traces_path),
                                            self.traces_path)
        return self._new_traces

    @property
    def base_traces(self) -> dict[str, int]:
        if self._base_traces is None:
            raw = self.read_base(self.traces_path) if self.read_base else None
            self._base_traces = parse_traces(raw, self.traces_path, strict=False)
        return self._base_traces

    def recorded(self, row: FixtureRow, *, changed: bool) -> list[Finding]:
        trace_id = row.get('trace_id')
        if not isinstance(trace_id, str) or not trace_id.strip():
            return [self.finding(
                row, 'source', 'OG110', 'source "recorded" needs a trace_id naming the recording',
                rehash_command(row, ' --source recorded --trace-id TRACE_ID'),
            )]
        commit_trace = (f'git commit -m "record trace {trace_id}" -- {self.traces_path}, '
                        'then commit this row')
        if changed and self.read_base is not None and trace_id not in self.base_traces:
            also = ('it is added by this same change' if trace_id in self.new_traces
                    else 'nor is it in the store now')
            return [self.finding(
                row, 'trace_id',
                'OG111', f'trace id {trace_id!r} is not in {self.traces_path} at the base revision '
                f'({also}); a change cannot mint a trace id',
                f'record the trace in a commit of its own: {commit_trace}',
            )]
        if trace_id not in self.new_traces:
            return [self.finding(
                row, 'trace_id', 'OG111',
                f'trace id {trace_id!r} is not in the trace store {self.traces_path}',
                f'restore the trace id in the store in a commit of its own ({commit_trace}), '
                'or: ' + rehash_command(row, ' --source recorded --trace-id TRACE_ID'),
            )]
        return []

    def synthetic(self, row: FixtureRow) -> list[Finding]:
        schema = row.get('schema')
        if not isinstance(schema, str) or not schema.strip():
            return [self.finding(
                row, 'source', 'OG112', 'source "synthetic" needs a schema (a JSON Schema file '
                'in the repository) the body is held to',
                rehash_command(row, ' --source synthetic --schema SCHEMA.json'),
            )]
        problem = self.schemas.problem(schema)
        if problem:
            return [self.finding(
                row, 'schema', 'OG113', problem,
                f'git add {schema}, or point the row at the right file: '
                + rehash_command(row, ' --schema SCHEMA.json'),
            )]
        bad = self.schemas.body_problem(row, schema)
        if bad is None:
            return []
        line, why = bad
        return [Finding(
            row.path, line, 1, 'OG114', f'synthetic fixture {why}',
            f'restore the reviewed bytes (git checkout HEAD -- {row.path}); a person who means '
            f'the change fixes the body and runs: {rehash_command(row)}',
        )]

    def judged(self, rows: Iterable[FixtureRow], changed_paths: set[str]) -> list[Finding]:
        findings: list[Finding] = []
        for row in rows:
            if row.source == 'recorded':
                findings.extend(self.recorded(row, changed=row.path in changed_paths))
            elif row.source == 'synthetic':
                findings.extend(self.synthetic(row))
        return findings

    def _ledgers(self) -> list[FreezeLedger | None]:
        raw_base = self.read_base(self.ledger_path) if self.read_base else None
        return [ledger_or_none(raw_base, self.ledger_path, strict=False),
                ledger_or_none(self.view.read(self.ledger_path), self.ledger_path, strict=True)]

    def edits(self, changed: Iterable[FixtureRow], base: FixtureManifest | None,
              renames: dict[str, str] | None = None,
              present: Iterable[str] | None = None) -> list[Finding]:
        """Rules about what the change did to a row (needs a base revision).

        ``renames`` maps a fixture's new path to its path at the base, so a renamed
        fixture is judged against the row it had; ``present`` are the rows the manifest
        now holds, so a recorded row a live freeze lists cannot simply disappear.
        """
        renames = renames or {}
        findings: list[Finding] = []
        ledgers: list[FreezeLedger | None] | None = None
        if base is not None and present is not None:
            kept = set(present) | set(renames.values())
            for path, old in sorted(base.rows.items()):
                if path in kept or old.source != 'recorded':
                    continue
                if ledgers is None:
                    ledgers = self._ledgers()
                freezes = freezes_listing(ledgers, old, self.today)
                if freezes:
                    ids = ', '.join(f.id or f'(line {f.line})' for f in freezes)
                    findings.append(Finding(
                        self.manifest_path, 1, 1, 'OG118',
                        f'{path}: recorded row removed while live freeze {ids} lists this '
                        'fixture; the frozen test still trusts the recording',
                        f'restore the row and the file (git checkout HEAD -- {path} '
                        f'{self.manifest_path}); lift {ids} first, in a change of its own',
                    ))
        for row in changed:
            old = base.rows.get(row.path) if base else None
            if old is None and base is not None and row.path in renames:
                old = base.rows.get(renames[row.path])  # a renamed fixture keeps its history
            if row.get('rewritable_by_agent') is True:
                findings.append(self.finding(
                    row, 'rewritable_by_agent', 'OG116',
                    'rewritable_by_agent: true on a row this change adds or edits; only a row a '
                    'person already reviewed may carry it',
                    f'drop the flag: {rehash_command(row)} (it never writes the flag)',
                ))
            if row.source == 'human' and not has_purpose(row):
                findings.append(self.finding(
                    row, 'source', 'OG115', 'source "human" needs a purpose: what the fixture asserts',
                    rehash_command(row),
                ))
            if old is None:
                continue
            new_bytes = old.sha256 != row.sha256 and SHA256.match(row.sha256)
            if new_bytes and (not has_purpose(row) or
                              same_purpose(old.get('purpose'), row.get('purpose'))):
                findings.append(self.finding(
                    row, 'sha256', 'OG117',
                    'new bytes under an unchanged purpose; explain the new oracle',
                    f'{rehash_command(row)} with a purpose that says why the new bytes are the '
                    f'right answer, or restore them: git checkout HEAD -- {row.path}',
                ))
            if old.source == 'recorded' and row.source != 'recorded':
                if ledgers is None:
                    ledgers = self._ledgers()
                freezes = freezes_listing(ledgers, row, self.today) + (
                    freezes_listing(ledgers, old, self.today) if old.path != row.path else [])
                if freezes:
                    ids = ', '.join(f.id or f'(line {f.line})' for f in freezes)
                    trace = old.get('trace_id') if isinstance(old.get('trace_id'), str) else 'TRACE_ID'
                    findings.append(self.finding(
                        row, 'source', 'OG118',
                        f'source changes from "recorded" to {row.source!r} while live freeze '
                        f'{ids} lists this fixture; the frozen test still trusts the recording',
                        'keep the recording: '
                        + rehash_command(row, f' --source recorded --trace-id {trace}')
                        + f'; lift {ids} in {self.ledger_path} first, in a change of its own',
                    ))
        return findings
