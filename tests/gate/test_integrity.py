"""Integrity of the test machinery (rule 46): the test environment against pip's RECORD,
and no start-up code the install step adds runs in the gate's own runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import venv
from typing import Any

import pytest

from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import PYTEST
from builders.ci_repo import PYTEST as DD_PYTEST
from builders.dedupe import DISCARDING_SRC
from builders.dedupe import GOOD
from builders.dedupe import PROPERTY_ID
from builders.dedupe import SMALL_UNIT_TESTS
from builders.venvs import install
from builders.venvs import site_packages
from oracle_guard.gate.integrity import inspect_environment
from oracle_guard.gate.integrity import integrity_findings
from oracle_guard.gate.integrity import integrity_notes
from oracle_guard.gate.integrity import Probe
from oracle_guard.gate.reference_process import ISOLATED
from oracle_guard.gate.reference_process import START_UP

pytestmark = [pytest.mark.reference_run, pytest.mark.every_python]


# -- start-up code the install step writes into the test environment ---------------------
# The install step (standing for a setup.py) writes files into the test environment's
# site-packages with a dist-info whose RECORD lists them with their true hashes, as pip
# would: no OG727 (a .pth no RECORD lists), no OG726 (a file that differs from its RECORD).
INSTALL_FILES = '''\
import base64
import hashlib
import os
import sysconfig

SITE = sysconfig.get_paths()['purelib']
FILES = %r
rows = []
for name, text in FILES.items():
    path = os.path.join(SITE, *name.split('/'))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = text.replace('CHECKOUT', repr(os.getcwd())).encode()
    with open(path, 'wb') as f:
        f.write(data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    rows.append(f'{name},sha256={digest},{len(data)}')
rows.append('%s-0.1.dist-info/RECORD,,')
with open(os.path.join(SITE, '%s-0.1.dist-info', 'RECORD'), 'w') as f:
    f.write('\\n'.join(rows) + '\\n')
'''


def install_step(dist: str, files: dict[str, str]) -> str:
    metadata = f'Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n\n'
    return INSTALL_FILES % ({**files, f'{dist}-0.1.dist-info/METADATA': metadata}, dist, dist)


# 132: og_boot.pth's import line runs og_boot at every start-up of the environment's
# interpreter; it makes the plugin's judge of discards answer "not src's" for every one.
BOOT = install_step('og_boot', {'og_boot.pth': 'import og_boot\n', 'og_boot.py': (
    'try:\n    from oracle_guard.runtime import example_count\n'
    '    example_count.Discards.by_src = lambda self, exc: None\n'
    'except Exception:\n    pass\n')})


# The honest case: an editable install of the project through a finder, as setuptools
# writes one for a layout it cannot map with a path line (an import line that installs a
# meta path finder for ``dd`` in the checkout's src).
FINDER = install_step('dd', {'__editable__.dd-0.1.pth': (
    'import __editable___dd_0_1_finder; __editable___dd_0_1_finder.install()\n'),
    '__editable___dd_0_1_finder.py': (
        'import importlib.util\nimport os\nimport sys\n\n\nclass _Finder:\n'
        '    @staticmethod\n    def find_spec(name, path=None, target=None):\n'
        '        if name == "dd":\n'
        '            return importlib.util.spec_from_file_location(name, os.path.join('
        'CHECKOUT, "src", "dd", "__init__.py"))\n\n\n'
        'def install():\n    sys.meta_path.append(_Finder)\n')})


@pytest.mark.parametrize('system_site', [False, True], ids=['venv', 'system-site-packages'])
def test_the_gates_runs_get_sites_path_lines_and_none_of_its_start_up_code(
        tmp_path, system_site: bool) -> None:  # type: ignore[no-untyped-def]
    prefix = str(tmp_path / 'env')
    venv.EnvBuilder(with_pip=False, system_site_packages=system_site,
                    symlinks=os.name != 'nt').create(prefix)
    python = os.path.join(prefix, 'Scripts' if os.name == 'nt' else 'bin', 'python')
    site = site_packages(prefix)
    ran = tmp_path / 'ran'
    for folder in ('by_path_line', 'by_import_line'):
        os.mkdir(tmp_path / folder)
    install(site, 'start_up', {
        'paths.pth': f'# a comment\n{tmp_path / "by_path_line"}\n\n{tmp_path / "missing"}\n',
        'code.pth': f'import sys; sys.path.append({str(tmp_path / "by_import_line")!r}); '
                    f'open({str(ran)!r}, "a").write("pth ")\n',
        'sitecustomize.py': f'open({str(ran)!r}, "a").write("sitecustomize ")\n'})
    show = 'import json, sys\njson.dump([sys.prefix, sys.path], sys.stdout)\n'
    by_site = json.loads(subprocess.run([python, '-I', '-c', show], check=True,
                                        capture_output=True).stdout)
    assert set(ran.read_text().split()) == {'pth', 'sitecustomize'}  # site runs both
    ran.unlink()
    gate = json.loads(subprocess.run([python, *ISOLATED, '-c', START_UP + show], check=True,
                                     capture_output=True).stdout)
    assert not ran.exists()
    # site's prefix and sys.path, in its order, but for what the import line added
    assert gate == [by_site[0], [p for p in by_site[1] if not p.endswith('by_import_line')]]
    assert str(tmp_path / 'by_path_line') in gate[1]
    assert str(tmp_path / 'by_import_line') in by_site[1]


def suite_env(tmp_path) -> str:  # type: ignore[no-untyped-def]
    """A fresh environment (no pip) that reaches this suite's pytest, Hypothesis and
    oracle-guard through the path lines of a ``.pth`` a distribution of its own lists."""
    prefix = str(tmp_path / 'env')
    venv.EnvBuilder(with_pip=False, symlinks=os.name != 'nt').create(prefix)
    import oracle_guard

    here = [os.path.dirname(os.path.dirname(os.path.abspath(pytest.__file__))),
            os.path.dirname(os.path.dirname(os.path.abspath(oracle_guard.__file__)))]
    # (named to sort first: site reads the .pth files in the order of their names)
    install(site_packages(prefix), 'aa_suite', {'aa_suite.pth': ''.join(
        f'{folder}\n' for folder in dict.fromkeys(here))})
    return os.path.join(prefix, 'Scripts' if os.name == 'nt' else 'bin', 'python')


def start_up_gate(repo: CiRepo, python: str) -> Any:
    test_command = [python, *DD_PYTEST[1:]]
    return repo.finish(repo.start([sys.executable, '-I', *repo.ci_args(
        test_command, '--test-python', python, '--install-command',
        'python tools/install.py')[1:]]))


def test_start_up_code_the_install_step_adds_does_not_run_in_the_gates_runs(
        dd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Rule 46 (OG727 asks only for a RECORD) and rule 44: the reference run's OG717 stands.
    repo = copy_template(dd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/dd/__init__.py': DISCARDING_SRC, 'tests/test_dd.py': SMALL_UNIT_TESTS,
                       'tools/install.py': BOOT}, bug=False)
    ci = start_up_gate(repo, suite_env(tmp_path))
    assert ci.rc == 1, ci.out
    # The start-up code ran in the test command (its own OG717 is gone: the attack is live)
    assert not [line for line in ci.lines('OG717') if 'reference run:' not in line], ci.out
    assert not ci.lines('OG727') and not ci.lines('OG726'), ci.out
    assert any('reference run: OG717' in line and PROPERTY_ID in line
               and 'src/dd/__init__.py:12' in line for line in ci.lines('OG734')), ci.out
    assert any('note: the install step added start-up code' in line and
               'og_boot.pth: import og_boot)' in line for line in ci.out.splitlines()), ci.out


def test_an_editable_finder_the_install_step_adds_leaves_an_honest_fix_passing(
        dd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The gate's runs skip the finder's import line: the tree's src roots come first anyway.
    repo = copy_template(dd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/dd/__init__.py': GOOD, 'tools/install.py': FINDER}, bug=False)
    ci = start_up_gate(repo, suite_env(tmp_path))
    assert ci.rc == 0, ci.out
    assert 'oracle-guard ci: 0 finding(s); test command exited 0' in ci.out, ci.out
    notes = [line for line in ci.out.splitlines() if 'added start-up code' in line]
    assert len(notes) == 1 and '__editable__.dd-0.1.pth: import __editable___dd_0_1' in notes[0]


PLUGGY_SOURCE = 'def hookimpl():\n    return "the real pluggy"\n'


@pytest.fixture
def env(tmp_path) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(the interpreter, its site-packages) of a fresh environment with pluggy installed."""
    prefix = str(tmp_path / 'env')
    venv.EnvBuilder(with_pip=False, symlinks=os.name != 'nt').create(prefix)
    site = site_packages(prefix)
    install(site, 'pluggy', {'pluggy/__init__.py': PLUGGY_SOURCE})
    python = os.path.join(prefix, 'Scripts' if os.name == 'nt' else 'bin', 'python')
    return python, site


