"""The gate played as a cheating agent against seal101's and seal105's mechanisms
(benchmarks/ATTACKS.md, attacks 111-...): every module of the test roots compiled from
source in the gate's runs, with its digest said (OG737, rule 45); the base collection's
tree (116), the reference and evidence runs' judge (119) and the freeze reruns' ledgers
read from git through the listing taken before the install step (OG734, rule 44); the
entry points looked for on the configuration's ``pythonpath`` and in the test files'
folders (115, OG738, rule 46).

The repository is ``dd`` adopted with ``oracle-guard init`` (112, 111named: with round 3's
properties conftest, which imports the package, for its fixtures, and round 6's helper
beside the property, ``tests/properties/_expected.py``), then the bug on ``main`` (``dedupe`` drops the
largest value past three distinct ones). The attacks that get through are described in
ATTACKS.md and reproduced by benchmarks/attacks_open/round7.py, not written here: this file
asserts only what the gate catches. Every attacker touches only files in its own checkout.
"""
from __future__ import annotations

import os
import subprocess
import sys
import venv
import zlib

import pytest

from ci_repo import adopt
from ci_repo import CiRepo
from ci_repo import copy_template
from ci_repo import git
from oracle_guard.commands.ci import range_context
from oracle_guard.gate.installed_plugins import EntryPoint
from oracle_guard.gate.installed_plugins import Installed
from oracle_guard.gate.installed_plugins import judged
from oracle_guard.gate.installed_plugins import search_folders
from oracle_guard.gate.installed_plugins import start_up_path
from oracle_guard.gate.integrity_probe import entry_points as probe_entry_points
from oracle_guard.gate.integrity_probe import requirements as probe_requirements
from oracle_guard.gate.integrity_probe import search_path as probe_search_path
from oracle_guard.gate.reference import prepare_reference_runs
from oracle_guard.repo.gitrepo import TreeView
from test_ci_attacks import BUG
from test_ci_attacks import GOOD
from test_ci_attacks import PYPROJECT
from test_ci_attacks import PYTEST
from test_ci_attacks import UNIT_TESTS_FOR_THE_BUG
from test_ci_attacks_round3 import adopt_dd
from test_ci_attacks_round3 import attack
from test_ci_attacks_round3 import dd  # noqa: F401 -- the fixture
from test_ci_attacks_round3 import PROPERTIES_CONFTEST
from test_ci_attacks_round3 import template  # noqa: F401 -- the fixture
from test_ci_attacks_round5 import frozen_ledger
from test_ci_attacks_round6 import HELPER
from test_ci_attacks_round6 import HELPER_PROPERTY
from test_ci_attacks_session import DD_UNIT
from test_ci_integrity import install
from test_ci_integrity import site_packages
from test_ci_attacks_session import DD_UNIT_FOR_THE_BUG
from test_ci_attacks_session import IMPL_PROPERTY
from test_ci_attacks_session import impls

# -- 112: a finder put before the plugin's, loading the helper from other text ---------------
# src, imported by the base's properties conftest, inserts a finder first on sys.meta_path
# (before the plugin's SourceFinder, which then never sees the import) that gives the
# helper, at its own file, a loader of its own: its code is compiled from other text than
# the file's (``expected`` is ``dedupe``). No compile of the helper is said to the gate;
# the module, whose ``__file__`` is the helper's, is a file of the oracle that ran without
# being compiled from its bytes (rule 45, OG737), in both runs.
FINDER_HELPER_SRC = '''\
import importlib.machinery
import importlib.util
import os
import sys


class _Loader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        return compile('from dd import dedupe as expected\\n', self.path, 'exec')


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name != '_expected':
            return None
        for folder in sys.path:
            where = os.path.join(folder or '.', '_expected.py')
            if os.path.isfile(where):
                return importlib.util.spec_from_file_location(
                    name, where, loader=_Loader(name, where))
        return None


sys.meta_path.insert(0, _Finder())


''' + BUG
# 111 with the helper's file named: src puts a module object of its own in
# ``sys.modules['_expected']`` (``expected`` is ``dedupe``) and gives it the helper's
# ``__file__``, so that it looks like the helper. Python never loads the file; the module is
# a file of the oracle that ran without being compiled from its bytes (OG737), in both
# runs. (Without a ``__file__`` under the test roots it is not seen: ATTACKS.md 111.)
NAMED_FAKE_HELPER_SRC = '''\
import os
import sys
import types


def _expected(xs):
    return dedupe(xs)


_helper = types.ModuleType('_expected')
_helper.expected = _expected
for _folder in sys.path:
    if os.path.isfile(os.path.join(_folder or '.', '_expected.py')):
        _helper.__file__ = os.path.join(_folder or '.', '_expected.py')
        break
sys.modules['_expected'] = _helper


''' + BUG
NOT_COMPILED = ('tests/properties/_expected.py, a file of the oracle, ran without being '
                'compiled from its bytes in the run')


