"""The ``oracle-guard`` hook id: the six hooks' rules in one process.

pre-commit starts one interpreter per hook; a user who wants one start-up per commit
instead of six lists this hook id in place of the six. It runs what ``oracle-guard check``
runs, with the hooks' command line (``--all-files``, ``--from-ref``/``--to-ref``, the
configuration flags) and their silence on success; pre-commit passes it no file names,
so check-named-freezes judges the staged (or pushed, or every tracked) test files itself.
"""
from __future__ import annotations

from oracle_guard.runner import context_from_args
from oracle_guard.runner import emit
from oracle_guard.runner import guarded
from oracle_guard.runner import parse_run_arguments

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_run_arguments(argv, "Every oracle-guard hook's rules, in one process.",
                               filenames=False)

    def run() -> int:
        from oracle_guard.hooks import check_every_hook

        ctx = context_from_args(args)
        return emit(check_every_hook(ctx), ctx.notes, args.format)

    return guarded(run, args.format, args.debug)


if __name__ == '__main__':
    raise SystemExit(main())
