"""check-fixture-manifest: every fixture has a manifest row whose sha256 matches its bytes.

Rows 1-4 and 10 of the decision table live here; the provenance rows 5-9 (trace
ids, schemas, agent-writable rows, purposes, frozen recordings) live in
``fixture_provenance`` and run on the same rows.
"""
from __future__ import annotations

import os

from oracle_guard.repo.changeset import ALL_FILES
from oracle_guard.repo.changeset import NO_BASE
from oracle_guard.findings import Finding
from oracle_guard.repo.gitrepo import git_ok
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.runner import run_hook

# Commits that touch no fixture, manifest, trace store, ledger or schema return before
# anything below is needed: the manifest reader, hashlib and the provenance rules are
# imported where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from oracle_guard.repo.changeset import ChangeSet
    from oracle_guard.config import Config
    from oracle_guard.repo.tree_view import Entry
    from oracle_guard.oracle.manifest import FixtureManifest
    from oracle_guard.oracle.manifest import FixtureRow
    from oracle_guard.context import RunContext

HOOK = 'check-fixture-manifest'


def sha256_of(view: TreeView, path: str) -> str | None:
    import hashlib

    digest = hashlib.sha256()
    try:
        for block in view.chunks(path):
            digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


# Blobs asked of one ``git cat-file --batch`` when many rows are judged at once.
DIGEST_BATCH = 200


def blob_digests(view: TreeView, paths: Sequence[str]) -> dict[str, str]:
    """The sha256 of the blobs ``paths`` hold on a git side (the index or a commit), by the
    object ids its listing gave: one ``git cat-file --batch`` per ``DIGEST_BATCH`` files
    instead of a process per file (an adoption commit judges thousands of new rows). A
    path whose blob is not known is left out: it is hashed on its own."""
    import hashlib

    from oracle_guard.repo.gitrepo import cat_file_batch

    named = [(path, view.object_id(path)) for path in paths]
    known = [(path, oid) for path, oid in named if oid]
    found: dict[str, str] = {}
    for start in range(0, len(known), DIGEST_BATCH):
        batch = known[start:start + DIGEST_BATCH]
        answers = cat_file_batch(view.root, [oid for _, oid in batch], buffer=True) or []
        for (path, _), answer in zip(batch, answers):
            if answer is not None and answer[1] == 'blob':
                found[path] = hashlib.sha256(answer[2]).hexdigest()
    return found


def recorded_sha256(view: TreeView, path: str, on_disk: str | None) -> str | None:
    """The digest of the bytes git records, when the working tree differs from them.

    The manifest holds the hash of the blob git stores, so the verdict cannot depend on
    a platform's checkout conversion (``core.autocrlf``, ``eol`` attributes): a text
    fixture checked out with CRLF still matches the LF blob it was recorded from, while
    a file git itself sees as modified is judged on its bytes.
    """
    if not git_ok('diff', '--quiet', '--', path, cwd=view.root):
        return on_disk  # a real edit, not a checkout conversion: judge what is on disk
    return sha256_of(TreeView(view.root, ''), path) or on_disk


def load_manifest(view: TreeView | None, path: str,
                  folder: str | None = None) -> FixtureManifest | None:
    if view is None:
        return None
    raw = view.read_document(path)
    from oracle_guard.oracle.manifest import parse_manifest

    return None if raw is None else parse_manifest(raw, path, folder)


def changed_rows(base: FixtureManifest | None, new: FixtureManifest) -> list[FixtureRow]:
    """Rows the change adds or edits."""
    if base is None:
        return list(new.rows.values())
    return [row for path, row in new.rows.items()
            if path not in base.rows or base.rows[path].raw != row.raw]


def _symlink_finding(cfg: Config, view: TreeView, row: FixtureRow) -> Finding:
    target = (view.read(row.path) or b'').decode('utf-8', 'replace')
    resolved = os.path.normpath(os.path.join(os.path.dirname(row.path), target))
    leaves = target.startswith('/') or resolved == '..' or resolved.startswith('../')
    where = 'a path outside the repository' if leaves else repr(target)
    return Finding(cfg.manifest, row.line, 1, 'OG106',
                   f'{row.path}: fixture is a symlink to {where}; a fixture must be a regular file',
                   f'replace the link with the file itself: cp --remove-destination '
                   f'"$(readlink -f {row.path})" {row.path}')


