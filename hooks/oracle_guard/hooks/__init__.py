"""The hooks, one module per hook id, each with main(argv) -> int."""
from __future__ import annotations

import importlib

# hook id -> module; the order is the order findings are reported in.
HOOKS = {
    'check-fixture-manifest': 'oracle_guard.hooks.check_fixture_manifest',
    'forbid-mixed-oracle-diff': 'oracle_guard.hooks.forbid_mixed_oracle_diff',
    'check-named-freezes': 'oracle_guard.hooks.check_named_freezes',
    'check-properties-present': 'oracle_guard.hooks.check_properties_present',
    'check-freeze-ledger': 'oracle_guard.hooks.check_freeze_ledger',
    'check-generator-lock': 'oracle_guard.hooks.check_generator_lock',
}


def available_hooks() -> dict[str, object]:
    modules = {}
    for hook_id, module in HOOKS.items():
        try:
            modules[hook_id] = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    return modules
