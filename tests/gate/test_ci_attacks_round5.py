"""The gate played as a cheating agent against the newest mechanisms (benchmarks/ATTACKS.md,
attacks 94-100): the test command released on the plugin's own collection (rule 45), the
discard judge over the whole Hypothesis test case (OG717, rule 43 at run time), the child
subreaper (OG718, rule 45) and the digests of the evidence runs' trees (OG734, rules 48,
49). What the gate catches.

The repository is the one of ``test_ci_attacks_round3.py``: ``dd`` adopted with
``oracle-guard init``, then the bug on ``main`` (``dedupe`` drops the largest value past
three distinct ones). The attacks that get through are described in ATTACKS.md and
reproduced by benchmarks/attacks_open/round5.py, not written here: this file asserts only
what the gate catches. Every attacker touches only processes whose parent is its own gate
and files in that gate's trees.
"""
from __future__ import annotations

import datetime
import os
import subprocess
import sys

import pytest

from ci_repo import CiRepo
from ci_repo import Run
from ci_repo import copy_template
from ci_repo import git
from oracle_guard.gate.processes import Reaper
from oracle_guard.gate.sealed import entry_points_in
from test_ci_attacks import BUG
from test_ci_attacks import GOOD
from test_ci_attacks import PROPERTY_ID
from test_ci_attacks import PYTEST
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG
from test_ci_attacks_round3 import adopt_dd
from test_ci_attacks_round3 import attack
from test_ci_attacks_round3 import dd  # noqa: F401 -- the fixture
from test_ci_attacks_round3 import PROPERTIES_CONFTEST
from test_ci_attacks_round3 import SMALL_UNIT_TESTS
from test_ci_attacks_round3 import template  # noqa: F401 -- the fixture
from test_ci_attacks_round4 import FIND
from test_ci_attacks_round4 import FIRST
from test_ci_attacks_round4 import FORGING_SRC
from test_ci_attacks_round4 import REWRITING_THE_TREE
from test_ci_attacks_round4 import TIDY

# -- a daemon the pull request's code detaches to race the new-test run ----------------
# The project asks every new test to fail against the base revision's src (require-fail-to-
# pass, rule 49). The pull request fixes the bug and adds a test that does not test the fix;
# a helper, detached the classic way (fork, setsid, fork again: no parent, no session, no
# process group of the step), waits for the new-test run's tree, which is written after the
# test command and the reference run have ended, to make the new test fail there. Started
# by a test module of the test command, it is re-parented to the gate (a child subreaper on
# Linux) and killed, with OG718, before the evidence runs start; the new test then passes
# against the base (OG736). (The same daemon started by src in the reference run before it
# has collected gets through: ATTACKS.md, attack 97.)
DAEMON = r'''
import os
import time


def _children(pid):
    found = []
    try:
        for task in os.listdir('/proc/%d/task' % pid):
            with open('/proc/%d/task/%s/children' % (pid, task)) as f:
                found += f.read().split()
    except OSError:
        pass
    return found


def _race_the_new_test_run(gate):
    """Fail the new test in the new-test run's tree (a child of this gate, in 'new-tests')."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and os.path.exists('/proc/%d' % gate):
        for pid in _children(gate):
            try:
                tree = os.readlink('/proc/%s/cwd' % pid)
            except OSError:
                continue
            if os.path.basename(tree) == 'new-tests':
                path = os.path.join(tree, 'tests', 'test_new.py')
                with open(path, 'rb') as f:
                    original = f.read()
                with open(path, 'wb') as f:  # failing, and put back as it is imported
                    f.write(b'with open(__file__, "wb") as _f:\n    _f.write(%r)\n' % original
                            + original.replace(b'== [1, 2]', b'== [2, 1]'))
                return
        time.sleep(0.01)


def daemonize():
    gate = os.getppid()  # this gate only: the test command and the reference run are its children
    first = os.fork()
    if first:
        os.waitpid(first, 0)  # the middle process ends at once
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 4096)  # pytest's files and its connection to the gate stay with it
        _race_the_new_test_run(gate)
    finally:
        os._exit(0)
'''
NEW_TEST = '''\
from dd import dedupe


def test_dedupe_keeps_a_sorted_pair():
    assert dedupe([1, 2]) == [1, 2]
'''
# A test module of the test command (the gate names its stream in the environment); the
# new-test run imports it too, where it does nothing.
DETACHING_TEST = ("import os\n\nimport _daemon\n\n"
                  "if 'ORACLE_GUARD_STREAM' in os.environ and "
                  "os.path.basename(os.getcwd()) != 'new-tests':\n"
                  "    _daemon.daemonize()\n\n\n" + NEW_TEST.replace(
                      'from dd import dedupe\n', 'from dd import dedupe  # noqa: E402\n'))


