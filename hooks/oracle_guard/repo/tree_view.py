"""One revision's tree as oracle-guard reads it (``TreeView``): the tracked paths of a
commit, the index or the working tree, and their bytes, each asked of git once and kept."""
from __future__ import annotations

import os

from oracle_guard.findings import ConfigError
from oracle_guard.oracle.records import FrozenRecord
from oracle_guard.repo import gitrepo
from oracle_guard.repo.gitrepo import batch_answers
from oracle_guard.repo.gitrepo import git
from oracle_guard.repo.gitrepo import git_env
from oracle_guard.repo.gitrepo import GitError
from oracle_guard.repo.gitrepo import literal_pathspecs
from oracle_guard.repo.gitrepo import plain_path
from oracle_guard.repo.gitrepo import split_z
from oracle_guard.repo.gitrepo import tree_mode

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Iterable
    from collections.abc import Iterator
    from collections.abc import Sequence

    from oracle_guard.repo.changeset import Change

# Every git process of a view starts through gitrepo.run_git, looked up at each call: one
# door to git for all of them.
CHUNK = 1 << 20


class Entry(FrozenRecord):
    """A tracked path in one tree: its git mode says whether it is a symlink."""

    __slots__ = ('path', 'mode')
    path: str
    mode: str

    def __init__(self, path: str, mode: str) -> None:
        self._set(path=path, mode=mode)

    @property
    def is_symlink(self) -> bool:
        return self.mode == '120000'

    @property
    def is_submodule(self) -> bool:
        return self.mode == '160000'


