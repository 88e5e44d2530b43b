"""History mode: ``--all-files`` with no base judges every commit since adoption.

pre-commit.ci runs ``pre-commit run --all-files`` on a detached checkout with no base
branch. Judging only the last commit would let any two-commit pull request through (a
mixed commit made with ``--no-verify``, then a trivial one), so the change rules judge
each commit reachable from HEAD against its first parent, with the rules of a commit.

* **Since adoption.** A commit is judged when its first parent has the
  ``[tool.oracle-guard]`` table (the guard was on when it was made): the adoption commit
  itself, which brings the oracle files in, is the starting point, not a change to judge.
  With ``adopted = REV`` in the table, the commits after REV are judged instead.
* **Merges** are judged through the commits they bring in, which the walk visits too;
  the merge itself only for what its resolution changed (paths that differ from every
  parent, ``git log -c``), so an oracle edit slipped into a conflict resolution counts.
* **Bounded cost.** One ``git log --raw`` walk of at most ``history-limit`` commits and
  one ``git cat-file --batch-check`` for the table; file contents are read only by the
  hooks' rules, and only for commits whose paths make a rule apply.
* **Incomplete history** (the cap, a shallow clone) is a note; ``--require-base`` makes
  it an OG001 finding.
* **Acknowledged commits** (``oracle_guard.oracle.acknowledgements``) are skipped.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass

from oracle_guard.oracle.acknowledgements import read_acknowledgements
from oracle_guard.oracle.acknowledgements import row_template
from oracle_guard.repo.changeset import Change
from oracle_guard.repo.changeset import ChangeSet
from oracle_guard.repo.changeset import HISTORY
from oracle_guard.config import apply_arguments
from oracle_guard.config import Config
from oracle_guard.config import config_from_table
from oracle_guard.config import PYPROJECT
from oracle_guard.config import read_table
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.repo.gitrepo import git
from oracle_guard.repo.gitrepo import GitError
from oracle_guard.repo.gitrepo import git_env
from oracle_guard.repo.gitrepo import resolve_or_none
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.context import Check
from oracle_guard.context import RunContext

SUBJECT_SHOWN = 50
_HEADER = b'\x01'


@dataclass(frozen=True)
class Commit:
    id: str
    parents: tuple[str, ...]
    subject: str
    # Against the first parent; for a merge, only the paths its resolution changed.
    changes: tuple[Change, ...]

    @property
    def short(self) -> str:
        return self.id[:7]

    @property
    def label(self) -> str:
        subject = self.subject
        if len(subject) > SUBJECT_SHOWN:
            subject = subject[:SUBJECT_SHOWN - 3] + '...'
        return f'{self.short} "{subject}"'


def parse_log(out: bytes) -> list[Commit]:
    """``git log -z --raw -c --format=%x01%H %P%x00%s`` output, newest first.

    Each record is the header, the subject, then raw entries: ``:meta\\0path\\0`` (or
    ``…R100\\0old\\0new\\0`` for a rename); a merge's combined entries start with one
    colon per parent and name one path.
    """
    fields = out.split(b'\0')
    commits: list[Commit] = []
    i = 0
    while i < len(fields):
        token = fields[i].lstrip(b'\n')
        if not token.startswith(_HEADER):
            i += 1
            continue
        ids = token[1:].decode().split()
        subject = fields[i + 1].decode('utf-8', 'replace') if i + 1 < len(fields) else ''
        i += 2
        while i < len(fields) and not fields[i].strip(b'\n'):
            i += 1  # a merge's combined entries follow an empty field
        changes = []
        while i < len(fields) and fields[i].lstrip(b'\n').startswith(b':'):
            meta = fields[i].lstrip(b'\n')
            status = meta.split()[-1].decode()
            colons = len(meta) - len(meta.lstrip(b':'))
            if colons == 1 and status[0] in 'RC':
                changes.append(Change(status[0], os.fsdecode(fields[i + 2]),
                                      os.fsdecode(fields[i + 1])))
                i += 3
            else:
                changes.append(Change(status[0] if status[0] in 'AMDT' else 'M',
                                      os.fsdecode(fields[i + 1])))
                i += 2
        commits.append(Commit(ids[0], tuple(ids[1:]), subject, tuple(changes)))
    return commits


def walk(root: str, limit: int, exclude: str | None) -> list[Commit]:
    """At most ``limit + 1`` commits reachable from HEAD (not from ``exclude``), newest
    first: the one past the cap tells whether the cap cut anything off."""
    args = ['log', f'--max-count={limit + 1}', '-z', '--raw', '-c', '-M', '--no-abbrev',
            '--no-color', '--no-ext-diff', '--no-textconv', '--ignore-submodules=none',
            '--format=%x01%H %P%x00%s', 'HEAD']
    if exclude:
        args += ['--not', exclude]
    return parse_log(git(*args, '--', cwd=root))


class TableReader:
    """Which commits' pyproject.toml hold ``[tool.oracle-guard]``, and what it says.

    One ``git cat-file --batch-check`` names the blob of every commit asked about; one
    ``git cat-file --batch`` reads each distinct blob once (a handful: the table rarely
    changes).
    """

    def __init__(self, root: str, revs: Sequence[str]) -> None:
        self.root = root
        revs = list(dict.fromkeys(revs))
        self.blob: dict[str, str | None] = dict.fromkeys(revs)
        if revs:
            out = self._batch('--batch-check', [f'{r}:{PYPROJECT}' for r in revs])
            for rev, line in zip(revs, out.split(b'\n')):
                parts = line.split()
                if len(parts) == 3 and parts[1] == b'blob':
                    self.blob[rev] = parts[0].decode()
        blobs = sorted({b for b in self.blob.values() if b})
        self.text: dict[str, str | None] = {}
        if blobs:
            out = self._batch('--batch', blobs)
            pos = 0
            for blob in blobs:
                end = out.index(b'\n', pos)
                size = int(out[pos:end].split()[2])
                raw = out[end + 1:end + 1 + size]
                pos = end + 1 + size + 1
                try:
                    self.text[blob] = raw.decode('utf-8-sig')
                except UnicodeDecodeError:
                    self.text[blob] = None

    def _batch(self, mode: str, lines: Sequence[str]) -> bytes:
        proc = subprocess.run(
            ('git', 'cat-file', mode), cwd=self.root, input=''.join(f'{x}\n' for x in lines)
            .encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=git_env(),
        )
        if proc.returncode != 0:
            raise GitError('git', 0, f'`git cat-file {mode}` failed: '
                           f'{proc.stderr.decode("utf-8", "replace").strip()}')
        return proc.stdout

    def has_table(self, rev: str) -> bool:
        blob = self.blob.get(rev)
        text = self.text.get(blob) if blob else None
        if text is None or 'oracle-guard' not in text:
            return False
        try:
            return read_table(text) is not None
        except ConfigError:
            return True  # unreadable, but it names the guard: judge it, do not skip it

    def config(self, rev: str, ctx: RunContext) -> Config:
        """The configuration the commit carried, with the hook's args on top; the
        current one when the commit's table cannot be read."""
        blob = self.blob.get(rev)
        text = self.text.get(blob) if blob else None
        try:
            cfg = config_from_table(ctx.cfg.root, read_table(text) if text else None,
                                    text or '')
            return apply_arguments(cfg, ctx.arguments) if ctx.arguments else cfg
        except ConfigError:
            return ctx.cfg


