"""Plugins and entry points of the test environment (OG738): the project's own, or any
that the install step added, are judged by where they come from.
"""

from __future__ import annotations

import os
import sys
import venv

import pytest

import oracle_guard
from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.ci_repo import git
from builders.dedupe import _OG_EXTRA
from builders.dedupe import adopt_dd
from builders.dedupe import COMPILED_ELSEWHERE
from builders.dedupe import DD_PYTEST
from builders.dedupe import gate_alone
from builders.dedupe import SELF_WEAKENING_SRC
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG
from builders.venvs import install
from builders.venvs import site_packages
from oracle_guard.gate.installed_plugins import EntryPoint
from oracle_guard.gate.installed_plugins import Installed
from oracle_guard.gate.installed_plugins import judged
from oracle_guard.gate.installed_plugins import search_folders
from oracle_guard.gate.installed_plugins import start_up_path
from oracle_guard.gate.integrity_probe import entry_points as probe_entry_points
from oracle_guard.gate.integrity_probe import requirements as probe_requirements
from oracle_guard.gate.integrity_probe import search_path as probe_search_path
from oracle_guard.gate.sealed import COMPUTED
from oracle_guard.gate.sealed import entry_points_in
from oracle_guard.repo.tree_view import TreeView


# -- the same, run by the project's own `hypothesis` entry point ----------------------
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


ENTRY_POINT_METADATA = {
    'src/dd-1.0.dist-info/METADATA': 'Metadata-Version: 2.1\nName: dd\nVersion: 1.0\n',
    'src/dd-1.0.dist-info/entry_points.txt': '[hypothesis]\ndd = dd:_weaken\n',
}


@pytest.fixture(scope='session')
def with_profile_conftest(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'profile-conftest', lambda path: adopt_dd(path,
        {'tests/properties/conftest.py': PROFILE_CONFTEST}))


@pytest.mark.reference_run
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


# -- entry points the install step writes, not the change's files -----------------
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
    ci = calc.ci([python, *DD_PYTEST[1:]], '--test-python', python,
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
        DD_PYTEST, '--install-command', 'python tools/install.py')[1:]]))
    assert ci.rc == 1, ci.out
    # (untracked, it is no file of the project's: an addition the install step made)
    assert any(line.startswith('src/og_extra-0.1.dist-info:1:1: OG738 the install step added '
                               'the entry point og_extra = _og_extra:run in the hypothesis '
                               'group') for line in ci.lines('OG738')), ci.out


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
