"""The human-run commands of the oracle-guard CLI, one module per command."""
from __future__ import annotations

# Human-run commands: name -> module with main(argv).
COMMANDS = {
    'flakes': 'oracle_guard.commands.flakes',
    'fixtures': 'oracle_guard.commands.fixtures',
    'lock': 'oracle_guard.commands.lock',
    'init': 'oracle_guard.commands.init',
    'ci': 'oracle_guard.commands.ci',
    'baseline': 'oracle_guard.commands.baseline',
}