@dataclass
class History:
    """The commits history mode judges, and why it could not judge more."""

    judged: list[Commit]
    tables: TableReader | None
    incomplete: str | None = None


def _shallow_commits(root: str) -> set[str]:
    path = git('rev-parse', '--git-path', 'shallow', cwd=root).decode().strip()
    try:
        with open(os.path.join(root, path), encoding='ascii') as f:
            return set(f.read().split())
    except OSError:
        return set()


def commits_since_adoption(root: str, cfg: Config) -> History:
    limit = cfg.history_limit
    if cfg.adopted:
        adopted = resolve_or_none(cfg.adopted, root)
        if adopted is None:
            if git('rev-parse', '--is-shallow-repository', cwd=root).strip() != b'true':
                raise ConfigError(PYPROJECT, 0, f'adopted = {cfg.adopted!r} is not a commit '
                                  'of this repository',
                                  'set adopted to the full id of a commit HEAD descends from')
            head = [c for c in walk(root, 1, None)[:1] if c.parents]
            return History(head, TableReader(root, [c.id for c in head]),
                           f'the adopted revision {cfg.adopted!r} is not in this shallow '
                           'clone, so only HEAD was judged')
        seen = walk(root, limit, adopted)
    else:
        seen = walk(root, limit, None)
    walked, beyond = seen[:limit], seen[limit:]
    ids = {c.id for c in walked}
    revs = [c.id for c in walked]
    frontier = [p for c in walked for p in c.parents if p not in ids]
    revs += frontier + [f'{p}^' for p in frontier]
    if not cfg.adopted:
        revs += [p for c in seen for p in c.parents[:1]]
    tables = TableReader(root, revs)

    def guarded_base(commit: Commit) -> bool:
        if cfg.adopted:
            return True
        return bool(commit.parents) and tables.has_table(commit.parents[0])

    # HEAD is always judged against its first parent, as a one-commit run always was.
    judged = [c for i, c in enumerate(walked) if c.parents and (i == 0 or guarded_base(c))]
    incomplete = None
    if beyond and (cfg.adopted or guarded_base(beyond[0]) or any(
            tables.has_table(f'{p}^') for p in frontier)):
        incomplete = (f'stopped after {limit} commits (history-limit); older commits since '
                      'adoption were not judged')
    parentless = [c for c in walked if not c.parents and (cfg.adopted or tables.has_table(c.id))]
    if parentless:
        shallow = _shallow_commits(root) & {c.id for c in parentless}
        if shallow:
            first = next(c for c in parentless if c.id in shallow)
            incomplete = (f'this clone is shallow: history before {first.short} is not here, '
                          'so the commits since adoption were not all judged')
    return History(judged, tables, incomplete)


