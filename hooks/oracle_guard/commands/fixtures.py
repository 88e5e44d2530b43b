"""``oracle-guard fixtures add|rehash|status``: the human-run commands that own the manifest.

The hook only checks the manifest; these commands are the only thing that
writes it. They refuse what the hook would reject, so a row they write passes,
and they write the file in one stable form (sorted keys, two-space indent,
trailing newline) so the diff a person reviews is the rows that changed.

Exit codes: 0 done (``status``: nothing to report), 1 refused (``status``:
something to report), 2 bad input.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any

from oracle_guard.commands import refuse_unattended
from oracle_guard.runner import iso_date
from oracle_guard.context import utc_today
from oracle_guard.hooks.check_fixture_manifest import sha256_of
from oracle_guard.config import add_config_arguments
from oracle_guard.config import apply_arguments
from oracle_guard.config import Config
from oracle_guard.config import load_config
from oracle_guard.oracle.documents import load_json
from oracle_guard.findings import ConfigError
from oracle_guard.oracle.fixture_provenance import freezes_listing
from oracle_guard.oracle.fixture_provenance import ledger_or_none
from oracle_guard.oracle.fixture_provenance import parse_traces
from oracle_guard.oracle.fixture_provenance import same_purpose
from oracle_guard.oracle.fixture_provenance import SchemaBook
from oracle_guard.repo.gitrepo import cat_file_batch
from oracle_guard.repo.gitrepo import git
from oracle_guard.repo.gitrepo import git_ok
from oracle_guard.repo.gitrepo import repo_root
from oracle_guard.repo.gitrepo import rev_exists
from oracle_guard.repo.gitrepo import split_z
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.oracle.manifest import FixtureManifest
from oracle_guard.oracle.manifest import FixtureRow
from oracle_guard.oracle.manifest import parse_manifest
from oracle_guard.oracle.manifest import row_key_problem
from oracle_guard.oracle.manifest import SOURCES
from oracle_guard.runner import guarded


# Index blobs asked of one ``git cat-file --batch``: few processes, bounded memory.
HASH_BATCH = 500


class Refused(Exception):
    """The command will not write what the hook would reject (exit 1)."""


def dump_manifest(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + '\n'


class Workspace:
    """The repository as a person sees it: the working tree, plus HEAD for context."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.root = cfg.root
        self.tree = TreeView(self.root, None)
        self.head = TreeView(self.root, 'HEAD') if rev_exists('HEAD', self.root) else None
        raw = self.tree.read(cfg.manifest)
        self.folder = cfg.manifest_folder()
        self.manifest: FixtureManifest = (
            parse_manifest(raw, cfg.manifest, self.folder) if raw is not None
            else FixtureManifest(cfg.manifest, {}, [], self.folder)
        )
        document = load_json(raw, cfg.manifest) if raw is not None else {}
        self.document: dict[str, Any] = {'version': 1, 'fixtures': {}, **document}
        self.schemas = SchemaBook(self.tree, require_tracked=False)

    def repo_path(self, arg: str) -> str:
        """A command-line path (relative to the current folder) as a repository path."""
        rel = os.path.relpath(os.path.abspath(arg), self.root).replace(os.sep, '/')
        if rel == '..' or rel.startswith('../'):
            raise ConfigError(arg, 0, 'is outside the repository')
        return '' if rel == '.' else rel

    def fixture_paths(self, args: Sequence[str]) -> list[str]:
        """The fixture files the arguments name; a folder means the files below it."""
        found: list[str] = []
        for arg in args:
            path = self.repo_path(arg)
            full = os.path.join(self.root, path)
            if os.path.isdir(full) and not os.path.islink(full):
                below = self.files_under(f'{path}/' if path else '')
                found.extend(p for p in below if self.cfg.is_fixture(p))
                continue
            if os.path.islink(full):
                raise ConfigError(path, 0, 'is a symlink; a fixture must be a regular file')
            if not os.path.isfile(full):
                raise ConfigError(path, 0, 'no such file')
            if not self.cfg.is_fixture(path) or not path.startswith(self.manifest.folder):
                raise ConfigError(path, 0, f'is not a fixture: fixtures live below '
                                  f'{self.cfg.fixtures_label()} (the manifest and trace store '
                                  'excluded)')
            found.append(path)
        for path in found:
            why = row_key_problem(self.key_of(path))
            try:
                path.encode('utf-8')
            except UnicodeEncodeError:
                why = 'not valid UTF-8'
            if why:
                raise ConfigError(path, 0, f'this file name cannot be a manifest key ({why})',
                                  'rename the file')
        return sorted(dict.fromkeys(found))

    def files_under(self, prefix: str) -> list[str]:
        """Tracked and untracked-but-not-ignored files, as `git status` would show them."""
        pathspec = ['--', prefix] if prefix else []
        out = git('ls-files', '-z', '--cached', '--others', '--exclude-standard', *pathspec,
                  cwd=self.root)
        return sorted(p for p in set(split_z(out))
                      if os.path.isfile(os.path.join(self.root, p))
                      and not os.path.islink(os.path.join(self.root, p)))

    def key_of(self, path: str) -> str:
        return path[len(self.manifest.folder):]

    def rows(self) -> dict[str, Any]:
        fixtures = self.document['fixtures']
        if not isinstance(fixtures, dict):
            raise ConfigError(self.cfg.manifest, 0, '"fixtures" must be an object')
        return fixtures

    def write(self) -> None:
        target = os.path.join(self.root, self.cfg.manifest)
        os.makedirs(os.path.dirname(target) or '.', exist_ok=True)
        import tempfile

        fd, temp = tempfile.mkstemp(dir=os.path.dirname(target) or '.',
                                    prefix='.manifest-', suffix='.oracle-guard-tmp')
        try:
            with os.fdopen(fd, 'w', encoding='utf-8', newline='\n') as f:
                f.write(dump_manifest(self.document))
            os.replace(temp, target)
        finally:
            if os.path.exists(temp):
                os.unlink(temp)

    def hashes(self, paths: Sequence[str]) -> dict[str, str]:
        """``hash`` of many files at once: git is asked once for the files it sees as
        modified and once per batch of index blobs (``git cat-file --batch``), not once
        per file: a folder of thousands of fixtures is hashed in seconds."""
        import hashlib

        modified = set(split_z(git('diff', '--name-only', '-z', cwd=self.root)))
        tracked = set(split_z(git('ls-files', '-z', '--cached', cwd=self.root)))
        clean = [p for p in paths if p in tracked and p not in modified and '\n' not in p]
        found: dict[str, str] = {}
        for start in range(0, len(clean), HASH_BATCH):
            batch = clean[start:start + HASH_BATCH]
            answers = cat_file_batch(self.root, [f':{p}' for p in batch], buffer=True) or []
            for path, answer in zip(batch, answers):
                if answer is not None and answer[1] == 'blob':
                    found[path] = hashlib.sha256(answer[2]).hexdigest()
        asked = set(clean)
        for path in paths:
            if path in found:
                continue
            if path in asked:  # git could not answer the batch: one file at a time
                found[path] = self.hash(path)
                continue
            digest = sha256_of(self.tree, path)  # new or edited: the bytes on disk
            if digest is None:
                raise ConfigError(path, 0, 'cannot read the file')
            found[path] = digest
        return found

    def hash(self, path: str) -> str:
        # The hook compares with the bytes git records: for a file git sees as unmodified
        # that is the index blob, whatever the checkout did to its line endings.
        clean = git_ok('diff', '--quiet', '--', path, cwd=self.root) and \
            git_ok('ls-files', '--error-unmatch', '--', path, cwd=self.root)
        digest = sha256_of(TreeView(self.root, '') if clean else self.tree, path)
        if digest is None:
            raise ConfigError(path, 0, 'cannot read the file')
        return digest

    # -- what the hook would reject, refused before anything is written ---------------

    def check_trace(self, trace_id: str) -> list[str]:
        """Refuse an unknown trace id; warn when only the uncommitted store has it."""
        traces = self.cfg.traces
        if trace_id not in parse_traces(self.tree.read(traces), traces):
            raise Refused(
                f'trace id {trace_id!r} is not in the trace store {traces}\n'
                f'    To fix: add it to {traces} and commit that on its own '
                f'(git commit -m "record trace {trace_id}" -- {traces}), then rerun',
            )
        head = self.head.read(traces) if self.head else None
        if trace_id not in parse_traces(head, traces, strict=False):
            return [f'warning: trace id {trace_id!r} is not committed yet; the hook fails a '
                    f'change that adds the id and the row together. First: '
                    f'git commit -m "record trace {trace_id}" -- {traces}']
        return []

    def check_schema(self, path: str, schema: str) -> None:
        problem = self.schemas.problem(schema)
        if problem:
            raise ConfigError(schema, 0, problem)
        bad = self.schemas.body_problem(FixtureRow(self.key_of(path), path, 0, {}), schema)
        if bad:
            line, why = bad
            raise Refused(f'{path}:{line}: synthetic fixture {why}\n'
                          f'    To fix: edit {path} until it matches {schema}, then rerun')

    def committed_row(self, path: str) -> FixtureRow | None:
        """The row as HEAD has it: what the hook will compare the new row with."""
        raw = self.head.read(self.cfg.manifest) if self.head else None
        try:
            committed = parse_manifest(raw, self.cfg.manifest, self.folder) \
                if raw is not None else None
        except ConfigError:
            return None
        return committed.rows.get(path) if committed else None

    def frozen_by(self, path: str, today: Any) -> list[str]:
        row = self.manifest.rows.get(path) or FixtureRow(self.key_of(path), path, 0, {})
        ledger = self.cfg.ledger
        ledgers = [ledger_or_none(self.tree.read(ledger), ledger, strict=True),
                   ledger_or_none(self.head.read(ledger) if self.head else None, ledger,
                                  strict=False)]
        return [f.id or f'(line {f.line})' for f in freezes_listing(ledgers, row, today)]


