"""Rule 54: an interpreter capability a pull request adds to code reachable from ``src/``
fails the gate (OG741) until a person approves it, and is listed in the review report.

``dd`` has a real bug on main. Each cheat leaves it there and hides it from the tests
through a capability: plain pytest goes green; the gate fails, and OG741 is its one reason.
"""
from __future__ import annotations

import os
import re
import sys

import pytest

from builders.ci_repo import CiRepo
from builders.ci_repo import git
from builders.ci_repo import write
from builders.dedupe import dd_cheat_fails_ci
from builders.dedupe import DD_PYTEST
from builders.dedupe import BUG as BUG_SOURCE
from builders.dedupe import GOOD
from builders.repos import Repo
from oracle_guard import cli
from oracle_guard.commands.ci import range_context
from oracle_guard.gate.capabilities import added_uses
from oracle_guard.hooks import check_freeze_ledger

SRC = 'src/dd/__init__.py'


def hiding(condition: str, head: str = '') -> str:
    """dedupe with the bug on main, hidden while ``condition`` says the tests run."""
    return f'''\
{head}

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3 and not ({condition}):
        return out[:-1]
    return out
'''


FRAME_WALK = '''\
import inspect


def _tested():
    frame = inspect.currentframe()
    while frame is not None:
        if '/tests/' in frame.f_code.co_filename.replace('\\\\', '/'):
            return True
        frame = frame.f_back
    return False
'''

SUBCLASS_WALK = '''\
_SEEN = []


def _classes(cls):
    for sub in type.__subclasses__(cls):
        yield sub
        yield from _classes(sub)


def _tested():
    if not _SEEN:
        _SEEN.append(any(c.__name__ == 'Function' and hasattr(c, 'runtest')
                         for c in _classes(object)))
    return _SEEN[0]
'''

GC_WALK = '''\
import gc

_SEEN = []


def _tested():
    if not _SEEN:
        _SEEN.append(any(type(o).__name__ == 'Session' and hasattr(o, 'shouldfail')
                         for o in gc.get_objects()))
    return _SEEN[0]
'''

# The standard library's encoder patched to forge what the run reports of the project's
# own tests (the tests are detected as in the faulthandler case): the gate's canaries see
# no forgery, the static rule sees the patch.
ENCODER_PATCH = '''\
import faulthandler
import json

_encode = json.JSONEncoder.iterencode


def _forged(self, o, _one_shot=False):
    if isinstance(o, dict) and str(o.get('nodeid')).startswith('tests/test_dd.py'):
        o = {**o, 'outcome': 'passed'}
    return _encode(self, o, _one_shot)


json.JSONEncoder.iterencode = _forged
'''

# src runs a file of tools/, which names the test run plainly (rule 43 never reads it).
TOOLS_EXEC = '''\
import os

_ENV = {}
with open(os.path.join(os.path.dirname(__file__), '..', '..', 'tools', 'env.py')) as _f:
    exec(_f.read(), _ENV)
'''

# The process's own identity: the environment enumerated, not a variable named.
ENVIRON_SCAN = '''\
import os


def _tested():
    return any('GUARD' in k or k.startswith('PYT') for k in os.environ)
'''

# The standard library walks the stack for its caller: a warning records where it came from.
WARNING_PLACE = '''\
import os
import warnings


def _tested():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter('always')
        warnings.warn('where', stacklevel=3)
    return any('tests' in w.filename.split(os.sep) for w in seen)
'''

# A module of tools/ imported through an import path src adds (rule 54 reads no file of
# tools/ it cannot name): the capability is the import path itself.
TOOLS_PATH = '''\
import importlib
import os
import sys

sys.path.append(os.path.join(os.path.dirname(__file__), '..', '..', 'tools'))


def _tested():
    return importlib.import_module('probe').TESTED
'''

# The program that started the process: `python -m pytest` or `python -c` (the gate's runs).
MAIN_MODULE = '''\
import __main__


def _tested():
    return getattr(__main__, '__file__', '__main__.py').endswith('__main__.py')
'''

