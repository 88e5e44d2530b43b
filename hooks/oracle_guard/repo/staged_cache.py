"""The staged diff of one commit, asked of git once for the six hooks.

pre-commit runs each hook as its own process on the same index, and each asked ``git diff
--cached`` again: in a 50 000-file repository loading the index is what that process
costs (it grows with the repository, not with the change). What is staged against HEAD
is a function of HEAD's commit and the index's content alone, and git ends every index
file with a checksum of its content: the diff is kept under (repository, index file,
that checksum, HEAD) on a developer's machine (``reading/cache_policy.py``'s rule: never
in CI unless asked, ``ORACLE_GUARD_SCAN_CACHE=0`` off everywhere), and the next hook of
the same commit reads it instead of asking git. A different index content or HEAD is
another key; an index written without a checksum (``index.skipHash``) is never kept.
The caller says where the cache lives and whether it is on (``runner.judged_view``).
"""
from __future__ import annotations

import os

_MAGIC = b'DIRC'
_TAIL = 32  # the checksum: 20 bytes (SHA-1) or 32 (SHA-256); 32 covers both


def index_file(root: str) -> str | None:
    """The index git reads for ``root``: ``GIT_INDEX_FILE`` (as git resolves it, from the
    top of the work tree the hooks run in) or ``.git/index``; None for a ``.git`` that is
    not a folder (a worktree, a submodule: not looked up here) or a ``GIT_DIR``."""
    if os.environ.get('GIT_DIR') or os.environ.get('GIT_WORK_TREE'):
        return None
    named = os.environ.get('GIT_INDEX_FILE')
    if named:
        return named if os.path.isabs(named) else os.path.join(root, named)
    git_dir = os.path.join(root, '.git')
    return os.path.join(git_dir, 'index') if os.path.isdir(git_dir) else None


def index_key(root: str, what: str = '') -> str | None:
    """The index file and the checksum git wrote at its end, and ``what`` is kept (the
    diff's arguments); None when there is none."""
    path = index_file(root)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        head = os.pread(fd, 4, 0)
        tail = os.pread(fd, _TAIL, size - _TAIL) if size >= 12 + _TAIL else b''
    except OSError:
        return None
    finally:
        os.close(fd)
    if head != _MAGIC or len(tail) != _TAIL or not tail[-20:].strip(b'\0'):
        return None  # not an index, or one written without its checksum
    return f'{os.path.abspath(path)}|{size}|{tail.hex()}|{what}'


def _cache_path(folder: str, root: str) -> str:
    name = ''.join(c if c.isalnum() else '_' for c in os.path.abspath(root))[-80:]
    return os.path.join(folder, f'staged-{name}-{len(root)}.bin')


def lookup(root: str, folder: str, key: str | None, head: str | None = None
           ) -> tuple[str, bytes] | None:
    """(HEAD, ``git diff --cached --raw -z`` output) kept under ``folder`` for the index
    content ``key`` (``index_key``) and ``head``, when given; None when not kept."""
    if key is None:
        return None
    try:
        with open(_cache_path(folder, root), 'rb') as f:
            data = f.read()
    except OSError:
        return None
    first, sep, raw = data.partition(b'\n')
    fields = os.fsdecode(first).split('\t')
    if not sep or len(fields) != 3 or fields[0] != key or \
            not fields[2].isdigit() or int(fields[2]) != len(raw):
        return None  # another index, or a file torn by a run that stopped
    if head is not None and fields[1] != head:
        return None
    return fields[1], raw


def store(root: str, folder: str, key: str | None, head: str | None, raw: bytes,
          what: str = '') -> None:
    """Keep the staged diff against ``head`` (asked by its id) of the index content ``key``
    (``index_key(root, what)``) read before the diff: kept only when the index still has
    it after (a ``git add`` meanwhile is another content). A cache that cannot be written
    is no error."""
    if key is None or not head or '\t' in key or '\n' in key or index_key(root, what) != key:
        return
    path = _cache_path(folder, root)
    temporary = f'{path}.{os.getpid()}'
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, os.fsencode(f'{key}\t{head}\t{len(raw)}\n') + raw)
        finally:
            os.close(fd)
        os.replace(temporary, path)  # whole or not at all
    except OSError:
        try:
            os.remove(temporary)
        except OSError:
            pass
