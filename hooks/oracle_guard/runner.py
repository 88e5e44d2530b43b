"""What every hook's ``main`` shares: arguments, configuration, exit codes.

Exit codes: 0 clean, 1 findings, 2 bad input or configuration, 3 an internal
error (a bug in oracle-guard; ``--debug`` shows the traceback).
"""
from __future__ import annotations

import sys

from oracle_guard.repo.changeset import Change
from oracle_guard.repo.changeset import range_env
from oracle_guard.repo.changeset import DIFF_ARGS
from oracle_guard.repo.changeset import diff_raw
from oracle_guard.repo.changeset import parse_raw
from oracle_guard.repo.changeset import staged_on_head
from oracle_guard.context import Check
from oracle_guard.context import RunContext
from oracle_guard.config import add_config_arguments
from oracle_guard.config import apply_arguments
from oracle_guard.config import PYPROJECT
from oracle_guard.config import load_config
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.repo.gitrepo import EMPTY_TREE
from oracle_guard.repo.gitrepo import head_documents_folders_and_objects
from oracle_guard.repo.gitrepo import repo_root
from oracle_guard.repo.gitrepo import resolve_or_none
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.repo.staged_cache import index_key
from oracle_guard.repo.staged_cache import lookup
from oracle_guard.repo.staged_cache import store
from oracle_guard.report import FORMATS
from oracle_guard.report import printable
from oracle_guard.report import write_error
from oracle_guard.report import write_findings

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import argparse
    import datetime
    from collections.abc import Callable
    from collections.abc import Sequence


def iso_date(value: str) -> datetime.date:
    """argparse type of every --today option: a YYYY-MM-DD date, or a usage error."""
    import argparse
    import datetime

    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f'not a date (YYYY-MM-DD): {value!r}') from None


def add_run_arguments(parser: argparse.ArgumentParser, *, filenames: bool) -> None:
    if filenames:
        parser.add_argument('filenames', nargs='*', help='files to check (pre-commit passes them)')
    parser.add_argument('--format', choices=FORMATS, default='text',
                        help='output format (default: text; github prints annotations)')
    parser.add_argument('--from-ref', help='judge the range FROM_REF...TO_REF (pull requests)')
    parser.add_argument('--to-ref', help='see --from-ref')
    parser.add_argument('--all-files', action='store_true',
                        help='judge the whole tree, not only what is staged')
    parser.add_argument('--require-base', action='store_true',
                        help='fail when no base revision is available for the change rules')
    parser.add_argument('--today', type=iso_date, help='the date expiries are compared with')
    parser.add_argument('--debug', action='store_true', help='show tracebacks of internal errors')
    add_config_arguments(parser)


def judged_view(root: str, to_ref: str | None, all_files: bool,
                documents: Sequence[str] = (), folders: Sequence[str] = (),
                objects: Callable[[tuple[Change, ...]], Sequence[str]] | None = None,
                listed: Callable[[dict], Sequence[str]] | None = None,
                ) -> tuple[TreeView, tuple[str | None, tuple[Change, ...]] | None]:
    """Where the configuration is read: the side of the change the run judges.

    The to-ref of a range; the index when something is staged (an untracked or
    unstaged pyproject.toml must not reconfigure a commit's checks); otherwise the
    working tree, as ``pre-commit run --all-files`` sees it. Also returns what is
    staged, so the change set does not ask git twice. ``documents``: oracle files the
    hook will read (at their default paths), asked of HEAD in the same git process;
    ``folders``: folders the hook will list (``TreeView.entries``), likewise;
    ``objects``: given what is staged, the objects the hook will read (``HEAD:tests``,
    a staged blob's id): then the staged diff is asked first, and those objects with
    HEAD's first answers (``TreeView.objects``), still two git processes; ``listed``:
    given the folders' listings at HEAD, the blobs the hook will read from them, asked
    of the same git process (``TreeView.read`` answers from them by object id).
    """
    refs = (None, to_ref) if to_ref else range_env()
    if refs:
        rev = resolve_or_none(refs[1], root)
        if rev:
            return TreeView(root, rev), None
    if all_files:
        return TreeView(root, None), None
    # HEAD and its pyproject.toml from one git process: unless the commit stages the
    # file, that is the configuration the index holds.
    asked: dict = {}
    # The staged diff another hook of this commit asked git for (repo/staged_cache.py).
    cache_dir = _staged_cache_folder()
    asking = ' '.join(DIFF_ARGS)  # in the key: another version may ask git another way
    key = index_key(root, asking) if cache_dir else None
    kept = lookup(root, cache_dir, key) if cache_dir else None
    if kept is not None and _unreadable(kept[1]):
        kept = None  # not what git wrote: asked again
    on_head = None
    if objects is not None:  # the diff first: the hook's objects come from it
        raw = kept[1] if kept else staged_on_head(root)
        on_head = parse_raw(raw) if raw is not None else None
    if on_head is not None:
        head, at_head, links, listings, asked = head_documents_folders_and_objects(
            root, (PYPROJECT,), documents, folders, objects(on_head) if on_head else (),
            listed)
        if head is None or (kept and kept[0] != head):
            on_head = None  # kept for another HEAD: asked again below
    else:
        head, at_head, links, listings, asked = head_documents_folders_and_objects(
            root, (PYPROJECT,), documents, folders, (), listed)
    if on_head is not None:
        staged = (head, on_head)
    elif kept and kept[0] == head:
        staged = (head, parse_raw(kept[1]))
    else:
        raw = diff_raw(root, head or EMPTY_TREE, cached=True)
        staged = (head, parse_raw(raw))
        if cache_dir and head:
            store(root, cache_dir, key, head, raw, asking)
    if not staged[1]:
        return TreeView(root, None), staged
    view = TreeView(root, '').unstaged_from(head, staged[1])
    touched = {p for c in staged[1] for p in (c.path, c.old_path) if p}
    if head and PYPROJECT not in touched:
        view.remember(PYPROJECT, at_head[PYPROJECT])
    for path, is_link in links.items():
        if path not in touched:  # what HEAD holds is what the index holds
            view.remember_document(path, at_head[path], is_link)
    for folder, listing in listings.items():
        if listing is not None:  # used by entries() while nothing is staged below it
            view.remember_listing(folder, listing)
    view.remember_objects(asked)
    return view, staged