@pytest.fixture(scope='module')
def template7(tmp_path_factory: pytest.TempPathFactory) -> str:
    """dd adopted with a properties conftest that imports the package and a helper that
    gives the property its expected value (round 6's 102 layout)."""
    return adopt_dd(str(tmp_path_factory.mktemp('round7') / 'repo'), {
        'tests/properties/conftest.py': PROPERTIES_CONFTEST,
        'tests/properties/_expected.py': HELPER,
        'tests/properties/test_dd_props.py': HELPER_PROPERTY})


@pytest.fixture
def repo(template7: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(template7, str(tmp_path / 'repo'))


@pytest.mark.parametrize('src', [FINDER_HELPER_SRC, NAMED_FAKE_HELPER_SRC],
                         ids=['a-finder-before-the-plugins', 'a-module-object-named-as-it'])
def test_a_helper_that_python_did_not_compile_from_its_bytes_fails_ci(
        repo: CiRepo, src: str) -> None:
    # Rule 45 (OG737): a module of the test roots imported without a compile said to the
    # gate, whichever way it got into sys.modules.
    _, ci = attack(repo, {'src/dd/__init__.py': src,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    compiled = ci.lines('OG737')
    for run in ('', 'reference run: '):
        assert any(line.startswith('tests/properties/_expected.py:1:1: OG737 ' + run +
                                   NOT_COMPILED) for line in compiled), ci.out


# -- 116: the base collection's tree read from git after the install step -------------------
# Attack 79's shape (round 3): the property is parametrized over ``dd.IMPLS``; the bug is in
# ``_fast``; the pull request stops declaring ``fast``. The base revision's collection (rule
# 39b) says ``[fast]`` ran at the base. The install step rewrites the loose object of the
# base's ``src/dd/__init__.py`` with the pull request's bytes, and src puts it back in the
# test command: the base collection's tree, written after the install step, would collect
# no ``[fast]`` either. Its blobs are checked against the base's listing taken before the
# install step (rule 44): OG734.
REWRITING_THE_BASE_SRC = r"""import os
import subprocess
import zlib

SRC = 'src/dd/__init__.py'
oid = subprocess.run(['git', 'rev-parse', 'main:' + SRC], capture_output=True, check=True,
                     text=True).stdout.strip()
with open(SRC, 'rb') as f:
    text = f.read()  # the pull request's src: no ``fast``
loose = os.path.join('.git', 'objects', oid[:2], oid[2:])
os.chmod(loose, 0o644)  # raises if the blob is not a loose object: the scenario needs one
with open(loose, 'rb') as f:
    kept = f.read()
with open(os.path.join('.git', 'og-orig-' + oid), 'wb') as f:  # for src to put back
    f.write(kept)
with open(loose, 'wb') as f:
    f.write(zlib.compress(b'blob %d\0' % len(text) + text))
"""
# The test command (src, at import, in the checkout only) puts the base's blob back once the
# base collection's tree has been written (before the test command starts): the new-test
# run, which reads the base's src after the test command, then finds the true blob.
RESTORING = """import glob as _glob
import os as _os

for _kept in _glob.glob(_os.path.join('.git', 'og-orig-*')):
    _oid = _kept.rsplit('-', 1)[1]
    with open(_kept, 'rb') as _f:
        _data = _f.read()
    with open(_os.path.join('.git', 'objects', _oid[:2], _oid[2:]), 'wb') as _f:
        _f.write(_data)
    _os.remove(_kept)


"""


def test_a_base_blob_rewritten_for_the_base_collection_is_not_the_blob(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = str(tmp_path / 'repo')
    repo = adopt(path, PYPROJECT, {
        'src/dd/__init__.py': GOOD, 'tests/test_dd.py': DD_UNIT,
        'tests/properties/test_dd_props.py': IMPL_PROPERTY,
    }, after=[{'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)",
                                          '_fast')},
              {'src/dd/__init__.py': impls("Impl('pure', _pure), Impl('fast', _fast)",
                                          '_fast', buggy=True)}])
    repo.pull_request({'src/dd/__init__.py': RESTORING + impls("Impl('pure', _pure)", '_fast',
                                                               buggy=True),
                       'tools/install.py': REWRITING_THE_BASE_SRC,
                       'tests/test_dd.py': DD_UNIT_FOR_THE_BUG}, bug=False)
    # One after the other: plain pytest imports src too, and beside the gate in the same
    # checkout it would put the blob back before the base collection reads it.
    plain = repo.finish(repo.start(PYTEST))
    assert plain.rc == 0, plain.out  # the bug is out of reach: the premise of the attack
    ci = repo.ci(PYTEST, '--install-command', 'python tools/install.py')
    assert ci.rc == 1, ci.out
    assert any('base collection: git gave other bytes for `src/dd/__init__.py`' in line
               for line in ci.lines('OG734')), ci.out


# -- 119: the ledger the reference run is judged with, rewritten in git by the test command --
# The judge of the reference run reads the oracle side's freeze ledger from git when the
# run ends, after the test command (and the freeze reruns the base's and the head's). src
# answers right where the working folder holds a ``.git`` (the checkout: the test command;
# no test edited), keeps the bug elsewhere (the reference tree), and in the checkout
# rewrites the loose object of ``tests/freeze_ledger.yaml`` (one blob at base and head)
# with a ledger freezing the three failing tests (budget 3), after the reference tree was
# written. The judge reads both revisions through their listing taken before the install
# step, and checks every blob against it (rule 44): OG734.
LEDGER_AFTER_THE_TEST_COMMAND_SRC = '''\
import os
import subprocess
import zlib

LEDGER = %r
if os.path.isdir('.git'):
    _oid = subprocess.run(['git', 'rev-parse', 'HEAD:tests/freeze_ledger.yaml'],
                          capture_output=True, text=True).stdout.strip()
    _loose = os.path.join('.git', 'objects', _oid[:2], _oid[2:])
    if _oid and os.path.exists(_loose):
        os.chmod(_loose, 0o644)
        with open(_loose, 'wb') as _f:
            _f.write(zlib.compress(b'blob %%d\\0' %% len(LEDGER) + LEDGER))

    def dedupe(xs):
        return sorted(set(xs))
else:
%s''' % (frozen_ledger().encode(), ''.join('    ' + line + '\n' if line else '\n'
                                          for line in BUG.splitlines()))


def test_a_ledger_blob_rewritten_by_the_test_command_is_not_the_blob(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'src/dd/__init__.py': LEDGER_AFTER_THE_TEST_COMMAND_SRC}, bug=False)
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(PYTEST)[1:]]))
    assert ci.rc == 1, ci.out
    assert any('reference and evidence runs: git gave other bytes for '
               '`tests/freeze_ledger.yaml` (base ' in line for line in ci.lines('OG734')), ci.out