def check_rows(cfg: Config, view: TreeView, rows: Sequence[FixtureRow],
               entries: dict[str, Entry]) -> list[Finding]:
    findings = []
    digests: dict[str, str] = {}
    if view.rev is not None and len(rows) > 1:  # one row streams: flat memory on a huge file
        digests = blob_digests(view, [r.path for r in rows if r.path in entries])
    for row in rows:
        entry = entries.get(row.path)
        if row.source == 'untrusted':
            findings.append(Finding(
                cfg.manifest, row.line_of('source'), 1, 'OG104',
                f'{row.path}: source "untrusted" cannot be committed',
                'have a person review the file and record its real source '
                '(human, recorded or synthetic), or delete it',
            ))
        if entry is None:
            findings.append(Finding(
                cfg.manifest, row.line, 1, 'OG103',
                f'{row.path}: manifest row names a file that is not in the repository',
                f'git add {row.path}, or delete the row "{row.key}"',
            ))
            continue
        if entry.is_symlink:
            findings.append(_symlink_finding(cfg, view, row))
            continue
        if entry.is_submodule:
            findings.append(Finding(cfg.manifest, row.line, 1, 'OG106',
                                    f'{row.path}: is a submodule, not a fixture file'))
            continue
        if len(row.sha256) != 64:
            continue  # already reported by the manifest parser (OG107)
        actual = digests.get(row.path) or sha256_of(view, row.path)
        if actual != row.sha256 and view.rev is None:
            actual = recorded_sha256(view, row.path, actual)
        if actual is None:
            findings.append(Finding(
                cfg.manifest, row.line, 1, 'OG103',
                f'{row.path}: manifest row names a file that cannot be read',
                f'restore it (git checkout -- {row.path}) or delete the row',
            ))
        elif actual != row.sha256:
            findings.append(Finding(
                row.path, 1, 1, 'OG101',
                f'sha256 mismatch: manifest says {row.sha256}, file has {actual}',
                f'restore the recorded bytes (git checkout HEAD -- {row.path}); a person who '
                f'means the change runs: oracle-guard fixtures rehash {row.path} --purpose "…"',
            ))
    return findings


def unmanifested(cfg: Config, paths: Sequence[str]) -> list[Finding]:
    return [
        Finding(path, 1, 1, 'OG102', f'fixture has no row in {cfg.manifest}',
                f'oracle-guard fixtures add {path} --source human --purpose "…"')
        for path in paths
    ]


def provenance_rows(cfg: Config, changes: ChangeSet, manifest: FixtureManifest,
                    rows: list[FixtureRow]) -> list[FixtureRow]:
    """The rows whose evidence the change touched, on top of the rows already judged.

    Editing a schema (or any JSON/YAML file a schema could $ref) re-judges the synthetic
    rows; editing the trace store re-judges the recorded rows.
    """
    touched = changes.touched()
    wanted = {row.path: row for row in rows}
    # A schema may $ref other files: when any JSON/YAML file outside the fixtures changes,
    # every synthetic row is judged again (its schema's closure may include that file).
    schema_like = any(p.endswith(SCHEMA_SUFFIXES) and not cfg.is_fixture(p) and
                      p != cfg.manifest for p in touched)
    for row in manifest.rows.values():
        schema = row.get('schema')
        if (row.source == 'synthetic' and isinstance(schema, str) and
                (schema in touched or schema_like)) or \
                (row.source == 'recorded' and cfg.traces in touched):
            wanted.setdefault(row.path, row)
    return [wanted[p] for p in sorted(wanted)]


# A synthetic row's schema can live anywhere; a change to a file like this may matter.
SCHEMA_SUFFIXES = ('.json', '.yaml', '.yml')


def change_is_relevant(cfg: Config, touched: set[str]) -> bool:
    """Whether a change can affect any fixture verdict: commits that touch no fixture,
    manifest, trace store, ledger or possible schema cost nothing more."""
    oracle = {cfg.manifest, cfg.traces, cfg.ledger}
    return any(
        p in oracle or cfg.is_fixture(p) or p.endswith(SCHEMA_SUFFIXES)
        for p in touched
    )


