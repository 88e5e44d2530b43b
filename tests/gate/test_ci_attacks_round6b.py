"""The attacks of round 6 that got past the gate (benchmarks/ATTACKS.md, 103, 103b, 105,
105b, 105c), now caught: a fork chain the sweeps missed (OG718, rule 45) and the entry
points the install step writes into the test environment (OG738, rule 46).

A fork chain: a detached process whose every generation forks and ends at once, so that
each child is re-parented to the gate (a child subreaper on Linux) and forks again. A sweep
that lists the gate's children and then reads each one's state found, at almost every look,
only a generation that had ended already; one empty look ended it with nothing to say. The
sweep now counts such a child as still running, ends early only after several empty looks
in a row, and past its grace stops each child as soon as it is listed, then kills it.

The sweep is played in-process first (this process is the subreaper, as the gate is), with
chains that fork only under this test's process and end when it has gone; one gate scenario
plays the chain at every step boundary of a real ``oracle-guard ci`` run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import venv

import pytest

import oracle_guard

from ci_repo import build_template
from ci_repo import copy_template
from oracle_guard.gate.installed_plugins import EntryPoint
from oracle_guard.gate.installed_plugins import Installed
from oracle_guard.gate.installed_plugins import judged
from oracle_guard.gate.integrity_probe import entry_points as probe_entry_points
from oracle_guard.gate.integrity_probe import requirements as probe_requirements
from oracle_guard.gate.processes import Reaper
from oracle_guard.gate.sealed import COMPUTED
from oracle_guard.gate.sealed import entry_points_in
from test_ci_attacks import GOOD
from test_ci_attacks import PYTEST
from test_ci_attacks_round3 import adopt_dd
from test_ci_integrity import install
from test_ci_integrity import site_packages

# -- 105: the chain, against the sweep alone -------------------------------------------------
# Detached the classic way (the caller's child forks and ends: the chain's first generation
# is re-parented to the subreaper), in a session of its own whose id it writes to a file;
# then fork, and end at once, until the process named on its command line has gone (or a
# minute has passed). Every generation keeps the session id: a process of the chain still
# running is a process of that session.
CHAIN = r'''
import os
import sys
import time

owner, sidfile = int(sys.argv[1]), sys.argv[2]
if os.fork():
    os._exit(0)
os.setsid()
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
with open(sidfile + '.part', 'w') as f:
    f.write(str(os.getpid()))
os.rename(sidfile + '.part', sidfile)
deadline = time.monotonic() + 60
generation = 0
while True:
    if os.fork():
        os._exit(0)  # the parent ends at once; its child is re-parented to the subreaper
    generation += 1
    if generation % 256 == 0 and (not os.path.exists('/proc/%d' % owner) or
                                  time.monotonic() > deadline):
        os._exit(0)
'''


def start_chain(folder: str) -> int:
    """Start the chain under this process; its session id once it forks."""
    sidfile = os.path.join(folder, 'chain-sid')
    subprocess.run([sys.executable, '-c', CHAIN, str(os.getpid()), sidfile], check=True)
    for _ in range(3000):  # until the chain has written it (at most a minute)
        if os.path.exists(sidfile):
            with open(sidfile, encoding='utf-8') as f:
                return int(f.read())
        time.sleep(0.02)
    raise AssertionError('the chain did not start')


def running_in_session(sid: int) -> list[int]:
    """The processes of session ``sid`` that have not ended."""
    found = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open(f'/proc/{name}/stat', 'rb') as f:
                fields = f.read().rsplit(b')', 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] not in (b'Z', b'X'):
            found.append(int(name))
    return found


@pytest.fixture
def reaper():  # type: ignore[no-untyped-def]
    with Reaper() as reaper:
        if not reaper.active:  # pragma: no cover -- the suite runs on Linux
            raise AssertionError('no child subreaper on this system')
        yield reaper


@pytest.mark.parametrize('grace', [0.5, 0.0], ids=['with-grace', 'no-grace'])
def test_a_fork_chain_is_found_and_stopped_by_the_sweep(
        reaper: Reaper, tmp_path, grace: float) -> None:  # type: ignore[no-untyped-def]
    # Rule 45 (OG718): the old sweep found nothing in 6 of 6 trials and the chain did its
    # work after it (ATTACKS.md, 105sweep).
    sid = start_chain(str(tmp_path))
    found = reaper.leftovers(reaper.start, 'a step of the gate', grace=grace)
    assert [f.code for f in found] == ['OG718'], found
    assert found[0].message.startswith('a step of the gate left '), found[0].message
    assert found[0].message.endswith('; the gate killed them'), found[0].message
    assert running_in_session(sid) == []  # stopped when the sweep returns, not later


def test_leaving_the_reaper_says_what_it_kills(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Rule 45: the Reaper's own sweep on the way out kills a chain that outlived every
    # reported sweep, and says so (``late``: the gate prints it and fails).
    with Reaper() as reaper:
        sid = start_chain(str(tmp_path))
    assert [f.code for f in reaper.late] == ['OG718'], reaper.late
    assert running_in_session(sid) == []


# Seen while closing 105: a process whose first thread ends (``pthread_exit``) while its
# others run on shows as a zombie in ``/proc/PID/stat``; the old sweep took it for ended.
FIRST_THREAD_ENDS = r'''
import ctypes
import os
import sys
import threading
import time

owner = int(sys.argv[1])
if os.fork():
    os._exit(0)  # detached: the subreaper's child now


def run_on():
    while os.path.exists('/proc/%d' % owner):
        time.sleep(0.05)


threading.Thread(target=run_on).start()
ctypes.CDLL(None).pthread_exit(None)
'''


def test_a_process_whose_first_thread_ended_is_still_running(
        reaper: Reaper) -> None:
    subprocess.run([sys.executable, '-c', FIRST_THREAD_ENDS, str(os.getpid())], check=True)
    found = reaper.leftovers(reaper.start, 'a step of the gate', grace=0.2)
    assert [f.code for f in found] == ['OG718'], found
    assert '(its first thread ended, the others ran on); the gate killed them' in \
        found[0].message, found[0].message
    assert reaper.mark() == reaper.start  # killed and reaped


def _detach(script: str) -> None:
    subprocess.run(['sh', '-c', f'({script}) >/dev/null 2>&1 &'], check=True)


def test_an_honest_straggler_that_ends_within_the_grace_is_no_finding(
        reaper: Reaper) -> None:
    # The control: a process a step detaches that ends on its own within the grace (here
    # one that has ended already, a zombie of the subreaper, and one still running a short
    # while) is reaped, not reported.
    _detach('true')
    _detach('sleep 0.3')
    assert reaper.leftovers(reaper.start, 'a step of the gate') == []
    assert reaper.leftovers(reaper.start, 'a step of the gate', grace=0.0) == []


# -- 105, 105b, 105c: the chain at every step boundary of the gate ---------------------------
# The pull request fixes the bug (nothing else to catch) and starts a chain in every step its
# code runs in: the install step (``tools/install.py``, standing for a ``setup.py`` that
# ``pip install -e .`` runs: 105c), a test module of the test command (105, 105b), and src in
# the reference run (``python -I``: 97's trigger). Each chain finds its gate among its
# parents, writes its session id into a folder named by the gate's pid, and forks until
# that gate has gone. Each step's sweep finds its chain and stops it: OG718.
CHAIN_MODULE = r'''import os
import tempfile
import time


def _gate():
    """The parent (the gate runs the test command and the reference run), or the shell's
    parent (the install command runs in a shell)."""
    pid = os.getppid()
    with open('/proc/%d/comm' % pid) as f:
        if f.read().strip() in ('sh', 'dash', 'bash'):
            with open('/proc/%d/stat' % pid, 'rb') as g:
                pid = int(g.read().rsplit(b')', 1)[1].split()[1])
    with open('/proc/%d/cmdline' % pid, 'rb') as f:
        return pid if b'\0ci\0' in f.read() else None  # not under a gate: plain pytest


def start(label):
    gate = _gate()
    if gate is None:
        return
    first = os.fork()
    if first:
        os.waitpid(first, 0)  # the first generation forks and ends at once
        return
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 4096)
        folder = os.path.join(tempfile.gettempdir(), 'og-chains-%d' % gate)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, label), 'w') as f:
            f.write(str(os.getpid()))
        deadline = time.monotonic() + 60
        generation = 0
        while True:
            if os.fork():
                os._exit(0)  # the parent ends at once; its child re-parents to the gate
            generation += 1
            if generation % 256 == 0 and (not os.path.exists('/proc/%d' % gate) or
                                          time.monotonic() > deadline):
                break
    finally:
        os._exit(0)
'''
CHAIN_INSTALL = ("import os\nimport sys\n\nsys.path.insert(0, os.path.join(os.getcwd(), 'src'))\n"
                 "from dd import _chain  # noqa: E402\n\n_chain.start('install')\n")
CHAIN_SRC = ('import sys\n\nfrom dd import _chain\n\nif sys.flags.isolated:\n'
             "    _chain.start('reference')\n\n\n" + GOOD)
CHAIN_TEST = ("import os\n\nfrom dd import _chain\n\n"
              "if 'ORACLE_GUARD_STREAM' in os.environ:\n"
              "    _chain.start('test-' + os.path.basename(os.getcwd()))\n\n\n"
              "def test_nothing_to_see():\n    assert True\n")


@pytest.fixture(scope='module')
def dd_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return adopt_dd(str(tmp_path_factory.mktemp('round6b') / 'repo'))


def test_a_fork_chain_is_stopped_at_every_step_boundary_of_the_gate(
        dd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(dd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/dd/_chain.py': CHAIN_MODULE, 'src/dd/__init__.py': CHAIN_SRC,
                       'tools/install.py': CHAIN_INSTALL, 'tests/test_chain.py': CHAIN_TEST},
                      bug=False)
    plain = repo.finish(repo.start(PYTEST))
    assert plain.rc == 0, plain.out  # no gate above it: no chain, the bug fixed
    gate = repo.start([sys.executable, '-I', *repo.ci_args(
        PYTEST, '--install-command', 'python tools/install.py')[1:]])
    ci = repo.finish(gate)
    folder = os.path.join(tempfile.gettempdir(), f'og-chains-{gate.pid}')
    try:
        sids = {}
        for label in os.listdir(folder):
            with open(os.path.join(folder, label), encoding='utf-8') as f:
                sids[label] = int(f.read())
        running = {label: running_in_session(sid) for label, sid in sids.items()}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert ci.rc == 1, ci.out
    # Every step the chain was started in played it, and no chain outlived its sweep.
    assert {'install', 'reference', f'test-{os.path.basename(repo.path)}'} <= set(sids), \
        (sids, ci.out)
    assert all(not pids for pids in running.values()), running
    found = ci.lines('OG718')
    assert any('the install step left ' in line and 'the gate killed them' in line
               for line in found), ci.out
    assert any('the test command (or the reference run beside it) left ' in line and
               'the gate killed them' in line for line in found), ci.out
    assert not any('a step of the gate' in line for line in found), ci.out  # none left
    assert ci.summary.startswith('oracle-guard ci: 2 finding(s);'), ci.out  # nothing else


# -- 103, 103b: entry points the install step writes, not the change's files -----------------
# A setup.py is a program: ``entry_points=dict(...)``, a computed key, a file read at build
# time all declare entry points. The static reading flags what it cannot read (OG738 on the
# file, the early finding), and the gate reads what the install step produced: the pytest11
# and hypothesis entry points of the test environment before it and after it (rule 46).
@pytest.mark.parametrize(('path', 'text', 'entries'), [
    ('setup.py', "setup(entry_points=dict(hypothesis=['dd = dd:_plant']))",
     {('hypothesis', 'dd = dd:_plant')}),
    ('setup.py', "setup(entry_points={'hypo' + 'thesis': ['dd = dd:_plant']})",
     {(COMPUTED, "a computed key: {'hypo' + 'thesis': ['dd = dd:_plant']}")}),
    ('setup.py', "setup(entry_points=open('eps.txt').read())",
     {(COMPUTED, "entry_points=open('eps.txt').read()")}),
    ('setup.py', "setup(entry_points=EPS)", {(COMPUTED, 'entry_points=EPS')}),
    ('setup.cfg', '[options.entry_points]\nhypothesis:\n    dd = dd:_plant\n',
     {('hypothesis', 'dd = dd:_plant')}),
])
def test_entry_points_the_static_reading_cannot_resolve_are_flagged(
        path: str, text: str, entries: set[tuple[str, str]]) -> None:
    assert entry_points_in(path, text.encode()) == entries


def _dist(site: str, name: str, entry_points: str, url: str = '',
          requires: tuple[str, ...] = ()) -> None:
    """A distribution's metadata as pip writes it."""
    meta = os.path.join(site, f'{name}-1.0.dist-info')
    os.makedirs(meta)
    with open(os.path.join(meta, 'METADATA'), 'w', encoding='utf-8') as f:
        f.write(f'Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n' +
                ''.join(f'Requires-Dist: {r}\n' for r in requires))
    with open(os.path.join(meta, 'entry_points.txt'), 'w', encoding='utf-8') as f:
        f.write(entry_points)
    if url:
        with open(os.path.join(meta, 'direct_url.json'), 'w', encoding='utf-8') as f:
            f.write('{"url": "%s", "dir_info": {"editable": true}}' % url)