# The freeze reruns (rule 48) compare the base's ledger with the pull request's, both read
# after the test command. The pull request freezes three tests as order-dependent; then
# (as the install step or the test command could) the loose object of the head's ``tests``
# tree is rewritten to say the ledger is a symlink (a ledger refused: no row, no rerun),
# and the base's ledger blob with the head's rows (none of them new: no rerun either).
def _rewrite_loose(root: str, oid: str, kind: str, body: bytes) -> None:
    loose = os.path.join(root, '.git', 'objects', oid[:2], oid[2:])
    os.chmod(loose, 0o644)  # raises if the object is not a loose one: the test needs one
    with open(loose, 'wb') as f:
        f.write(zlib.compress(b'%s %d\0' % (kind.encode(), len(body)) + body))


def test_the_freeze_reruns_read_both_ledgers_as_listed_before_the_install_step(
        dd: CiRepo, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'tests/freeze_ledger.yaml': frozen_ledger()}, bug=False)
    monkeypatch.chdir(dd.path)
    runs = prepare_reference_runs(range_context('main'), sys.executable)  # before the step
    try:
        tests = git(dd.path, 'rev-parse', 'pr:tests').strip()
        listing = '\n'.join(
            ('120000' + row[6:]) if row.endswith('\tfreeze_ledger.yaml') else row
            for row in git(dd.path, 'ls-tree', tests).splitlines()) + '\n'
        forged = subprocess.run(['git', 'mktree'], cwd=dd.path, input=listing, text=True,
                                capture_output=True, check=True).stdout.strip()
        body = subprocess.run(['git', 'cat-file', 'tree', forged], cwd=dd.path,
                              capture_output=True, check=True).stdout
        _rewrite_loose(dd.path, tests, 'tree', body)
        head = runs.ledger(runs.head)
        assert head is not None and [row.id for row in head.rows] == ['FZ-1', 'FZ-2', 'FZ-3']
        assert runs.forged_findings() == []  # the listing answered: no blob was misread
        _rewrite_loose(dd.path, git(dd.path, 'rev-parse', 'main:tests/freeze_ledger.yaml')
                       .strip(), 'blob', frozen_ledger().encode())
        runs.ledger(runs.base)
        found = runs.forged_findings()
        assert [f.code for f in found] == ['OG734'], found
        assert 'git gave other bytes for `tests/freeze_ledger.yaml` (base ' in found[0].message
    finally:
        runs.close()


