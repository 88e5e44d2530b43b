"""The change a run judges, and the base revision it is judged against (SPEC §4).

| context                                   | change                      | base           |
|-------------------------------------------|-----------------------------|----------------|
| PRE_COMMIT_FROM_REF/TO_REF (or --from-ref)| ``git diff A...B``          | merge-base     |
| something is staged (``git commit``)      | ``git diff --cached HEAD``  | HEAD/empty tree|
| nothing staged, ``base-ref`` configured   | base-ref...working tree     | merge-base     |
| nothing staged (``--all-files``)          | HEAD..working tree, and     | HEAD           |
|                                           | history mode: each commit   | its first      |
|                                           | since adoption              | parent         |
| none of those (root commit, shallow clone)| nothing                     | none           |

History mode (``oracle_guard.history``) is what pre-commit.ci needs: it runs
``pre-commit run --all-files`` on a detached checkout with no base branch, so judging
only the last commit would let every two-commit pull request through.
"""
from __future__ import annotations

import os

from oracle_guard.repo.gitrepo import EMPTY_TREE
from oracle_guard.repo.gitrepo import git
from oracle_guard.repo.gitrepo import GitError
from oracle_guard.repo.gitrepo import resolve
from oracle_guard.repo.gitrepo import resolve_or_none
from oracle_guard.repo.gitrepo import rev_exists
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.oracle.records import FrozenRecord
from oracle_guard.oracle.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable

    from oracle_guard.config import Config

COMMIT = 'commit'
RANGE = 'range'
ALL_FILES = 'all-files'
NO_BASE = 'none'
HISTORY = 'history'  # one commit of history mode, judged against its first parent


class Change(FrozenRecord):
    __slots__ = ('status', 'path', 'old_path', 'mode', 'object_id')
    status: str  # one of A, M, D, R, C, T
    path: str
    old_path: str | None
    # git's mode and object id of ``path`` after the change, when the diff says them.
    mode: str | None
    object_id: str | None

    def __init__(self, status: str, path: str, old_path: str | None = None,
                 mode: str | None = None, object_id: str | None = None) -> None:
        self._set(status=status, path=path, old_path=old_path, mode=mode,
                  object_id=object_id)


class ChangeSet(Record):
    __slots__ = ('root', 'mode', 'base', 'changes', 'new', 'description', 'history',
                 '_base_view')
    _uncompared = ('_base_view',)  # a cache
    root: str
    mode: str
    base: str | None
    changes: tuple[Change, ...]
    new: TreeView
    description: str
    # --all-files with no base: the commits since adoption are judged too (history mode).
    history: bool
    _base_view: TreeView | None

    def __init__(self, root: str, mode: str, base: str | None, changes: tuple[Change, ...],
                 new: TreeView, description: str, history: bool = False,
                 _base_view: TreeView | None = None) -> None:
        self.root = root
        self.mode = mode
        self.base = base
        self.changes = changes
        self.new = new
        self.description = description
        self.history = history
        self._base_view = _base_view

    @property
    def has_base(self) -> bool:
        return self.base is not None

    @property
    def base_view(self) -> TreeView | None:
        if self.base is None:
            return None
        if self._base_view is None:
            self._base_view = TreeView(self.root, self.base)
        return self._base_view

    def touched(self) -> set[str]:
        """Every path the change adds, modifies or removes (both sides of a rename)."""
        paths = set()
        for change in self.changes:
            paths.add(change.path)
            if change.old_path:
                paths.add(change.old_path)
        return paths

    def touched_under(self, roots: Iterable[str]) -> list[str]:
        roots = tuple(roots)
        return sorted(p for p in self.touched() if p.startswith(roots))

    def added_or_modified(self) -> list[str]:
        return sorted(c.path for c in self.changes if c.status != 'D')

    def deleted(self) -> list[str]:
        gone = {c.path for c in self.changes if c.status == 'D'}
        gone.update(c.old_path for c in self.changes if c.status == 'R' and c.old_path)
        return sorted(gone)

    def read_base(self, path: str) -> bytes | None:
        view = self.base_view
        if view is None or self.base == EMPTY_TREE:
            return None
        return view.read(path)

    def read_new(self, path: str) -> bytes | None:
        return self.new.read(path)

    def not_checked_note(self, hook: str) -> str:
        return (
            f'{hook}: no base revision ({self.description}); the rules about the change '
            'were not checked. Pass --require-base to make this a failure, or set '
            'base-ref in [tool.oracle-guard].'
        )


def parse_name_status(out: bytes) -> tuple[Change, ...]:
    """``git diff --name-status -z`` output: ``S\\0path\\0`` or ``R100\\0old\\0new\\0``."""
    fields = out.split(b'\0')
    changes = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i].decode()[0]
        if status in 'RC':
            old, new = os.fsdecode(fields[i + 1]), os.fsdecode(fields[i + 2])
            changes.append(Change(status, new, old))
            i += 3
        else:
            changes.append(Change(status, os.fsdecode(fields[i + 1])))
            i += 2
    return tuple(changes)


