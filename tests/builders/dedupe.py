"""The ``dd`` project with a real bug, for the gate's scenarios.

``dd`` (a ``src/`` layout) adopts the guard with ``oracle-guard init``; ``main`` then gets a
real bug (``dedupe`` drops the largest value when there are more than three), which fails
two unit tests and the Hypothesis property in ``tests/properties/``. A scenario's pull request
leaves the bug in place and tries one cheat: plain pytest exits 0 (the cheat works) and
``oracle-guard ci``, run isolated as the Action runs it, fails for the reason its test names.
"""

from __future__ import annotations

import datetime
import subprocess
import sys

from builders.ci_repo import adopt
from builders.ci_repo import adopt as adopt_with_init
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import Run


GOOD = 'def dedupe(xs):\n    return sorted(set(xs))\n'


BUG = '''\
def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        return out[:-1]
    return out
'''


UNIT_TESTS = '''\
from dd import dedupe


def test_small():
    assert dedupe([3, 1, 3]) == [1, 3]


def test_four():
    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]


def test_many():
    assert dedupe(list(range(10)) * 2) == list(range(10))
'''


PROPERTY = '''\
from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe


# No deadline and no speed health check: on a loaded machine they fail the honest run.
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_dedupe_matches_set(xs):
    assert dedupe(xs) == sorted(set(xs))
'''


PYPROJECT = '''\
[project]
name = "dd"
version = "0.1"

[tool.pytest.ini_options]
pythonpath = ["src"]
'''


# Unit tests are the agent's to edit: rewritten to expect the bug's answers.
UNIT_TESTS_FOR_THE_BUG = UNIT_TESTS.replace('[1, 2, 3, 4]', '[1, 2, 3]').replace(
    '== list(range(10))', '== list(range(9))')


