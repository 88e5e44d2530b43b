"""Talking to git: one process per question, NUL-separated output everywhere.

Everything oracle-guard knows about "what is in the repository" comes from git
(``git ls-files``), never from a directory listing: during a commit pre-commit
stashes unstaged changes but leaves untracked files on disk.
"""
from __future__ import annotations

import os

from oracle_guard.findings import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from collections.abc import Sequence


EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'


class GitError(ConfigError):
    pass


def literal_pathspecs(prefixes: Sequence[str]) -> list[str]:
    """Path prefixes as git pathspecs: '' (the whole repository) is spelled '.'."""
    return [p or '.' for p in prefixes]


def git_env() -> dict[str, str]:
    """The environment of every git process oracle-guard starts. Pathspecs are literal: a
    folder named '*' or ':x' must not turn into a pattern. Replacement objects
    (``refs/replace/``, ``git replace``) are ignored: they live in one repository's refs, not
    in the commits, so honouring them would judge other bytes than the ones a clone of
    the same commits holds, and a pull request's install step could write one into the
    checkout the gate reads after it."""
    return {**os.environ, 'GIT_LITERAL_PATHSPECS': '1', 'GIT_NO_REPLACE_OBJECTS': '1'}


def run_git(args: Sequence[str], cwd: str | None, *, stdout: bool = True,
            stderr: bool = True, input: bytes | None = None,
            more: Callable[[bytes], bytes | None] | None = None) -> tuple[int, bytes, bytes]:
    """Run ``git *args``: (exit code, stdout, stderr); unwanted streams go to /dev/null,
    stdin is ``input`` (or /dev/null).

    ``more`` (with ``stdout``): once ``input`` is written, stdin stays open and ``more``
    is called with the output so far after each read, until it returns the rest of the
    input (``b''`` for none), written before stdin is closed: a ``git cat-file --batch``
    asked for what its first answers name, in the same process.

    ``os.posix_spawnp`` and two pipes where the platform has them: the subprocess module
    (with locale, signal, threading and selectors) costs a hook more to import than the
    git process it starts. ``git -C`` stands for the working folder, which posix_spawn
    cannot set. Elsewhere, subprocess. A git that cannot be started raises OSError.
    """
    env = git_env()
    if not hasattr(os, 'posix_spawnp'):  # pragma: no cover -- Windows
        import subprocess

        proc = subprocess.run(
            ('git', *args), cwd=cwd, env=env, input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
            stderr=subprocess.PIPE if stderr else subprocess.DEVNULL,
        )
        rest = more(proc.stdout or b'') if more is not None and proc.returncode == 0 else None
        if rest:  # the rest from a second process, its answers after the first ones
            code, out, err = run_git(args, cwd, stdout=stdout, stderr=stderr, input=rest)
            return code, (proc.stdout or b'') + out, (proc.stderr or b'') + err
        return proc.returncode, proc.stdout or b'', proc.stderr or b''
    import select

    import _signal  # signal's C half, loaded at start-up; signal.py itself builds enums

    argv = ['git', *(['-C', cwd] if cwd is not None else []), *args]
    actions: list[tuple] = []
    pipes: dict[int, int] = {}  # child's fd -> our read end
    write_ends = []
    feed = -1  # our end of git's stdin, when there is input
    try:
        if input is None:
            actions.append((os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0))
        else:
            stdin_end, feed = os.pipe()
            write_ends.append(stdin_end)  # closed here once git has it
            actions.append((os.POSIX_SPAWN_DUP2, stdin_end, 0))
        for fd, wanted in ((1, stdout), (2, stderr)):
            if wanted:  # os.pipe() ends are not inherited: only the dup2'd copy reaches git
                read_end, write_end = os.pipe()
                pipes[fd] = read_end
                write_ends.append(write_end)
                actions.append((os.POSIX_SPAWN_DUP2, write_end, fd))
            else:
                actions.append((os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_WRONLY, 0))
        # Python ignores SIGPIPE (and SIGXFSZ); git gets the defaults, as from subprocess.
        defaults = [getattr(_signal, name) for name in ('SIGPIPE', 'SIGXFSZ')
                    if hasattr(_signal, name)]
        pid = os.posix_spawnp('git', argv, env, file_actions=actions, setsigdef=defaults)
    except BaseException:
        for fd in (*pipes.values(), *write_ends, *([feed] if feed >= 0 else [])):
            os.close(fd)
        raise
    for fd in write_ends:
        os.close(fd)
    received: dict[int, list[bytes]] = {fd: [] for fd in pipes.values()}
    pending = memoryview(input or b'')
    asking = more is not None and feed >= 0 and stdout  # the rest of the input not known yet
    try:
        open_ends = list(received)
        if asking and not pending:
            pending, asking = memoryview(more(b'') or b''), False  # type: ignore[misc]
        if feed >= 0 and not pending and not asking:
            os.close(feed)
            feed = -1
        while open_ends or feed >= 0:
            if feed >= 0 and not pending and (not asking or pipes[1] not in open_ends):
                os.close(feed)  # all written (or git stopped answering)
                feed = -1
                continue
            # Feed and drain together: git blocks when a pipe is full, and so would we.
            ready, writable, _ = select.select(
                open_ends, [feed] if feed >= 0 and pending else [], [])
            if writable:
                try:
                    pending = pending[os.write(feed, pending[:select.PIPE_BUF]):]
                except BrokenPipeError:  # git stopped reading: its exit code says why
                    pending, asking = pending[:0], False
            for fd in ready:
                block = os.read(fd, 1 << 16)
                if block:
                    received[fd].append(block)
                else:
                    open_ends.remove(fd)
            if asking and not pending and pipes[1] in ready:
                rest = more(b''.join(received[pipes[1]]))  # type: ignore[misc]
                if rest is not None:
                    pending, asking = memoryview(rest), False
    finally:
        if feed >= 0:
            os.close(feed)
        for fd in received:
            os.close(fd)
        _, status = os.waitpid(pid, 0)
    out = b''.join(received[pipes[1]]) if stdout else b''
    err = b''.join(received[pipes[2]]) if stderr else b''
    return os.waitstatus_to_exitcode(status), out, err


