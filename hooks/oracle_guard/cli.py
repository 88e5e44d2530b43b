"""``oracle-guard``: every hook in one process, plus the human-run commands."""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from oracle_guard.commands import COMMANDS
from oracle_guard.hooks import check_every_hook
from oracle_guard.hooks import HOOKS
from oracle_guard.runner import add_run_arguments
from oracle_guard.runner import context_from_args
from oracle_guard.runner import emit
from oracle_guard.runner import guarded

# One line per command for `oracle-guard --help`.
SUMMARIES = {
    'check': 'run every hook once (for CI systems without pre-commit)',
    'ci': 'the pull-request gate: change rules, the test run, and its audit',
    'init': 'adopt oracle-guard in this repository (config, ledger, manifest, lock, baseline)',
    'baseline': 'accept the silences that exist now, once (--prune drops stale entries)',
    'lock': 'write the domain lock from the current property tests',
    'fixtures': 'add or rehash fixture manifest rows (add, rehash, status)',
    'flakes': 'compare two JUnit runs and draft ledger rows for flaky tests',
}


def usage() -> str:
    names = ['check', *COMMANDS]
    width = max(map(len, names))
    lines = ['usage: oracle-guard COMMAND [options]   (oracle-guard COMMAND --help)', '',
             'Keep test oracles honest.', '', 'commands:']
    lines += [f'  {name:<{width}}  {SUMMARIES.get(name, "")}'.rstrip() for name in names]
    lines += ['', 'options:', '  -h, --help   show this message',
              '  --version    the version, and the commit it was built from when known']
    return '\n'.join(lines)


def run_check(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog='oracle-guard check',
        description='Run every oracle-guard hook once, for CI systems without pre-commit.',
    )
    add_run_arguments(parser, filenames=False)
    parser.add_argument('--hook', action='append', choices=sorted(HOOKS),
                        help='run only this hook (repeatable)')
    args = parser.parse_args(argv)

    def run() -> int:
        ctx = context_from_args(args)
        findings = check_every_hook(ctx, args.hook)
        if not args.hook and ctx.changes.has_base and any(
                p.endswith('.py') and not ctx.cfg.is_test(p) for p in ctx.changes.touched()):
            # Rule 54 is the gate's; the check says what the gate will ask a person about.
            from oracle_guard.gate.capabilities import capability_notes

            ctx.notes.extend(capability_notes(ctx))
        status = emit(findings, ctx.notes, args.format)
        if status == 0 and args.format == 'text':
            print('oracle-guard: all checks passed')  # one line, like ruff's
        return status

    return guarded(run, args.format, args.debug)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = ['check', *COMMANDS]
    if not argv or argv[0] in ('-h', '--help'):
        (sys.stdout if argv else sys.stderr).write(usage() + '\n')
        return 0 if argv else 2
    if argv[0] in ('--version', '-V'):
        from oracle_guard.reading.install_origin import version_line
        print(version_line())
        return 0
    command, rest = argv[0], argv[1:]
    if command == 'check':
        return run_check(rest)
    if command in COMMANDS:
        try:
            module = importlib.import_module(COMMANDS[command])
        except ModuleNotFoundError:
            sys.stderr.write(f'oracle-guard: {command!r} is not available in this version\n')
            return 2
        return module.main(rest)  # type: ignore[no-any-return]
    sys.stderr.write(f'oracle-guard: unknown command {command!r}; use one of: '
                     f'{", ".join(commands)}\n')
    return 2


if __name__ == '__main__':
    raise SystemExit(main())
