"""Reproduce the attacks of ATTACKS.md 94-99 that got through the gate.

Still open: 96a, 96b, 96c, 96d, 96e and 99. Closed since, and kept here as caught scenarios
(each prints "gate exit 1"): 94, 98 (by the lead after the round), 95, 95b, 97 and 97b
(branch seal95: the compile's digest, OG737; the entry point, OG738; one mark for the test
command and the reference run, and the gate's last sweep, OG718). Their tests are
tests/test_ci_attacks_round5.py; 95b there ships its entry point as committed metadata under
src/, here through a real ``pip install -e .``.

    python benchmarks/attacks_open/round5.py [NAME ...] [--keep DIR] [--test-env PYTHON]

95b installs the pull request's package into a separate test environment: it runs only with
``--test-env PYTHON``, the interpreter of a throwaway environment holding pytest, Hypothesis,
setuptools and oracle-guard (the gate then runs with ``--test-python PYTHON`` and the test
command ``PYTHON -m pytest``); without it the default list leaves 95b out.

NAME is one of the names above (all of them by default), or a control: 94control (the install
step weakens the checkout's property without replacing the blob), 98control (the forged begin
left out), 99control (the new test without its tell); each control is caught (gate exit 1),
which shows what the attack's one move is worth. Each scenario builds the repository of
tests/test_ci_attacks.py (``dd``, adopted with ``oracle-guard init``, then the bug on
``main``: ``dedupe`` drops the largest value past three distinct ones; 97 and 99 then set
``require-fail-to-pass = true`` on main), commits the pull request on branch ``pr``, runs
plain ``python -m pytest -q -p no:cacheprovider`` in a copy of the checkout (after the same
install step, for 94 and 95b), then the gate as the action runs it, ``python -I -m oracle_guard.cli
ci --base main [--install-command ...] -- python -m pytest -q -p no:cacheprovider``. It
prints "plain pytest exit N" and "gate exit N" per scenario and the gate's findings. Every
one of the twelve prints "gate exit 0" with the bug in place (97 and 99: with the bug fixed,
and a new test that does not test the fix, which the project's require-fail-to-pass should
refuse; 97b: with the bug fixed, and "the daemon outlived the gate: True") and "plain
pytest exit 0" when the round was played; 94, 95, 95b, 97, 97b and 98 now print "gate exit
1" (97b: "the daemon outlived the gate: False"). 96c needs the checkout, the gate's temporary folder
(where the reference tree is written) and the test environment in one folder other than
``/``: the scenario builds its repository in a temporary folder inside ``sys.prefix`` (this
environment's folder) and runs the gate with ``TMPDIR`` there, and removes it (in a
temporary folder outside the environment the gate says OG717: the caught form,
tests/test_ci_attacks_round5.py).

Run it from the repository root with oracle-guard and its test extras installed; the
repositories go into a temporary folder (``--keep DIR`` keeps them there).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
sys.path.insert(0, HERE)

from ci_repo import copy_template  # noqa: E402
from ci_repo import git  # noqa: E402
from round3 import build  # noqa: E402
from test_ci_attacks import BUG  # noqa: E402
from test_ci_attacks import GOOD  # noqa: E402
from test_ci_attacks import PYTEST  # noqa: E402
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG  # noqa: E402
from test_ci_attacks_round3 import PROPERTIES_CONFTEST  # noqa: E402
from test_ci_attacks_round3 import SMALL_UNIT_TESTS  # noqa: E402
from test_ci_attacks_round4 import FIND  # noqa: E402
from test_ci_attacks_round4 import FIRST  # noqa: E402
from test_ci_attacks_round4 import MAPPED_PROPERTY  # noqa: E402
from test_ci_attacks_round4 import REWRITING_THE_TREE  # noqa: E402
from test_ci_attacks_round4 import TIDY  # noqa: E402
from test_ci_attacks_round5 import DAEMON  # noqa: E402
from test_ci_attacks_round5 import DAEMON_SRC  # noqa: E402 -- 97, caught on seal95
from test_ci_attacks_round5 import ENTRY_POINT_SRC  # noqa: E402 -- 95b, caught on seal95
from test_ci_attacks_round5 import PROFILE_CONFTEST  # noqa: E402
from test_ci_attacks_round5 import SELF_WEAKENING_SRC  # noqa: E402 -- 95, caught on seal95
from test_ci_attacks_round5 import FORGING_IN_ORDER  # noqa: E402
from test_ci_attacks_round5 import RELEASING_SRC  # noqa: E402 -- 98, caught on main
from test_ci_attacks_round5 import REPLACING_INSTALL  # noqa: E402 -- 94, caught on main
from test_ci_attacks_round5 import NEW_TEST as SORTED_PAIR_TEST  # noqa: E402

PROP = 'tests/properties/test_dd_props.py'

# -- 95, 95b: the tests' sources (tests/test_ci_attacks_round5.py); 95b here declares its
# entry point in pyproject.toml, and the install step (pip install -e .) writes it into the
# project's dist-info in the test environment.
ENTRY_POINT = '[project.entry-points.hypothesis]\ndd = "dd:_weaken"\n\n'
NEEDS_TEST_ENV = ('95b',)  # a separate test environment the install step installs dd into

# -- 96a, 96b: assume() called by Hypothesis's own code, asked for by the standard library ----
# The judge takes an UnsatisfiedAssumption raised by Hypothesis (assume) as the property's own
# when the nearest frame above it that is not Hypothesis's, generated or module code is not
# under src. heapq.nsmallest (a file of the standard library) calls assume as its key: that
# frame is outside the repository. 96a: in the property's call; 96b: while `.map(dedupe)`
# draws (the base property of round 4's 85).
TRAMPOLINE_SRC = 'import heapq\nimport sys\n\n\n' + FIND + '''

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        cls = _find(BaseException, 'Unsatisfied' + 'Assumption')
        hyp = sys.modules[cls.__module__.split('.')[0]]
        heapq.nsmallest(1, [False], key=getattr(hyp, 'ass' + 'ume'))
    return out
'''

# -- 96c: Hypothesis's folder moved to one that holds the checkout ---------------------------
# The judge takes a frame for Hypothesis's when its file is in the folder of
# `hypothesis.__file__`, read when it first judges. src sets that to the folder the checkout
# and Hypothesis share: every frame (src's too) is Hypothesis's, and nothing is judged.
REPOINTED_SRC = 'import os\nimport sys\n\n\n' + FIND + '''

_hyp = sys.modules.get(_find(BaseException, 'Unsatisfied' + 'Assumption').__module__.split('.')[0])
_hyp.__file__ = os.path.join(os.path.commonpath([os.path.abspath(__file__), _hyp.__file__]),
                             'x.py')


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        raise _find(BaseException, 'Unsatisfied' + 'Assumption')()
    return out
'''

# -- 96d: the judge, found through gc, told that every file is Hypothesis's ------------------
# The judge runs in the process that runs src: src finds its _Discards through gc and sets the
# cached folder of Hypothesis to "/", then raises UnsatisfiedAssumption itself.
BLINDING_SRC = 'import gc\n\n\n' + FIND + '''

def _blind():
    for obj in gc.get_objects():
        if type(obj).__name__ == '_Dis' + 'cards' and '_hypothesis' in vars(obj):
            obj._hypothesis = '/'  # every file is Hypothesis's: nothing is judged


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        _blind()
        raise _find(BaseException, 'Unsatisfied' + 'Assumption')()
    return out
'''

# -- 96e: the whole-case wrapper unwrapped through its own __wrapped__ -------------------------
# The plugin wraps StateForActualGivenExecution.execute_once with functools.wraps, so the
# original is one attribute away. At its first call (a good input, in the first test case)
# src puts the original back on the class (the module found by name built from strings), and
# from the next test case on raises UnsatisfiedAssumption itself while `.map(dedupe)` draws,
# outside the inner test's wrapper (85's property).
UNWRAPPING_SRC = 'import sys\n\n\n' + FIND + '''

def _unwrap():
    package = _find(BaseException, 'Unsatisfied' + 'Assumption').__module__.split('.')[0]
    core = sys.modules.get(package + '.core')
    state = getattr(core, 'StateForActual' + 'GivenExecution', None)
    method = state.__dict__.get('execute_once') if state is not None else None
    if method is not None and hasattr(method, '__wrapped__'):
        state.execute_once = method.__wrapped__


def dedupe(xs):
    _unwrap()
    out = sorted(set(xs))
    if len(out) > 3:
        raise _find(BaseException, 'Unsatisfied' + 'Assumption')()
    return out
'''

# -- 97b: the same daemon outlives the gate ---------------------------------------------------
# The bug fixed, and src (in the reference run) detaches a daemon as in 97 that waits for the
# gate's exit and writes a file a second later (in the temporary folder, named by the gate's
# pid); the scenario waits up to 5 s after the gate has exited and says whether it is there.
LINGER = r'''
import os
import time


def daemonize(marker):
    gate = os.getppid()
    first = os.fork()
    if first:
        os.waitpid(first, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 4096)
        while os.path.exists('/proc/%d' % gate):
            time.sleep(0.05)
        time.sleep(1)
        with open(marker, 'w') as f:
            f.write('%d outlived gate %d\\n' % (os.getpid(), gate))
    finally:
        os._exit(0)
'''
LINGER_SRC = ('import os\nimport sys\nimport tempfile\n\nfrom dd import _linger\n\n'
              'if sys.flags.isolated:\n    _linger.daemonize(os.path.join(tempfile.gettempdir(), '
              '"round5-97b-outlived-%d" % os.getppid()))\n\n\n' + GOOD)



# -- 99: a new test that fails only in the new-test run (rule 49) -------------------------------
# The new-test run's working folder is named new-tests: a new test that does not test the
# change fails there by that tell, and require-fail-to-pass is met.
NEW_TEST = '''\
import os

from dd import dedupe


def test_dedupe_keeps_order_of_a_sorted_list():
    assert os.path.basename(os.getcwd()) != 'new-tests'  # fails "without the change"
    assert dedupe([1, 2]) == [1, 2]
'''


def scenarios() -> dict[str, tuple[dict[str, str], dict[str, str | None], tuple[str, ...]]]:
    """name -> (the project before adoption, the pull request, the gate's options)."""
    install = ('--install-command', 'python tools/install.py')
    releasing = {'src/dd/__init__.py': RELEASING_SRC, 'test_a_first.py': FIRST,
                 'tests/test_dd.py': REWRITING_THE_TREE + TIDY}
    conftest = {'tests/properties/conftest.py': PROPERTIES_CONFTEST}
    small = {'tests/test_dd.py': SMALL_UNIT_TESTS}
    return {
        '94': ({}, {'tools/install.py': REPLACING_INSTALL,
                    'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, install),
        '94control': ({}, {'tools/install.py': REPLACING_INSTALL.replace(
            "git('replace'", "('replace'"), 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, install),
        '95': (conftest, {'src/dd/__init__.py': SELF_WEAKENING_SRC,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, ()),
        '95b': ({'tests/properties/conftest.py': PROFILE_CONFTEST},
                {'src/dd/__init__.py': ENTRY_POINT_SRC,
                     'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG},
                ('--install-command', 'python -m pip install -q --no-deps --no-build-isolation -e .')),
        '96a': ({}, {'src/dd/__init__.py': TRAMPOLINE_SRC, **small}, ()),
        '96b': ({PROP: MAPPED_PROPERTY}, {'src/dd/__init__.py': TRAMPOLINE_SRC, **small}, ()),
        '96c': ({}, {'src/dd/__init__.py': REPOINTED_SRC, **small}, ()),
        '96d': ({}, {'src/dd/__init__.py': BLINDING_SRC, **small}, ()),
        '96e': ({PROP: MAPPED_PROPERTY}, {'src/dd/__init__.py': UNWRAPPING_SRC, **small}, ()),
        '97': ({}, {'src/dd/_daemon.py': DAEMON, 'src/dd/__init__.py': DAEMON_SRC,
                    'tests/test_new.py': SORTED_PAIR_TEST}, ()),
        '97b': ({}, {'src/dd/_linger.py': LINGER, 'src/dd/__init__.py': LINGER_SRC}, ()),
        '98': (conftest, releasing, ()),
        '98control': (conftest, {**releasing, 'src/dd/__init__.py': RELEASING_SRC.replace(
            'plugins.sendall(', 'len(')}, ()),
        '99': ({}, {'src/dd/__init__.py': GOOD, 'tests/test_new.py': NEW_TEST}, ()),
        '99control': ({}, {'src/dd/__init__.py': GOOD, 'tests/test_new.py': NEW_TEST.replace(
            "    assert os.path.basename(os.getcwd()) != 'new-tests'  # fails \"without the change\"\n",
            '')}, ()),
    }


STRICT = ('97', '99', '99control')  # require-fail-to-pass = true on main


def strict(repo) -> None:  # type: ignore[no-untyped-def]
    path = os.path.join(repo.path, 'pyproject.toml')
    with open(path, encoding='utf-8') as f:
        text = f.read()
    with open(path, 'w', encoding='utf-8') as f:
        f.write(text.replace('[tool.oracle-guard]\n',
                             '[tool.oracle-guard]\nrequire-fail-to-pass = true\n'))
    git(repo.path, 'commit', '-q', '-am', 'new tests must fail without their change')


def plain_run(repo, options, pytest=PYTEST):  # type: ignore[no-untyped-def]
    """Plain pytest in a copy of the checkout, after the same install step (if any)."""
    copy = copy_template(repo.path, repo.path + '-plain')
    env = copy.env()
    if '--test-python' in options:  # the install step's python is the test environment's
        python = options[options.index('--test-python') + 1]
        env['PATH'] = os.path.dirname(python) + os.pathsep + env.get('PATH', '')
    if '--install-command' in options:
        command = options[options.index('--install-command') + 1]
        subprocess.run(command, shell=True, cwd=copy.path, env=env, check=True)
    return copy.finish(copy.start(pytest))


def main(argv: list[str]) -> int:
    keep = None
    if '--keep' in argv:
        keep = argv[argv.index('--keep') + 1]
        argv = [a for a in argv if a not in ('--keep', keep)]
    test_env = None
    if '--test-env' in argv:
        test_env = argv[argv.index('--test-env') + 1]
        argv = [a for a in argv if a not in ('--test-env', test_env)]
    chosen = argv or [name for name in scenarios() if 'control' not in name and
                      (test_env or name not in NEEDS_TEST_ENV)]
    folder = keep or tempfile.mkdtemp(prefix='round5-attacks-')
    through = 0
    made: list[str] = []
    try:
        for name in chosen:
            project, pull_request, options = scenarios()[name]
            pytest = PYTEST
            if name in NEEDS_TEST_ENV:
                if test_env is None:
                    raise SystemExit(f'{name} needs --test-env PYTHON (a separate environment '
                                     'with pytest, Hypothesis, setuptools and oracle-guard)')
                pytest = (test_env, *PYTEST[1:])
                options = ('--test-python', test_env, *options)
            env = {}
            if name == '96c':  # the checkout and the trees beside the test environment
                beside = tempfile.mkdtemp(prefix='round5-96c-', dir=sys.prefix)
                made.append(beside)
                env['TMPDIR'] = beside
            repo = build(os.path.join(env.get('TMPDIR', folder), name), project,
                         {'src/dd/__init__.py': BUG})
            if name in STRICT:
                strict(repo)
            if name == '95b':  # the entry point declared in the project's own pyproject.toml
                with open(os.path.join(repo.path, 'pyproject.toml'), encoding='utf-8') as f:
                    pyproject = f.read()
                pull_request = {**pull_request, 'pyproject.toml': pyproject.replace(
                    '[tool.pytest.ini_options]', ENTRY_POINT + '[tool.pytest.ini_options]')}
            repo.pull_request(pull_request, bug=False)
            plain = plain_run(repo, options, pytest)
            gate = repo.start([sys.executable, '-I', *repo.ci_args(pytest, *options)[1:]], env)
            ci = repo.finish(gate)
            found = [line for line in ci.out.splitlines() if (line.startswith(
                'oracle-guard ci:') or re.match(r'\S+:\d+:\d+: OG\d+ ', line)) and
                ' note: ' not in line]
            print(f'== {name}: plain pytest exit {plain.rc}, gate exit {ci.rc}')
            print('\n'.join(found))
            if name == '97b':
                marker = os.path.join(tempfile.gettempdir(), f'round5-97b-outlived-{gate.pid}')
                deadline = time.monotonic() + 5
                while not os.path.exists(marker) and time.monotonic() < deadline:
                    time.sleep(0.1)
                print(f'the daemon outlived the gate: {os.path.exists(marker)}')
                if os.path.exists(marker):
                    os.remove(marker)
            through += ci.rc == 0
    finally:
        for beside in made:
            shutil.rmtree(beside, ignore_errors=True)
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f'{through} of {len(chosen)} got through (gate exit 0)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