def parse_raw(out: bytes) -> tuple[Change, ...]:
    """``git diff --raw -z`` output: ``:OLDMODE NEWMODE OLDSHA NEWSHA S\0path\0``, or
    ``...R100\0old\0new\0`` for a rename or copy. The same changes as
    ``--name-status``, with the mode and object id each path has after the change."""
    fields = out.split(b'\0')
    changes = []
    i = 0
    while i < len(fields) and fields[i]:
        meta = fields[i].decode().split(' ')
        mode, object_id, status = meta[1], meta[3], meta[4][0]
        if status in 'RC':
            old, new = os.fsdecode(fields[i + 1]), os.fsdecode(fields[i + 2])
            changes.append(Change(status, new, old, mode, object_id))
            i += 3
        else:
            changes.append(Change(status, os.fsdecode(fields[i + 1]), None, mode, object_id))
            i += 2
    return tuple(changes)


def _diff(root: str, *revs: str, cached: bool = False) -> tuple[Change, ...]:
    return parse_raw(diff_raw(root, *revs, cached=cached))


DIFF_ARGS = ('diff', '--raw', '--no-abbrev', '-z', '-M', '--no-ext-diff', '--no-textconv',
             '--ignore-submodules=none')


def diff_raw(root: str, *revs: str, cached: bool = False) -> bytes:
    """``git diff --raw -z`` output, as ``parse_raw`` reads it."""
    return git(*DIFF_ARGS, *(['--cached'] if cached else []), *revs, '--', cwd=root)


def staged_on_head(root: str) -> bytes | None:
    """What is staged against HEAD, asked before HEAD's id is known (``git diff --cached
    HEAD``, the same diff as ``staged_against``); None when git cannot answer (no HEAD
    yet): then ask the usual way."""
    from oracle_guard.repo.gitrepo import run_git

    try:
        code, out, _ = run_git((*DIFF_ARGS, '--cached', 'HEAD', '--'), root, stderr=False)
    except OSError:
        return None
    return out if code == 0 else None


def _merge_base(root: str, a: str, b: str) -> str | None:
    try:
        return git('merge-base', a, b, cwd=root).decode().strip() or None
    except GitError:
        return None


def range_env() -> tuple[str, str] | None:
    from_ref = os.environ.get('PRE_COMMIT_FROM_REF')
    to_ref = os.environ.get('PRE_COMMIT_TO_REF')
    if from_ref and to_ref:
        return from_ref, to_ref
    return None


def staged_change(root: str) -> tuple[str | None, tuple[Change, ...]]:
    """(HEAD or None when unborn, what is staged against it)."""
    return staged_against(root, resolve_or_none('HEAD', root))


def staged_against(root: str, head: str | None) -> tuple[str | None, tuple[Change, ...]]:
    """(``head``, what is staged against it); ``head`` None is the empty tree."""
    return head, _diff(root, head or EMPTY_TREE, cached=True)


def detect_change_set(
        cfg: Config, *, from_ref: str | None = None, to_ref: str | None = None,
        all_files: bool = False,
        staged: tuple[str | None, tuple[Change, ...]] | None = None,
        index: TreeView | None = None,
) -> ChangeSet:
    root = cfg.root
    refs = (from_ref, to_ref) if from_ref and to_ref else range_env()
    if refs:
        a, b = refs
        if not (rev_exists(a, root) and rev_exists(b, root)):
            missing = a if not rev_exists(a, root) else b
            return _no_base(root, f'revision {missing!r} is not in this clone')
        base = _merge_base(root, a, b)
        if base is None:
            return _no_base(root, f'{a} and {b} share no history in this clone (shallow?)')
        b_id = resolve(b, root)
        return ChangeSet(
            root, RANGE, base, _diff(root, base, b_id), TreeView(root, b_id),
            f'range {a}...{b}',
        )
    if not all_files:
        head, staged = staged if staged is not None else staged_change(root)
        if staged:
            # ``index``: the same view of the same staged change, as the runner built it
            index = index or TreeView(root, '').unstaged_from(head, staged)
            return ChangeSet(
                root, COMMIT, head or EMPTY_TREE, staged, index,
                'staged change against ' + ('HEAD' if head else 'the empty tree'),
            )
    if cfg.base_ref and rev_exists(cfg.base_ref, root) and rev_exists('HEAD', root):
        base = _merge_base(root, cfg.base_ref, 'HEAD')
        if base is not None:
            return ChangeSet(
                root, ALL_FILES, base, _diff(root, base), TreeView(root, None),
                f'{cfg.base_ref}...working tree',
            )
    if rev_exists('HEAD^', root):
        # The working tree against HEAD here; HEAD and the commits before it are judged
        # one by one against their parents by history mode.
        head = resolve('HEAD', root)
        return ChangeSet(
            root, ALL_FILES, head, _diff(root, head), TreeView(root, None),
            'HEAD..working tree', history=True,
        )
    if not rev_exists('HEAD', root):
        return _no_base(root, 'the repository has no commits yet')
    if git('rev-parse', '--is-shallow-repository', cwd=root).strip() == b'true':
        return _no_base(root, 'this is a shallow clone: HEAD has no parent here and the '
                              'history since adoption is missing')
    return _no_base(root, 'HEAD has no parent: it is the root commit')


def _no_base(root: str, why: str) -> ChangeSet:
    return ChangeSet(root, NO_BASE, None, (), TreeView(root, None), why)
