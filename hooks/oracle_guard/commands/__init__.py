"""The human-run commands of the oracle-guard CLI, one module per command."""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping

# Human-run commands: name -> module with main(argv).
COMMANDS = {
    'flakes': 'oracle_guard.commands.flakes',
    'fixtures': 'oracle_guard.commands.fixtures',
    'lock': 'oracle_guard.commands.lock',
    'init': 'oracle_guard.commands.init',
    'ci': 'oracle_guard.commands.ci',
    'baseline': 'oracle_guard.commands.baseline',
}
# Set by ``oracle-guard ci`` for the test command and everything it starts.
GATE_ENV = 'ORACLE_GUARD_GATE'


def automated_run(environ: Mapping[str, str]) -> str | None:
    """Why this process is not a person at a terminal: ``CI`` set (not empty, "false" or
    "0"), or a child of the gate. None when nothing says so."""
    ci = environ.get('CI', '').strip()
    if ci and ci.lower() not in ('false', '0'):
        return f'CI is set (CI={ci})'
    if environ.get(GATE_ENV):
        return f'it runs inside oracle-guard ci ({GATE_ENV} is set)'
    return None


def refuse_unattended(command: str, writes: str, force: bool,
                      environ: Mapping[str, str] | None = None) -> int | None:
    """Exit status 2 and a message when a command that writes oracle files runs unattended.

    Like snapshot tools that refuse to write snapshots under CI: an oracle file written by
    the job that checks it would approve whatever the code does now. None: go ahead.
    """
    why = automated_run(os.environ if environ is None else environ)
    if why is None or force:
        return None
    sys.stderr.write(
        f'oracle-guard {command}: refused: {why}. It writes {writes}, which a person owns: a '
        'person runs it locally, reviews the diff and commits it on its own.\n'
        '    To fix: run it on your machine; --force runs it here anyway\n')
    return 2