def git(*args: str, cwd: str | None = None, check: bool = True) -> bytes:
    """Run git and return its stdout; a failure is a ConfigError, not a traceback."""
    try:
        code, out, err = run_git(args, cwd)
    except OSError as exc:  # git itself is missing
        raise GitError('git', 0, f'cannot run git: {exc}') from None
    if check and code != 0:
        message = err.decode('utf-8', 'replace').strip()
        raise GitError('git', 0, f'`git {" ".join(args)}` failed: {message}')
    return out


def head_and_files(root: str, paths: Sequence[str]) -> tuple[str | None, dict[str, bytes | None]]:
    """HEAD's commit id (None when unborn) and the bytes of ``paths`` in it (None when
    absent or not a file), from one ``git cat-file --batch``: the same answers as
    ``rev-parse --verify HEAD^{commit}`` and ``cat-file blob HEAD:path``, one process."""
    if any('\n' in path for path in paths):
        raise ValueError('a path with a newline cannot be asked of git cat-file --batch')
    request = ''.join(f'{name}\n' for name in ('HEAD^{commit}', *(f'HEAD:{p}' for p in paths)))
    try:
        code, out, err = run_git(('cat-file', '--batch'), root, input=os.fsencode(request))
    except OSError as exc:  # git itself is missing
        raise GitError('git', 0, f'cannot run git: {exc}') from None
    if code != 0:
        message = err.decode('utf-8', 'replace').strip()
        raise GitError('git', 0, f'`git cat-file --batch` failed: {message}')
    answers = batch_answers(out, len(paths) + 1)
    head = out.split(b' ', 1)[0].decode() if answers[0] is not None else None
    files = {path: answer[1] if answer and answer[0] == 'blob' else None
             for path, answer in zip(paths, answers[1:])}
    return head, files


def head_and_documents(root: str, paths: Sequence[str], documents: Sequence[str],
                       folders: Sequence[str] = ()
                       ) -> tuple[str | None, dict[str, bytes | None], dict[str, bool]]:
    """``head_and_files`` for ``paths`` and ``documents``, and whether HEAD holds each
    document as a symlink (from its folder's tree, asked in the same ``git cat-file
    --batch``): all a commit's first reads of HEAD, one process.

    ``folders``: folders whose listing the hook will ask for; with ``listings`` below."""
    head, files, links, _listings = head_documents_and_folders(root, paths, documents, folders)
    return head, files, links


def head_documents_and_folders(
        root: str, paths: Sequence[str], documents: Sequence[str], folders: Sequence[str] = (),
) -> tuple[str | None, dict[str, bytes | None], dict[str, bool],
           dict[str, list[tuple[str, str, str]] | None]]:
    """``head_and_documents``, and for each of ``folders`` (``tests/properties/``) what
    ``git ls-tree -r HEAD -- folder`` lists, (path, mode, object id) in its order, read
    from the folder's tree object in the same process: known when the folder holds no
    folder (None otherwise, or when HEAD holds no such folder: then ls-tree is asked)."""
    return head_documents_folders_and_objects(root, paths, documents, folders)[:4]


