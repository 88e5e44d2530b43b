"""``oracle-guard init`` guards the fixtures a project already has: each data folder under
the tests roots (a folder with no Python file below it: ``tests/data/``,
``pkg/tests/fixtures/``, a vendored JSON suite) is named in ``fixtures`` and every file in
it gets a manifest row, so the adoption commit passes and an edited byte afterwards fails.
Data files beside test code are named as not guarded; ``--leave-out DIR`` keeps a folder
out."""
from __future__ import annotations

import json

from builders.repos import git_calls
from builders.repos import Repo
from builders.repos import sha256
from oracle_guard.cli import main as cli
from oracle_guard.commands.init import main as init
from oracle_guard.config import load_config

PYPROJECT = '[project]\nname = "pkg"\nversion = "1"\n'
READS_DATA = '''\
import json
from pathlib import Path

from pkg import add

CASES = json.loads((Path(__file__).parent / 'data' / 'cases.json').read_text())


def test_add_cases():
    for a, b, total in CASES:
        assert add(a, b) == total
'''
CASES = b'[[1, 2, 3], [2, 2, 4]]\n'


def suite(repo: Repo) -> None:
    """A flat package whose tests read a data folder, a vendored JSON suite and a data
    file beside a helper module."""
    repo.write('pyproject.toml', PYPROJECT)
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_add.py', READS_DATA)
    repo.write('tests/data/cases.json', CASES)
    repo.write('tests/data/more/edge.txt', b'0 0 0\n')
    repo.write('tests/json-suite/tests/draft7/type.json', b'[{"valid": true}]\n')
    repo.write('tests/helpers/__init__.py', '')
    repo.write('tests/helpers/words.txt', b'alpha\nbeta\n')
    repo.write('tests/expected.txt', b'3\n')
    repo.commit('a project with data files')


def adopt(repo: Repo, *args: str) -> str:
    result = repo.run(init, *args)
    assert result.rc == 0, result.out + result.err
    repo.commit('Adopt oracle-guard')
    checked = repo.run(cli, 'check', '--all-files')
    assert checked.rc == 0, checked.out + checked.err
    return result.out


def test_init_guards_every_data_folder_under_the_tests_root(repo: Repo) -> None:
    suite(repo)
    out = adopt(repo)
    cfg = load_config(repo.path)
    assert cfg.fixtures == ('tests/fixtures/', 'tests/data/', 'tests/json-suite/')
    assert cfg.manifest == 'tests/fixtures/manifest.json'
    rows = json.loads(repo.read(cfg.manifest))['fixtures']
    assert sorted(rows) == ['tests/data/cases.json', 'tests/data/more/edge.txt',
                            'tests/json-suite/tests/draft7/type.json']
    assert rows['tests/data/cases.json']['sha256'] == sha256(CASES)
    assert all(row['source'] == 'human' for row in rows.values())
    # What init guards, and how to leave a folder out, is said; so is what it does not.
    assert 'found fixtures: tests/fixtures/, tests/data/, tests/json-suite/' in out
    assert '--leave-out DIR' in out
    assert ('2 data file(s) beside test code, not guarded: tests/expected.txt, '
            'tests/helpers/words.txt') in out
    assert 'added 3 manifest row(s) to tests/fixtures/manifest.json' in out


def test_an_edited_byte_in_an_adopted_data_folder_fails_next_to_an_honest_src_change(
        repo: Repo) -> None:
    suite(repo)
    adopt(repo)
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return b + a\n')
    repo.add('pkg/__init__.py')
    assert repo.run(cli, 'check').rc == 0
    repo.write('tests/data/cases.json', b'[[1, 2, 3], [2, 2, 5]]\n')
    repo.add('tests/data/cases.json')
    checked = repo.run(cli, 'check')
    assert checked.rc == 1
    assert 'tests/data/cases.json:1:1: OG101 sha256 mismatch' in checked.out
    repo.commit('the answer key moved with the code')
    assert 'OG101' in repo.run(cli, 'check', '--all-files').out