def provenance_fields(ws: Workspace, path: str, source: str, trace_id: str | None,
                      schema: str | None) -> tuple[dict[str, str], list[str]]:
    """The source-specific fields of a row, checked the way the hook checks them."""
    if trace_id is not None and source != 'recorded':
        raise ConfigError('command line', 0, '--trace-id goes with --source recorded')
    if schema is not None and source != 'synthetic':
        raise ConfigError('command line', 0, '--schema goes with --source synthetic')
    fields = {'source': source}
    warnings: list[str] = []
    if source == 'recorded':
        if not trace_id:
            raise ConfigError('command line', 0, '--source recorded needs --trace-id TRACE_ID')
        warnings = ws.check_trace(trace_id)
        fields['trace_id'] = trace_id
    elif source == 'synthetic':
        if not schema:
            raise ConfigError('command line', 0, '--source synthetic needs --schema SCHEMA.json')
        schema = ws.repo_path(schema)
        ws.check_schema(path, schema)
        fields['schema'] = schema
    elif source == 'untrusted':
        warnings.append(f'warning: {path}: an "untrusted" row cannot be committed; '
                        'it marks a draft until a person records its real source')
    return fields, warnings


def _purpose(value: str) -> str:
    value = ' '.join(value.split())
    if not value:
        raise argparse.ArgumentTypeError('the purpose says what the fixture asserts; '
                                         'it cannot be empty')
    return value


