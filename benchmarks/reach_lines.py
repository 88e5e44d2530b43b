"""Rule 43's walk of only the lines that can hold a site, against the full walk, on
every Python file of real sdists nobody here wrote.

    python benchmarks/reach_lines.py SDIST.tar.gz [...]

For each file that parses (and, as the hook reads it, passes ``may_reach``): the sites
``reach_sites(tree)`` finds (the reference, every node visited) and those
``reach_sites(tree, text)`` finds (the hook's walk), compared site for site, and the CPU
time of both walks (the parse not included). Prints one row per sdist and every file
where they differ (none is the expected output). No target is asserted.
"""
from __future__ import annotations

import os
import sys
import tarfile
import time

from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.scanner import source_text
from oracle_guard.reading.test_run_reach import may_reach
from oracle_guard.reading.test_run_reach import reach_sites


def main(argv: list[str]) -> int:
    print('| sdist | .py files parsed | pass may_reach | sites (full walk) | sites (line walk) '
          '| files that differ | full walk CPU s | line walk CPU s |')
    print('|---|---|---|---|---|---|---|---|')
    differ = []
    for sdist in argv:
        files = passing = full_sites = fast_sites = 0
        full_s = fast_s = 0.0
        name = os.path.basename(sdist).replace('.tar.gz', '')
        with tarfile.open(sdist) as tar:
            for member in tar:
                if not member.isfile() or not member.name.endswith('.py'):
                    continue
                raw = tar.extractfile(member).read()  # type: ignore[union-attr]
                try:
                    tree = parse_python(raw, member.name)
                except (ScanError, RecursionError):
                    continue
                files += 1
                if not may_reach(raw):
                    continue
                passing += 1
                text = source_text(raw)
                try:
                    start = time.process_time()
                    full = reach_sites(tree)
                    middle = time.process_time()
                    fast = reach_sites(tree, text)
                    end = time.process_time()
                except RecursionError:
                    continue
                full_s += middle - start
                fast_s += end - middle
                full_sites += len(full)
                fast_sites += len(fast)
                if full != fast:
                    differ.append((member.name, full, fast))
        print(f'| {name} | {files} | {passing} | {full_sites} | {fast_sites} | '
              f'{sum(1 for d in differ if d[0].startswith(name))} | {full_s:.2f} | {fast_s:.2f} |')
    for path, full, fast in differ:
        print(f'DIFFERS {path}: full {full} line walk {fast}')
    print(f'\nload average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs')
    return 1 if differ else 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