@pytest.fixture(scope='module')
def strict(tmp_path_factory: pytest.TempPathFactory) -> str:
    """dd adopted, then ``require-fail-to-pass = true`` on main (rule 49)."""
    path = adopt_dd(str(tmp_path_factory.mktemp('strict') / 'repo'))
    pyproject = os.path.join(path, 'pyproject.toml')
    with open(pyproject, encoding='utf-8') as f:
        text = f.read()
    with open(pyproject, 'w', encoding='utf-8') as f:
        f.write(text.replace('[tool.oracle-guard]\n',
                             '[tool.oracle-guard]\nrequire-fail-to-pass = true\n'))
    git(path, 'commit', '-q', '-am', 'new tests must fail without their change')
    return path


def test_a_daemon_racing_the_new_test_run_is_killed_before_it_starts(
        strict: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(strict, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'tests/_daemon.py': DAEMON, 'tests/test_new.py': DETACHING_TEST,
                          'src/dd/__init__.py': GOOD}, plain_rc=0)
    assert any('the test command (or the reference run beside it) left 1 process(es) '
               'running after it ended' in line for line in ci.lines('OG718')), ci.out
    assert any('tests/test_new.py::test_dedupe_keeps_a_sorted_pair passes against the '
               "base revision's src/ too" in line for line in ci.lines('OG736')), ci.out


# -- a collection forged in the plugin's order ---------------------------------------
# src, imported by the base's properties conftest, adds an audit hook; when the reference
# run's main thread opens the tree's property to compile it (the plugin has sent its
# configured by then), the hook writes a collection into the plugin's connection (found
# through gc) and waits for the test command, released, to rewrite the file. The plugin's
# own collection then is a second one in that stream (OG720, rule 45). (The same hook
# sending a begin instead gets through: ATTACKS.md, attack 98.)
# round 4's finder of the plugin's connection to the gate (gc, an AF_UNIX socket).
PLUGINS_SOCKET = FORGING_SRC[FORGING_SRC.index('def _plugins_socket'):
                             FORGING_SRC.index('def _forge_and_hold')]
FORGING_IN_ORDER = '''\
import gc
import socket
import sys
import time

_SENT = []


''' + PLUGINS_SOCKET + '''
def _hook(event, args):
    if event != 'open' or _SENT or not isinstance(args[0], str) or \\
            not args[0].endswith('test_dd_props.py') or 'oracle-guard-reference-' not in args[0]:
        return
    _SENT.append(args[0])
    plugins = _plugins_socket()
    if plugins is None:
        return
    plugins.sendall(b'{"event": "collected", "items": []}\\n')
    with open(args[0], 'rb') as f:
        original = f.read()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with open(args[0], 'rb') as f:
            if f.read() != original:
                break
        time.sleep(0.01)


if sys.flags.isolated:
    sys.addaudithook(_hook)


''' + BUG


