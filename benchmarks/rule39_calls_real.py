"""Rule 39's byte check (``helper_calls.may_call``) against the calls it stands for
(``helper_calls.calls`` on the parsed file), on every test module of real projects
adopted by ``commit_real.py`` (``--keep``), with their own baselines.

    python benchmarks/rule39_calls_real.py PROJECT_ROOT [...]

For each test module: whether ``calls`` finds a call of a baselined helper function and
whether ``may_call`` lets the file through. A file where ``calls`` finds one and
``may_call`` says no would be a call the hook never sees: printed (none is the expected
output). Prints per project the modules, those ``may_call`` passes, those with a call.
No target is asserted.
"""
from __future__ import annotations

import os
import sys

from oracle_guard.config import load_config
from oracle_guard.oracle.baseline import read_baseline
from oracle_guard.reading.helper_calls import baselined_functions
from oracle_guard.reading.helper_calls import calls
from oracle_guard.reading.helper_calls import may_call
from oracle_guard.reading.helper_modules import HelperModules
from oracle_guard.reading.scanner import is_test_module
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.repo.tree_view import TreeView


def main(argv: list[str]) -> int:
    print('| project | test modules | baselined helper functions | may_call passes | '
          'calls found | calls the byte check misses |')
    print('|---|---|---|---|---|---|')
    missed = []
    for root in argv:
        cfg = load_config(root)
        view = TreeView(root, None)
        wanted = baselined_functions(read_baseline(view, cfg.baseline))
        helpers = HelperModules.of(cfg, view)
        paths = [p for p in view.paths(list(cfg.test_roots()))
                 if cfg.is_test_code(p) and is_test_module(p)]
        passed = found = 0
        for path in paths:
            raw = view.read(path)
            if raw is None:
                continue
            try:
                tree = parse_python(raw, path)
            except ScanError:
                continue
            called = bool(calls(tree, path, helpers.seen_from(path), wanted))
            passes = may_call(path, raw, wanted)
            passed += passes
            found += called
            if called and not passes:
                missed.append(path)
        print(f'| {os.path.basename(root)} | {len(paths)} | '
              f'{sum(len(v) for v in wanted.values())} | {passed} | {found} | '
              f'{sum(1 for m in missed if os.path.exists(os.path.join(root, m)))} |')
    for path in missed:
        print(f'MISSED {path}')
    return 1 if missed else 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