def _unreadable(raw: bytes) -> bool:
    try:
        parse_raw(raw)
    except (ValueError, IndexError, UnicodeDecodeError):
        return True
    return False


def _staged_cache_folder() -> str | None:
    """Where a commit's staged diff is kept for the hooks after the first, or None (off:
    CI, ``ORACLE_GUARD_SCAN_CACHE=0``)."""
    from oracle_guard.reading.cache_policy import cache_folder
    from oracle_guard.reading.cache_policy import enabled

    return cache_folder() if enabled() else None


def context_from_args(args: argparse.Namespace, documents: Sequence[str] = (),
                      folders: Sequence[str] = (),
                      objects: Callable[[tuple[Change, ...]], Sequence[str]] | None = None,
                      listed: Callable[[dict], Sequence[str]] | None = None,
                      ) -> RunContext:
    if bool(args.from_ref) != bool(args.to_ref):
        raise ConfigError('command line', 0, '--from-ref and --to-ref go together')
    root = repo_root()
    view, staged = judged_view(root, args.to_ref, args.all_files, documents, folders, objects,
                               listed)
    cfg = apply_arguments(load_config(root, view), args)
    ctx = RunContext(
        cfg=cfg, filenames=getattr(args, 'filenames', None), from_ref=args.from_ref,
        to_ref=args.to_ref, all_files=args.all_files, require_base=args.require_base,
        staged=staged, judged=view, arguments=args,
    )
    if args.today:
        ctx.today = args.today
    return ctx


def guarded(run: Callable[[], int], fmt: str, debug: bool) -> int:
    """Run, turning bad input into exit 2 and bugs into exit 3, never a traceback."""
    try:
        status = run()
        sys.stdout.flush()  # a reader gone away is met here, not in the interpreter's exit
        return status
    except BrokenPipeError:
        # `oracle-guard init | head`: nothing more can be said to the reader, and the
        # interpreter's own flush at exit must not say it again (Python's signal docs).
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except ConfigError as exc:
        sys.stdout.flush()
        write_error(exc, fmt, sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 -- the promise is: no traceback
        if debug:
            raise
        sys.stderr.write(
            f'oracle-guard: internal error: {type(exc).__name__}: {exc}\n'
            '    rerun with --debug for the traceback and report it\n',
        )
        return 3


def history_findings(ctx: RunContext, checks: Sequence[Check]) -> list[Finding]:
    """In history mode, ``checks`` (each hook's rules about one change) applied to every
    commit since adoption. Other modes pay nothing: the walk is imported only here."""
    if not checks or not ctx.changes.history:
        return []
    from oracle_guard.history import judge_history

    return judge_history(ctx, checks)


def emit(findings: Sequence[Finding], notes: Sequence[str], fmt: str) -> int:
    write_findings(findings, fmt, sys.stdout)
    for note in notes:
        sys.stdout.write(printable(f'{note}\n'))
    return 1 if findings else 0


class _DefaultArguments:
    """What argparse returns for a command line of file names only (or nothing)."""

    def __init__(self, filenames: list[str] | None) -> None:
        if filenames is not None:
            self.filenames = filenames
        self.format = 'text'
        self.from_ref = self.to_ref = self.today = None
        self.all_files = self.require_base = self.debug = False
        # Every configuration flag left unset: apply_arguments reads them with getattr.


def parse_run_arguments(argv: Sequence[str] | None, description: str, *,
                        filenames: bool) -> argparse.Namespace | _DefaultArguments:
    """The hook's arguments. During a commit pre-commit passes nothing, or only file
    names: that needs no parser, and argparse costs milliseconds to import and build."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not any(arg.startswith('-') for arg in args) and (filenames or not args):
        return _DefaultArguments(args if filenames else None)
    import argparse

    parser = argparse.ArgumentParser(description=description)
    add_run_arguments(parser, filenames=filenames)
    return parser.parse_args(args)


def run_hook(check: Check, argv: Sequence[str] | None, description: str, *,
             filenames: bool = False, history: Check | None = None,
             documents: Sequence[str] = (), folders: Sequence[str] = (),
             objects: Callable[[tuple[Change, ...]], Sequence[str]] | None = None,
             listed: Callable[[dict], Sequence[str]] | None = None) -> int:
    """``history``: the hook's rules about one change, which history mode applies to
    each commit since adoption (see ``oracle_guard.history``). ``documents``: the oracle
    files (default paths) the hook reads on every commit, read with HEAD's first answers;
    ``folders``: the folders (default paths) it lists on every commit, likewise;
    ``objects``: the objects it reads for what is staged, likewise; ``listed``: the blobs
    it reads from the folders' listings, likewise (``judged_view``)."""
    args = parse_run_arguments(argv, description, filenames=filenames)

    def run() -> int:
        ctx = context_from_args(args, documents, folders, objects, listed)
        findings = list(check(ctx))
        findings += history_findings(ctx, [history] if history else [])
        return emit(findings, ctx.notes, args.format)

    return guarded(run, args.format, args.debug)