# The warning filters pytest's warnings plugin sets around each test.
WARNING_FILTERS = '''\
import warnings


def _tested():
    return any(f[0] == 'always' and f[2] is DeprecationWarning for f in warnings.filters)
'''

CHEATS = {
    'main-module': ({SRC: hiding('_tested()', MAIN_MODULE)},
                    f"{SRC}:5: interpreter-state getattr(__main__, '__file__'"),
    'warning-filters': ({SRC: hiding('_tested()', WARNING_FILTERS)},
                        f'{SRC}:5: interpreter-state warnings.filters'),
    'environ-scan': ({SRC: hiding('_tested()', ENVIRON_SCAN)},
                     f'{SRC}:5: interpreter-state os.environ'),
    'warning-place': ({SRC: hiding('_tested()', WARNING_PLACE)},
                      f'{SRC}:6: frames warnings.catch_warnings'),
    'tools-path': ({SRC: hiding('_tested()', TOOLS_PATH),
                    'tools/probe.py': 'import sys\n\nTESTED = "pytest" in sys.modules\n'},
                   f'{SRC}:5: code-and-imports sys.path'),
    'faulthandler': ({SRC: hiding('faulthandler.is_enabled()', 'import faulthandler\n')},
                     f'{SRC}:6: interpreter-state faulthandler.is_enabled'),
    'frame-walk': ({SRC: hiding('_tested()', FRAME_WALK)},
                   f'{SRC}:5: frames inspect.currentframe'),
    'subclass-walk': ({SRC: hiding('_tested()', SUBCLASS_WALK)},
                      f'{SRC}:5: object-graph type.__subclasses__'),
    'gc-walk': ({SRC: hiding('_tested()', GC_WALK)}, f'{SRC}:9: object-graph gc.get_objects'),
    'encoder-patch': ({SRC: hiding('faulthandler.is_enabled()', ENCODER_PATCH)},
                      f'{SRC}:13: foreign-attribute json.JSONEncoder.iterencode'),
    'tools-exec': ({SRC: hiding("_ENV['TESTED']", TOOLS_EXEC),
                    'tools/env.py': 'import sys\n\nTESTED = "pytest" in sys.modules\n'},
                   'tools/env.py:3: object-graph sys.modules (reached from src/dd/__init__.py)'),
}


def codes(out: str) -> set[str]:
    return set(re.findall(r': (OG\d{3}) ', out))


# The cheats planted in one pull request: each in a module of its own under src/dd (its
# text as above, so each use keeps its line), the one that finds its caller's file through
# a warning in dd itself (its caller must be the test). dedupe hides the bug only where
# every module's dedupe does, so plain pytest goes green only if each cheat works. The
# encoder patch forges what the run reports of every test: it is planted alone.
APART = ('encoder-patch',)
IN_SRC = 'warning-place'


def module_of(name: str) -> str:
    return SRC if name == IN_SRC else f"src/dd/_{name.replace('-', '_')}.py"


def planted_together() -> dict[str, str]:
    files: dict[str, str] = {}
    modules = []
    for name in sorted(CHEATS):
        if name in APART or name == IN_SRC:
            continue
        cheat, _ = CHEATS[name]
        files.update({module_of(name) if path == SRC else path: text
                      for path, text in cheat.items()})
        modules.append(module_of(name)[len('src/dd/'):-len('.py')])
    imports = ''.join(f'from dd import {module}\n' for module in modules)
    every = f"all(m.dedupe(xs) == out for m in ({', '.join(modules)}))"
    files[SRC] = hiding(f'_tested() and {every}', f'{WARNING_PLACE}\n\n{imports}')
    return files


def test_src_hiding_the_bug_through_capabilities_fails_ci_until_approved(dd: CiRepo) -> None:
    ci = dd_cheat_fails_ci(dd, planted_together(), 'OG741')
    assert codes(ci.out) == {'OG741'}, ci.out
    for name in sorted(set(CHEATS) - set(APART)):
        listed = CHEATS[name][1].replace(SRC, module_of(name))
        assert any(listed in line for line in ci.lines('OG741')), f'{name}: {listed}\n{ci.out}'