@pytest.fixture(scope='module')
def with_properties_conftest(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt_dd(str(tmp_path_factory.mktemp('in-order') / 'repo'),
                    {'tests/properties/conftest.py': PROPERTIES_CONFTEST})


def test_a_collection_forged_in_the_plugins_order_is_a_second_collection(
        with_properties_conftest: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(with_properties_conftest, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'src/dd/__init__.py': FORGING_IN_ORDER,
                          'tests/test_dd.py': REWRITING_THE_TREE}, plain_rc=1)
    assert any('reference run: forged run: stream-1 sent 2 collected events' in line
               for line in ci.lines('OG720')), ci.out


# -- 96c's caught form: Hypothesis's folder moved ---------------------------------------------
# The discard judge takes a frame for Hypothesis's when its file is in the folder of
# ``hypothesis.__file__``. src points that at the checkout (the folder above src/), so its
# own frames count as Hypothesis's. Where the test environment lies outside the checkout, Hypothesis's real frames then count as foreign, and its own StopTest at the
# end of a test case is "not raised by Hypothesis": OG717 in both runs. (With the test
# environment inside the checkout, a `.venv` or `.tox`, the same move hides every discard:
# ATTACKS.md, attack 96c, open.)
REPOINTED_SRC = 'import os\nimport sys\n\n\n' + FIND + '''

_hyp = sys.modules.get(_find(BaseException, 'Unsatisfied' + 'Assumption').__module__.split('.')[0])
_hyp.__file__ = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'x.py')


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3:
        raise _find(BaseException, 'Unsatisfied' + 'Assumption')()
    return out
'''


def test_hypothesis_folder_moved_by_src_does_not_hide_its_discards(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    _, ci = attack(dd, {'src/dd/__init__.py': REPOINTED_SRC,
                        'tests/test_dd.py': SMALL_UNIT_TESTS}, plain_rc=0)
    assert any(PROPERTY_ID in line for line in ci.lines('OG717')), ci.out
    assert any('reference run: OG717' in line and PROPERTY_ID in line
               for line in ci.lines('OG734')), ci.out


# -- 100: the flip a freeze needs, forged by src in the reruns (rule 48) ---------------------
# The three failing tests frozen as order-dependent, the budget raised: an oracle change that
# needs a person's approval, who reads the freeze's measured evidence in the review report.
# src answers right in every other rerun (the rerun loads oracle_guard.runtime.unfrozen; a
# counter in the gate's temporary folder, beside the rerun's tree), so each frozen test
# "passed 3 and failed 2 of 5 reruns": a flake, not a bug. A person approved the oracle change (--oracle-approved),
# but the ledger and src changed together: rule 11 (OG201, and OG515 for the budget).
FLIPPING_SRC = '''\
import os
import sys


def _in_a_rerun():
    return any(name.startswith('oracle_guard.') and name.endswith('.unfrozen')
               for name in list(sys.modules))


def _flip():
    path = os.path.join(os.path.dirname(os.getcwd()), 'dd-flip')  # beside the rerun's tree
    try:
        with open(path) as f:
            count = int(f.read() or 0)
    except (OSError, ValueError):
        count = 0
    with open(path, 'w') as f:
        f.write(str(count + 1))
    return count % 2 == 0


_RIGHT = _in_a_rerun() and _flip()


def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3 and not _RIGHT:
        return out[:-1]
    return out
'''


def frozen_ledger() -> str:
    expires = datetime.date.today() + datetime.timedelta(days=30)
    rows = ''.join(
        f'  - id: FZ-{n}\n    nodeid: {nodeid}\n    class: order-dependent\n'
        f'    evidence: "fails after the cache test"\n    owner: alice\n    expires: {expires}\n'
        for n, nodeid in enumerate(('tests/test_dd.py::test_four', 'tests/test_dd.py::test_many',
                                    PROPERTY_ID), 1))
    return f'budget: 3\nfreezes:\n{rows}'


def test_a_flip_forged_by_src_for_approved_freezes_fails_ci_by_rule_11(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'src/dd/__init__.py': FLIPPING_SRC,
                     'tests/freeze_ledger.yaml': frozen_ledger()}, bug=False)
    plain = dd.finish(dd.start(PYTEST))
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(PYTEST, '--oracle-approved')[1:]]))
    assert plain.rc == 0, plain.out  # the three failing tests frozen
    assert ci.rc == 1, ci.out
    assert any('src/dd/__init__.py' in line for line in ci.lines('OG201')), ci.out
    assert any('budget raised from 0 to 3' in line for line in ci.lines('OG515')), ci.out


