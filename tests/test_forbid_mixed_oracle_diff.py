"""forbid-mixed-oracle-diff: decision-table rows 11, 12 and 13."""
from __future__ import annotations

import json

import pytest
from conftest import sha256

from oracle_guard.hooks.forbid_mixed_oracle_diff import main

MANIFEST = 'tests/fixtures/manifest.json'


def touch_src(repo):
    repo.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')


@pytest.mark.parametrize('path', [
    'tests/properties/test_parse.py',
    'tests/freeze_ledger.yaml',
    'tests/domain_lock.json',
    'tests/fixtures/traces.txt',
    '.pre-commit-config.yaml',
])
def test_src_change_with_oracle_file_change_fails(guarded, path):
    touch_src(guarded)
    guarded.write(path, guarded.read(path) + b'\n')
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 1
    assert result.codes == ['OG201']
    # both sides are named
    assert result.out.startswith(f'{path}:1:1: OG201')
    assert 'src/app.py' in result.out


def test_src_change_with_new_property_file_fails(guarded):
    touch_src(guarded)
    guarded.write('tests/properties/test_more.py', 'def test_x():\n    assert True\n')
    guarded.add()
    assert guarded.run(main).codes == ['OG201']


def test_src_change_with_deleted_property_file_fails(guarded):
    touch_src(guarded)
    guarded.add()
    guarded.rm('tests/properties/test_parse.py')
    assert guarded.run(main).codes == ['OG201']


def test_src_change_with_oracle_guard_table_change_fails(guarded):
    touch_src(guarded)
    text = guarded.read('pyproject.toml').decode().replace('src = ["src/"]', 'src = ["lib/"]')
    guarded.write('pyproject.toml', text)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert '[tool.oracle-guard] table' in result.out


def test_src_change_with_other_pyproject_change_passes(guarded):
    touch_src(guarded)
    text = guarded.read('pyproject.toml').decode().replace('name = "app"', 'name = "app2"')
    guarded.write('pyproject.toml', text)
    guarded.add()
    assert guarded.run(main).rc == 0


def test_src_change_with_existing_manifest_row_edit_fails(guarded):
    touch_src(guarded)
    doc = json.loads(guarded.read(MANIFEST))
    doc['fixtures']['headers/ok.bin']['purpose'] = 'whatever the new code emits'
    guarded.write_json(MANIFEST, doc)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert 'existing manifest rows: tests/fixtures/headers/ok.bin' in result.out


def test_src_change_with_manifest_row_removed_fails(guarded):
    touch_src(guarded)
    doc = json.loads(guarded.read(MANIFEST))
    del doc['fixtures']['headers/ok.bin']
    guarded.write_json(MANIFEST, doc)
    guarded.add()
    assert guarded.run(main).codes == ['OG201']


def test_src_change_with_new_manifest_rows_only_passes(guarded):
    touch_src(guarded)
    guarded.write('tests/fixtures/headers/new.bin', b'new')
    doc = json.loads(guarded.read(MANIFEST))
    doc['fixtures']['headers/new.bin'] = {
        'sha256': sha256(b'new'), 'source': 'human', 'purpose': 'new case',
    }
    guarded.write_json(MANIFEST, doc)
    guarded.add()
    assert guarded.run(main).rc == 0


def test_src_change_with_oracle_files_untouched_passes(guarded):
    touch_src(guarded)
    guarded.write('tests/test_app.py', 'def test_parse():\n    assert True\n')
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 0
    assert result.out == ''


def test_oracle_change_alone_passes(guarded):
    guarded.write('tests/domain_lock.json', '{"version": 1, "properties": {}}\n')
    guarded.write('tests/properties/test_parse.py', 'def test_x():\n    assert 1\n')
    guarded.add()
    assert guarded.run(main).rc == 0


def test_cheat_split_across_a_range_fails(guarded):
    base = guarded.git('rev-parse', 'HEAD').strip()
    touch_src(guarded)
    guarded.commit('code')
    guarded.write('tests/properties/test_parse.py', 'def test_x():\n    assert 1\n')
    guarded.commit('tests')
    result = guarded.run(main, '--from-ref', base, '--to-ref', 'HEAD')
    assert result.codes == ['OG201']


def test_range_from_environment_like_pre_push(guarded, monkeypatch):
    base = guarded.git('rev-parse', 'HEAD').strip()
    touch_src(guarded)
    guarded.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes: []\n')
    guarded.commit('mixed')
    monkeypatch.setenv('PRE_COMMIT_FROM_REF', base)
    monkeypatch.setenv('PRE_COMMIT_TO_REF', 'HEAD')
    assert guarded.run(main).codes == ['OG201']