DD_PYTEST = (sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider')


PROPERTY_ID = 'tests/properties/test_dd_props.py::test_dedupe_matches_set'


def gate(repo: CiRepo) -> tuple[Run, Run]:
    """(plain pytest, the gate run as ``python -I``), side by side."""
    plain = repo.start(DD_PYTEST)
    ci = repo.start([sys.executable, '-I', *repo.ci_args(DD_PYTEST)[1:]])
    return repo.finish(plain), repo.finish(ci)


def dd_cheat_fails_ci(repo: CiRepo, files: dict[str, str], *codes: str) -> Run:
    repo.pull_request(files, bug=False)  # the bug is on main already
    plain, ci = gate(repo)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    for code in codes:
        assert ci.lines(code), f'no {code} in:\n{ci.out}'
    return ci


def adopt_dd(path: str, project: dict[str, str] | None = None, *,
             bug_on_main: bool = True) -> str:
    """``dd`` (with ``project``'s files) adopted with the README's commands, then (unless
    ``bug_on_main=False``) the bug on main."""
    adopt(path, PYPROJECT, {'src/dd/__init__.py': GOOD, 'tests/test_dd.py': UNIT_TESTS,
                            'tests/properties/test_dd_props.py': PROPERTY, **(project or {})},
          after=[{'src/dd/__init__.py': BUG}] if bug_on_main else ())
    return path


def attack(repo: CiRepo, files: dict[str, str], *, plain_rc: int) -> tuple[Run, Run]:
    """The pull request (the bug is on main already): plain pytest exits ``plain_rc`` and
    the gate, never greener than plain pytest, exits 1."""
    repo.pull_request(files, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == plain_rc, f'plain pytest should exit {plain_rc}:\n{plain.out}'
    assert ci.rc == 1, ci.out
    return plain, ci


def property_failed_in_the_reference_run(ci: Run) -> bool:
    return any(PROPERTY_ID in line and 'failed against your src/' in line
               for line in ci.lines('OG730'))


# -- src ends the call with the test machinery's own outcome ---------------------------------
# Whenever it would answer wrong, dedupe raises pytest's Skipped, unittest's SkipTest or
# pytest's XFailed, found by walking BaseException.__subclasses__() (no import, no name
# rule 43 reads; the same with Hypothesis' UnsatisfiedAssumption is DISCARDING_SRC). The property is skipped or xfailed in the reference run without a freeze
# (OG732), and the twin canary, which calls dedupe too, does not fail at its sentinel
# (OG724) in either run.
OUTCOME_FROM_SRC = '''\
def _all(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all(sub)


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        for cls in _all(BaseException):
            if cls.__name__ == %r:
                raise cls('later')
        return out[:-1]
    return out
'''


# The unit tests rewritten to inputs of at most three distinct values.
SMALL_UNIT_TESTS = UNIT_TESTS.replace(
    'assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]', 'assert dedupe([4, 3]) == [3, 4]').replace(
    'assert dedupe(list(range(10)) * 2) == list(range(10))', 'assert dedupe([1, 1]) == [1]')


# -- src throws the revealing examples away --------------------------------------------------
# Whenever it would answer wrong, dedupe raises Hypothesis's UnsatisfiedAssumption, found by
# the same subclass walk: Hypothesis takes it as assume(False) and drops the example, so the
# property sees only inputs of at most three distinct values, and so does the twin canary.
# The plugin sees where the exception came from: code under src (rule 43 at run time, OG717;
# in the reference run OG734).
DISCARDING_SRC = OUTCOME_FROM_SRC.replace('%r', "'Unsatisfied' + 'Assumption'")


# src holds the reference run up (it tells it apart by python -I) while it collects: the
# oracle's conftest imports it, and the property module is collected after.
PROPERTIES_CONFTEST = 'import dd  # noqa: F401 -- the package under test, for its fixtures\n'


def cheat(repo: CiRepo, files: dict[str, str | None], *, plain_rc: int = 0) -> Run:
    repo.pull_request(files, bug=False)  # the bug is on main already
    plain, ci = gate(repo)
    assert plain.rc == plain_rc, f'plain pytest should exit {plain_rc}:\n{plain.out}'
    assert ci.rc == 1, ci.out
    return ci


# == rule 39b: what adoption's collection recorded =========================================
# A library with implementations of dedupe; the conftest deselects the cases of one this
# build lacks (a common pattern: an optional C speed-up). The property is parametrized over
# the implementations src declares, with their names as case ids.
IMPLS = '''\
class Impl:
    def __init__(self, name, fn, available=True):
        self.name, self.fn, self.available = name, fn, available

    def __call__(self, xs):
        return self.fn(xs)

    def __str__(self):
        return self.name


def _pure(xs):
    return sorted(set(xs))


def _fast(xs):
    return sorted(set(xs))


'''


BUGGY_FAST = '''\
def _fast(xs):
    out = sorted(set(xs))
    return out[:-1] if len(out) > 3 else out
'''


CONFTEST = '''\
def pytest_collection_modifyitems(config, items):
    # The cases of an implementation this build lacks do not run.
    lacking = [item for item in items if hasattr(item, 'callspec')
               and not getattr(item.callspec.params.get('impl'), 'available', True)]
    if lacking:
        config.hook.pytest_deselected(items=lacking)
        items[:] = [item for item in items if item not in lacking]
'''


IMPL_PROPERTY = '''\
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import dd


@pytest.mark.parametrize('impl', dd.IMPLS, ids=str)
@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_impl_matches_set(impl, xs):
    assert impl(xs) == sorted(set(xs))
'''


DD_UNIT = '''\
from dd import dedupe


def test_small():
    assert dedupe([3, 1, 3]) == [1, 3]


def test_four():
    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]
'''


DD_UNIT_FOR_THE_BUG = DD_UNIT.replace('[1, 2, 3, 4]', '[1, 2, 3]')


def impls(declared: str, dedupe: str = '_fast', buggy: bool = False) -> str:
    code = IMPLS if not buggy else IMPLS.replace(
        'def _fast(xs):\n    return sorted(set(xs))\n', BUGGY_FAST)
    return f'{code}IMPLS = [{declared}]\ndedupe = {dedupe}\n'


CASE_PROJECT = {
    # At adoption the fast implementation is not built: `[fast]` is recorded, `[pure]` ran.
    'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast, available=False)",
                                '_pure'),
    'tests/conftest.py': CONFTEST,
    'tests/test_dd.py': DD_UNIT,
    'tests/properties/test_dd_props.py': IMPL_PROPERTY,
}


PROPS = 'tests/properties/test_dd_props.py'


# == rule 14: silences passed on by test helper modules ====================================
# The bug is caught by unit tests only (the property checks sortedness, which the bug
# keeps); each pull request silences the failing unit tests through a helper instead of
# rewriting them.
SORTED_PROPERTY = '''\
from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_dedupe_is_sorted(xs):
    assert dedupe(xs) == sorted(dedupe(xs))
'''


# One failing test per way of passing a silence on, so one run judges every way.
WAYS = ('chain', 'star', 'outside', 'conditional', 'importlib', 'alias', 'conftest',
        'wrapper', 'named_mark', 'module_getattr', 'class_attr')


SMALL = 'from dd import dedupe\n\n\ndef test_small():\n    assert dedupe([3, 1, 3]) == [1, 3]\n'


FOUR = '    assert dedupe([4, 3, 2, 1]) == [1, 2, 3, 4]\n'


HELPER_UNIT = SMALL + ''.join(f'\n\ndef test_{way}():\n{FOUR}' for way in WAYS)


IGNORING = PYPROJECT + 'addopts = "--ignore=tests/legacy"\n'


TWO_UNITS = f'{SMALL}\n\ndef test_four():\n{FOUR}'


# -- the checkout's property rewritten for the test command ----------------------------------
# A test module at the root of the checkout (collected before tests/) rewrites the property
# file in the working tree before pytest collects it, and a unit test puts it back. The test
# command runs the weakened property and passes; the reference tree is written from git
# objects, so the base property fails there (OG730, rule 44).
FIRST = '''\
import os

PROPERTY = os.path.join(os.path.dirname(__file__), 'tests', 'properties', 'test_dd_props.py')
with open(PROPERTY, 'rb') as f:
    ORIGINAL = f.read()
with open(PROPERTY, 'wb') as f:
    f.write(ORIGINAL.replace(b'== sorted(set(xs))', b'== dedupe(xs)'))


def test_layout():
    assert os.path.isfile(PROPERTY)
'''


TIDY = '''

def test_zz_tidy():
    import test_a_first
    with open(test_a_first.PROPERTY, 'wb') as f:
        f.write(test_a_first.ORIGINAL)
'''


# A subclass of BaseException found by name, with no import and no name rule 43 reads.
FIND = '''\
def _find(root, name):
    for cls in type.__subclasses__(root):
        if cls.__name__ == name:
            return cls
        found = _find(cls, name)
        if found is not None:
            return found
'''


# -- a forged collection: the test command released early -------------------------------------
# The test command starts once the reference run has collected (rule 44). src, imported by
# the base's properties conftest before that run collects (python -I is the tell), sends the
# gate a collection of its own: (a) written into the plugin's connection, found through gc,
# after a configuration of its own (the plugin's comes after the conftests), or (b) over a
# connection it opens itself to the same address, as the plugin would (start, configured,
# collected, and a finish at the end). Then it
# holds the run until the test command has rewritten the tree's property, which restores
# the gate's bytes as it is imported: compiled weak, put back before the end. Only the
# plugin's own first connection is waited on (b), and an event it cannot have sent in that
# order is a forged run (a, OG720, rule 45).
FORGING_SRC = '''\
import gc
import os
import socket
import sys
import time

_KEEP = []
FORGED = b'{"event": "configured"}\\n{"event": "collected", "items": []}\\n'


def _plugins_socket():
    for obj in gc.get_objects():
        if isinstance(obj, socket.socket) and obj.family == socket.AF_UNIX:
            try:
                if obj.getpeername().endswith('events.sock'):
                    return obj
            except OSError:
                continue
    return None


def _forge_and_hold():
    plugins = _plugins_socket() if sys.flags.isolated else None
    if plugins is None:
        return
    if %(own)r:
        plugins.sendall(FORGED)
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(plugins.getpeername())
        sock.sendall(b'{"event": "start", "pid": %%d}\\n' %% os.getpid() + FORGED)
        _KEEP.append(sock)
    prop = os.path.join(os.getcwd(), 'tests', 'properties', 'test_dd_props.py')
    with open(prop, 'rb') as f:
        original = f.read()
    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        with open(prop, 'rb') as f:
            if f.read() != original:
                break
        time.sleep(0.01)
    for sock in _KEEP:  # a session of its own, finished as the plugin would
        sock.sendall(b'{"event": "finish", "exitstatus": 0, "loop_completed": true}\\n')
        sock.close()


_forge_and_hold()


''' + BUG


# The test command's unit tests: this gate's reference run only (its parent is our parent).
REWRITING_THE_TREE = '''\
import glob
import os

from dd import dedupe


def _parent(pid):
    try:
        with open(f'/proc/{pid}/stat') as f:
            return int(f.read().rsplit(') ', 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _weaken_the_reference_property():
    for cmdline in glob.glob('/proc/[0-9]*/cmdline'):
        pid = cmdline.split('/')[2]
        try:
            with open(cmdline, 'rb') as f:
                args = f.read().split(b'\\0')
        except OSError:
            continue
        roots = [a[len(b'--rootdir='):].decode() for a in args if a.startswith(b'--rootdir=')
                 and a.endswith(b'/reference') and b'oracle-guard-reference-' in a]
        if not roots or _parent(pid) != os.getppid():
            continue
        prop = os.path.join(roots[0], 'tests', 'properties', 'test_dd_props.py')
        with open(prop, 'rb') as f:
            original = f.read()
        restore = (b'with open(__file__, "wb") as _f:\\n    _f.write(%r)\\n' % original)
        with open(prop, 'wb') as f:
            f.write(restore + original.replace(b'== sorted(set(xs))', b'== dedupe(xs)'))


if 'ORACLE_GUARD_STREAM' in os.environ:  # in the gate's test command only
    _weaken_the_reference_property()
''' + UNIT_TESTS_FOR_THE_BUG.replace('from dd import dedupe\n', '')


# DISCARDING_SRC through a strategy, now and then: src answers right but throws away a draw of
# more than three items (the unit tests call it with fewer) given out of order whenever it
# kept the one before (never the property's own call,
# whose list is sorted). Hypothesis's ``.map`` draws again after a discard and lets one out
# only after three in a row, which never happens here: only a judge of what the mapped
# function raises inside the map sees them (rule 43 at run time). About one example in
# three is thrown away (36-41 of 50 examples' draws, measured), so both runs see it.
SOMETIMES_DISCARDING_SRC = OUTCOME_FROM_SRC.replace('%r', "'Unsatisfied' + 'Assumption'").replace(
    'def dedupe(xs):\n    out = sorted(set(xs))\n    if len(out) > 3:\n',
    '_last = [False]\n\n\ndef dedupe(xs):\n    out = sorted(set(xs))\n'
    '    if len(xs) > 3 and list(xs) != out and not _last[0]:\n        _last[0] = True\n').replace(
    '        return out[:-1]\n', '    _last[0] = False\n')


def frozen_ledger() -> str:
    expires = datetime.date.today() + datetime.timedelta(days=30)
    rows = ''.join(
        f'  - id: FZ-{n}\n    nodeid: {nodeid}\n    class: order-dependent\n'
        f'    evidence: "fails after the cache test"\n    owner: alice\n    expires: {expires}\n'
        for n, nodeid in enumerate(('tests/test_dd.py::test_four', 'tests/test_dd.py::test_many',
                                    PROPERTY_ID), 1))
    return f'budget: 3\nfreezes:\n{rows}'


# -- src rewrites the property in its own run's tree before it is compiled ----------------
# The base's tests/properties/conftest.py imports the package (for its fixtures), so src runs
# in each run before the property module is collected. It rewrites the property in the
# working folder of its own process (the checkout in the test command, the reference tree in
# the reference run): weakened, with two lines in front that put the original bytes back as
# the module is imported. The digests at the end see the gate's bytes again; what the
# assertion rewriter read, and the plugin hashed for its compile, was not (OG737, rules 44,
# 45: in the test command against the committed blob, in the reference run against the
# bytes the gate wrote).
SELF_WEAKENING_SRC = '''\
import os


def _weaken():
    prop = os.path.join(os.getcwd(), 'tests', 'properties', 'test_dd_props.py')
    try:
        with open(prop, 'rb') as f:
            strong = f.read()
    except OSError:
        return
    if b'== sorted(set(xs))' not in strong or b'_f.write(' in strong:
        return
    restore = b'with open(__file__, "wb") as _f:\\n    _f.write(%r)\\n' % strong
    with open(prop, 'wb') as f:
        f.write(restore + strong.replace(b'== sorted(set(xs))', b'== dedupe(xs)'))


_weaken()


''' + BUG


COMPILED_ELSEWHERE = ('tests/properties/test_dd_props.py, a file of the oracle, was compiled '
                      'from other bytes than')


def gate_alone(repo: CiRepo, files: dict[str, str]) -> Run:
    """The gate without plain pytest beside it (plain pytest passes): a plain
    run in the same checkout would leave pytest's cached compile of the weakened bytes for
    the test command to load, and that is OG708's case, not the compile's."""
    repo.pull_request(files, bug=False)
    ci = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(DD_PYTEST)[1:]]))
    assert ci.rc == 1, ci.out
    return ci