def check(ctx: RunContext) -> list[Finding]:
    cfg, changes = ctx.cfg, ctx.changes
    if changes.mode not in (ALL_FILES, NO_BASE) and not change_is_relevant(cfg, changes.touched()):
        return []
    view = changes.new
    entries = {e.path: e for e in view.entries(list(cfg.fixtures)) if cfg.is_fixture(e.path)}
    manifest = load_manifest(view, cfg.manifest, cfg.manifest_folder())
    whole_tree = changes.mode in (ALL_FILES, NO_BASE)
    if manifest is None:
        if not whole_tree and entries and changes.read_base(cfg.manifest) is not None:
            return [Finding(
                cfg.manifest, 1, 1, 'OG108',
                f'the manifest was deleted while {len(entries)} fixture file(s) remain',
                f'restore it: git checkout HEAD -- {cfg.manifest}',
            )]
        paths = sorted(entries) if whole_tree else [
            p for p in changes.added_or_modified() if p in entries
        ]
        return unmanifested(cfg, paths)

    findings = list(manifest.problems)
    touched = changes.touched()
    base: FixtureManifest | None = None
    if changes.has_base:
        from oracle_guard.oracle.manifest import base_manifest_or_none

        base = base_manifest_or_none(changes, cfg.manifest, cfg.manifest_folder()) \
            if cfg.manifest in touched else manifest
    changed = changed_rows(base, manifest) if changes.has_base else []
    if whole_tree:
        rows = list(manifest.rows.values())
        new_files = sorted(entries)
    else:
        wanted = {row.path: row for row in changed}
        for path in touched:
            if path in manifest.rows:
                wanted[path] = manifest.rows[path]
        rows = [wanted[p] for p in sorted(wanted)]
        new_files = [p for p in changes.added_or_modified() if p in entries]
    findings.extend(check_rows(cfg, view, rows, entries))
    findings.extend(unmanifested(cfg, [p for p in new_files if p not in manifest.rows]))

    from oracle_guard.oracle.fixture_provenance import ProvenanceCheck

    provenance = ProvenanceCheck(
        cfg.manifest, cfg.traces, cfg.ledger, view, ctx.today,
        read_base=changes.read_base if changes.has_base else None,
    )
    judged = rows if whole_tree else provenance_rows(cfg, changes, manifest, rows)
    findings.extend(provenance.judged(judged, {row.path for row in changed}))
    if changes.has_base:
        renames = {c.path: c.old_path for c in changes.changes
                   if c.status == 'R' and c.old_path and cfg.is_fixture(c.path)}
        findings.extend(provenance.edits(changed, base, renames, manifest.rows))
    elif manifest.rows:
        findings.extend(ctx.missing_base(HOOK))
    return findings


def history_check(ctx: RunContext) -> list[Finding]:
    """The provenance rules about a change (rows 5, 7, 8, 9) for one commit of history
    mode: the manifest rows it added or edited, against its first parent. Hashes and
    unmanifested files are judged only as the tree is now."""
    cfg, changes = ctx.cfg, ctx.changes
    if cfg.manifest not in changes.touched():
        return []
    view = changes.new
    manifest = load_manifest(view, cfg.manifest, cfg.manifest_folder())
    if manifest is None:
        return []  # deleting the manifest with src/ is OG201; with fixtures left, OG108 now
    from oracle_guard.oracle.manifest import base_manifest_or_none

    base = base_manifest_or_none(changes, cfg.manifest, cfg.manifest_folder())
    changed = changed_rows(base, manifest)
    from oracle_guard.oracle.fixture_provenance import ProvenanceCheck

    provenance = ProvenanceCheck(cfg.manifest, cfg.traces, cfg.ledger, view, ctx.today,
                                 read_base=changes.read_base)
    findings = [f for row in changed if row.source == 'recorded'
                for f in provenance.recorded(row, changed=True) if f.code == 'OG111']
    renames = {c.path: c.old_path for c in changes.changes
               if c.status == 'R' and c.old_path and cfg.is_fixture(c.path)}
    return findings + provenance.edits(changed, base, renames, manifest.rows)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(check, argv, 'Every fixture file has a manifest row whose sha256 matches.',
                    history=history_check)


if __name__ == '__main__':
    raise SystemExit(main())