def _seen(root: str, site: str) -> Installed:
    return Installed(tuple(EntryPoint(*row) for row in probe_entry_points(root, [root, site])),
                     probe_requirements(root, [root, site]))


def _judge(root: str, site: str, before: Installed | None) -> tuple[list, list]:  # type: ignore[type-arg]
    return judged(before, _seen(root, site), root, {'dd'}, {('pytest11', 'ours=dd._plugin')},
                  {'pytest-xdist', 'httpx'})


@pytest.mark.parametrize('group', ['pytest11', 'hypothesis'])
def test_the_projects_own_entry_point_in_the_test_environment_is_og738(
        tmp_path, group: str) -> None:  # type: ignore[no-untyped-def]
    # 103 (hypothesis) and 103b (pytest11): an editable install of the project, its entry
    # point from a computed setup.py; its metadata in site-packages, outside the checkout.
    root, site = str(tmp_path / 'checkout'), str(tmp_path / 'site')
    os.makedirs(root)
    os.makedirs(site)
    _dist(site, 'other_name', f'[{group}]\ndd = dd._plugin\n', url=f'file://{root}')
    found, notes = _judge(root, site, before=Installed((), {}))
    assert [f.code for f in found] == ['OG738'], found
    assert f'the project\'s own entry point dd = dd._plugin in the {group} group ' \
        '(other_name was installed from the checkout)' in found[0].message
    assert notes == []