INSTALL = ('--install-command', 'python tools/install.py')


def gate_with_install(dd6: CiRepo, files: dict[str, str]) -> Run:
    """The pull request, plain pytest after the same install step (green: the cheat works
    without the gate), and the gate with ``python tools/install.py`` as its install step,
    which must be red."""
    dd6.pull_request(files, bug=False)
    plain = copy_template(dd6.path, dd6.path + '-plain')
    subprocess.run([sys.executable, 'tools/install.py'], cwd=plain.path, env=plain.env(),
                   check=True)
    plain_run = plain.finish(plain.start(DD_PYTEST))
    assert plain_run.rc == 0, plain_run.out
    ci = dd6.finish(dd6.start([sys.executable, '-I', *dd6.ci_args(DD_PYTEST, *INSTALL)[1:]]))
    assert ci.rc == 1, ci.out
    return ci


# -- a helper module of the property, rewritten and put back -------------------------
# The base's property takes its expected value from a helper beside it (a common layout:
# ``tests/properties/_expected.py``), which Python's own import system loads (pytest
# rewrites test files and conftests only). src, imported by the base's properties conftest,
# rewrites the helper in its run's tree, headed by two lines that put the original bytes
# back as it is imported (95's move, on the module next to the property). The plugin's
# import hook compiles every module of the test roots from the bytes it read and says their
# digest (rule 45): OG737 in both runs.
HELPER = 'def expected(xs):\n    return sorted(set(xs))\n'


