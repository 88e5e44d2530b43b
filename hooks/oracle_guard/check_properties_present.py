"""check-properties-present: the human-owned properties folder still holds a real test."""
from __future__ import annotations

from collections.abc import Sequence

from oracle_guard.config import Config
from oracle_guard.findings import Finding
from oracle_guard.gitrepo import TreeView
from oracle_guard.runner import RunContext
from oracle_guard.runner import run_hook
from oracle_guard.scanner import is_test_module
from oracle_guard.scanner import parse_python
from oracle_guard.scanner import ScanError
from oracle_guard.scanner import scan_tests


def real_tests(view: TreeView, cfg: Config) -> tuple[int, list[str]]:
    """(number of real tests, test modules seen) in the properties folder of one tree."""
    count, modules = 0, []
    for entry in view.entries([cfg.properties]):
        if not is_test_module(entry.path) or entry.is_symlink:
            continue
        modules.append(entry.path)
        source = view.read(entry.path)
        if source is None:
            continue
        try:
            tests = scan_tests(parse_python(source, entry.path))
        except ScanError:
            continue  # an unparsable file holds no test pytest could run
        count += sum(1 for t in tests if t.does_something)
    return count, modules


def check(ctx: RunContext) -> list[Finding]:
    cfg = ctx.cfg
    count, modules = real_tests(ctx.changes.new, cfg)
    if count:
        return []
    if not modules:
        why = f'{cfg.properties} holds no test module (test_*.py) that git tracks'
    else:
        why = (f'{cfg.properties} has {len(modules)} test module(s) but no test that asserts, '
               'calls or uses @given')
    return [Finding(cfg.properties.rstrip('/') or '.', 1, 1, 'OG401', why,
                    'restore the property tests (git checkout HEAD -- '
                    f'{cfg.properties}); they are human-owned')]


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(check, argv, 'The properties folder still holds at least one real test.')


if __name__ == '__main__':
    raise SystemExit(main())