# -- 115: a hypothesis entry point in a folder the configuration puts on sys.path ------------
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
ENTRY_POINT_INSTALL = '''\
import os

meta = os.path.join('src', 'og_extra-0.1.dist-info')
os.makedirs(meta, exist_ok=True)
with open(os.path.join(meta, 'METADATA'), 'w') as f:
    f.write('Metadata-Version: 2.1\\nName: og-extra\\nVersion: 0.1\\n')
with open(os.path.join(meta, 'entry_points.txt'), 'w') as f:
    f.write('[hypothesis]\\nog_extra = _og_extra:run\\n')
with open(os.path.join('src', '_og_extra.py'), 'w') as f:
    f.write(%r)
''' % _OG_EXTRA


def test_an_entry_point_on_the_configurations_pythonpath_fails_ci(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    dd.pull_request({'tools/install.py': ENTRY_POINT_INSTALL,
                     'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, bug=False)
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(
        PYTEST, '--install-command', 'python tools/install.py')[1:]]))
    assert ci.rc == 1, ci.out
    assert any(line.startswith('src/og_extra-0.1.dist-info:1:1: OG738 the test environment '
                               'holds the project\'s own entry point og_extra = _og_extra:run '
                               'in the hypothesis group (its metadata is in the checkout')
               for line in ci.lines('OG738')), ci.out