def cmd_add(ws: Workspace, args: argparse.Namespace) -> int:
    rows = ws.rows()
    paths = ws.fixture_paths(args.paths)
    if not paths:
        raise ConfigError('command line', 0, 'no fixture files found')
    planned: dict[str, dict[str, Any]] = {}
    messages: list[str] = []
    for path in paths:
        if ws.key_of(path) in rows:
            raise Refused(f'{path}: already has a manifest row\n'
                          f'    To fix: oracle-guard fixtures rehash {path} --purpose "…"')
    digests = ws.hashes(paths)
    for path in paths:
        key = ws.key_of(path)
        fields, warnings = provenance_fields(ws, path, args.source, args.trace_id, args.schema)
        row: dict[str, Any] = {'sha256': digests[path], 'purpose': args.purpose, **fields}
        if args.role:
            row['role'] = args.role
        planned[key] = row
        messages.extend(warnings)
        messages.append(f'added {path} ({args.source}, sha256 {row["sha256"][:12]}…)')
    rows.update(planned)
    ws.write()
    for message in dict.fromkeys(messages):
        print(message)
    return 0


def cmd_rehash(ws: Workspace, args: argparse.Namespace) -> int:
    rows = ws.rows()
    paths = ws.fixture_paths(args.paths)
    if not paths:
        raise ConfigError('command line', 0, 'no fixture files found')
    named = {ws.repo_path(arg) for arg in args.paths}  # files named, not found in a folder
    planned: dict[str, dict[str, Any]] = {}
    messages: list[str] = []
    for path in paths:
        key = ws.key_of(path)
        old = rows.get(key)
        if not isinstance(old, dict):
            raise Refused(f'{path}: has no manifest row\n'
                          f'    To fix: oracle-guard fixtures add {path} --source human --purpose "…"')
        old_source = old.get('source')
        source = args.source or old_source
        if source not in SOURCES:
            raise ConfigError(ws.cfg.manifest, 0, f'{path}: source {source!r} is not one of '
                              f'{", ".join(SOURCES)}', 'pass --source')
        # The committed row counts too: editing the file by hand first does not
        # turn a frozen recording into something else.
        committed = ws.committed_row(path)
        if 'recorded' in (old_source, committed and committed.source) and source != 'recorded':
            frozen = ws.frozen_by(path, args.today or utc_today())
            if frozen:
                raise Refused(
                    f'{path}: live freeze {", ".join(frozen)} lists this fixture; it stays '
                    f'"recorded" while the frozen test trusts the recording\n'
                    f'    To fix: lift the freeze in {ws.cfg.ledger} in a change of its own first')
        digest = ws.hash(path)
        if path not in named and digest == old.get('sha256') and \
                (committed is None or committed.sha256 == digest):
            # Rehashing a folder must not overwrite the purpose of rows whose bytes did
            # not change: each purpose explains its own fixture. Name a file to reword it.
            messages.append(f'unchanged {path} (same bytes)')
            continue
        if any(digest != r.get('sha256') and same_purpose(r.get('purpose'), args.purpose)
               for r in (old, committed.raw if committed else {}) if r):
            raise Refused(f'{path}: the bytes changed but the purpose did not; say why the new '
                          'bytes are the right answer\n'
                          f'    To fix: oracle-guard fixtures rehash {path} --purpose "<the new oracle>"')
        trace_id = args.trace_id
        if trace_id is None and source == 'recorded' and args.source in (None, old_source):
            trace_id = old.get('trace_id') if isinstance(old.get('trace_id'), str) else None
        schema = args.schema
        if schema is None and source == 'synthetic' and isinstance(old.get('schema'), str):
            schema = old['schema']
        fields, warnings = provenance_fields(ws, path, source, trace_id, schema)
        row = {k: v for k, v in old.items()
               if k not in ('trace_id', 'schema', 'rewritable_by_agent')}
        row.update(fields, sha256=digest, purpose=args.purpose)
        messages.extend(warnings)
        if row == old:
            messages.append(f'unchanged {path}')
            continue
        planned[key] = row
        was = old.get('sha256') if isinstance(old.get('sha256'), str) else '?'
        change = f'sha256 {was[:12]}… -> {digest[:12]}…' if was != digest else 'same bytes'
        messages.append(f'rehashed {path} ({source}, {change})')
    if planned:
        rows.update(planned)
        ws.write()
    for message in dict.fromkeys(messages):
        print(message)
    return 0