# -- 94: the install step replaces the base property's blob (git replace) ----------------------
# The change rules read the change before the install step; the reference tree, the
# inventory and the twins are read from git objects after it, with the pull request's own
# .git. `git replace` makes every git command (cat-file --batch too) answer the base
# property's blob id with a weakened copy; the checkout's file gets the same bytes for the
# test command. Nothing is left running; no file of the tree changes while its run goes on.
REPLACING_INSTALL = r'''import subprocess

PROP = 'tests/properties/test_dd_props.py'


def git(*args, data=None):
    return subprocess.run(('git',) + args, input=data, capture_output=True,
                          check=True).stdout.decode().strip()


with open(PROP, 'rb') as f:
    strong = f.read()
weak = strong.replace(b'== sorted(set(xs))', b'== dedupe(xs)')
git('replace', '-f', git('rev-parse', 'HEAD:' + PROP),
    git('hash-object', '-w', '--stdin', data=weak))
with open(PROP, 'wb') as f:  # what the test command collects
    f.write(weak)
'''


def install_step_attack(repo: CiRepo, install: str) -> Run:
    """The pull request's install step is ``install`` (its own script) and the unit tests are
    rewritten to the bug: the gate, run with that install step, exits 1."""
    repo.pull_request({'tools/install.py': install,
                       'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, bug=False)
    ci = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(
        PYTEST, '--install-command', 'python tools/install.py')[1:]]))
    assert ci.rc == 1, ci.out
    return ci


def test_a_replacement_object_written_by_the_install_step_is_not_read_by_the_gate(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    # Attack 94, closed: every git process of the gate runs with GIT_NO_REPLACE_OBJECTS, so
    # the reference tree holds the base property's real bytes (OG730, rule 44).
    ci = install_step_attack(dd, REPLACING_INSTALL)
    assert any(PROPERTY_ID in line and 'failed against your src/' in line
               for line in ci.lines('OG730')), ci.out


# -- 98: the test command released by a forged begin, in the plugin's order --------------------
# The gate releases the test command on the reference process's first connection once it has
# seen the plugin's configured, then a collected or a begin (what an xdist controller sends).
# src, imported by the base's properties conftest, adds an audit hook: when the main thread
# opens the tree's property to compile it (after the plugin's configured), it sends a begin
# into the plugin's connection (found through gc) and waits until the test command has
# rewritten the file (self-restoring as it is imported: round 4's REWRITING_THE_TREE). The
# test command's own run is fooled by attack 93's root test module.
RELEASING_SRC = FORGING_IN_ORDER.replace(
    "b'{\"event\": \"collected\", \"items\": []}\\n'",
    "b'{\"event\": \"begin\", \"nodeid\": \"tests/properties/test_dd_props.py::'\n"
    "                    b'test_dedupe_matches_set\"}\\n'").replace(
    'time.monotonic() + 5', 'time.monotonic() + 20')
assert RELEASING_SRC != FORGING_IN_ORDER


def test_a_test_begun_before_the_collection_is_a_forged_run(
        with_properties_conftest: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Attack 98, closed: the forged begin releases the test command, but a test begun before
    # its process's collection is a contradiction in the stream (OG720, rule 45).
    repo = copy_template(with_properties_conftest, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'src/dd/__init__.py': RELEASING_SRC, 'test_a_first.py': FIRST,
                          'tests/test_dd.py': REWRITING_THE_TREE + TIDY}, plain_rc=0)
    assert any('began a test before its collection' in line for line in ci.lines('OG720')), \
        ci.out


# -- 95: src rewrites the property in its own run's tree before it is compiled ----------------
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
    """The gate without plain pytest beside it (plain pytest passes: ATTACKS.md): a plain
    run in the same checkout would leave pytest's cached compile of the weakened bytes for
    the test command to load, and that is OG708's case, not the compile's."""
    repo.pull_request(files, bug=False)
    ci = repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(PYTEST)[1:]]))
    assert ci.rc == 1, ci.out
    return ci