def _relabel(finding: Finding, commit: Commit, ack_path: str) -> Finding:
    return Finding(
        finding.path, finding.line, finding.col, finding.code,
        f'{commit.label}: {finding.message}',
        f'commit {commit.short} broke this rule: split it so the oracle change is a commit of '
        f'its own (git rebase -i {commit.short}^), ' + row_template(ack_path, commit.id),
    )


def commit_context(ctx: RunContext, commit: Commit, cfg: Config) -> RunContext:
    """A run context for one commit: its own change set and configuration."""
    changes = ChangeSet(ctx.cfg.root, HISTORY, commit.parents[0], commit.changes,
                        TreeView(ctx.cfg.root, commit.id), f'commit {commit.label}')
    one = RunContext(cfg=cfg, require_base=ctx.require_base, today=ctx.today, notes=ctx.notes,
                     judged=changes.new, arguments=ctx.arguments)
    one._changes = changes
    return one


def judge_history(ctx: RunContext, checks: Sequence[Check]) -> list[Finding]:
    cfg = ctx.cfg
    acknowledged = read_acknowledgements(ctx.changes.new, cfg.acknowledged)
    history = commits_since_adoption(cfg.root, cfg)
    findings: list[Finding] = []
    for commit in history.judged:
        if commit.id in acknowledged or not commit.changes:
            continue
        assert history.tables is not None
        one = commit_context(ctx, commit, history.tables.config(commit.id, ctx))
        for check in checks:
            try:
                found = check(one)
            except ConfigError as exc:
                # A document that commit could not be read in; the tree rules judge the
                # document as it is now, and mixing it with src/ is OG201 regardless.
                ctx.notes.append(f'history mode: {commit.label} was not judged by every '
                                 f'rule: {exc}')
                continue
            findings += [_relabel(f, commit, cfg.acknowledged) for f in found]
    if history.incomplete:
        how = ('fetch full history (actions/checkout fetch-depth: 0), raise history-limit, '
               'or judge the pull request as a range (--from-ref/--to-ref)')
        if ctx.require_base:
            findings.append(Finding('.', 1, 1, 'OG001',
                                    f'history mode: {history.incomplete}', how))
        else:
            ctx.notes.append(f'history mode: {history.incomplete}; {how}. Pass '
                             '--require-base to make this a failure.')
    return findings