def test_init_guards_data_folders_of_tests_inside_the_package(repo: Repo) -> None:
    repo.write('pyproject.toml', PYPROJECT)
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('pkg/core/__init__.py', '')
    repo.write('pkg/core/tests/__init__.py', '')
    repo.write('pkg/core/tests/test_add.py', READS_DATA)
    repo.write('pkg/core/tests/data/cases.json', CASES)
    repo.write('pkg/io/__init__.py', '')
    repo.write('pkg/io/tests/__init__.py', '')
    repo.write('pkg/io/tests/test_io.py', 'def test_io():\n    assert True\n')
    repo.write('pkg/io/tests/fixtures/blob.bin', b'\x00\x01')
    repo.commit('numpy-style layout with data')
    adopt(repo)
    cfg = load_config(repo.path)
    assert cfg.tests == ('pkg/**/tests/',)
    assert cfg.fixtures == ('oracle-guard/fixtures/', 'pkg/core/tests/data/',
                            'pkg/io/tests/fixtures/')
    rows = json.loads(repo.read(cfg.manifest))['fixtures']
    assert sorted(rows) == ['pkg/core/tests/data/cases.json', 'pkg/io/tests/fixtures/blob.bin']
    repo.write('pkg/io/tests/fixtures/blob.bin', b'\x00\x02')
    repo.add('pkg/io/tests/fixtures/blob.bin')
    assert repo.run(cli, 'check').codes == ['OG101']


def test_init_leaves_a_named_data_folder_out_and_says_so(repo: Repo) -> None:
    suite(repo)
    out = adopt(repo, '--leave-out', 'tests/json-suite')
    cfg = load_config(repo.path)
    assert cfg.fixtures == ('tests/fixtures/', 'tests/data/')
    assert 'tests/json-suite/: a data folder left out (--leave-out), not guarded' in out
    rows = json.loads(repo.read(cfg.manifest))['fixtures']
    assert 'tests/json-suite/tests/draft7/type.json' not in rows


def test_init_refuses_to_leave_out_a_folder_that_is_not_a_data_folder(repo: Repo) -> None:
    suite(repo)
    before = repo.snapshot()
    result = repo.run(init, '--leave-out', 'tests/helpers')
    assert result.rc == 2
    assert '--leave-out tests/helpers/: not a data folder' in result.err
    assert 'tests/data/, tests/json-suite/' in result.err
    assert repo.snapshot() == before


def test_init_with_a_table_already_there_names_the_data_folders_it_leaves_unguarded(
        repo: Repo) -> None:
    suite(repo)
    repo.write('pyproject.toml', PYPROJECT + '\n[tool.oracle-guard]\nsrc = ["pkg/"]\n')
    repo.commit('a table of its own')
    result = repo.run(init)
    assert result.rc == 0, result.err
    assert load_config(repo.path).fixtures == ('tests/fixtures/',)
    assert ('note: data folder(s) under the tests roots not guarded: tests/data/, '
            'tests/json-suite/') in result.out


def test_init_reads_the_blobs_of_a_data_folder_in_batches(repo: Repo, monkeypatch) -> None:
    # One git process per file made a project with thousands of fixtures wait minutes.
    repo.write('pyproject.toml', PYPROJECT)
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_add.py', READS_DATA)
    for n in range(300):
        repo.write(f'tests/data/case_{n:03}.json', f'[[{n}, 0, {n}]]\n')
    repo.commit('many data files')
    calls = git_calls(monkeypatch)
    result = repo.run(init)
    assert result.rc == 0, result.err
    rows = json.loads(repo.read('tests/fixtures/manifest.json'))['fixtures']
    assert len(rows) == 300
    assert rows['tests/data/case_007.json']['sha256'] == sha256(b'[[7, 0, 7]]\n')
    assert calls.count('cat-file') < 10, calls.count('cat-file')
    assert len(calls) < 60, sorted(set(calls))