def codes(python: str) -> list[str]:
    return [f.code for f in integrity_findings(('before the run', inspect_environment(python)))]


def test_untouched_environment_has_no_finding(env: tuple[str, str]) -> None:
    python, site = env
    seen = inspect_environment(python)
    assert seen.present == ['pluggy']
    assert os.path.realpath(site) in seen.folders
    assert integrity_findings(('before the run', seen)) == []


def test_installed_pluggy_file_edited_fails(env: tuple[str, str]) -> None:
    python, site = env
    with open(os.path.join(site, 'pluggy', '__init__.py'), 'a', encoding='utf-8') as f:
        f.write('hookimpl = lambda: None\n')
    assert codes(python) == ['OG726']


def test_installed_pluggy_file_deleted_fails(env: tuple[str, str]) -> None:
    python, site = env
    os.remove(os.path.join(site, 'pluggy', '__init__.py'))
    assert codes(python) == ['OG726']


def test_a_look_since_an_earlier_one_reads_again_what_changed_even_with_its_times_put_back(
        env: tuple[str, str]) -> None:
    """The look after the run reads again only the files whose size, times, inode or mode
    changed since the look before: a file rewritten to the same size with its access and
    modification times put back (os.utime) has a new change time, which nothing sets
    back."""
    python, site = env
    path = os.path.join(site, 'pluggy', '__init__.py')
    before = inspect_environment(python)
    assert os.path.realpath(path) in {os.path.realpath(p) for p in before.checked}
    again = inspect_environment(python, since=before)
    assert integrity_findings(('after the run', again)) == []
    assert again.checked == before.checked  # each file found right, unchanged
    times = os.stat(path)
    with open(path, 'w', encoding='utf-8') as f:
        f.write(PLUGGY_SOURCE.replace('the real', 'the fake'))  # the same size
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert os.path.getsize(path) == times.st_size
    after = inspect_environment(python, since=before)
    assert [f.code for f in integrity_findings(('after the run', after))] == ['OG726']


