"""The user's ``.pre-commit-config.yaml``: where oracle-guard's own hooks get their args.

A pull request that edits this file also edits how the hooks judge it: ``args: [--src,
vendor/]`` would make forbid-mixed-oracle-diff look for production code where there is
none. So the change is also judged with the arguments the base side gave (rule 38).
"""
from __future__ import annotations

from oracle_guard.config import add_config_arguments
from oracle_guard.config import apply_arguments
from oracle_guard.config import Config
from oracle_guard.findings import ConfigError

PRE_COMMIT_CONFIG = '.pre-commit-config.yaml'
# The hook ids of .pre-commit-hooks.yaml: a `repo: local` hook under one of these ids
# is oracle-guard too, as far as the user's configuration is concerned. `oracle-guard`
# runs the six others in one process, with the same args.
HOOK_IDS = frozenset((
    'check-fixture-manifest', 'forbid-mixed-oracle-diff', 'check-named-freezes',
    'check-properties-present', 'check-freeze-ledger', 'check-generator-lock',
    'oracle-guard',
))


def guard_hook_args(raw: bytes | None) -> list[list[str]]:
    """The ``args`` of every oracle-guard hook entry in a pre-commit configuration."""
    if raw is None or not any(i.encode() in raw for i in HOOK_IDS):
        return []
    import yaml

    try:
        doc = yaml.safe_load(raw)
    except (yaml.YAMLError, RecursionError, ValueError):
        return []
    repos = doc.get('repos') if isinstance(doc, dict) else None
    found = []
    for repo in repos if isinstance(repos, list) else ():
        hooks = repo.get('hooks') if isinstance(repo, dict) else None
        for hook in hooks if isinstance(hooks, list) else ():
            if isinstance(hook, dict) and hook.get('id') in HOOK_IDS:
                args = hook.get('args') or []
                if isinstance(args, list):
                    found.append([str(a) for a in args])
    return found


def configs_from_hook_args(base_cfg: Config, raw: bytes | None) -> list[Config]:
    """``base_cfg`` with each base-side oracle-guard hook's args applied on top."""
    entries = guard_hook_args(raw)
    if not entries:
        return []
    import argparse

    parser = argparse.ArgumentParser(add_help=False)
    add_config_arguments(parser)
    configs = []
    for args in entries:
        try:
            known, _rest = parser.parse_known_args(args)
            configs.append(apply_arguments(base_cfg, known))
        except (ConfigError, SystemExit):
            continue  # args the base side could not run with set no roots
    return configs
