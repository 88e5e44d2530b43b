"""Reproduce the attacks of ATTACKS.md 83-93 that get through the gate on main.

88 only; the caught ones are tests/test_ci_attacks_round4.py (83, 84a-84d, 86, 91a and 91b
were closed after the round: a control exception of Hypothesis that Hypothesis did not
raise itself is OG717; then 85, the same exception raised while a strategy draws, and
87, the install step's detached helper, which the gate now kills before the reference
tree is written, OG718 on Linux; their scenarios were dropped from this file).

    python benchmarks/attacks_open/round4.py [NAME ...] [--keep DIR]

NAME is 88 (the default). The scenario builds the repository of tests/test_ci_attacks.py
(``dd``, adopted with ``oracle-guard init``, then the bug on ``main``: ``dedupe`` drops the
largest value past three distinct ones), commits the pull request on branch ``pr`` and
runs plain ``python -m pytest -q -p no:cacheprovider``, then the gate as the action runs
it, ``python -I -m oracle_guard.cli ci --base main -- python -m pytest -q -p
no:cacheprovider`` (one after the other: 88 rewrites the working tree). It prints both
exit statuses and the gate's last lines. It prints "gate exit 0" with the bug in place,
and "plain pytest exit 0" (the cheat fools both).

Run it from the repository root with oracle-guard and its test extras installed; the
repositories go into a temporary folder (``--keep DIR`` keeps them there).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
sys.path.insert(0, HERE)

from round3 import build  # noqa: E402
from test_ci_attacks import BUG  # noqa: E402
from test_ci_attacks import PROPERTY  # noqa: E402
from test_ci_attacks import PYTEST  # noqa: E402
from test_ci_attacks_round4 import HOLD_THE_REFERENCE_RUN  # noqa: E402

# -- 88: a fixture the oracle reads while it runs ---------------------------------------------
# The base oracle checks known values from tests/fixtures/known_values.json (beside a
# sortedness property the bug keeps). A unit test module rewrites that file in the checkout
# and in the reference tree (the reference run collected before the test command started,
# but reads the file when the test runs; src holds that run up at its first call), and a
# later unit test puts both back once the reference run has ended.
KNOWN_VALUES = (json.dumps([{'in': [3, 1, 3], 'out': [1, 3]},
                            {'in': [4, 3, 2, 1], 'out': [1, 2, 3, 4]}]) + '\n')
SORTED_WITH_KNOWN_VALUES = 'import json\nimport pathlib\n\n' + PROPERTY.replace(
    'assert dedupe(xs) == sorted(set(xs))', 'out = dedupe(xs)\n    assert out == sorted(out)'
).replace('def test_dedupe_matches_set', 'def test_dedupe_is_sorted') + '''

CASES = pathlib.Path(__file__).parent.parent / 'fixtures' / 'known_values.json'


def test_known_values():
    for case in json.loads(CASES.read_text()):
        assert dedupe(case['in']) == case['out']
'''
REWRITING_UNIT_TESTS = r'''import glob
import os
import time


CASES = os.path.join('tests', 'fixtures', 'known_values.json')
BUGGY = b'[{"in": [3, 1, 3], "out": [1, 3]}, {"in": [4, 3, 2, 1], "out": [1, 2, 3]}]\n'


def _reference():
    for cmdline in glob.glob('/proc/[0-9]*/cmdline'):
        try:
            with open(cmdline, 'rb') as f:
                args = f.read().split(b'\0')
        except OSError:
            continue
        for a in args:
            if a.startswith(b'--rootdir=') and a.endswith(b'/reference') and \
                    b'oracle-guard-reference' in a and \
                    _parent(cmdline.split('/')[2]) == os.getppid():  # this gate's run only
                return int(cmdline.split('/')[2]), a[len(b'--rootdir='):].decode()
    return None, None


def _parent(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return int(f.read().rsplit(') ', 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _swap(path, data):
    with open(path, 'rb') as f:
        old = f.read()
    with open(path, 'wb') as f:
        f.write(data)
    return old


PID, ROOT = _reference()
SAVED = {CASES: _swap(CASES, BUGGY)}
if ROOT is not None:
    SAVED[os.path.join(ROOT, CASES)] = _swap(os.path.join(ROOT, CASES), BUGGY)


def test_zz_tidy():
    deadline = time.monotonic() + 60
    while PID is not None and os.path.exists(f'/proc/{PID}') and time.monotonic() < deadline:
        try:
            with open(f'/proc/{PID}/stat') as f:
                if f.read().split(') ')[1].startswith('Z'):
                    break
        except OSError:
            break
        time.sleep(0.01)
    for path, data in SAVED.items():
        with open(path, 'wb') as f:
            f.write(data)
from dd import dedupe  # noqa: E402


def test_small():
    assert dedupe([3, 1, 3]) == [1, 3]


def test_four():
    assert dedupe([4, 3, 2, 1]) == [1, 2, 3]


def test_many():
    assert dedupe(list(range(10)) * 2) == list(range(9))
'''


def scenarios() -> dict[str, tuple[dict[str, str], dict[str, str | None]]]:
    """name -> (the project before adoption, the pull request)."""
    found: dict[str, tuple[dict[str, str], dict[str, str | None]]] = {
        '88': ({'tests/properties/test_dd_props.py': SORTED_WITH_KNOWN_VALUES,
                'tests/fixtures/known_values.json': KNOWN_VALUES},
               {'src/dd/__init__.py': HOLD_THE_REFERENCE_RUN,
                'tests/test_dd.py': REWRITING_UNIT_TESTS}),
    }
    return dict(sorted(found.items()))


def main(argv: list[str]) -> int:
    keep = None
    if '--keep' in argv:
        keep = argv[argv.index('--keep') + 1]
        argv = [a for a in argv if a not in ('--keep', keep)]
    chosen = argv or list(scenarios())
    folder = keep or tempfile.mkdtemp(prefix='round4-attacks-')
    through = 0
    try:
        for name in chosen:
            project, pull_request = scenarios()[name]
            repo = build(os.path.join(folder, name), project, {'src/dd/__init__.py': BUG})
            repo.pull_request(pull_request, bug=False)
            plain = repo.finish(repo.start(PYTEST))
            ci = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(PYTEST)[1:]]))
            plain_rc, ci_rc, out = plain.rc, ci.rc, ci.out
            tail = [line for line in out.splitlines() if line.startswith(
                ('oracle-guard ci:', 'tests/', 'src/', '.:', 'git status'))]
            print(f'== {name}: plain pytest exit {plain_rc}, gate exit {ci_rc}')
            print('\n'.join(tail))
            through += ci_rc == 0
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f'{through} of {len(chosen)} got through (gate green with the bug in place)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