def _hex_record(site: str, dist: str, rel: str, text: str) -> None:
    """``rel`` installed with a RECORD whose hashes are hex, as uv_build before 0.8 writes
    them (bidict's editable install: ``bidict.pth,sha256=1d02...,23``)."""
    with open(os.path.join(site, rel), 'w', encoding='utf-8') as f:
        f.write(text)
    meta = os.path.join(site, f'{dist}-1.0.dist-info')
    os.makedirs(meta)
    digest = hashlib.sha256(text.encode()).hexdigest()
    with open(os.path.join(meta, 'RECORD'), 'w', encoding='utf-8') as f:
        f.write(f'{rel},sha256={digest},{len(text.encode())}\n{dist}-1.0.dist-info/RECORD,,\n')


def test_a_record_with_hex_hashes_is_read_as_the_same_digest(env: tuple[str, str]) -> None:
    python, site = env
    _hex_record(site, 'proj', 'proj.pth', '/work/proj/\n')
    assert codes(python) == []


def test_a_file_that_differs_from_a_hex_hash_still_fails(env: tuple[str, str]) -> None:
    python, site = env
    _hex_record(site, 'proj', 'proj.pth', '/work/proj/\n')
    with open(os.path.join(site, 'proj.pth'), 'a', encoding='utf-8') as f:
        f.write('/elsewhere/\n')
    assert codes(python) == ['OG726']


@pytest.mark.parametrize('name', ['zz_speed.pth', 'sitecustomize.py', 'usercustomize.py'])
def test_startup_file_no_record_lists_fails(env: tuple[str, str], name: str) -> None:
    python, site = env
    with open(os.path.join(site, name), 'w', encoding='utf-8') as f:
        f.write('import os\n')
    assert codes(python) == ['OG727']