def head_documents_folders_and_objects(
        root: str, paths: Sequence[str], documents: Sequence[str], folders: Sequence[str] = (),
        objects: Sequence[str] = (),
        listed: Callable[[dict[str, list[tuple[str, str, str]] | None]], Sequence[str]]
        | None = None,
) -> tuple[str | None, dict[str, bytes | None], dict[str, bool],
           dict[str, list[tuple[str, str, str]] | None],
           dict[str, tuple[str, str, bytes] | None]]:
    """``head_documents_and_folders``, and ``objects`` (blob ids, ``HEAD:tests``, ...)
    as ``cat_file_batch`` answers them, asked in the same process. ``listed``: given the
    folders' listings, more objects to read (the blobs a hook will read from them), asked
    of the same process once its first answers are in (``run_git(more=...)``), answered
    with ``objects``."""
    documents = [d for d in documents if plain_path(d) and d not in paths]
    folders = [f for f in folders if plain_path(f.rstrip('/'))]
    objects = [o for o in dict.fromkeys(objects) if '\n' not in o]
    if not documents and not folders and not objects:
        head, files = head_and_files(root, paths)
        return head, files, {}, {}, {}
    trees = [f'HEAD:{d.rpartition("/")[0]}' if '/' in d else 'HEAD^{tree}' for d in documents]
    listed_trees = [f'HEAD:{f.rstrip("/")}' for f in folders]
    request = ''.join(f'{name}\n' for name in (
        'HEAD^{commit}', *(f'HEAD:{p}' for p in (*paths, *documents)), *trees, *listed_trees,
        *objects))
    if '\n' in ''.join(paths):
        raise ValueError('a path with a newline cannot be asked of git cat-file --batch')
    asked = (*paths, *documents)
    count = 1 + len(asked) + len(documents) + len(folders)

    def parse(out: bytes) -> tuple[str | None, dict[str, bytes | None], dict[str, bool],
                                   dict[str, list[tuple[str, str, str]] | None]]:
        answers = batch_answers(out, count)
        head = out.split(b' ', 1)[0].decode() if answers[0] is not None else None
        files = {path: answer[1] if answer and answer[0] == 'blob' else None
                 for path, answer in zip(asked, answers[1:])}
        links = {}
        listings: dict[str, list[tuple[str, str, str]] | None] = {}
        if head:
            width = len(head) // 2
            for document, answer in zip(documents, answers[1 + len(asked):]):
                links[document] = bool(answer and answer[0] == 'tree' and tree_mode(
                    answer[1], os.fsencode(document.rpartition('/')[2]), width) == b'120000')
            for folder, answer in zip(folders, answers[1 + len(asked) + len(documents):]):
                listings[folder] = _flat_listing(folder, answer[1], width) \
                    if answer and answer[0] == 'tree' else None
        return head, files, links, listings

    following: list[str] = []

    def more(out: bytes) -> bytes | None:
        if not _answers_complete(out, count + len(objects)):
            return None  # git is still answering the first requests
        names = listed(parse(out)[3]) if listed is not None else ()
        following.extend(n for n in dict.fromkeys(names) if '\n' not in n and n not in objects)
        return os.fsencode(''.join(f'{n}\n' for n in following))

    try:
        code, out, err = run_git(('cat-file', '--batch'), root, input=os.fsencode(request),
                                 more=more if listed is not None and folders else None)
    except OSError as exc:  # git itself is missing
        raise GitError('git', 0, f'cannot run git: {exc}') from None
    if code != 0:
        message = err.decode('utf-8', 'replace').strip()
        raise GitError('git', 0, f'`git cat-file --batch` failed: {message}')
    head, files, links, listings = parse(out)
    names = [*objects, *following]
    extra = dict(zip(names, _batch_objects(out, count, len(names))))
    return head, files, links, listings, extra


def _answers_complete(out: bytes, count: int) -> bool:
    """Whether ``git cat-file --batch`` output holds all of the first ``count`` answers."""
    pos = 0
    for _ in range(count):
        end = out.find(b'\n', pos)
        if end < 0:
            return False
        header = out[pos:end].split(b' ')
        pos = end + 1
        if len(header) == 3 and header[2].isdigit():
            pos += int(header[2]) + 1
            if pos > len(out):
                return False
    return True


def _flat_listing(folder: str, tree: bytes, width: int) -> list[tuple[str, str, str]] | None:
    """(path, mode, object id) of a raw tree's entries below ``folder``, or None when it
    holds a folder (``ls-tree -r`` would recurse into it)."""
    prefix = folder.rstrip('/') + '/'
    found = []
    pos = 0
    while pos < len(tree):
        space = tree.index(b' ', pos)
        nul = tree.index(b'\0', space)
        mode = tree[pos:space].decode()
        if mode in ('40000', '040000'):
            return None
        found.append((prefix + os.fsdecode(tree[space + 1:nul]), mode.zfill(6),
                      tree[nul + 1:nul + 1 + width].hex()))
        pos = nul + 1 + width
    return found