def test_all_files_judges_the_head_commit_and_the_history_before_it(guarded):
    touch_src(guarded)
    guarded.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes: []\n')
    guarded.commit('mixed, pushed with --no-verify')
    assert guarded.run(main).codes == ['OG201']  # nothing staged: history mode
    guarded.commit('an innocent commit on top')
    # An innocent commit on top does not hide the mixed one (history mode).
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert '"mixed, pushed with --no-verify": oracle file changed' in result.out


def test_all_files_with_base_ref_judges_the_whole_branch(guarded):
    text = guarded.read('pyproject.toml').decode() + 'base-ref = "main"\n'
    guarded.write('pyproject.toml', text)
    guarded.commit('configure base-ref')
    guarded.git('checkout', '-q', '-b', 'feature')
    touch_src(guarded)
    guarded.commit('code')
    guarded.write('tests/properties/test_parse.py', 'def test_x():\n    assert 1\n')
    guarded.commit('tests')
    guarded.commit('something else on top')
    assert guarded.run(main, '--all-files').codes == ['OG201']


def test_root_commit_without_base_prints_note_and_passes(repo):
    repo.write('src/a.py', 'x = 1\n')
    repo.write('tests/properties/test_a.py', 'def test_a():\n    assert 1\n')
    repo.commit('root')
    result = repo.run(main)
    assert result.rc == 0
    assert 'were not checked' in result.out


def test_require_base_turns_missing_base_into_failure(repo):
    repo.write('src/a.py', 'x = 1\n')
    repo.commit('root')
    result = repo.run(main, '--require-base')
    assert result.rc == 1
    assert result.codes == ['OG001']


def test_src_roots_from_hook_args_override_config(guarded):
    guarded.write('lib/core.py', 'x = 1\n')
    guarded.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n# edited\n')
    guarded.add()
    assert guarded.run(main).rc == 0
    assert guarded.run(main, '--src', 'lib/').codes == ['OG201']


@pytest.mark.parametrize('path, text', [
    ('pyproject.toml', None),
    ('pytest.ini', '[pytest]\naddopts = --ignore=tests/properties\n'),
    ('tox.ini', '[tox]\nenvlist = py311\n\n[pytest]\naddopts = -p no:oracle_guard\n'),
    ('setup.cfg', '[tool:pytest]\naddopts = --deselect tests/test_app.py::test_parse\n'),
    ('.pytest.ini', '[pytest]\naddopts = -p no:oracle_guard\n'),
    ('tests/pytest.ini', '[pytest]\naddopts = --ignore=tests/properties\n'),
    ('pytest.toml', '[pytest]\naddopts = ["--ignore=tests/properties"]\n'),
])
def test_src_change_with_pytest_collection_config_change_fails(guarded, path, text):
    if text is None:
        text = guarded.read('pyproject.toml').decode() + \
            '\n[tool.pytest.ini_options]\naddopts = "--ignore=tests/properties"\n'
    touch_src(guarded)
    guarded.write(path, text)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert 'what pytest runs' in result.out


def test_src_change_with_unrelated_tox_section_passes(guarded):
    guarded.write('tox.ini', '[tox]\nenvlist = py311\n\n[pytest]\nxfail_strict = true\n')
    guarded.commit('tox')
    touch_src(guarded)
    guarded.write('tox.ini', '[tox]\nenvlist = py311,py312\n\n[pytest]\nxfail_strict = true\n')
    guarded.add()
    assert guarded.run(main).rc == 0


@pytest.mark.parametrize('conftest', [
    'collect_ignore = ["properties/test_parse.py"]\n',
    'collect_ignore_glob = ["properties/*"]\n',
    'def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if "parse" not in i.name]\n',
    'def pytest_ignore_collect(collection_path, config):\n    return "properties" in str(collection_path)\n',
    'def pytest_pyfunc_call(pyfuncitem):\n    return True\n',
    'pytest_plugins = ["tests.always_pass"]\n',
])
def test_src_change_with_conftest_collection_control_fails(guarded, conftest):
    touch_src(guarded)
    guarded.write('tests/conftest.py', conftest)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert 'conftest hooks' in result.out


def test_src_change_with_new_conftest_fixture_passes(guarded):
    guarded.write('tests/conftest.py', 'import pytest\n\ncollect_ignore = ["scratch"]\n')
    guarded.commit('conftest')
    touch_src(guarded)
    guarded.write('tests/conftest.py', 'import pytest\n\ncollect_ignore = ["scratch"]\n\n\n'
                  '@pytest.fixture\ndef parser():\n    return None\n')
    guarded.add()
    assert guarded.run(main).rc == 0