def test_a_probe_started_early_reports_the_environment_as_it_was_then(
        env: tuple[str, str]) -> None:
    # The gate starts the probe while it reads the revisions (no install step): what it
    # reports is the environment then, and a file written later is the next probe's.
    python, site = env
    probe = Probe(python)
    assert probe.proc is not None
    probe.proc.wait()
    with open(os.path.join(site, 'zz_late.pth'), 'w', encoding='utf-8') as f:
        f.write('import os\n')
    assert integrity_findings(('before the run', probe.result())) == []
    assert codes(python) == ['OG727']


def test_a_probe_of_an_interpreter_that_cannot_run_is_a_configuration_error(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    from oracle_guard.findings import ConfigError

    with pytest.raises(ConfigError, match='cannot inspect the test environment'):
        Probe(str(tmp_path / 'no-python')).result()


def test_pth_file_a_distribution_installed_passes_but_not_once_edited(
        env: tuple[str, str]) -> None:
    python, site = env
    install(site, 'helper', {'helper.pth': 'import helper_boot\n', 'helper_boot.py': ''})
    assert codes(python) == []
    with open(os.path.join(site, 'helper.pth'), 'a', encoding='utf-8') as f:
        f.write('import atexit, os; atexit.register(os._exit, 0)\n')
    assert codes(python) == ['OG726']


def compiled_path(site: str) -> str:
    return os.path.join(site, 'pluggy', '__pycache__',
                        f'__init__.{sys.implementation.cache_tag}.pyc')


def test_pyc_next_to_an_unchanged_source_that_is_other_code_fails(env: tuple[str, str],
                                                                 tmp_path) -> None:  # type: ignore[no-untyped-def]
    python, site = env
    source = os.path.join(site, 'pluggy', '__init__.py')
    # Other code, compiled with the real source's size and time in its header, so Python
    # loads it instead of the source.
    other = tmp_path / '__init__.py'
    other.write_text(PLUGGY_SOURCE.replace('the real pluggy', 'a fake one!!!!!'))
    stat = os.stat(source)
    os.utime(other, (stat.st_atime, stat.st_mtime))
    os.makedirs(os.path.dirname(compiled_path(site)))
    subprocess.run([python, '-I', '-c', 'import py_compile, sys; '
                    'py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)',
                    str(other), compiled_path(site)], check=True)
    loaded = subprocess.run([python, '-c', 'import pluggy; print(pluggy.hookimpl())'],
                            capture_output=True, text=True)
    assert 'a fake one' in loaded.stdout  # the forged cache file is what runs
    assert codes(python) == ['OG728']


def test_pyc_python_wrote_for_the_real_source_passes(env: tuple[str, str]) -> None:
    python, site = env
    subprocess.run([python, '-I', '-c', 'import pluggy'], check=True)  # the importer writes it
    assert os.path.isfile(compiled_path(site))
    assert codes(python) == []


# A set display of constants in a test of membership is compiled to a frozenset constant,
# whose order is the hash order of the process that compiled it: pip compiles at install
# time, the probe compiles again under another hash seed.
WORDS = ', '.join(repr(f'word{n}') for n in range(40))


PLUGGY_WITH_A_SET = f'def hookimpl(name):\n    return name in {{{WORDS}}}\n'


@pytest.mark.parametrize('seed', ['1', '2', '3', '4', '5'])
def test_pyc_of_a_frozenset_constant_compiled_under_another_hash_seed_passes(
        env: tuple[str, str], seed: str) -> None:
    python, site = env
    install(site, 'hypothesis', {'hypothesis/__init__.py': PLUGGY_WITH_A_SET})
    # The importer writes the cache file under one seed; the probe (python -I) runs under a
    # random one.
    wrote = {k: v for k, v in os.environ.items() if k != 'PYTHONDONTWRITEBYTECODE'}
    subprocess.run([python, '-c', 'import hypothesis'], check=True,
                   env=dict(wrote, PYTHONHASHSEED=seed))
    assert os.path.isfile(os.path.join(site, 'hypothesis', '__pycache__',
                                       f'__init__.{sys.implementation.cache_tag}.pyc'))
    assert codes(python) == []


def test_a_library_the_machinery_requires_edited_fails_and_one_it_does_not_passes(
        env: tuple[str, str]) -> None:
    # Hypothesis imports sortedcontainers when it is imported: an install step that rewrites
    # it changes the run as surely as one that rewrites Hypothesis.
    python, site = env
    install(site, 'hypothesis', {'hypothesis/__init__.py': 'import sortedcontainers\n'})
    with open(os.path.join(site, 'hypothesis-1.0.dist-info', 'METADATA'), 'w',
              encoding='utf-8') as f:
        f.write('Metadata-Version: 2.1\nName: hypothesis\nVersion: 1.0\n'
                'Requires-Dist: sortedcontainers<3.0.0,>=2.1.0\n'
                'Requires-Dist: Exceptiongroup>=1.0.0; python_version < "3.11"\n\n'
                'Requires-Dist: not-a-header\n')
    install(site, 'sortedcontainers', {'sortedcontainers/__init__.py': 'SORTED = 1\n'})
    install(site, 'not_a_header', {'not_a_header/__init__.py': 'X = 1\n'})
    assert codes(python) == []
    for package in ('sortedcontainers', 'not_a_header'):
        with open(os.path.join(site, package, '__init__.py'), 'a', encoding='utf-8') as f:
            f.write('import atexit, os; atexit.register(os._exit, 0)\n')
    assert codes(python) == ['OG726']
    seen = inspect_environment(python)
    assert [dist for dist, _path, _why in seen.changed] == ['sortedcontainers']


def test_editable_install_is_judged_where_it_can_be_and_says_so(env: tuple[str, str]) -> None:
    python, site = env
    install(site, 'oracle_guard', {'__editable__.oracle_guard-1.0.pth': '/src\n'},
            editable=True)
    seen = inspect_environment(python)
    assert integrity_findings(('before the run', seen)) == []
    assert any('editable install' in note for note in integrity_notes(seen))


@pytest.mark.reference_run(False)  # the integrity probe's finding only
def test_install_step_planting_a_pth_that_forces_exit_0_fails_ci(env: tuple[str, str],
                                                                tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The test environment reaches this suite's pytest and oracle-guard through a .pth
    # that a distribution of its own lists; the install step adds one that none lists.
    python, site = env
    here = os.path.dirname(os.path.dirname(os.path.abspath(pytest.__file__)))
    install(site, 'suite_link', {'suite_link.pth': here + '\n'})
    template = build_template(str(tmp_path / 'template'))
    calc = copy_template(template, str(tmp_path / 'repo'))
    calc.pull_request({'tools/install.py': (
        'import os, sys\n\nsite = sys.argv[1]\n'
        'with open(os.path.join(site, "zz_fast.pth"), "w") as f:\n'
        '    f.write("import atexit, os; atexit.register(os._exit, 0)\\n")\n')})
    install_command = f'python tools/install.py {site}'
    test_command = [python, *PYTEST[1:]]
    plain_install = subprocess.run(install_command, shell=True, cwd=calc.path,
                                   env=calc.env({'PATH': os.path.dirname(python) + os.pathsep +
                                                 os.environ['PATH']}))
    assert plain_install.returncode == 0
    plain = calc.finish(calc.start(test_command))
    assert plain.rc == 0, plain.out  # the bug is there, and pytest "passes"
    os.remove(os.path.join(site, 'zz_fast.pth'))
    ci = calc.ci(test_command, '--test-python', python, '--install-command', install_command)
    assert ci.rc == 1, ci.out
    assert any('zz_fast.pth' in line for line in ci.lines('OG727')), ci.out


def test_the_run_records_code_measure_ignores_the_hash_order_a_cache_file_was_written_in(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The run record compares the code that ran (maybe loaded from a cache file another
    # process wrote) with the code compiled from the source here: the same measure.
    import marshal

    from oracle_guard.runtime.source_code import code_fingerprint

    source = PLUGGY_WITH_A_SET
    dumped = tmp_path / 'code.bin'
    for seed in ('1', '2', '3'):
        subprocess.run([sys.executable, '-c', 'import marshal, sys; open(sys.argv[1], "wb")'
                        '.write(marshal.dumps(compile(sys.argv[2], "m.py", "exec")))',
                        str(dumped), source], check=True,
                       env=dict(os.environ, PYTHONHASHSEED=seed))
        loaded = marshal.loads(dumped.read_bytes())
        fresh = compile(source, 'm.py', 'exec', dont_inherit=True)
        assert code_fingerprint(loaded) == code_fingerprint(fresh)
