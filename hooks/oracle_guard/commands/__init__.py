"""The human-run commands of the oracle-guard CLI, one module per command."""