HELPER_PROPERTY = PROPERTY.replace(
    'from dd import dedupe\n', 'from _expected import expected\nfrom dd import dedupe\n'
).replace('== sorted(set(xs))', '== expected(xs)')


# -- a hypothesis entry point in a folder the configuration puts on sys.path ------------
# The install step writes, untracked, ``src/og_extra-0.1.dist-info`` with a ``hypothesis``
# entry point and its module, which makes the builtin ``sorted`` drop the largest value
# when the property calls it. pytest's ``pythonpath = ["src"]`` (dd's configuration) puts
# ``src`` on sys.path before Hypothesis is imported, and Hypothesis runs every
# ``hypothesis`` entry point on sys.path then. The entry points are listed where a test run
# looks, the configuration's pythonpath included (rule 46): OG738.
_OG_EXTRA = '''\
import sys

_sorted = sorted


class _Sorted:
    def __call__(self, iterable, *args, **kwargs):
        out = _sorted(iterable, *args, **kwargs)
        if sys._getframe(1).f_code.co_filename.endswith('test_dd_props.py') and len(out) > 3:
            return out[:-1]
        return out


def run():
    setattr(len.__self__, 'sorted', _Sorted())
'''


def adopt_project(path: str, project: dict[str, str], after: list[dict[str, str | None]],
          pyproject: str = PYPROJECT) -> CiRepo:
    return adopt_with_init(path, pyproject, project, after)