@pytest.mark.parametrize('name', APART)
def test_src_hiding_the_bug_through_a_capability_fails_ci_until_approved(
        dd: CiRepo, name: str) -> None:
    files, listed = CHEATS[name]
    ci = dd_cheat_fails_ci(dd, files, 'OG741')
    assert codes(ci.out) == {'OG741'}, ci.out
    assert any(listed in line for line in ci.lines('OG741')), ci.out


def test_an_approved_capability_passes_and_the_report_lists_it(dd: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    files, _ = CHEATS['tools-exec']
    dd.pull_request(files, bug=False)
    report = str(tmp_path / 'report.md')
    ci = dd.ci(DD_PYTEST, '--oracle-approved', '--report', report)
    assert ci.rc == 0, ci.out
    text = open(report, encoding='utf-8').read()
    assert '### Rule 54 uses added to src (capabilities, dependencies, build sources)' in text
    assert ('- `tools/env.py:3`: object-graph `sys.modules` (reached from '
            '`src/dd/__init__.py`)') in text
    assert f'- `{SRC}:5`: code-and-imports `exec`' in text


# src starts to use another distribution's module (sortedcontainers, installed with
# Hypothesis): its code is outside what rule 54 reads.
NEW_DEPENDENCY = '''\
from sortedcontainers import SortedSet


def dedupe(xs):
    return list(SortedSet(xs))
'''


def test_a_module_of_a_distribution_the_base_does_not_declare_needs_approval(
        dd: CiRepo) -> None:
    util = ('import json\nfrom typing import TYPE_CHECKING\n\nimport dd\n\n'
            'if TYPE_CHECKING:  # a type checker\'s import runs nowhere\n'
            '    import numpy\n')
    dd.pull_request({SRC: NEW_DEPENDENCY, 'src/dd/util.py': util}, bug=False)
    ci = dd.ci(DD_PYTEST)
    assert ci.rc == 1, ci.out
    assert codes(ci.out) == {'OG741'}, ci.out
    lines = ci.lines('OG741')
    assert len(lines) == 1 and lines[0].endswith(
        f'{SRC}:1: dependency import sortedcontainers'), ci.out  # json: the stdlib's


def test_a_module_of_a_distribution_the_base_declares_is_free(dd: CiRepo) -> None:
    pyproject = open(os.path.join(dd.path, 'pyproject.toml'), encoding='utf-8').read()
    write(dd.path, {'pyproject.toml': pyproject.replace(
        'version = "0.1"\n', 'version = "0.1"\ndependencies = ["sortedcontainers"]\n')})
    git(dd.path, 'commit', '-qam', 'declare sortedcontainers')
    dd.pull_request({SRC: NEW_DEPENDENCY}, bug=False)
    ci = dd.ci(DD_PYTEST)
    assert not ci.lines('OG741'), ci.out
    assert ci.rc == 0, ci.out


@pytest.mark.parametrize('setup_py, declared', [
    ('setup(name="dd", install_requires=["sortedcontainers>=2"])', True),
    ('DEPS = ["attrs"]\nEXTRAS = {"fast": ["sortedcontainers"]}\n\n'
     'setup(name="dd", install_requires=DEPS, extras_require=EXTRAS)', True),
    ('setup(name="dd", install_requires="attrs\\nsortedcontainers  # sets")', True),
    # a list built when setup.py runs declares nothing the gate can read
    ('setup(name="dd", install_requires=[n for n in ("sortedcontainers",)])', False),
])
def test_a_module_the_base_declares_in_setup_py_is_free(
        dd: CiRepo, setup_py: str, declared: bool) -> None:
    write(dd.path, {'setup.py': f'from setuptools import setup\n\n{setup_py}\n'})
    git(dd.path, 'add', 'setup.py')
    git(dd.path, 'commit', '-qm', 'setup.py')
    dd.pull_request({SRC: NEW_DEPENDENCY}, bug=False)
    ci = dd.ci(DD_PYTEST)
    if declared:
        assert ci.rc == 0 and not codes(ci.out), ci.out
    else:
        assert [line.split(': ')[-1] for line in ci.lines('OG741')] == [
            'dependency import sortedcontainers'], ci.out


# setup.py that computes the folder it builds from: the gate says it did not read it
COMPUTED_SETUP_PY = '''\
import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
setup(name="dd", package_dir={"": os.path.relpath(os.path.join(HERE, "src"), HERE)},
      packages=["dd"])
'''


def test_a_build_configuration_computed_at_run_time_is_said_in_the_report(
        dd: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    dd.pull_request({SRC: GOOD, 'setup.py': COMPUTED_SETUP_PY}, bug=False)
    report = str(tmp_path / 'report.md')
    ci = dd.ci(DD_PYTEST, '--report', report)
    assert ci.rc == 0 and not codes(ci.out), ci.out
    text = open(report, encoding='utf-8').read()
    assert '### Build configuration not read' in text, text
    assert ('- `setup.py`: setup() computes package_dir at run time; where the build takes '
            'its code from is not read') in text, text


def test_a_build_from_a_folder_the_oracle_does_not_judge_needs_approval(dd: CiRepo) -> None:
    """src/ is fixed and the tests pass on it; the distribution is built from lib/, which
    holds the bug: what ships is not what the oracle judged."""
    pyproject = open(os.path.join(dd.path, 'pyproject.toml'), encoding='utf-8').read()
    dd.pull_request({SRC: GOOD, 'lib/dd/__init__.py': BUG_SOURCE,
                     'pyproject.toml': pyproject + '\n[tool.setuptools]\n'
                                                   'package-dir = {"" = "lib"}\n'}, bug=False)
    ci = dd.ci(DD_PYTEST)
    assert ci.rc == 1, ci.out
    assert codes(ci.out) == {'OG741'}, ci.out
    assert [line.split(': ', 1)[1] for line in ci.lines('OG741')] == [
        'OG741 rule 54 use added to code src runs not approved (label "oracle-approved"): '
        'pyproject.toml:1: packaging [tool.setuptools] package-dir lib/dd'], ci.out


# setup.py's own build command copies lib/dd over the package it builds from src/
COPYING_SETUP_PY = '''\
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPy(build_py):
    def run(self):
        super().run()
        shutil.copytree("lib/dd", os.path.join(self.build_lib, "dd"), dirs_exist_ok=True)


setup(name="dd", package_dir={"": "src"}, packages=["dd"], cmdclass={"build_py": BuildPy})
'''


SETUPTOOLS_BUILD = '''\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

'''
SETUPTOOLS_TABLE = '''
[tool.setuptools]
package-dir = {"" = "src"}
packages = ["dd"]
'''
FLIT_BUILD = '''\
[build-system]
requires = ["flit_core>=3.4"]
build-backend = "flit_core.buildapi"

'''


@pytest.mark.parametrize('shape', ['setuptools-to-flit', 'new-subpackage', 'version-bump'])
def test_an_honest_build_change_ships_from_the_src_the_oracle_judged(
        dd: CiRepo, shape: str) -> None:
    """The build configuration changes, and every source it names is still under src/:
    no packaging use, no finding."""
    pyproject = open(os.path.join(dd.path, 'pyproject.toml'), encoding='utf-8').read()
    write(dd.path, {'pyproject.toml': SETUPTOOLS_BUILD + pyproject + SETUPTOOLS_TABLE})
    git(dd.path, 'commit', '-qam', 'build with setuptools')
    files = {SRC: GOOD}
    if shape == 'setuptools-to-flit':
        files['pyproject.toml'] = FLIT_BUILD + pyproject + '\n[tool.flit.module]\nname = "dd"\n'
    elif shape == 'new-subpackage':
        files['src/dd/text/__init__.py'] = 'WORDS = ()\n'
        files['pyproject.toml'] = SETUPTOOLS_BUILD + pyproject + SETUPTOOLS_TABLE.replace(
            '["dd"]', '["dd", "dd.text"]')
    else:
        files['pyproject.toml'] = SETUPTOOLS_BUILD + pyproject.replace(
            'version = "0.1"', 'version = "0.2"') + SETUPTOOLS_TABLE
    dd.pull_request(files, bug=False)
    ci = dd.ci(DD_PYTEST)
    assert ci.rc == 0 and not codes(ci.out), ci.out


EXTENSION = 'src/dd/_speed.cpython-311-x86_64-linux-gnu.so'


def test_a_build_command_shipping_another_folder_and_an_extension_module_need_approval(
        dd: CiRepo) -> None:
    """Two uses in one pull request, in files of their own, each judged by its lines:
    setup.py's own build command ships lib/dd (with the bug) over the package it builds
    from src/; and compiled code no reader reads (a module built from C that asks for
    ``_pytest`` in the module table hid the bug; its bytes need not load for the rule)."""
    dd.pull_request({SRC: GOOD, 'lib/dd/__init__.py': BUG_SOURCE, 'setup.py': COPYING_SETUP_PY,
                     EXTENSION: 'ELF'}, bug=False)
    ci = dd.ci(DD_PYTEST)
    assert ci.rc == 1, ci.out
    assert codes(ci.out) == {'OG741'}, ci.out
    uses = {'build command': 'setup.py:', 'extension module': f'{EXTENSION}:'}
    said = {cheat: [line.split(': ')[-1] for line in ci.lines('OG741') if line.startswith(where)]
            for cheat, where in uses.items()}
    assert said['build command'] == ['packaging setup.py names lib/dd'], \
        f'build command:\n{ci.out}'
    assert said['extension module'] == [
        'code-and-imports compiled module _speed.cpython-311-x86_64-linux-gnu.so'], \
        f'extension module:\n{ci.out}'
    assert len(ci.lines('OG741')) == 2, ci.out  # no other use


HELPER = '''\
import dataclasses
import functools
import logging
import re

log = logging.getLogger(__name__)
_WORD = re.compile(r"-?\\\\d+")


@dataclasses.dataclass(frozen=True)
class Seen:
    count: int


@functools.lru_cache(maxsize=None)
def _parse(text):
    return tuple(int(w) for w in _WORD.findall(text))


def dedupe(xs):
    log.debug("dedupe of %d values", len(xs))
    return sorted(set(xs))
'''

LOADED = 'import sys\n\nLOADED = "json" in sys.modules\n\n\n'


@pytest.mark.parametrize('base_src', [None, LOADED], ids=['helpers', 'sys-modules-at-base'])
def test_honest_fix_passes_ci_with_no_finding(dd: CiRepo, base_src: str | None) -> None:
    if base_src is not None:  # main already used sys.modules in the module
        bug = open(f'{dd.path}/{SRC}', encoding='utf-8').read()
        write(dd.path, {SRC: base_src + bug})
        git(dd.path, 'commit', '-qam', 'main: know what is loaded')
    fix = HELPER if base_src is None else base_src + GOOD
    dd.pull_request({SRC: fix}, bug=False)
    ci = dd.ci([sys.executable, *DD_PYTEST[1:]])
    assert ci.rc == 0 and not codes(ci.out), ci.out


# -- in process: what is new, what a project allows, what `oracle-guard check` says ---------

def added(repo: Repo) -> list[tuple[str, int, str, str]]:
    cwd = os.getcwd()
    os.chdir(repo.path)
    try:
        return [(a.path, a.use.line, a.use.kind, a.use.expression)
                for a in added_uses(range_context('main'))]
    finally:
        os.chdir(cwd)


PROBE = 'import faulthandler\n\n\ndef parse(b):\n    return b if faulthandler.is_enabled() else b""\n'


def allowing(repo: Repo, entries: str) -> str:
    return repo.read('pyproject.toml').decode().replace(
        'src = ["src/"]', f'src = ["src/"]\nsrc-capabilities = {entries}')


@pytest.mark.parametrize('entries, flagged', [
    ('["interpreter-state"]', False), ('["interpreter-state:src/app.py"]', False),
    ('["interpreter-state:src/other.py"]', True), ('["frames"]', True)])
def test_src_capabilities_listed_before_the_change_allow_the_use(
        guarded: Repo, entries: str, flagged: bool) -> None:
    guarded.write('pyproject.toml', allowing(guarded, entries))
    guarded.commit('this project may probe the interpreter: its own change')
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.write('src/app.py', PROBE)
    guarded.commit('probe')
    assert bool(added(guarded)) == flagged


def test_src_capabilities_widened_next_to_src_fails_and_allows_nothing(guarded: Repo) -> None:
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.write('pyproject.toml', allowing(guarded, '["interpreter-state"]'))
    guarded.write('src/app.py', PROBE)
    guarded.commit('probe, and allow it')
    assert added(guarded) == [('src/app.py', 5, 'interpreter-state', 'faulthandler.is_enabled')]
    ledger = guarded.run(check_freeze_ledger.main, '--from-ref', 'main', '--to-ref', 'HEAD')
    assert 'OG517' in ledger.codes, ledger.out
    assert 'src-capabilities widened by interpreter-state' in ledger.out


def test_a_moved_module_keeps_the_uses_it_had(guarded: Repo) -> None:
    guarded.write('src/app.py', 'import sys\n\n\ndef parse(b):\n    return b if sys.modules else b\n')
    guarded.commit('main knows its modules')
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.git('mv', 'src/app.py', 'src/core.py')
    guarded.write('src/app.py', 'from core import parse  # noqa: F401\n')
    guarded.commit('move')
    assert added(guarded) == []


# A use the change removes from code src runs vouches for the same use (kind and
# expression) elsewhere: matched first in its own file, then across the change's files.
COUNTS = 'import gc\n\n\ndef counts():\n    return gc.get_count()\n'
HELPERS = '\n\ndef helper(x):\n    return [x]\n\n\ndef other(x):\n    return (x,)\n'


def test_a_reached_tool_split_into_src_adds_no_use(guarded: Repo) -> None:
    """tools/probe.py, which src imported, is split: its gc use and a helper into
    src/app.py, its other helper into a new module; the tool is deleted."""
    guarded.write('tools/probe.py', COUNTS + HELPERS)
    guarded.write('src/app.py', 'from tools import probe\n\n\ndef parse(b):\n'
                                '    return b if probe.counts() else b""\n')
    guarded.commit('src uses the probe tool')
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.rm('tools/probe.py')
    kept, _, moved = HELPERS.partition('\n\n\ndef other')
    guarded.write('src/app.py', COUNTS + kept + '\n\n\ndef parse(b):\n'
                                '    return b if counts() else b""\n')
    guarded.write('src/helpers.py', 'def other' + moved)
    guarded.commit('the probe moves into the package')
    assert added(guarded) == []


def test_a_reached_tool_renamed_into_src_with_edits_adds_no_use(guarded: Repo) -> None:
    """Renamed and rewritten past git's rename detection: a deletion and an addition."""
    guarded.write('tools/probe.py', 'import gc\n\nCOUNT = gc.get_count()\n')
    guarded.write('src/app.py', 'from tools import probe\n\n\ndef parse(b):\n'
                                '    return b if probe.COUNT else b""\n')
    guarded.commit('src uses the probe tool')
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.rm('tools/probe.py')
    guarded.write('src/counting.py', '"""How full the collector\'s generations are."""\n'
                                     'import gc\n\n\ndef count():\n'
                                     '    """Objects in each generation."""\n'
                                     '    return gc.get_count()\n')
    guarded.write('src/app.py', 'from counting import count\n\n\ndef parse(b):\n'
                                '    return b if count() else b""\n')
    guarded.commit('the probe moves into the package')
    assert added(guarded) == []


def test_a_move_that_adds_a_use_names_the_added_one(guarded: Repo) -> None:
    """src/zeta.py keeps its use and gives a helper to src/alpha.py, which adds one of the
    same: the one reported is alpha's, not the one that stayed."""
    guarded.write('src/zeta.py', COUNTS + HELPERS)
    guarded.commit('counts and helpers')
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.write('src/zeta.py', COUNTS)
    guarded.write('src/alpha.py', HELPERS.lstrip('\n') + '\n\nimport gc\n\n\n'
                                  'def seen():\n    return gc.get_count()\n')
    guarded.commit('move the helpers, count in them too')
    assert added(guarded) == [('src/alpha.py', 13, 'object-graph', 'gc.get_count')]


def test_a_use_removed_vouches_for_no_other_capability(guarded: Repo) -> None:
    """The cheat: the gc use leaves one module, a frame walk arrives in another."""
    guarded.write('src/zeta.py', COUNTS + HELPERS)
    guarded.commit('counts and helpers')
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.write('src/zeta.py', HELPERS.lstrip('\n'))
    guarded.write('src/alpha.py', 'import sys\n\n\ndef counts():\n'
                                  '    return sys._getframe(1)\n')
    guarded.commit('move counts')
    assert added(guarded) == [('src/alpha.py', 5, 'frames', 'sys._getframe')]


def test_check_prints_the_uses_the_gate_asks_about(guarded: Repo) -> None:
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.write('src/app.py', PROBE)
    guarded.commit('probe')
    result = guarded.run(lambda argv: cli.main(['check', *(argv or [])]),
                         '--from-ref', 'main', '--to-ref', 'HEAD')
    assert result.rc == 0, result.out
    assert ('src/app.py:5: note: OG741 rule 54 use added to code src runs: '
            'interpreter-state faulthandler.is_enabled') in result.out


def test_a_repository_module_src_starts_to_import_brings_its_uses(guarded: Repo) -> None:
    """tools/probe.py was on main, unreachable from src; the change imports it."""
    guarded.write('tools/probe.py', 'import gc\n\nCOUNT = gc.get_count()\n')
    guarded.commit('a maintenance script')
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.write('src/app.py', 'from tools import probe\n\n\ndef parse(b):\n'
                                '    return b if probe.COUNT else b""\n')
    guarded.commit('use the probe')
    assert added(guarded) == [('tools/probe.py', 3, 'object-graph', 'gc.get_count')]


def test_a_package_that_is_its_own_src_root_configures_itself_freely(guarded: Repo) -> None:
    """src = ["app/"]: the package is imported by the root's own name, not foreign."""
    guarded.write('pyproject.toml', guarded.read('pyproject.toml').decode().replace(
        'src = ["src/"]', 'src = ["app/"]'))
    guarded.write('app/__init__.py', 'LIMIT = 1\n')
    guarded.write('app/cli.py', 'def main():\n    return 0\n')
    guarded.commit('the package at the root')
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.write('app/cli.py', 'import app\n\n\ndef main():\n    app.LIMIT = 2\n    return 0\n')
    guarded.commit('raise the limit')
    assert added(guarded) == []


def test_an_in_tree_backend_edited_is_a_packaging_use(guarded: Repo) -> None:
    """The base builds with its own backend (``backend-path``): a change of that code
    decides what ships. Its other files (a version file of the pyproject) are no use."""
    pyproject = guarded.read('pyproject.toml').decode()
    guarded.write('pyproject.toml', '[build-system]\nrequires = ["setuptools"]\n'
                                    'build-backend = "backend"\nbackend-path = ["_build"]\n\n'
                  + pyproject)
    guarded.write('_build/backend.py', 'from setuptools.build_meta import *\n')
    guarded.write('_build/README.md', 'The build.\n')
    guarded.commit('an in-tree backend')
    guarded.git('checkout', '-q', '-b', 'pr')
    guarded.write('_build/README.md', 'The build, with setuptools.\n')
    guarded.commit('the backend described')
    assert added(guarded) == []
    guarded.write('_build/backend.py', 'import shutil\nfrom setuptools.build_meta import *\n')
    guarded.commit('the backend edited')
    assert added(guarded) == [('_build/backend.py', 1, 'packaging',
                               'in-tree backend _build/backend.py')]
