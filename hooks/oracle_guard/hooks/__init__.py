"""The hooks, one module per hook id, each with main(argv) -> int."""
from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Collection

    from oracle_guard.context import RunContext
    from oracle_guard.findings import Finding

# hook id -> module; the order is the order findings are reported in.
HOOKS = {
    'check-fixture-manifest': 'oracle_guard.hooks.check_fixture_manifest',
    'forbid-mixed-oracle-diff': 'oracle_guard.hooks.forbid_mixed_oracle_diff',
    'check-named-freezes': 'oracle_guard.hooks.check_named_freezes',
    'check-properties-present': 'oracle_guard.hooks.check_properties_present',
    'check-freeze-ledger': 'oracle_guard.hooks.check_freeze_ledger',
    'check-generator-lock': 'oracle_guard.hooks.check_generator_lock',
}
# The optional hook id that runs every hook above in one process (hooks/every_hook.py).
EVERY_HOOK = 'oracle-guard'


def available_hooks() -> dict[str, object]:
    import importlib  # not at import: every hook's console script imports this package

    modules = {}
    for hook_id, module in HOOKS.items():
        try:
            modules[hook_id] = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
    return modules


def check_every_hook(ctx: RunContext, only: Collection[str] | None = None) -> list[Finding]:
    """Every hook's rules on one run context (``oracle-guard check``, the ``oracle-guard``
    hook id), history mode included: one process, one configuration read, one diff."""
    from oracle_guard.runner import history_findings

    findings: list[Finding] = []
    history = []
    for hook_id, module in available_hooks().items():
        if only and hook_id not in only:
            continue
        findings.extend(module.check(ctx))  # type: ignore[attr-defined]
        # A hook's rules about one change, for history mode (all-files, no base).
        if hasattr(module, 'history_check'):
            history.append(module.history_check)  # type: ignore[attr-defined]
    return findings + history_findings(ctx, history)