def test_a_property_rewritten_before_its_compile_and_put_back_fails_ci(
        with_properties_conftest: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(with_properties_conftest, str(tmp_path / 'repo'))
    ci = gate_alone(repo, {'src/dd/__init__.py': SELF_WEAKENING_SRC,
                           'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    compiled = ci.lines('OG737')
    assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' +
                               COMPILED_ELSEWHERE + ' its committed bytes')
               for line in compiled), ci.out
    assert any('reference run: ' + COMPILED_ELSEWHERE + ' the bytes the gate wrote' in line
               for line in compiled), ci.out


# -- 95b: the same, run by the project's own `hypothesis` entry point ----------------------
# Hypothesis runs every function registered under the "hypothesis" entry-point group when it
# is imported (meant for register_type_strategy). The base's properties conftest imports only
# Hypothesis (a profile). The pull request ships package metadata under src/ (on sys.path in
# both runs, as an install step's dist-info would be in the test environment) whose entry
# point rewrites the property before it is compiled. The entry point is a finding of the
# change (OG738, rule 46), and what was compiled is OG737 in both runs.
PROFILE_CONFTEST = ("from hypothesis import settings\n\n"
                    "settings.register_profile('ci', deadline=None)\n")
# src whose rewrite runs only when the entry point calls it (not at its import)
ENTRY_POINT_SRC = SELF_WEAKENING_SRC.replace('\n_weaken()\n', '')
assert ENTRY_POINT_SRC != SELF_WEAKENING_SRC
ENTRY_POINT_METADATA = {
    'src/dd-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: dd\nVersion: 1.0\n',
    'src/dd-1.0.dist-info/entry_points.txt': '[hypothesis]\ndd = dd:_weaken\n',
}


@pytest.fixture(scope='module')
def with_profile_conftest(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt_dd(str(tmp_path_factory.mktemp('profile') / 'repo'),
                    {'tests/properties/conftest.py': PROFILE_CONFTEST})


def test_a_hypothesis_entry_point_that_rewrites_the_property_fails_ci(
        with_profile_conftest: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(with_profile_conftest, str(tmp_path / 'repo'))
    ci = gate_alone(repo, {'src/dd/__init__.py': ENTRY_POINT_SRC, **ENTRY_POINT_METADATA,
                           'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    assert any(line.startswith('src/dd-1.0.dist-info/entry_points.txt:1:1: OG738 ') and
               'entry point in the hypothesis group (dd = dd:_weaken)' in line
               for line in ci.lines('OG738')), ci.out
    compiled = ci.lines('OG737')
    assert any('reference run: ' + COMPILED_ELSEWHERE in line for line in compiled), ci.out
    assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' +
                               COMPILED_ELSEWHERE) for line in compiled), ci.out



@pytest.mark.parametrize(('path', 'text', 'entries'), [
    ('pyproject.toml', '[project]\nname = "dd"\n\n[project.entry-points.pytest11]\n'
     'dd = "dd.plugin"\n\n[project.scripts]\ndd = "dd:main"\n',
     {('pytest11', 'dd = dd.plugin')}),
    ('pyproject.toml', '[tool.poetry.plugins."hypothesis"]\ndd = "dd:_weaken"\n',
     {('hypothesis', 'dd = dd:_weaken')}),
    ('setup.cfg', '[options]\ninstall_requires =\n    hypothesis\n[options.entry_points]\n'
     'console_scripts =\n    dd = dd:main\nhypothesis =\n    dd = dd:_weaken\n',
     {('hypothesis', 'dd = dd:_weaken')}),
    ('setup.py', 'from setuptools import setup\nsetup(install_requires=["hypothesis"], '
     'entry_points={"pytest11": ["dd = dd.plugin"]})\n', {('pytest11', 'dd = dd.plugin')}),
    ('setup.py',
     'from setuptools import setup\nsetup(entry_points="[hypothesis]\\nx = dd:f\\n")\n',
     {('hypothesis', 'x = dd:f')}),
    ('pkg-1.0.dist-info/entry_points.txt', '[console_scripts]\ndd = dd:main\n', set()),
])
def test_the_entry_points_of_pytest_and_hypothesis_are_read_where_they_are_declared(
        path: str, text: str, entries: set[tuple[str, str]]) -> None:
    # Rule 46 (OG738): the forms a change may declare a pytest11 or hypothesis entry point in;
    # a dependency on hypothesis and a console script are none.
    assert entry_points_in(path, text.encode()) == entries


# -- 97: a daemon src detaches in the reference run before it has collected ----------------
# src (in the reference run only: python -I) detaches the DAEMON above at import, while the
# base's property module imports dd: the helper is re-parented to the gate before the test
# command starts (it waits for the reference run's collection). The test command's leftovers
# and the reference run's are judged against one mark taken before the reference run starts
# (the reference process spared by its pid): the helper is killed before the new-test run
# (OG718), and the new test passes against the base (OG736, rule 49).
DAEMON_SRC = ('import sys\n\nfrom dd import _daemon\n\nif sys.flags.isolated:\n'
              '    _daemon.daemonize()\n\n\n' + GOOD)


def test_a_daemon_the_reference_run_detaches_before_its_collection_is_killed(
        strict: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(strict, str(tmp_path / 'repo'))
    _, ci = attack(repo, {'src/dd/_daemon.py': DAEMON, 'src/dd/__init__.py': DAEMON_SRC,
                          'tests/test_new.py': NEW_TEST}, plain_rc=0)
    assert any('the test command (or the reference run beside it) left 1 process(es) '
               'running after it ended: ' in line and line.endswith('; the gate killed them')
               for line in ci.lines('OG718')), ci.out
    assert any('tests/test_new.py::test_dedupe_keeps_a_sorted_pair passes against the '
               "base revision's src/ too" in line for line in ci.lines('OG736')), ci.out


# -- 97b: what still runs when the gate's steps are done ----------------------------------
# A daemon that waits for the gate's exit outlived it: nothing killed the gate's children at
# its end. Now the gate's last sweep (before the verdict) kills every child still running
# and says so (OG718), and leaving the Reaper kills what is left on any other way out.
def _detach(folder: str) -> int:
    """A process detached the shell way (its parent ends at once): the reaper's child now."""
    pidfile = os.path.join(folder, 'pid')
    subprocess.run(['sh', '-c', f'sleep 600 >/dev/null 2>&1 & echo $! > {pidfile}'],
                   check=True)
    with open(pidfile, encoding='utf-8') as f:
        return int(f.read())


def test_what_still_runs_when_the_gates_steps_are_done_is_killed_and_said(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    with Reaper() as reaper:
        assert reaper.active  # Linux: the gate is a child subreaper
        pid = _detach(str(tmp_path))
        found = reaper.leftovers(reaper.start, 'a step of the gate', grace=0.0)
    assert [f.code for f in found] == ['OG718'], found
    # (its command line may still be the shell's: it is named as it is when the gate looks)
    assert f'a step of the gate left 1 process(es) running after it ended: {pid} (' \
        in found[0].message
    assert not os.path.exists(f'/proc/{pid}')  # killed and reaped


def test_leaving_the_reaper_kills_what_a_step_left(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    with Reaper():
        pid = _detach(str(tmp_path))
    assert not os.path.exists(f'/proc/{pid}')


# -- 94's variant: the install step rewrites the base property's loose object in place ------
# git does not check an object's bytes against its name when it reads it: the install step
# writes the weakened property, zlib-compressed, over the loose object file of the property's
# blob (the same at base and HEAD), and the same bytes into the checkout. The gate lists both
# revisions' blob ids before the install step and checks every blob a tree is built from
# against them (OG734, rule 44); the test command compiled other bytes than the committed
# ones (OG737). (A different object under the same name in objects/info/alternates is read
# the same way and checked the same way.)
REWRITING_THE_OBJECT = r'''import os
import subprocess
import zlib

PROP = 'tests/properties/test_dd_props.py'
oid = subprocess.run(['git', 'rev-parse', 'HEAD:' + PROP], capture_output=True, check=True,
                     text=True).stdout.strip()
loose = os.path.join('.git', 'objects', oid[:2], oid[2:])
with open(PROP, 'rb') as f:
    weak = f.read().replace(b'== sorted(set(xs))', b'== dedupe(xs)')
os.chmod(loose, 0o644)  # raises if the blob is not a loose object: the scenario needs one
with open(loose, 'wb') as f:
    f.write(zlib.compress(b'blob %d\0' % len(weak) + weak))
with open(PROP, 'wb') as f:  # what the test command collects
    f.write(weak)
'''


def test_a_loose_object_rewritten_in_place_by_the_install_step_is_not_the_blob(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    ci = install_step_attack(dd, REWRITING_THE_OBJECT)
    assert any('reference run: git gave other bytes for `tests/properties/test_dd_props.py` '
               'than the blobs the revisions named' in line for line in ci.lines('OG734')), \
        ci.out
    assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' +
                               COMPILED_ELSEWHERE + ' its committed bytes')
               for line in ci.lines('OG737')), ci.out