def cmd_status(ws: Workspace, args: argparse.Namespace) -> int:
    cfg = ws.cfg
    lines: list[str] = []
    for problem in ws.manifest.problems:
        lines.append(f'invalid:      {problem.path}:{problem.line}: {problem.message}')
    files = list(dict.fromkeys(p for folder in cfg.fixtures for p in ws.files_under(folder)
                               if cfg.is_fixture(p)))
    for path in files:
        if path not in ws.manifest.rows:
            lines.append(f'unmanifested: {path}\n'
                         f'    oracle-guard fixtures add {path} --source human --purpose "…"')
    present = [path for path in sorted(ws.manifest.rows)
               if os.path.isfile(os.path.join(ws.root, path))
               and not os.path.islink(os.path.join(ws.root, path))]
    digests = ws.hashes(present)
    for path, row in sorted(ws.manifest.rows.items()):
        if path not in digests:
            lines.append(f'missing:      {path}\n'
                         f'    git checkout -- {path}, or delete the row "{row.key}" '
                         f'from {cfg.manifest}')
            continue
        if digests[path] != row.sha256:
            lines.append(f'modified:     {path}\n'
                         f'    git checkout -- {path}, or: oracle-guard fixtures rehash {path} '
                         '--purpose "…"')
        if row.source == 'untrusted':
            lines.append(f'untrusted:    {path}\n'
                         f'    oracle-guard fixtures rehash {path} --source human --purpose "…"')
    if not lines:
        print(f'{len(ws.manifest.rows)} fixture(s) match {cfg.manifest}')
        return 0
    print('\n'.join(lines))
    return 1