class TreeView:
    """One side of a change: the index, a commit, or the working tree.

    ``rev`` is ``None`` for the working tree, ``''`` for the index (what a commit
    is about to record, honouring ``GIT_INDEX_FILE``) or a commit id.
    """

    def __init__(self, root: str, rev: str | None) -> None:
        self.root = root
        self.rev = rev
        # Several checks of one run read the same documents and test files; from the
        # index or a commit each read is a git subprocess, so read each once.
        self._read_cache: dict[str, bytes | None] = {}
        # For the index: the commit it was staged on and the paths staged since (see
        # unstaged_from).
        self._head: str | None = None
        self._staged: frozenset[str] = frozenset()
        self._staged_modes: dict[str, str] = {}
        self._staged_objects: dict[str, str] = {}
        # Documents whose mode a batch read of HEAD already gave: path -> is a symlink.
        self._document_links: dict[str, bool] = {}
        # git's object id of paths ``entries`` listed on this side (index or commit).
        self._listed_objects: dict[str, str] = {}
        # Folders whose listing at HEAD a batch read already gave (see remember_listing).
        self._head_listings: dict[str, list[tuple[str, str, str]]] = {}
        # Objects a hook asked for with HEAD's first answers (see remember_objects).
        self.objects: dict[str, tuple[str, str, bytes] | None] = {}
        self._top: frozenset[str] | None = None  # see top_names
        self._kinds: dict[str, str] | None = None  # see top_kinds

    def unstaged_from(self, head: str | None, staged: Iterable[Change]) -> TreeView:
        """Let the index view answer from the staged diff and ``head``, not the index.

        The paths a commit does not stage are read from ``head`` (the same bytes); a path
        it adds or modifies has the mode the diff gave and is read by the object id the
        diff gave (the blob the index holds). git reads objects without loading the
        index: in a 50 000-file repository loading the index costs a git process ten
        milliseconds, so only the staged diff pays it.
        """
        if self.rev != '':
            return self
        self._staged_modes = {c.path: c.mode for c in staged
                              if c.mode and c.mode != '000000'}
        # A staged file's bytes by its object id: reading `:path` would load the index.
        self._staged_objects = {c.path: c.object_id for c in staged
                                if c.path in self._staged_modes and c.object_id and
                                c.object_id.strip('0')}
        if head:
            self._head = head
            self._staged = frozenset(p for c in staged for p in (c.path, c.old_path) if p)
        return self

    @property
    def label(self) -> str:
        if self.rev is None:
            return 'working tree'
        if self.rev == '':
            return 'index'
        return self.rev[:12]

    def top_names(self) -> frozenset[str] | None:
        """The names at the top of this side's tree (files and folders), from one git
        process that does not read the index (a commit, or the index staged on a known
        HEAD: HEAD's names and the staged paths' first parts, a superset); None where
        that cannot be told so cheaply (the working tree, an index without HEAD)."""
        kinds = self.top_kinds()
        if kinds is None:
            return None
        if self._top is None:
            self._top = frozenset(kinds)
        return self._top

    def top_kinds(self) -> dict[str, str] | None:
        """``top_names`` with what each is: ``tree``, ``blob`` or ``commit`` (a submodule)
        as git's tree says, ``?`` for a name the index's staged paths begin with (the
        index may hold it otherwise than HEAD)."""
        rev = self.rev if self.rev else self._head
        if rev is None or rev == '':
            return None
        if self._kinds is None:
            out = git('ls-tree', '-z', '--full-tree', rev, cwd=self.root)
            kinds = {}
            for rec in out.split(b'\0'):
                if rec:
                    meta, _, name = rec.partition(b'\t')
                    kinds[os.fsdecode(name)] = meta.split(b' ')[1].decode()
            if self.rev == '':
                kinds.update((p.split('/', 1)[0], '?') for p in self._staged)
            self._kinds = kinds
        return self._kinds

    def entries(self, prefixes: Sequence[str] = ()) -> list[Entry]:
        """Tracked paths (optionally below some folders) with their modes."""
        if self.rev == '' and prefixes and all(p in self._staged_modes for p in prefixes):
            # Paths the commit adds or modifies: the staged diff said their modes.
            return [Entry(p, self._staged_modes[p]) for p in sorted(set(prefixes))]
        pathspecs = ['--', *literal_pathspecs(prefixes)] if prefixes else []
        rev = self.rev
        if rev == '' and self._head and prefixes and not self._stages_below(prefixes):
            rev = self._head  # nothing staged there: the same entries, without the index
            if all(p in self._head_listings for p in prefixes):
                listed = {}
                for prefix in sorted(set(prefixes)):
                    for path, mode, object_id in self._head_listings[prefix]:
                        listed[path] = mode
                        if mode != '160000':  # a submodule's commit is no blob
                            self._listed_objects[path] = object_id
                return [Entry(p, m) for p, m in listed.items()]
        if rev in (None, ''):
            out = git('ls-files', '-s', '-z', *pathspecs, cwd=self.root)
            result = {}
            conflicted = set()
            for rec in out.split(b'\0'):
                if not rec:
                    continue
                meta, _, path = rec.partition(b'\t')
                fields = meta.split(b' ')
                name = os.fsdecode(path)
                result[name] = fields[0].decode()
                if rev == '' and len(fields) == 3:
                    if fields[2] == b'0':
                        self._listed_objects[name] = fields[1].decode()
                    else:  # a conflict: no one blob stands for the path
                        conflicted.add(name)
            for name in conflicted:
                self._listed_objects.pop(name, None)
            return [Entry(p, m) for p, m in result.items()]
        out = git('ls-tree', '-r', '-z', '--full-tree', rev, *pathspecs, cwd=self.root)
        entries = []
        for rec in out.split(b'\0'):
            if not rec:
                continue
            meta, _, path = rec.partition(b'\t')
            fields = meta.split(b' ')
            name = os.fsdecode(path)
            entries.append(Entry(name, fields[0].decode()))
            if len(fields) == 3 and fields[1] == b'blob' and (
                    rev == self.rev or name not in self._staged):
                self._listed_objects[name] = fields[2].decode()
        return entries

    def object_id(self, path: str) -> str | None:
        """git's object id of the blob ``path`` holds on this side, when known without
        asking git again: the staged diff's for a staged path, or what ``entries`` listed.
        None for the working tree (its bytes may differ from every blob) or a path not
        listed yet."""
        if self.rev is None:
            return None
        if self.rev == '' and path in self._staged_modes:
            return self._staged_objects.get(path)
        return self._listed_objects.get(path)

    def remember(self, path: str, data: bytes | None) -> None:
        """Seed the read cache with bytes already asked of git (see head_and_files)."""
        self._read_cache[path] = data

    def remember_listing(self, folder: str, listing: list[tuple[str, str, str]]) -> None:
        """Seed ``entries([folder])`` with HEAD's listing of it (head_documents_and_folders),
        used while nothing is staged below the folder."""
        self._head_listings[folder] = listing

    def remember_objects(self, answers: dict[str, tuple[str, str, bytes] | None]) -> None:
        """Objects (``HEAD:tests``, a blob id) asked with HEAD's first answers for the
        hook that will read them (``run_hook(..., objects=...)``): name -> (object id,
        type, bytes), None when git has no such object."""
        self.objects.update(answers)

    def remember_document(self, path: str, data: bytes | None, is_link: bool) -> None:
        """Seed ``read_document`` with what ``head_and_documents`` asked of git."""
        self._read_cache[path] = data
        self._document_links[path] = is_link

    def _stages_below(self, prefixes: Sequence[str]) -> bool:
        """Whether a staged path may lie below (or above) one of ``prefixes``; in doubt,
        yes: a plain string prefix either way is a superset of git's pathspec match."""
        return any(path.startswith(prefix) or prefix.startswith(path)
                   for path in self._staged for prefix in prefixes)

    def paths(self, prefixes: Sequence[str] = ()) -> list[str]:
        return [e.path for e in self.entries(prefixes)]

    def path_names(self, prefixes: Sequence[str]) -> list[bytes]:
        """The tracked paths below ``prefixes`` on this side as git writes them (bytes),
        sorted, each once: what ``paths`` lists, without modes, object ids or records to
        build (for a tests root of 2 500 files that was three quarters of the cost)."""
        if not prefixes:
            return []
        pathspecs = ['--', *literal_pathspecs(prefixes)]
        rev = self.rev
        if rev == '' and self._head and not self._stages_below(prefixes):
            rev = self._head  # nothing staged there: the same paths, without the index
        if rev in (None, ''):
            out = git('ls-files', '-z', *pathspecs, cwd=self.root)
        else:
            out = git('ls-tree', '-r', '-z', '--name-only', '--full-tree', rev, *pathspecs,
                      cwd=self.root)
        return sorted({name for name in out.split(b'\0') if name})

    def grep(self, words: Sequence[str], prefixes: Sequence[str], *,
             whole_words: bool = True, magic: bool = False,
             kept: Callable[[str], bool] | None = None) -> list[str]:
        """Tracked files below ``prefixes`` on this side that contain one of ``words``.

        One ``git grep`` (fixed strings, text files only) over the index, a commit or
        the working tree's tracked files; the index is the one ``GIT_INDEX_FILE`` names.
        Pathspecs are literal unless ``magic`` (then the caller writes ``:(glob)…`` or
        ``:(literal)…`` itself). No match is an empty list; any other failure a GitError.

        ``kept``, for a caller that keeps only the paths it says yes to: on the index
        staged on a known HEAD, git greps HEAD's tree (the index is not loaded: in a
        50 000-file repository that costs more than grepping a few hundred test files),
        the paths the commit stages are dropped from its answer, and each staged file
        (not deleted) ``kept`` accepts whose bytes contain one of ``words`` is added,
        whatever ``prefixes`` and word boundaries say: of the paths ``kept`` accepts, a
        superset of what a grep of the index answers.
        """
        if not words or not prefixes:
            return []
        args = [*(['--no-literal-pathspecs'] if magic else []), 'grep', '-l', '-z',
                *(['-w'] if whole_words else []), '-F', '-I', '--full-name', '--no-color']
        rev = self.rev
        if rev == '' and kept is not None and self._head:
            rev = self._head
        if self.rev == '':
            # A commit's grep: git's object reads take one lock, and on two CPUs more
            # threads cost CPU time and wall time waiting for each other.
            args.append('--threads=1')
        if rev == '':
            args.append('--cached')
        for word in sorted(set(words)):
            args += ['-e', word]
        if rev:
            args.append(rev)
        args += ['--', *(prefixes if magic else literal_pathspecs(prefixes))]
        if rev != self.rev:
            found = [p for p in self._grep(args, rev) if p not in self._staged]
            wanted = sorted(p for p in self._staged_modes if kept(p))  # type: ignore[misc]
            self.read_many(wanted)
            encoded = [os.fsencode(word) for word in set(words)]
            for path in wanted:
                raw = self.read(path)
                if raw is not None and any(word in raw for word in encoded):
                    found.append(path)
            return found
        return self._grep(args, self.rev)

    def _grep(self, args: list[str], rev: str | None) -> list[str]:
        try:
            code, out, err = gitrepo.run_git(args, self.root)
        except OSError as exc:  # git itself is missing
            raise GitError('git', 0, f'cannot run git: {exc}') from None
        if code not in (0, 1):  # 1 is "no match"
            message = err.decode('utf-8', 'replace').strip()
            raise GitError('git', 0, f'`git grep` failed: {message}')
        prefix = f'{rev}:' if rev else ''
        return [path[len(prefix):] for path in split_z(out)]

    def _object(self, path: str) -> str:
        if self.rev == '':
            if path in self._staged_objects:
                return self._staged_objects[path]
            if self._head and path not in self._staged:
                return f'{self._head}:{path}'
            return f':{path}'
        return f'{self.rev}:{path}'

    def read(self, path: str) -> bytes | None:
        """The bytes of a tracked file on this side, or None if it is not there."""
        if path not in self._read_cache and not self._read_asked(path):
            self._read_cache[path] = self._read(path)
        return self._read_cache[path]

    def _read_asked(self, path: str) -> bool:
        """Whether the blob ``path`` holds on this side was asked with HEAD's first
        answers (``remember_objects``, by its object id): then it is read from there."""
        oid = self.object_id(path) if self.objects else None
        answer = self.objects.get(oid) if oid else None
        if answer is None or answer[1] != 'blob' or answer[0] != oid:
            return False
        self._read_cache[path] = answer[2]
        return True

    def read_many(self, paths: Sequence[str]) -> None:
        """Read several files into the cache with one git process (``read`` then answers
        from it): the same bytes as one ``git cat-file blob`` per file."""
        wanted = sorted({p for p in paths if p not in self._read_cache and '\n' not in p and
                         not self._read_asked(p)})
        if self.rev is None or len(wanted) < 2:
            return  # the disk, or nothing to gain
        request = ''.join(f'{self._object(p)}\n' for p in wanted)
        try:
            # --buffer: git writes its answers in blocks, not one flush per object
            code, out, _ = gitrepo.run_git(('cat-file', '--batch', '--buffer'), self.root,
                                   stderr=False, input=os.fsencode(request))
        except OSError as exc:  # git itself is missing
            raise GitError('git', 0, f'cannot run git: {exc}') from None
        if code != 0:
            return  # each file is then asked for on its own, as before
        for path, answer in zip(wanted, batch_answers(out, len(wanted))):
            self._read_cache[path] = answer[1] if answer and answer[0] == 'blob' else None

    def read_document(self, path: str) -> bytes | None:
        """An oracle document (config, manifest, ledger, lock, trace store), or None.

        A symlink is refused: it could point anywhere, outside the repository included,
        and what it points at is not what git records.
        """
        if self.rev is None:
            is_link = os.path.islink(os.path.join(self.root, path))
        elif path in self._document_links:
            is_link = self._document_links[path]
        else:
            found = self._committed_document(path)
            if found is None:
                is_link = any(e.path == path and e.is_symlink for e in self.entries([path]))
            else:
                is_link, data = found
                self._read_cache.setdefault(path, data)
        if is_link:
            raise ConfigError(path, 1, 'is a symlink; an oracle file must be a regular file '
                              'in the repository', 'commit the file itself, not a link to it')
        return self.read(path)

    def _committed_document(self, path: str) -> tuple[bool, bytes | None] | None:
        """(is a symlink, bytes) of a path as a commit holds it, from one ``git cat-file
        --batch`` asked for its folder's tree (which gives its mode) and for the file:
        the answers ``ls-tree`` and ``cat-file blob`` give, one process instead of two.
        None when the path is staged, or not a plain path: then they are asked."""
        rev = self.rev
        if rev == '':
            if not self._head or path in self._staged:
                return None
            rev = self._head
        if not rev or path in self._read_cache or not plain_path(path):
            return None
        folder, name = path.rpartition('/')[::2]
        tree = f'{rev}:{folder}' if folder else f'{rev}^{{tree}}'
        try:
            code, out, _ = gitrepo.run_git(('cat-file', '--batch'), self.root, stderr=False,
                                   input=os.fsencode(f'{tree}\n{rev}:{path}\n'))
        except OSError:
            return None
        if code != 0:
            return None
        folder_answer, file_answer = batch_answers(out, 2)
        data = file_answer[1] if file_answer and file_answer[0] == 'blob' else None
        if not folder_answer or folder_answer[0] != 'tree':
            return False, data
        width = len(out.split(b' ', 1)[0]) // 2  # 20 bytes (SHA-1) or 32 (SHA-256)
        return tree_mode(folder_answer[1], os.fsencode(name), width) == b'120000', data

    def _read(self, path: str) -> bytes | None:
        if self.rev is None:
            full = os.path.join(self.root, path)
            try:
                with open(full, 'rb') as f:
                    return f.read()
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                return None
        code, out, _ = gitrepo.run_git(('cat-file', 'blob', self._object(path)), self.root,
                               stderr=False)
        return out if code == 0 else None

    def chunks(self, path: str) -> Iterator[bytes]:
        """Stream a file's bytes in chunks: memory stays flat on a huge fixture."""
        if self.rev is None:
            with open(os.path.join(self.root, path), 'rb') as f:
                while True:
                    block = f.read(CHUNK)
                    if not block:
                        return
                    yield block
        import subprocess  # a stream: only hashing a fixture from git needs it

        proc = subprocess.Popen(
            ('git', 'cat-file', 'blob', self._object(path)), cwd=self.root,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            env=git_env(),
        )
        assert proc.stdout is not None
        try:
            while True:
                block = proc.stdout.read(CHUNK)
                if not block:
                    break
                yield block
        finally:
            proc.stdout.close()
            proc.wait()
