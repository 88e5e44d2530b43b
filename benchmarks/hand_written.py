"""What each hand-written reader and start-up device saves a hook process, against the library.

    python benchmarks/hand_written.py --venv DIR [--runs 41]

In a clean virtual environment (``bench.CleanVenv``: oracle-guard installed as pre-commit
installs it), median CPU time (user + system) of one interpreter that does only this:

* ``pass``: the floor, a clean interpreter's start-up;
* read this repository's ``pyproject.toml`` with ``reading/plain_toml`` against
  ``tomllib`` (``tomli`` before Python 3.11: a dependency the hand-written reader spares);
* read a freeze ledger of ten rows (as docs/ledger.md shows one, without the optional
  `fixtures` list, which plain_yaml leaves to PyYAML; check-freeze-ledger reads
  it on every commit) with ``oracle/plain_yaml`` against PyYAML's ``CSafeLoader``
  (libyaml) and the pure ``SafeLoader`` (what ``documents.load_yaml_text`` builds on, for
  its line numbers and its alias and duplicate-key checks);
* parse a test module (``tests/properties/test_parsers_never_crash.py``) with
  ``reading/syntax`` (``_ast`` alone) against ``import ast``;
* a hook's entry as a plain script against pip's console-script wrapper (which imports
  ``re`` first).

Each row prints the cost over the floor, both ways, and the saving per hook process; a
commit through the ``oracle-guard`` hook id runs one process, through the six separate ids
six. No target is asserted: the numbers are printed, with the load average.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  -- the same clean venv
from commit_cold import cpu_ms  # noqa: E402  -- one child's CPU time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCUMENTS = ('pyproject.toml', 'tests/properties/test_parsers_never_crash.py')
# A ledger as docs/ledger.md shows one (without the optional flow list of fixtures, which
# plain_yaml leaves to PyYAML), ten rows: what check-freeze-ledger reads every commit.
LEDGER = 'budget: 10\nfreezes:\n' + ''.join(
    f'  - id: FZ-{n}\n'
    f'    nodeid: tests/test_parse_headers.py::TestParse::test_case_{n}\n'
    f'    class: order-dependent\n'
    f'    evidence: "fails when scheduled after test_cache_warm"\n'
    f'    owner: alice\n'
    f'    expires: 2026-12-31\n'
    f'    mode: skip\n' for n in range(1, 11))

READ = "t = open({name!r}, encoding='utf-8').read()\n"
CASES: dict[str, tuple[str, str]] = {
    # row: (hand-written, library)
    'pyproject.toml': (
        READ.format(name='pyproject.toml') + 'from oracle_guard.reading.plain_toml import '
        'read_plain_toml\nassert read_plain_toml(t) is not None\n',
        READ.format(name='pyproject.toml') + 'try:\n    import tomllib\nexcept ImportError:\n'
        '    import tomli as tomllib\ntomllib.loads(t)\n'),
    'a ledger of ten rows, libyaml': (
        'from oracle_guard.oracle.documents import load_yaml\n'
        "load_yaml(open('ledger.yaml', 'rb').read(), 'ledger.yaml')\n",
        'from oracle_guard.oracle import documents\nimport yaml\n'
        "yaml.load(open('ledger.yaml', encoding='utf-8').read(), Loader=yaml.CSafeLoader)\n"),
    'a ledger of ten rows, pure SafeLoader': (
        'from oracle_guard.oracle.documents import load_yaml\n'
        "load_yaml(open('ledger.yaml', 'rb').read(), 'ledger.yaml')\n",
        'from oracle_guard.oracle.documents import load_yaml_text\n'
        "load_yaml_text(open('ledger.yaml', encoding='utf-8').read(), 'ledger.yaml')\n"),
    'parse a test module': (
        READ.format(name='test_parsers_never_crash.py')
        + 'from oracle_guard.reading import syntax\nsyntax.parse(t)\n',
        READ.format(name='test_parsers_never_crash.py') + 'import ast\nast.parse(t)\n'),
    'hook entry script': ('import sys\n', 'import re\nimport sys\n'),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--venv', required=True)
    parser.add_argument('--runs', type=int, default=41)
    args = parser.parse_args(argv)
    venv = bench.CleanVenv.ensure(args.venv)
    work = tempfile.mkdtemp(prefix='og-hand-')
    try:
        for name in DOCUMENTS:
            shutil.copy(os.path.join(HERE, name), os.path.join(work, os.path.basename(name)))
        with open(os.path.join(work, 'ledger.yaml'), 'w', encoding='utf-8') as f:
            f.write(LEDGER)
        env = dict(venv.env)
        samples: dict[str, list[float]] = {'pass': []}
        for row in CASES:
            samples[row + ' (hand)'] = []
            samples[row + ' (library)'] = []
        for _ in range(args.runs):  # interleaved, so the load falls on every row alike
            samples['pass'].append(cpu_ms([venv.python, '-c', 'pass'], work, env))
            for row, (hand, library) in CASES.items():
                samples[row + ' (hand)'].append(cpu_ms([venv.python, '-c', hand], work, env))
                samples[row + ' (library)'].append(
                    cpu_ms([venv.python, '-c', library], work, env))
        floor = statistics.median(samples['pass'])
        print(f'Python {sys.version.split()[0]}, load average '
              f'{" ".join(f"{x:.2f}" for x in os.getloadavg())}, {args.runs} runs, medians')
        print(f'floor (python -c pass): {floor:.1f} ms CPU')
        print()
        print('| what | hand-written over the floor | library over the floor '
              '| saved a hook process |')
        print('|---|---|---|---|')
        for row in CASES:
            hand = statistics.median(samples[row + ' (hand)']) - floor
            library = statistics.median(samples[row + ' (library)']) - floor
            print(f'| {row} | {hand:.1f} ms ({hand / floor:.2f}×) | {library:.1f} ms '
                  f'({library / floor:.2f}×) | {library - hand:.1f} ms |')
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