def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='oracle-guard fixtures',
        description='Write and inspect the fixture manifest (human-run; the hooks never write).',
    )
    sub = parser.add_subparsers(dest='command', required=True)
    add = sub.add_parser('add', help='write rows for new fixture files with their current hashes')
    add.add_argument('paths', nargs='+', metavar='PATH')
    add.add_argument('--source', required=True, choices=SOURCES)
    add.add_argument('--trace-id', help='for --source recorded: a trace id in the trace store')
    add.add_argument('--schema', help='for --source synthetic: the JSON Schema file')
    add.add_argument('--purpose', required=True, type=_purpose, help='what the fixture asserts')
    add.add_argument('--role', choices=('input', 'oracle'))
    rehash = sub.add_parser('rehash', help='update the hashes of existing rows (needs a new purpose)')
    rehash.add_argument('paths', nargs='+', metavar='PATH')
    rehash.add_argument('--purpose', required=True, type=_purpose,
                        help='why the new bytes are the right answer')
    rehash.add_argument('--source', choices=SOURCES, help='change the row\'s source too')
    rehash.add_argument('--trace-id')
    rehash.add_argument('--schema')
    rehash.add_argument('--today', type=iso_date, help='the date freezes are judged live on')
    sub.add_parser('status', help='unmanifested, missing and modified fixtures')
    for writing in (add, rehash):
        writing.add_argument('--force', action='store_true',
                             help='write the manifest even under CI or inside oracle-guard ci')
    for command in sub.choices.values():
        add_config_arguments(command)
        command.add_argument('--debug', action='store_true', help=argparse.SUPPRESS)
    return parser


COMMANDS = {'add': cmd_add, 'rehash': cmd_rehash, 'status': cmd_status}


@contextlib.contextmanager
def manifest_lock(cfg: Config) -> Iterator[None]:
    """One command at a time per repository: each reads the manifest, then writes it
    back whole, so two at once would lose each other's rows."""
    try:
        import fcntl
    except ModuleNotFoundError:  # pragma: no cover (Windows: no advisory locks here)
        yield
        return
    git_dir = git('rev-parse', '--git-dir', cwd=cfg.root).decode().strip()
    path = os.path.join(cfg.root, git_dir, 'oracle-guard-fixtures.lock')
    with open(path, 'w') as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command != 'status':
        refused = refuse_unattended(f'fixtures {args.command}', 'the fixture manifest',
                                    args.force)
        if refused is not None:
            return refused

    def run() -> int:
        cfg = apply_arguments(load_config(repo_root()), args)
        try:
            with manifest_lock(cfg):
                return COMMANDS[args.command](Workspace(cfg), args)
        except Refused as exc:
            sys.stdout.flush()
            sys.stderr.write(f'oracle-guard fixtures {args.command}: refused: {exc}\n')
            return 1

    return guarded(run, 'text', args.debug)


if __name__ == '__main__':
    raise SystemExit(main())