def test_entry_points_the_install_step_added_are_judged_by_where_they_come_from(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    root, site = str(tmp_path / 'checkout'), str(tmp_path / 'site')
    os.makedirs(root)
    os.makedirs(site)
    _dist(site, 'pytest_xdist', '[pytest11]\nxdist = xdist.plugin\n')  # a dependency
    _dist(site, 'dd', '[pytest11]\nours = dd._plugin\n')  # the base declares it
    before = _seen(root, site)
    _dist(site, 'sneaky', '[hypothesis]\nx = sneaky:run\n')  # neither
    _dist(site, 'httpx', '', requires=('anyio>=3', 'idna; extra == "idna"'))
    _dist(site, 'anyio', '[pytest11]\nanyio = anyio.pytest_plugin\n')  # a dependency's
    _dist(site, 'oracle_guard',  # the gate's own plugin, and one more under its name
          '[pytest11]\noracle_guard = oracle_guard.runtime.pytest_plugin\nmore = sneaky:x\n')
    found, notes = _judge(root, site, before)
    assert [f.message for f in found] == [
        'the install step added the entry point x = sneaky:run in the hypothesis group (of '
        'sneaky, a distribution the base revision does not name as a dependency): Hypothesis '
        'runs it when it starts, before any test file is compiled',
        'the install step added the entry point more = sneaky:x in the pytest11 group (of '
        'oracle_guard, a distribution the base revision does not name as a dependency): '
        'pytest runs it when it starts, before any test file is compiled']
    assert len(notes) == 1 and 'ours = dd._plugin' in notes[0], notes
    # Without the list from before the install step, only the project's own is judged.
    assert _judge(root, site, None)[0] == []


# 103b at the gate: a separate test environment (``--test-python``, reaching this suite's
# pytest and oracle-guard through a .pth a distribution of its own lists), and an install
# step that installs the project in editable mode the way pip does, its entry points from a
# setup.py no reading resolves (standing for ``pip install -e .``: a dist-info in
# site-packages with a pytest11 entry point, a .pth naming src/, a RECORD listing both), and
# replaces the test interpreter with one that answers the gate's question about entry
# points with none: the gate reads them with its own interpreter after the install step.
EDITABLE_INSTALL = r'''import base64, hashlib, os, sys

site, root = sys.argv[1], os.getcwd()
meta = os.path.join(site, 'calc-0.1.dist-info')
os.makedirs(meta)
files = {
    'calc-0.1.dist-info/METADATA': 'Metadata-Version: 2.1\nName: calc\nVersion: 0.1\n',
    'calc-0.1.dist-info/entry_points.txt': '[pytest11]\ncalc = calc._plugin\n',
    'calc-0.1.dist-info/direct_url.json':
        '{"url": "file://%s", "dir_info": {"editable": true}}' % root,
    '__editable__.calc-0.1.pth': os.path.join(root, 'src') + '\n',
}
rows = []
for rel, text in files.items():
    with open(os.path.join(site, rel), 'w') as f:
        f.write(text)
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).decode()
    rows.append('%s,sha256=%s,%d' % (rel, digest.rstrip('='), len(text.encode())))
with open(os.path.join(meta, 'RECORD'), 'w') as f:
    f.write('\n'.join(rows + ['calc-0.1.dist-info/RECORD,,']) + '\n')
# The test interpreter made a liar: asked for the entry points, it says there are none.
bin_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(site))), 'bin')
python = os.path.join(bin_dir, 'python')
os.symlink(os.readlink(python), python + '-real')
os.remove(python)
with open(python, 'w') as f:
    f.write('#!/bin/sh\ncase "$5" in --entry-points) '
            'echo \'{"entry_points": [], "requires": {}, "sites": []}\'; exit 0;; esac\n'
            'exec "$0-real" "$@"\n')
os.chmod(python, 0o755)
'''


def test_the_projects_own_pytest_plugin_installed_by_the_install_step_fails_ci(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    prefix = str(tmp_path / 'env')
    venv.EnvBuilder(with_pip=False, symlinks=True).create(prefix)
    python, site = os.path.join(prefix, 'bin', 'python'), site_packages(prefix)
    for folder in dict.fromkeys([os.path.dirname(os.path.dirname(pytest.__file__)),
                                 os.path.dirname(os.path.dirname(oracle_guard.__file__))]):
        name = f'suite_link_{len(os.listdir(site))}'
        install(site, name, {f'{name}.pth': folder + '\n'})
    calc = copy_template(build_template(str(tmp_path / 'template')), str(tmp_path / 'repo'))
    calc.pull_request({'tools/install.py': EDITABLE_INSTALL,
                       'src/calc/_plugin.py': '"""Loaded by pytest at start-up."""\n'},
                      bug=False)
    ci = calc.ci([python, *PYTEST[1:]], '--test-python', python,
                 '--install-command', f'python tools/install.py {site}')
    assert ci.rc == 1, ci.out
    assert any(line.startswith('.:1:1: OG738 the test environment holds the project\'s own '
                               'entry point calc = calc._plugin in the pytest11 group (its '
                               'distribution calc is the project)') for line in
               ci.lines('OG738')), ci.out
    # The replaced interpreter itself (rule 46).
    assert any(line.startswith(f'.:1:1: OG726 the test machinery was changed: the test '
                               f'interpreter {python} is not what it was before the install '
                               'step') and line.endswith('(after the install step)')
               for line in ci.lines('OG726')), ci.out
    assert ci.summary.startswith('oracle-guard ci: 2 finding(s);'), ci.out  # nothing else


def test_a_chain_the_gate_kills_on_its_way_out_is_said(
        dd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The install step starts the chain and fails: the gate stops there (exit 2, bad
    # input), before any step's sweep; leaving the Reaper kills the chain and says so.
    repo = copy_template(dd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/dd/_chain.py': CHAIN_MODULE,
                       'tools/install.py': CHAIN_INSTALL + 'raise SystemExit(1)\n'}, bug=False)
    gate = repo.start([sys.executable, '-I', *repo.ci_args(
        PYTEST, '--install-command', 'python tools/install.py')[1:]])
    ci = repo.finish(gate)
    folder = os.path.join(tempfile.gettempdir(), f'og-chains-{gate.pid}')
    try:
        with open(os.path.join(folder, 'install'), encoding='utf-8') as f:
            sid = int(f.read())
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert ci.rc == 2, ci.out
    assert "'python tools/install.py' exited 1" in ci.out, ci.out
    assert any('a step of the gate (found as the gate ended) left ' in line
               for line in ci.lines('OG718')), ci.out
    assert running_in_session(sid) == []