def plain_path(path: str) -> bool:
    """A path git reads as written: no pathspec or revision syntax, no newline."""
    return bool(path) and not any(c in path for c in '\n*?[\\') and \
        not path.startswith((':', '/')) and not path.endswith('/')


def tree_mode(tree: bytes, name: bytes, width: int) -> bytes | None:
    """The mode of ``name`` in a raw tree object (``<mode> <name>\\0<id>`` entries)."""
    pos = 0
    while pos < len(tree):
        space = tree.index(b' ', pos)
        nul = tree.index(b'\0', space)
        if tree[space + 1:nul] == name:
            return tree[pos:space]
        pos = nul + 1 + width
    return None


def batch_answers(out: bytes, count: int) -> list[tuple[str, bytes] | None]:
    """``git cat-file --batch`` output: per object asked, (type, bytes) or None."""
    answers: list[tuple[str, bytes] | None] = []
    pos = 0
    for _ in range(count):
        end = out.index(b'\n', pos)
        header = out[pos:end].split(b' ')
        pos = end + 1
        if len(header) == 3 and header[2].isdigit():  # "<id> <type> <size>", the object, LF
            size = int(header[2])
            answers.append((header[1].decode(), out[pos:pos + size]))
            pos += size + 1
        else:  # "<name> missing" or "<name> ambiguous"
            answers.append(None)
    return answers


def cat_file_batch(root: str, names: Sequence[str], buffer: bool = False
                   ) -> list[tuple[str, str, bytes] | None] | None:
    """(object id, type, bytes) of each of ``names`` (``HEAD:tests``, a blob id, ...), or
    None for one git does not have: one ``git cat-file --batch`` (``--buffer``: answers
    written in blocks, for many objects). None for all of them when git cannot answer
    (then each is asked the usual way)."""
    if not names or any('\n' in name for name in names):
        return None
    try:
        code, out, _ = run_git(('cat-file', '--batch', *(['--buffer'] if buffer else [])),
                               root, stderr=False,
                               input=os.fsencode(''.join(f'{n}\n' for n in names)))
    except OSError:
        return None
    if code != 0:
        return None
    return _batch_objects(out, 0, len(names))


def _batch_objects(out: bytes, skip: int, count: int) -> list[tuple[str, str, bytes] | None]:
    """``git cat-file --batch`` output: (object id, type, bytes) or None for each of
    ``count`` objects after the first ``skip``."""
    found: list[tuple[str, str, bytes] | None] = []
    pos = 0
    for i in range(skip + count):
        end = out.index(b'\n', pos)
        header = out[pos:end].split(b' ')
        pos = end + 1
        answer = None
        if len(header) == 3 and header[2].isdigit():  # "<id> <type> <size>", the object, LF
            size = int(header[2])
            answer = (header[0].decode(), header[1].decode(), out[pos:pos + size])
            pos += size + 1
        if i >= skip:
            found.append(answer)
    return found


def git_ok(*args: str, cwd: str | None = None) -> bool:
    return run_git(args, cwd, stdout=False, stderr=False)[0] == 0


def repo_root(cwd: str | None = None) -> str:
    here = os.path.abspath(cwd or '.')
    if os.path.exists(os.path.join(here, '.git')) and not (
            os.environ.get('GIT_DIR') or os.environ.get('GIT_WORK_TREE')):
        # pre-commit runs hooks at the top of the work tree: no git call needed.
        return here
    try:
        out = git('rev-parse', '--show-toplevel', cwd=cwd)
    except GitError:
        raise GitError(
            os.path.abspath(cwd or '.'), 0, 'not inside a git repository',
            'run oracle-guard from the root of a git checkout',
        ) from None
    return out.decode().rstrip('\n')


def split_z(out: bytes) -> list[str]:
    return [os.fsdecode(p) for p in out.split(b'\0') if p]


def rev_exists(rev: str, cwd: str | None = None) -> bool:
    return git_ok('rev-parse', '--verify', '--quiet', f'{rev}^{{commit}}', cwd=cwd)


def resolve_or_none(rev: str, cwd: str | None = None) -> str | None:
    """The commit id of ``rev``, or None when it does not exist (one git call)."""
    out = git('rev-parse', '--verify', '--quiet', f'{rev}^{{commit}}', cwd=cwd, check=False)
    return out.decode().strip() or None


def resolve(rev: str, cwd: str | None = None) -> str:
    return git('rev-parse', '--verify', f'{rev}^{{commit}}', cwd=cwd).decode().strip()
