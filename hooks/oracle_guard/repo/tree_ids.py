"""git's tree object ids, computed from HEAD's trees and a staged change.

check-generator-lock keeps what it learnt about the test roots per tree object id
(``reading/import_closure.py``). A commit changes the ids of the folders it touches, so
the id a test root will have once the staged change is committed is computed here from
HEAD's tree objects along the staged paths and the staged diff's modes and blob ids, the
way ``git write-tree`` builds it. A wrong prediction only names a tree nobody has; what
is kept under an id is only ever about the tree that id hashes.
"""
from __future__ import annotations

import os
import posixpath

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable
    from collections.abc import Mapping

    from oracle_guard.repo.changeset import Change

TREE_MODE = b'40000'
# One entry of a raw tree object: mode, name, the raw object id.
Entries = dict  # name (bytes) -> (mode (bytes), raw id (bytes))


def parse_tree(raw: bytes, width: int) -> Entries:
    """``<mode> <name>\\0<id>`` entries of a raw tree object."""
    entries: Entries = {}
    pos = 0
    while pos < len(raw):
        space = raw.index(b' ', pos)
        nul = raw.index(b'\0', space)
        entries[raw[space + 1:nul]] = (raw[pos:space], raw[nul + 1:nul + 1 + width])
        pos = nul + 1 + width
    return entries


def _sort_key(item: tuple[bytes, tuple[bytes, bytes]]) -> bytes:
    name, (mode, _) = item
    return name + b'/' if mode == TREE_MODE else name  # git's order: a tree as "name/"


def hasher(width: int):  # type: ignore[no-untyped-def]
    """SHA-1 or SHA-256, from the small C modules (hashlib would load OpenSSL)."""
    try:
        if width == 20:
            from _sha1 import sha1 as new
        else:
            try:
                from _sha2 import sha256 as new  # type: ignore[no-redef]  # Python 3.12+
            except ImportError:
                from _sha256 import sha256 as new  # type: ignore[no-redef]
    except ImportError:  # pragma: no cover -- a Python built without them
        import hashlib

        new = hashlib.sha1 if width == 20 else hashlib.sha256  # type: ignore[assignment]
    return new


def tree_id(entries: Entries, width: int) -> bytes:
    body = b''.join(mode + b' ' + name + b'\0' + oid
                    for name, (mode, oid) in sorted(entries.items(), key=_sort_key))
    return hasher(width)(b'tree %d\0' % len(body) + body).digest()


def folders_to_read(root: str, changes: Iterable[Change]) -> list[str]:
    """The folders (``root`` and below it, '' for the top) whose HEAD trees
    ``predict`` needs: those holding a staged path under ``root``."""
    found: set[str] = set()
    for path in _paths_under(root, changes):
        folder = posixpath.dirname(path)
        while True:
            found.add(folder)
            if len(folder) <= len(root.rstrip('/')):
                break
            folder = posixpath.dirname(folder)
    return sorted(found)


def _paths_under(root: str, changes: Iterable[Change]) -> list[str]:
    return [p for c in changes for p in (c.path, c.old_path)
            if p and (not root or p.startswith(root))]


def predict(root: str, changes: Iterable[Change], trees: Mapping[str, Entries | None],
            width: int) -> bytes | None:
    """The raw id ``root`` (a folder ending in '/', or '' for the whole tree) will have
    once ``changes`` are committed, from HEAD's ``trees`` of ``folders_to_read``
    (None: HEAD has no such folder). None when the folder will hold nothing, or when
    the change cannot be predicted here (a path without a mode or id, a conflict)."""
    top = root.rstrip('/')
    removed: dict[str, set[bytes]] = {}
    added: dict[str, dict[bytes, tuple[bytes, bytes]]] = {}
    for change in changes:
        if change.old_path and change.status == 'R':
            _under(top, change.old_path, removed)
        if not change.path or (top and not change.path.startswith(root)):
            continue
        if change.status == 'D':
            _under(top, change.path, removed)
            continue
        if not change.mode or not change.object_id or not change.object_id.strip('0') or \
                change.status not in 'AMRCT':
            return None
        folder, name = posixpath.split(change.path)
        added.setdefault(folder, {})[os.fsencode(name)] = (
            change.mode.lstrip('0').encode(), bytes.fromhex(change.object_id))
    folders = sorted(set(trees), key=lambda f: -f.count('/') - (1 if f else 0))
    built: dict[str, bytes | None] = {}
    for folder in folders:
        known = trees.get(folder)
        entries: Entries = dict(known) if known else {}
        for name in removed.get(folder, ()):
            entries.pop(name, None)
        for child, child_id in built.items():
            if child and posixpath.dirname(child) == folder:
                name = os.fsencode(posixpath.basename(child))
                if child_id is None:
                    if entries.get(name, (b'',))[0] == TREE_MODE:
                        del entries[name]
                else:
                    entries[name] = (TREE_MODE, child_id)
        entries.update(added.get(folder, {}))
        built[folder] = tree_id(entries, width) if entries else None
    return built.get(top)


def _under(top: str, path: str, removed: dict[str, set[bytes]]) -> None:
    if top and not path.startswith(top + '/'):
        return
    folder, name = posixpath.split(path)
    removed.setdefault(folder, set()).add(os.fsencode(name))
