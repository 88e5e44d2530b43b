"""What compiling a suite's test modules from source costs, against reading pytest's cache
of them: the work the gate's runs add since no compiled cache of the test roots is trusted
(``runtime/source_code``: a cache written by the code under test could hold other code).

    python benchmarks/compile_cost.py --suite DIR [--rounds 3] [GLOB ...]

In one process, for each ``.py`` file the globs name (default ``tests/**/*.py``) under the
suite: pytest's ``_rewrite_test`` (read, rewrite the asserts, compile), then ``_read_pyc`` of
the cache pytest wrote for it beside it (run the suite once with bytecode writing on first;
a file pytest does not rewrite has no such cache and is a miss). CPU is this process's
``time.process_time``; the load average is printed before and after.
"""
from __future__ import annotations

import argparse
import glob
import os
import time
from pathlib import Path

from _pytest.assertion import rewrite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--suite', required=True)
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('globs', nargs='*', default=['tests/**/*.py'])
    args = parser.parse_args(argv)
    files = sorted({Path(f) for pattern in args.globs
                    for f in glob.glob(os.path.join(args.suite, pattern), recursive=True)})
    print(f'load average before: {os.getloadavg()}')
    for number in range(args.rounds):
        start = time.process_time()
        for path in files:
            rewrite._rewrite_test(path, None)  # type: ignore[arg-type]
        compiled = time.process_time() - start
        start = time.process_time()
        hits = 0
        for path in files:
            pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
            hits += rewrite._read_pyc(path, pyc) is not None
        read = time.process_time() - start
        print(f'round {number + 1}: {len(files)} modules: rewritten and compiled from source '
              f'{compiled:.3f} s CPU; read from pytest\'s cache {read:.3f} s CPU '
              f'({hits} cache hits)')
    print(f'load average after: {os.getloadavg()}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