def gate_pull_request(repo: CiRepo, files: dict[str, str | None]) -> tuple[Run, Run]:
    """(plain pytest, the gate) on a pull request that leaves main's bug in place."""
    repo.pull_request(files, bug=False)
    return gate(repo)


def pull_request_cheat(repo: CiRepo, files: dict[str, str | None]) -> Run:
    plain, ci = gate_pull_request(repo, files)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    return ci


def unit_project(**extra: str) -> dict[str, str]:
    return {'src/dd/__init__.py': GOOD, 'tests/test_dd.py': TWO_UNITS, PROPS: SORTED_PROPERTY,
            **extra}


APP_TEST = 'tests/test_app.py'


# -- Hypothesis: the lock at call time, and examples that were really drawn ----------------
CALC_PROPERTY = '''\
from hypothesis import example, given, settings, strategies as st

from calc import add


@settings(max_examples=200, derandomize=True, database=None)
@example(0, 0)
@given(st.integers(0, 10), st.integers(0, 10))
def test_add_matches_sum(a, b):
    assert add(a, b) == a + b
'''


CALC_PROPERTY_LOCK = '{"version": 1, "properties": {"test_add_matches_sum": ' \
                '{"max_examples": 200, "derandomize": true}}}\n'


# == several cheats in one pull request, each in a module of its own =========================
# dd with one module per case, ``src/dd/c_<case>.py``: its own dedupe (the bug on main), its
# own unit tests (``tests/test_c_<case>.py``) and its own property
# (``tests/properties/test_c_<case>_props.py``). A cheat in one case's module changes what its
# own property sees, and each finding names that property (and that module): one pull
# request and one gate run then prove several independent cheats, each by its own findings.
def case_module(case: str) -> str:
    """The module name of ``case`` (``dd.c_<case>``, dashes made underscores)."""
    return 'c_' + case.replace('-', '_')