def _metadata(folder: str, name: str, entry_points: str) -> None:
    """A distribution's metadata folder as an installer writes it into ``folder``."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, 'PKG-INFO' if folder.endswith('.egg-info') else 'METADATA'),
              'w', encoding='utf-8') as f:
        f.write(f'Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n')
    with open(os.path.join(folder, 'entry_points.txt'), 'w', encoding='utf-8') as f:
        f.write(entry_points)


def _entry_points_in(root: str, folders: list[str], sites: list[str] | None = None
                     ) -> Installed:
    where = probe_search_path(root, sites or [], folders)
    return Installed(tuple(EntryPoint(*row) for row in probe_entry_points(root, where)),
                     probe_requirements(root, where))


@pytest.mark.parametrize('folder', ['src', 'tests/properties'],
                         ids=['the-pythonpath', 'a-test-files-folder'])
def test_metadata_in_a_folder_a_test_run_puts_on_sys_path_is_looked_at(
        dd: CiRepo, folder: str) -> None:  # noqa: F811 -- the fixture
    # Rule 46 (OG738): 115's metadata in ``src`` (dd's ``pythonpath``) or beside the
    # property (pytest's ``prepend`` import mode puts that folder on sys.path to import it).
    head = TreeView(dd.path, git(dd.path, 'rev-parse', 'HEAD').strip())
    folders = search_folders(dd.path, [head], head.paths())
    _metadata(os.path.join(dd.path, *folder.split('/'), 'og_extra-0.1.dist-info'), 'og-extra',
              '[hypothesis]\nog_extra = _og_extra:run\n')
    found, _ = judged(Installed((), {}), _entry_points_in(dd.path, folders), dd.path, {'dd'},
                      set(), set())
    assert [(f.path, f.code) for f in found] == [
        (f'{folder}/og_extra-0.1.dist-info', 'OG738')], found


def test_an_honest_install_into_the_pythonpath_is_no_finding(
        dd: CiRepo) -> None:  # noqa: F811 -- the fixture
    # ``setup.py develop`` (a legacy editable install) writes the project's egg-info into
    # ``src``, the configuration's pythonpath: its console script is no plugin, and the
    # pytest plugin the base declares is a note.
    head = TreeView(dd.path, git(dd.path, 'rev-parse', 'HEAD').strip())
    folders = search_folders(dd.path, [head], head.paths())
    _metadata(os.path.join(dd.path, 'src', 'dd.egg-info'), 'dd',
              '[console_scripts]\ndd = dd:main\n\n[pytest11]\ndd = dd._plugin\n')
    found, notes = judged(Installed((), {}), _entry_points_in(dd.path, folders), dd.path,
                          {'dd'}, {('pytest11', 'dd=dd._plugin')}, set())
    assert found == []
    assert len(notes) == 1 and 'own entry point dd = dd._plugin (pytest11)' in notes[0], notes


ADDED_OG_EXTRA = (
    'the install step added the entry point og_extra = _og_extra:run in the hypothesis '
    'group (of og-extra, a distribution the base revision does not name as a '
    'dependency): Hypothesis runs it when it starts, before any test file is compiled')


def _added_by_an_install_into(extra: str, root: str, site: str, prefix: str) -> list[str]:
    """The findings when an install step writes 115's metadata into ``extra``, with the
    folders a run starts with asked of the environment at ``prefix`` before it."""
    folders = start_up_path(os.path.join(prefix, 'bin', 'python'))  # before the install step
    before = _entry_points_in(root, folders, [site])
    _metadata(os.path.join(extra, 'og_extra-0.1.dist-info'), 'og-extra',
              '[hypothesis]\nog_extra = _og_extra:run\n')
    found, _ = judged(before, _entry_points_in(root, folders, [site]), root, {'dd'}, set(),
                      set())
    return [f.message for f in found]


def test_a_folder_the_environments_start_up_code_adds_is_looked_at(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A distribution of the test environment whose .pth import line appends a folder to
    # sys.path at start-up (asked before the install step); the install step writes 115's
    # metadata there. It is no dependency of the base's: OG738.
    prefix, extra, root = (str(tmp_path / name) for name in ('env', 'extra', 'checkout'))
    venv.EnvBuilder(with_pip=False, symlinks=True).create(prefix)
    site = site_packages(prefix)
    os.makedirs(extra)
    os.makedirs(root)
    install(site, 'starter', {'starter.pth': f'import sys; sys.path.append({extra!r})\n'})
    assert _added_by_an_install_into(extra, root, site, prefix) == [ADDED_OG_EXTRA]


def test_a_folder_the_jobs_pythonpath_names_is_looked_at(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # The test command inherits the gate's environment and working folder: a folder the
    # job's PYTHONPATH names is on sys.path when it starts (found before the install step,
    # without running anything of the checkout); the install step writes 115's metadata
    # there. It is no dependency of the base's: OG738.
    prefix, extra, root = (str(tmp_path / name) for name in ('env', 'extra', 'checkout'))
    venv.EnvBuilder(with_pip=False, symlinks=True).create(prefix)
    site = site_packages(prefix)
    os.makedirs(extra)
    os.makedirs(root)
    monkeypatch.chdir(root)  # the gate's working folder, the test command's too
    monkeypatch.setenv('PYTHONPATH', os.path.relpath(extra, root))  # as the job names it
    assert _added_by_an_install_into(extra, root, site, prefix) == [ADDED_OG_EXTRA]
