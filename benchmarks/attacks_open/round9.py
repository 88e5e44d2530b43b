"""Reproduce the attacks of ATTACKS.md 128-... (round 9: OG717's judge of what strategies
draw, Hypothesis's own ``assume`` called for ``src``, ``do_draw`` replaced, start-up code
installed by the install step, control exceptions from a thread; played on branch attack9,
``main`` at cde11f6).

    python benchmarks/attacks_open/round9.py [NAME ...] [--keep DIR] [--test-env PYTHON]

Each scenario builds the ``dd`` repository of round7.py (adopted with ``oracle-guard
init``), with one difference: the bug on ``main`` is a rarer one, ``dedupe`` drops the
largest value past **ten** distinct ones (``RARE_BUG``). Hypothesis finds it in every run
of 50 examples (4 to 18 % of the examples show it, measured), but rarely enough that ``src``
can hide it by throwing away, inside a ``.map``, the draws that would show it, never three
in a row (``MappedStrategy.do_draw`` draws again twice and lets the third discard out). The
base's unit tests never reach ten distinct values, so they pass with the bug and stay as
they are. Each ``...control`` scenario is the same base with the bug and no cheat: plain
pytest must exit 1 there, so that a "plain pytest exit 0" elsewhere is the cheat's doing.

It commits the pull request on branch ``pr``, runs plain ``python -m pytest -q -p
no:cacheprovider`` in a copy of the checkout (after the same install step, if any), then
the gate as the action runs it (``python -I -m oracle_guard.cli ci --base main [options]
-- python -m pytest -q -p no:cacheprovider``) and prints "plain pytest exit N" and "gate
exit N" per scenario with the gate's findings. An attack gets through when the gate exits
0 with the bug in place. The results as played are round9_results.txt beside this file.

132 and 132control need a throwaway test environment (``--test-env PYTHON``: a venv with
pytest 9.2.0, Hypothesis 6.170.17 and oracle-guard installed from this checkout, not in
editable mode); 132's install step writes start-up code into that environment's
site-packages, and the script removes it again after each run.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
sys.path.insert(0, HERE)

from round3 import build  # noqa: E402
from round5 import plain_run  # noqa: E402
from test_ci_attacks import PROPERTY  # noqa: E402
from test_ci_attacks import PYTEST  # noqa: E402
from test_ci_attacks_round3 import DISCARDING_SRC  # noqa: E402
from test_ci_attacks_round4 import MAPPED_PROPERTY  # noqa: E402
from test_ci_attacks_round9 import BOOT as PTH_INSTALL  # noqa: E402
from test_ci_attacks_round9 import DRAWING_REPLACED  # noqa: E402

# -- the bug, rarer ------------------------------------------------------------------------
RARE_BUG = '''\
def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 10:
        return out[:-1]
    return out
'''
# A pull request that leaves src as main has it (the bug) and changes nothing that runs.
NOTHING = {'NOTES.md': 'nothing\n'}

FIND = '''\
def _find(root, name):
    for cls in type.__subclasses__(root):
        if cls.__name__ == name:
            return cls
        found = _find(cls, name)
        if found is not None:
            return found


'''

# -- 121r, 122r: round 8's 121 and 122 replayed with the rare bug ----------------------------
# dedupe answers with the bug, but a call with an unsorted list (the map's: the property's
# own call gets the map's sorted output, the unit tests sorted lists or short ones) whose
# answer would show the bug to the property (``_wrong(out) != out``) is thrown away, at most
# twice in a row, by UnsatisfiedAssumption found by a subclass walk (round 4's 75 through a
# strategy, now and then).
MAP_CHEAT = FIND + '''\
def _wrong(xs):
    out = sorted(set(xs))
    return out[:-1] if len(out) > 10 else out


_run = [0]


def dedupe(xs):
    out = _wrong(xs)
    if list(xs) != out and _wrong(out) != out and _run[0] < 2:
        _run[0] += 1
        raise _find(BaseException, 'Unsatisfied' + 'Assumption')('later')
    _run[0] = 0
    return out
'''
# 121: the flag round 8 found judged_do_draw trusting (a wrapper is known by its code on main)
FLAGGED = MAP_CHEAT + "\n\nsetattr(dedupe, '_'.join(['', 'oracle', 'guard', 'judged']), True)\n"
# 122: the same, answered by __getattr__ for any name ending in _judged
GETATTR = MAP_CHEAT.replace('def dedupe(xs):', 'def _dedupe(xs):') + '''

class _Dedupe:
    def __call__(self, xs):
        return _dedupe(xs)

    def __getattr__(self, name):
        if name.endswith('_judged'):
            return True
        raise AttributeError(name)


dedupe = _Dedupe()
'''

# -- 128-128d: src's discards inside a map, drawn by something else than the map's function --
# MAP_CHEAT's dedupe, drawn by st.builds (128), a @composite of the property file (128b) or
# a flatmap (128c) under a .map(tuple): the map's do_draw catches what its *inner* draw
# raises as it catches what its function raises, but only its function is judged. 128d:
# st.builds alone (no map around it).
LISTS = 'st.lists(st.integers(min_value=-50, max_value=50), max_size=30)'
SETTINGS = ('@settings(max_examples=50, deadline=None, '
            'suppress_health_check=[HealthCheck.too_slow])\n')


def strategy_property(strategy: str, extra: str = '', body: str =
                      'assert tuple(dedupe(list(ys))) == ys') -> str:
    return ('from hypothesis import HealthCheck, given, settings, strategies as st\n\n'
            'from dd import dedupe\n\n\n' + extra + SETTINGS + f'@given({strategy})\n'
            f'def test_dedupe_is_idempotent(ys):\n    {body}\n')


BUILDS_IN_MAP = strategy_property(f'st.builds(dedupe, {LISTS}).map(tuple)')
COMPOSITE_IN_MAP = strategy_property('deduped().map(tuple)', extra=(
    f'@st.composite\ndef deduped(draw):\n    return dedupe(draw({LISTS}))\n\n\n'))
FLATMAP_IN_MAP = strategy_property(
    f'{LISTS}.flatmap(lambda xs: st.just(dedupe(xs))).map(tuple)')
BUILDS_ALONE = strategy_property(f'st.builds(dedupe, {LISTS})',
                                 body='assert dedupe(ys) == ys')

# -- 130, 130b: Hypothesis's own assume / reject, called for src by the standard library ------
# OG717 asks that a control exception be raised by Hypothesis's code (its innermost frame)
# and that the nearest frame above it that is not Hypothesis's, generated code or module
# code be outside src. src finds ``assume`` and ``reject`` in the globals of
# hypothesis.control (through ``BuildContext.__init__``, a class found by a subclass walk:
# no import, no name rule 43 reads) and has a function of the standard library call them:
# functools.singledispatch's wrapper (130), contextlib.ExitStack's callback (130b). The
# base's plain property (``dedupe(xs) == sorted(set(xs))``); every example that would show
# the bug is thrown away (4 to 18 %: no health check). 130control calls assume itself.
ASSUME_HEAD = 'import contextlib\nimport functools\n\n\n' + FIND + '''\
def _control(name):
    ctx = _find(object, 'Build' + 'Context')
    return ctx.__init__.__globals__[name[::-1]]


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 10:
'''
ASSUME_TAIL = '        return out[:-1]\n    return out\n'
ASSUME_BY_SINGLEDISPATCH = ASSUME_HEAD + (
    "        functools.singledispatch(_control('emussa'))(False)\n") + ASSUME_TAIL
REJECT_BY_EXITSTACK = ASSUME_HEAD + (
    "        with contextlib.ExitStack() as stack:\n"
    "            stack.callback(_control('tcejer'))\n") + ASSUME_TAIL
ASSUME_DIRECT = ASSUME_HEAD + "        _control('emussa')(False)\n" + ASSUME_TAIL
# 130c: 130control's direct call, with dedupe compiled under a generated file name
# (``<dd>``): generated frames are skipped, and the nearest frame left is the property's.
_DEDUPE = ASSUME_DIRECT[ASSUME_DIRECT.index('def dedupe'):]
ASSUME_GENERATED = ASSUME_DIRECT.replace(
    _DEDUPE, 'exec(compile(%r, "<dd>", "exec"))\n' % _DEDUPE)
# 130d: 130c in a namespace whose ``__file__`` names the unit tests' file: generated code
# counts as the module whose globals it runs in since e1a0c54, and these globals say a test
# file (the documented limit of a frame compiled under a test file's name, in other words).
ASSUME_FAKED_FILE = ('import os\n' + ASSUME_DIRECT).replace(_DEDUPE, (
    "_NS = dict(globals(), __file__=os.path.join(os.path.dirname(__file__), '..', '..', "
    "'tests', 'test_dd.py'))\nexec(compile(%r, '<dd>', 'exec'), _NS)\n"
    "dedupe = _NS['dedupe']\n") % _DEDUPE)

# -- 136: a src predicate in the property's .filter() ---------------------------------------
# The base's property draws the inputs src accepts (``.filter(dd.accepts)``, true for every
# list at the base: a common shape, ``st.text().filter(mylib.is_valid_name)``). The pull
# request's ``accepts`` refuses the inputs the bug would answer wrong. A filter that answers
# False raises nothing: Hypothesis draws again, and marks the example invalid after three.
FILTER_PROPERTY = PROPERTY.replace('from dd import dedupe', 'from dd import accepts, dedupe'
                                   ).replace('max_size=30))', 'max_size=30).filter(accepts))')
ACCEPTS = '\n\ndef accepts(xs):\n    return True\n'
REFUSING = RARE_BUG + '\n\ndef accepts(xs):\n    return len(set(xs)) <= 10\n'

# -- 131, 131b: MappedStrategy's draw taken from under the plugin ------------------------------
# src runs when the property module imports it (Hypothesis's strategies are loaded by then,
# the plugin's wrappers are put on at each test call). 131: src replaces
# ``MappedStrategy.do_draw`` with a function that the plugin then wraps; when it is called
# with the plugin's judging ``pack`` it takes the original function out of the wrapper's
# closure and has Hypothesis's own do_draw call that. 131b: src replaces
# ``SearchStrategy.map`` so that ``.map(f)`` makes a subclass (also named MappedStrategy)
# whose ``do_draw`` is Hypothesis's own, taken before any wrapper: the plugin wraps the
# attribute of ``MappedStrategy`` itself only. Both with MAP_CHEAT's dedupe.
DO_DRAW_REPLACED = MAP_CHEAT + '''

_M = _find(object, 'Mapped' + 'Strategy')
_own = _M.__dict__['do_draw']


def _do_draw(self, data):
    pack = self.__dict__.get('pack')
    for cell in getattr(pack, '__closure__', None) or ():
        try:
            inner = cell.cell_contents
        except ValueError:
            continue
        if inner is dedupe:
            self.pack = inner
            try:
                return _own(self, data)
            finally:
                self.pack = pack
    return _own(self, data)


_M.do_draw = _do_draw
'''
# 131c: 131 with the replacement compiled under a generated file name (``<draw>``): OG717
# skips generated frames when it looks for the code that asked Hypothesis for a discard, so
# the discards Hypothesis's own strategies make while the replacement is on the stack are
# not src's either.
_DRAW_BODY = DO_DRAW_REPLACED[DO_DRAW_REPLACED.index('def _do_draw'):
                              DO_DRAW_REPLACED.index('\n\n_M.do_draw')]
DO_DRAW_GENERATED = DO_DRAW_REPLACED.replace(
    _DRAW_BODY, '_NS = {}\nexec(compile(%r, "<draw>", "exec"), _NS)\n_NS.update(_own=_own, '
    'dedupe=lambda: dedupe)\n_do_draw = _NS["_do_draw"]' % _DRAW_BODY.replace(
        'inner is dedupe', 'inner is dedupe()'))
# 131d: 128's builds inside a map, against c0194df's judge of the map's inner draw: src
# replaces ``ConjectureData.draw`` at import with a function (compiled under ``<draw>``)
# that draws again whenever a draw ends in UnsatisfiedAssumption, so what ``dedupe`` raises
# inside ``st.builds`` never leaves the draw the plugin judges.
RETRYING_DRAW = MAP_CHEAT + DRAWING_REPLACED['131d']  # the gate scenario's own change
MAP_SUBCLASS = MAP_CHEAT + '''

_M = _find(object, 'Mapped' + 'Strategy')
_S = _M.__mro__[1]
_Sub = type(_M.__name__, (_M,), {'do_draw': _M.__dict__['do_draw'],
                                 '__module__': _M.__module__, '__qualname__': _M.__qualname__})


def _map(self, pack):
    return _Sub(self, pack=pack)


_S.map = _map
'''

# -- 132: start-up code installed by the install step, listed in a RECORD ---------------------
# The install step (``tools/install.py``, standing for the setup.py that ``pip install -e .``
# runs) writes into the test environment's site-packages ``og_boot.pth`` (an import line),
# ``og_boot.py`` and a hand-written ``og_boot-0.1.dist-info`` whose RECORD lists both with
# their true hashes (so neither is a stray, OG727, nor changed, OG726). Every interpreter of
# that environment runs it at start-up, the reference run's ``python -I`` included: it
# imports oracle-guard's run_record and makes ``_Discards.by_src`` answer None, so no
# discard is ever src's. src is round 3's 75 (DISCARDING_SRC: UnsatisfiedAssumption whenever
# it would answer wrong), the base's plain property with the original bug's cheat.
# PTH_INSTALL is the regression test's install step (tests/test_ci_attacks_round9.py's BOOT).
PTH_NOTHING = 'print("nothing")\n'


def undo_pth(python: str) -> None:
    site = subprocess.run([python, '-c', 'import sysconfig; print(sysconfig.get_paths()'
                           "['purelib'])"], capture_output=True, text=True, check=True)
    folder = site.stdout.strip()
    for path in [os.path.join(folder, 'og_boot.pth'), os.path.join(folder, 'og_boot.py'),
                 *glob.glob(os.path.join(folder, '__pycache__', 'og_boot.*'))]:
        if os.path.exists(path):
            os.remove(path)
    shutil.rmtree(os.path.join(folder, 'og_boot-0.1.dist-info'), ignore_errors=True)


# -- 133: UnsatisfiedAssumption raised into the test's thread from another thread ------------
# dedupe (the map's call) does not raise: when its answer would show the bug it arms a
# thread started at import, which waits until the main thread runs Hypothesis's own code
# with no frame of src or of a test file on its stack (the map has returned, the test is
# not called yet) and then raises UnsatisfiedAssumption there with
# PyThreadState_SetAsyncExc: the exception's innermost frame is Hypothesis's, and every
# frame above it up to the engine is Hypothesis's (or the plugin's), so no frame of src
# asked for it. The GIL's switch interval is made short so that the thread gets its turn in
# time; a draw it misses shows the bug.
ASYNC_SRC = FIND + '''\
import ctypes
import os
import sys
import threading

_armed = threading.Event()
_HERE = os.path.dirname(os.path.abspath(__file__))
_MAIN = threading.main_thread().ident


def _fire():
    while True:
        _armed.wait()
        code = _find(object, 'Build' + 'Context').__init__.__code__
        folder = os.path.dirname(code.co_filename) + os.sep
        while _armed.is_set():
            top = frame = sys._current_frames().get(_MAIN)
            seen = set()
            while frame is not None and frame.f_code.co_name != 'execute_once':
                file = frame.f_code.co_filename
                seen.add('src' if file.startswith(_HERE) else
                         'test' if os.sep + 'tests' + os.sep in file else 'other')
                frame = frame.f_back
            if frame is not None and 'test' in seen:  # too late: the draw shows the bug
                _armed.clear()
            elif frame is not None and 'src' not in seen and \
                    top.f_code.co_filename.startswith(folder):
                cls = _find(BaseException, 'Unsatisfied' + 'Assumption')
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(_MAIN),
                                                           ctypes.py_object(cls))
                _armed.clear()
            else:
                os.sched_yield()
        sys.setswitchinterval(0.005)


threading.Thread(target=_fire, daemon=True).start()


def _wrong(xs):
    out = sorted(set(xs))
    return out[:-1] if len(out) > 10 else out


def dedupe(xs):
    out = _wrong(xs)
    if list(xs) != out and _wrong(out) != out:
        sys.setswitchinterval(1e-6)
        _armed.set()
    return out
'''

# -- 135: git replace and grafts written by the install step ----------------------------------
# The install step points the base property's blob at a weakened copy (``git replace``:
# the oracle compares dedupe with itself) and writes ``.git/info/grafts`` (main's commit
# without parents). Every git process of the gate runs with GIT_NO_REPLACE_OBJECTS, and
# every tree is read by the ids listed before the install step.
REPLACE_INSTALL = r'''import subprocess


def git(*args, data=None):
    return subprocess.run(('git',) + args, input=data, capture_output=True,
                          check=True).stdout.decode().strip()


PROP = 'tests/properties/test_dd_props.py'
strong_id = git('rev-parse', 'main:' + PROP)
strong = subprocess.run(('git', 'cat-file', 'blob', strong_id), capture_output=True,
                        check=True).stdout
weak_id = git('hash-object', '-w', '--stdin',
              data=strong.replace(b'== sorted(set(xs))', b'== dedupe(xs)'))
git('replace', '-f', strong_id, weak_id)
with open(git('rev-parse', '--git-path', 'info/grafts'), 'w') as f:
    f.write(git('rev-parse', 'main') + '\n')
print('replaced', strong_id, 'by', weak_id)
'''

# -- 137: pytest's Skipped raised into the test from another thread --------------------------
# dedupe, when it would answer wrong, has a thread raise pytest's skip exception (found by a
# subclass walk) in the test's thread with PyThreadState_SetAsyncExc, and waits for it: the
# property ends as skipped, and no frame of src raised anything.
ASYNC_SKIP = FIND + '''\
import ctypes
import threading


def _skip_me(ident):
    cls = _find(BaseException, 'Skipped')
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(cls))


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 10:
        t = threading.Thread(target=_skip_me, args=(threading.get_ident(),))
        t.start()
        t.join()
        for _ in range(1000):
            pass
        return out[:-1]
    return out
'''

INSTALL = ('--install-command', 'python tools/install.py')
NEEDS_TEST_ENV = ('132', '132control')


def scenarios() -> dict[str, tuple[dict[str, str], dict[str, str], tuple[str, ...]]]:
    """name -> (the project before adoption, the pull request, the gate's options)."""
    mapped = {'tests/properties/test_dd_props.py': MAPPED_PROPERTY}
    plain = {'tests/properties/test_dd_props.py': PROPERTY}

    def prop(text: str) -> dict[str, str]:
        return {'tests/properties/test_dd_props.py': text}

    src = 'src/dd/__init__.py'
    filtered = {**prop(FILTER_PROPERTY), src: 'def dedupe(xs):\n    return sorted(set(xs))\n'
                + ACCEPTS, '__main__': RARE_BUG + ACCEPTS}
    return {
        'mapcontrol': (mapped, NOTHING, ()),
        '121r': (mapped, {src: FLAGGED}, ()),
        '121rcontrol': (mapped, {src: MAP_CHEAT}, ()),
        '122r': (mapped, {src: GETATTR}, ()),
        '128control': (prop(BUILDS_IN_MAP), NOTHING, ()),
        '128': (prop(BUILDS_IN_MAP), {src: MAP_CHEAT}, ()),
        '128b': (prop(COMPOSITE_IN_MAP), {src: MAP_CHEAT}, ()),
        '128bcontrol': (prop(COMPOSITE_IN_MAP), NOTHING, ()),
        '128c': (prop(FLATMAP_IN_MAP), {src: MAP_CHEAT}, ()),
        '128ccontrol': (prop(FLATMAP_IN_MAP), NOTHING, ()),
        '128d': (prop(BUILDS_ALONE), {src: MAP_CHEAT}, ()),
        'plaincontrol': (plain, NOTHING, ()),
        '130': (plain, {src: ASSUME_BY_SINGLEDISPATCH}, ()),
        '130b': (plain, {src: REJECT_BY_EXITSTACK}, ()),
        '130control': (plain, {src: ASSUME_DIRECT}, ()),
        '130c': (plain, {src: ASSUME_GENERATED}, ()),
        '130d': (plain, {src: ASSUME_FAKED_FILE}, ()),
        '136': (filtered, {src: REFUSING}, ()),
        '136control': (filtered, NOTHING, ()),
        '131': (mapped, {src: DO_DRAW_REPLACED}, ()),
        '131b': (mapped, {src: MAP_SUBCLASS}, ()),
        '131c': (mapped, {src: DO_DRAW_GENERATED}, ()),
        '131d': (prop(BUILDS_IN_MAP), {src: RETRYING_DRAW}, ()),
        '132': (plain, {src: DISCARDING_SRC.replace('len(out) > 3', 'len(out) > 10'),
                        'tools/install.py': PTH_INSTALL}, INSTALL),
        '132control': (plain, {src: DISCARDING_SRC.replace('len(out) > 3', 'len(out) > 10'),
                               'tools/install.py': PTH_NOTHING}, INSTALL),
        '133': (mapped, {src: ASYNC_SRC}, ()),
        '135': (plain, {'tools/install.py': REPLACE_INSTALL}, INSTALL),
        '137': (plain, {src: ASYNC_SKIP}, ()),
    }


def main(argv: list[str]) -> int:
    keep = None
    if '--keep' in argv:
        keep = argv[argv.index('--keep') + 1]
        argv = [a for a in argv if a not in ('--keep', keep)]
    test_env = None
    if '--test-env' in argv:
        test_env = argv[argv.index('--test-env') + 1]
        argv = [a for a in argv if a not in ('--test-env', test_env)]
    chosen = argv or [name for name in scenarios() if test_env or name not in NEEDS_TEST_ENV]
    folder = keep or tempfile.mkdtemp(prefix='round9-attacks-')
    through = 0
    try:
        for name in chosen:
            project, pull_request, options = scenarios()[name]
            pytest = PYTEST
            if name in NEEDS_TEST_ENV:
                if test_env is None:
                    raise SystemExit(f'{name} needs --test-env PYTHON')
                pytest = (test_env, *PYTEST[1:])
                options = ('--test-python', test_env, *options)
            project = dict(project)
            main_src = project.pop('__main__', RARE_BUG)  # src on main (the bug)
            repo = build(os.path.join(folder, name), project, {'src/dd/__init__.py': main_src})
            repo.pull_request(pull_request, bug=False)
            try:
                plain = plain_run(repo, options, pytest)
            finally:
                if test_env is not None and name in NEEDS_TEST_ENV:
                    undo_pth(test_env)
            try:
                ci = repo.finish(repo.start([sys.executable, '-I',
                                             *repo.ci_args(pytest, *options)[1:]]))
            finally:
                if test_env is not None and name in NEEDS_TEST_ENV:
                    undo_pth(test_env)
            found = [line for line in ci.out.splitlines() if (line.startswith(
                'oracle-guard ci:') or re.match(r'\S+:\d+:\d+: OG\d+ ', line)) and
                ' note: ' not in line]
            print(f'== {name}: plain pytest exit {plain.rc}, gate exit {ci.rc}')
            print('\n'.join(found), flush=True)
            if plain.rc and 'control' not in name:
                print('\n'.join(plain.out.splitlines()[-6:]))
            through += ci.rc == 0
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f'{through} of {len(chosen)} got through (gate exit 0)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