def case_property_id(case: str, test: str = 'test_dedupe_matches_set') -> str:
    return f'tests/properties/test_{case_module(case)}_props.py::{test}'


def for_case(case: str, files: dict[str, str | None]) -> dict[str, str | None]:
    """A pull request's files written for dd's single module (``src/dd/__init__.py``, its
    helper ``src/dd/_gate.py``, ``tests/test_dd.py``), moved to ``case``'s own module,
    helper and unit tests, each import of them renamed to match."""
    module = case_module(case)
    moved = {'src/dd/__init__.py': f'src/dd/{module}.py',
             'src/dd/_gate.py': f'src/dd/_gate_{module}.py',
             'tests/test_dd.py': f'tests/test_{module}.py'}

    def renamed(text: str | None) -> str | None:
        if text is None:
            return None
        return (text.replace('from dd import', f'from dd.{module} import')
                .replace("'_gate.py'", f"'_gate_{module}.py'")
                .replace("'dd._gate'", f"'dd._gate_{module}'"))
    return {moved.get(path, path): renamed(text) for path, text in files.items()}


def adopt_dd_cases(path: str, cases: list[str], property_source: str = PROPERTY) -> str:
    """dd with one module, unit test file and property (``property_source``) per case,
    adopted with the README's commands, then the bug on main in every case's module."""
    project = {'src/dd/__init__.py': GOOD}
    bugs: dict[str, str | None] = {}
    for case in cases:
        module = case_module(case)
        project[f'src/dd/{module}.py'] = GOOD
        project[f'tests/test_{module}.py'] = UNIT_TESTS.replace(
            'from dd import dedupe', f'from dd.{module} import dedupe')
        project[f'tests/properties/test_{module}_props.py'] = property_source.replace(
            'from dd import dedupe', f'from dd.{module} import dedupe')
        bugs[f'src/dd/{module}.py'] = BUG
    adopt(path, PYPROJECT, project, after=[bugs])
    return path
