"""How far parsing less could take the cold corpus scan: an upper bound, not a scanner.

    python benchmarks/partial_parse.py [--cache DIR] [--runs 3]

check-named-freezes parses, with CPython's ``ast.parse``, every test file whose bytes
spell a silence, a computed import or a tampering word (the byte prefilters of
``reading/silence_prefilter.py``). On the corpus (``benchmarks/corpus.py``) that parse
alone costs several times ruff's whole ``--select PT`` run. A scanner could parse only
the parts of a file that can hold a silence. This script measures, in one process and in
CPU time, what that would save at best, using ``ast`` itself to cut the files (a real
partial parser would have to find the same cuts with a lexer of its own, which costs
more):

* **full**: ``ast.parse`` of every selected file, as the scan does now;
* **one level**: only the module's statements that are not a ``def``/``class``, and the
  top-level ``def``/``class`` (with decorators) whose lines spell a silence word;
* **two levels**: as one level, but inside a kept class only the methods (and nested
  classes, recursively) whose lines spell one, plus the class' own other statements.

ruff ``check --select PT --no-cache`` over the same files is timed in the same run (CPU
time of the child, the peer of issue 20's scan row). Nothing is asserted.
"""
from __future__ import annotations

import argparse
import ast
import os
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'hooks'))

import corpus  # noqa: E402

from oracle_guard.reading import silence_prefilter  # noqa: E402

WORDS = tuple(word.decode() for word in silence_prefilter.MARKER_WORDS)
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _span(node: ast.stmt) -> tuple[int, int]:
    decorators = getattr(node, 'decorator_list', [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return start, node.end_lineno or node.lineno


def kept(body: list[ast.stmt], lines: list[str], hits: set[int], deep: bool) -> str:
    """The source a partial parse would keep of these statements."""
    out = []
    for node in body:
        start, end = _span(node)
        if not isinstance(node, DEFS):
            out.append(''.join(lines[start - 1:end]))
            continue
        if not any(start <= line <= end for line in hits):
            continue
        if deep and isinstance(node, ast.ClassDef) and node.body:
            first = _span(node.body[0])[0]
            out.append(''.join(lines[start - 1:first - 1]))
            out.append(kept(node.body, lines, hits, deep))
        else:
            out.append(''.join(lines[start - 1:end]))
    return ''.join(out)


def cpu_of(parse: list[str | bytes], runs: int) -> float:
    best = float('inf')
    for _ in range(runs):
        start = time.process_time()
        for source in parse:
            try:
                ast.parse(source)
            except (SyntaxError, ValueError):
                pass
        best = min(best, time.process_time() - start)
    return best


def ruff_cpu(repo: str, paths: list[str], runs: int) -> float | None:
    ruff = shutil.which('ruff')
    if ruff is None:
        return None
    best = float('inf')
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([ruff, 'check', '--select', 'PT', '--no-cache', '--exit-zero',
                        '--quiet', *paths], cwd=repo, stdout=subprocess.DEVNULL, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--cache', default=corpus.default_cache())
    parser.add_argument('--runs', type=int, default=3)
    args = parser.parse_args(argv)
    repo, paths = corpus.ensure_corpus(args.cache)
    selected = []
    for path in paths:
        with open(os.path.join(repo, path), 'rb') as f:
            source = f.read()
        if silence_prefilter.might_silence(source) or silence_prefilter.might_compute(source) \
                or silence_prefilter.might_tamper(source):
            selected.append(source)
    one, two = [], []
    for source in selected:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        lines = source.decode('utf-8', 'replace').splitlines(True)
        hits = {n for n, line in enumerate(lines, 1) if any(w in line for w in WORDS)}
        one.append(kept(tree.body, lines, hits, deep=False))
        two.append(kept(tree.body, lines, hits, deep=True))
    peer = ruff_cpu(repo, paths, args.runs)
    total = sum(len(s) for s in selected)
    print(f'{len(paths)} test files, {len(selected)} selected by the prefilters '
          f'({total / 1e6:.1f} MB); CPU seconds, best of {args.runs}; '
          f'load average {os.getloadavg()[0]:.1f}')
    print('| what is parsed | MB | ast.parse CPU s | × ruff PT (whole run) |')
    print('|---|---|---|---|')
    for name, parse in (('full (the scan now)', selected), ('one level', one),
                        ('two levels', two)):
        size = sum(len(s.encode() if isinstance(s, str) else s) for s in parse)
        cpu = cpu_of(parse, args.runs)
        ratio = f'{cpu / peer:.2f}×' if peer else 'ruff not installed'
        print(f'| {name} | {size / 1e6:.1f} | {cpu:.2f} | {ratio} |')
    if peer:
        print(f'| ruff check --select PT --no-cache, all {len(paths)} files | | {peer:.2f} | 1.00× |')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
