"""Reproduce the attacks of ATTACKS.md 101-108 (round 6: the compiled bytes, the entry
points, the last sweep and the blob ids, played on branch seal95 at c6a7bca).

    python benchmarks/attacks_open/round6.py [NAME ...] [--keep DIR] [--test-env PYTHON]

Open when the round was played (each printed "gate exit 0" with the bug in place, or for
105 with the bug fixed): 101, 102, 103, 103b, 105, 105b, 105c. Closed since: 101 (a
rewritten-module cache planted for pytest's rewriter) and 102 (a helper module of the
property rewritten and put back) on branch seal101 (no compiled cache is trusted in the
gate's runs, and every module of the test roots sends its compile's digest; their tests are
tests/test_ci_attacks_round6.py), which also refuses the cache as the payload of 103, 103b,
105b and 105c; 103 (a hypothesis entry point from a computed setup.py, with 101's move;
needs ``--test-env``: OG738 from the test environment), 103b (the same with a ``pytest11``
plugin and no conftest in the base; needs ``--test-env``), 105 (a fork chain the sweeps did
not see: OG718 now, with the bug fixed), 105b (105's chain plants 101's cache of the new
test in the new-test run) and 105c (the chain left by the install step plants 101's cache
in the reference tree; the install script plants it in the checkout) on branch seal105
(their tests are tests/test_ci_attacks_round6b.py). Caught before, kept as scenarios (their
tests are tests/test_ci_attacks_round6.py): 104 (the ledger's loose object rewritten by the
install step: OG734, and OG706 since seal105), 106 (``--assert=plain`` with 95's
move; 106rewriter is the same move with the rewriter on), 107 (the property's blob moved
into an alternate object store), 108 (.git a ``gitdir:`` file naming a rewritten copy).
Controls, each caught (gate exit 1): 101control, 102control (the move left out), 103control
(setup.py without the entry point), 105bcontrol (no chain: OG736).

``105sweep`` plays 105's chain against ``Reaper.leftovers`` alone, in-process, and prints
how often the sweep found nothing and the chain still did its work after it, and the CPU
time of the sweeps (and of a sweep with nothing to find).

Each scenario builds the repository of tests/test_ci_attacks.py (``dd``, adopted with
``oracle-guard init``, then the bug on ``main``: ``dedupe`` drops the largest value past
three distinct ones), commits the pull request on branch ``pr``, runs plain ``python -m
pytest -q -p no:cacheprovider`` in a copy of the checkout (after the same install step, if
any), then the gate as the action runs it, ``python -I -m oracle_guard.cli ci --base main
[options] -- python -m pytest -q -p no:cacheprovider``, and prints "plain pytest exit N" and
"gate exit N" per scenario with the gate's findings (105b sets ``require-fail-to-pass = true``
on main first; its pull request fixes the bug). 103 and 103b run only with ``--test-env
PYTHON``, the interpreter of a throwaway environment holding pytest, Hypothesis, setuptools
and oracle-guard (the gate then runs with ``--test-python PYTHON``). 105 prints whether the
chain outlived the gate too. Every attacker touches only files in its own checkout, its git
folder, a folder beside the checkout, and (105) a file in the temporary folder named by its
own gate's pid; 105's chain forks only below its own gate and stops when that gate has
exited. The repositories go into a temporary folder (``--keep DIR`` keeps them).
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
sys.path.insert(0, HERE)

from round3 import build  # noqa: E402
from round5 import plain_run  # noqa: E402
from round5 import strict  # noqa: E402
from round6_sources import CHAIN  # noqa: E402
from round6_sources import CHAIN_INSTALL  # noqa: E402
from round6_sources import CHAIN_NEW_TEST  # noqa: E402
from round6_sources import CHAIN_PLANTING  # noqa: E402
from round6_sources import CHAIN_TEST  # noqa: E402
from round6_sources import COMPUTED_PLUGIN_SETUP  # noqa: E402
from round6_sources import COMPUTED_SETUP  # noqa: E402
from round6_sources import PLUGIN  # noqa: E402
from round6_sources import ENTRY_POINT_PLANTING_SRC  # noqa: E402
from round6_sources import HELPER  # noqa: E402
from round6_sources import HELPER_PROPERTY  # noqa: E402
from round6_sources import HELPER_WEAKENING_SRC  # noqa: E402
from round6_sources import PLANTING_SRC  # noqa: E402
from test_ci_attacks import BUG  # noqa: E402
from test_ci_attacks import GOOD  # noqa: E402
from test_ci_attacks import PYTEST  # noqa: E402
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG  # noqa: E402
from test_ci_attacks_round3 import PROPERTIES_CONFTEST  # noqa: E402
from test_ci_attacks_round5 import PROFILE_CONFTEST  # noqa: E402
from test_ci_attacks_round6 import ALTERNATES_INSTALL  # noqa: E402 -- 107, caught
from test_ci_attacks_round6 import APPENDING_SRC  # noqa: E402 -- 106, caught
from test_ci_attacks_round6 import GITDIR_FILE_INSTALL  # noqa: E402 -- 108, caught
from test_ci_attacks_round6 import rewriting_the_ledger  # noqa: E402 -- 104, caught

# the install step installs dd into a separate environment
NEEDS_TEST_ENV = ('103', '103control', '103b')
PIP_INSTALL = ('--install-command',
               'python -m pip install -q --no-deps --no-build-isolation -e .')


def scenarios() -> dict[str, tuple[dict[str, str], dict[str, str], tuple[str, ...]]]:
    """name -> (the project before adoption, the pull request, the gate's options)."""
    conftest = {'tests/properties/conftest.py': PROPERTIES_CONFTEST}
    helper = {**conftest, 'tests/properties/_expected.py': HELPER,
              'tests/properties/test_dd_props.py': HELPER_PROPERTY}
    install = ('--install-command', 'python tools/install.py')
    units = {'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}
    return {
        '101': (conftest, {'src/dd/__init__.py': PLANTING_SRC, **units}, ()),
        '101control': (conftest, {'src/dd/__init__.py': PLANTING_SRC.replace(
            '\n_plant()\n', '\n'), **units}, ()),
        '102': (helper, {'src/dd/__init__.py': HELPER_WEAKENING_SRC, **units}, ()),
        '102control': (helper, {'src/dd/__init__.py': HELPER_WEAKENING_SRC.replace(
            '\n_weaken()\n', '\n'), **units}, ()),
        '103': ({'tests/properties/conftest.py': PROFILE_CONFTEST},
                {'src/dd/__init__.py': ENTRY_POINT_PLANTING_SRC, 'setup.py': COMPUTED_SETUP,
                 **units}, PIP_INSTALL),
        '103control': ({'tests/properties/conftest.py': PROFILE_CONFTEST},
                       {'src/dd/__init__.py': ENTRY_POINT_PLANTING_SRC, 'setup.py':
                        COMPUTED_SETUP.replace("dict(hypothesis=['dd = dd:_plant'])", 'dict()'),
                        **units}, PIP_INSTALL),
        '103b': ({}, {'src/dd/__init__.py': ENTRY_POINT_PLANTING_SRC, 'src/dd/_plugin.py': PLUGIN,
                      'setup.py': COMPUTED_PLUGIN_SETUP, **units}, PIP_INSTALL),
        '104': ({}, {'tools/install.py': rewriting_the_ledger()}, install),
        '105': ({}, {'src/dd/__init__.py': GOOD, 'tests/_chain.py': CHAIN,
                     'tests/test_chain.py': CHAIN_TEST}, ()),
        '105b': ({}, {'src/dd/__init__.py': GOOD, 'tests/_chain.py': CHAIN_PLANTING,
                      'tests/test_new.py': CHAIN_NEW_TEST}, ()),
        '105bcontrol': ({}, {'src/dd/__init__.py': GOOD, 'tests/_chain.py': CHAIN_PLANTING,
                             'tests/test_new.py': CHAIN_NEW_TEST.replace(
                                 '    _chain.start()\n', '    pass\n')}, ()),
        '105c': ({}, {'src/dd/__init__.py': ENTRY_POINT_PLANTING_SRC,
                      'tools/install.py': CHAIN_INSTALL, **units}, install),
        '106': (conftest, {'src/dd/__init__.py': APPENDING_SRC, **units}, ()),
        '106rewriter': (conftest, {'src/dd/__init__.py': APPENDING_SRC, **units}, ()),
        '107': ({}, {'tools/install.py': ALTERNATES_INSTALL, **units}, install),
        '108': ({}, {'tools/install.py': GITDIR_FILE_INSTALL, **units}, install),
    }


def reaper_sweeps(trials: int = 6, grace: float = 2.0) -> None:
    """105 against the gate's sweep alone, in this process: a ``Reaper`` (the gate's child
    subreaper), the fork chain started, one sweep (``leftovers``, the gate's grace), then
    the chain's deadline passes with the Reaper still active: does the chain end its work
    (a file) after the sweep said nothing was left?"""
    import subprocess

    from oracle_guard.gate.processes import Reaper

    chain = CHAIN.replace('def start(', 'def _unused(')  # the loop alone, run as a script
    script = chain + """
import sys
deadline = time.monotonic() + float(sys.argv[1])
if os.fork():
    os._exit(0)
os.setsid()
while time.monotonic() < deadline:
    if os.fork():
        os._exit(0)
with open(sys.argv[2], 'w') as f:
    f.write(str(os.getpid()))
os._exit(0)
"""
    missed = acted = 0
    cpu = 0.0
    for trial in range(trials):
        marker = os.path.join(tempfile.gettempdir(), f'round6-105-sweep-{os.getpid()}-{trial}')
        with Reaper() as reaper:
            subprocess.run([sys.executable, '-c', script, '3.0', marker], check=True)
            time.sleep(0.2)
            before = time.process_time()
            found = reaper.leftovers(reaper.start, 'a step', grace=grace)
            cpu += time.process_time() - before
            missed += not found
            time.sleep(3.0)  # the next step; the chain's deadline passes
            acted += os.path.exists(marker)
        if os.path.exists(marker):
            os.remove(marker)
    with Reaper() as reaper:  # nothing to find: what every honest step's sweep costs
        before_wall, before = time.monotonic(), time.process_time()
        for _ in range(20):
            reaper.leftovers(reaper.start, 'a step', grace=grace)
        empty_wall = (time.monotonic() - before_wall) / 20
        empty_cpu = (time.process_time() - before) / 20
    print(f'== 105sweep: grace {grace} s: the sweep found nothing in {missed} of {trials} '
          f'trials; the chain acted after the sweep in {acted} of {trials}; the sweeps took '
          f'{cpu:.3f} s CPU in all (this process); a sweep with nothing to find: '
          f'{empty_wall * 1000:.1f} ms wall, {empty_cpu * 1000:.2f} ms CPU')


def main(argv: list[str]) -> int:
    keep = None
    if '--keep' in argv:
        keep = argv[argv.index('--keep') + 1]
        argv = [a for a in argv if a not in ('--keep', keep)]
    test_env = None
    if '--test-env' in argv:
        test_env = argv[argv.index('--test-env') + 1]
        argv = [a for a in argv if a not in ('--test-env', test_env)]
    if '105sweep' in argv:
        reaper_sweeps()
        argv = [a for a in argv if a != '105sweep']
        if not argv:
            return 0
    chosen = argv or [name for name in scenarios() if 'control' not in name and
                      name != '106rewriter' and (test_env or name not in NEEDS_TEST_ENV)]
    folder = keep or tempfile.mkdtemp(prefix='round6-attacks-')
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
            repo = build(os.path.join(folder, name), project, {'src/dd/__init__.py': BUG})
            if name.startswith('105b'):  # require-fail-to-pass = true on main (rule 49)
                strict(repo)
            if name.startswith('103'):  # the entry points dynamic: setuptools reads setup.py's
                with open(os.path.join(repo.path, 'pyproject.toml'), encoding='utf-8') as f:
                    pyproject = f.read()
                pull_request = {**pull_request, 'pyproject.toml': pyproject.replace(
                    'version = "0.1"\n', 'version = "0.1"\ndynamic = ["entry-points"]\n')}
            if name == '106':  # the assertion rewriter off, in the project's addopts
                with open(os.path.join(repo.path, 'pyproject.toml'), encoding='utf-8') as f:
                    pyproject = f.read()
                pull_request = {**pull_request, 'pyproject.toml': pyproject.replace(
                    'pythonpath = ["src"]\n', 'pythonpath = ["src"]\naddopts = "--assert=plain"\n')}
            repo.pull_request(pull_request, bug=False)
            plain = plain_run(repo, options, pytest)
            gate = repo.start([sys.executable, '-I', *repo.ci_args(pytest, *options)[1:]])
            ci = repo.finish(gate)
            found = [line for line in ci.out.splitlines() if (line.startswith(
                'oracle-guard ci:') or re.match(r'\S+:\d+:\d+: OG\d+ ', line)) and
                ' note: ' not in line]
            print(f'== {name}: plain pytest exit {plain.rc}, gate exit {ci.rc}')
            print(f'plain pytest exit {plain.rc}')
            print(f'gate exit {ci.rc}')
            print('\n'.join(found))
            if name == '105':
                marker = os.path.join(tempfile.gettempdir(), f'round6-105-outlived-{gate.pid}')
                deadline = time.monotonic() + 5
                while not os.path.exists(marker) and time.monotonic() < deadline:
                    time.sleep(0.1)
                print(f'the fork chain outlived the gate: {os.path.exists(marker)}')
                if os.path.exists(marker):
                    os.remove(marker)
            through += ci.rc == 0
    finally:
        if keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(f'{through} of {len(chosen)} got through (gate exit 0)')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
