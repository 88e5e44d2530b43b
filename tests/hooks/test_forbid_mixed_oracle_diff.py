"""forbid-mixed-oracle-diff: decision-table rows 11, 12 and 13."""
from __future__ import annotations

import json

import pytest
from builders.repos import sha256

from oracle_guard.hooks.forbid_mixed_oracle_diff import main

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python

MANIFEST = 'tests/fixtures/manifest.json'


def touch_src(repo):
    repo.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')


@pytest.mark.parametrize('path', [
    'tests/properties/test_parse.py',
    'tests/freeze_ledger.yaml',
    'tests/fixtures/traces.txt',
    '.pre-commit-config.yaml',
])
def test_src_change_with_oracle_file_change_fails(guarded, path):
    # The domain lock is judged by its entries (rule 51): tests/test_maintainer_changes.py.
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


def test_src_change_with_a_rehashed_row_of_a_second_fixture_folder_names_its_path(guarded):
    # With several fixture folders the keys are repository paths: the message names the
    # data file itself, not a path under the manifest's folder.
    text = guarded.read('pyproject.toml').decode()
    guarded.write('pyproject.toml', text + 'fixtures = ["tests/fixtures/", "tests/data/"]\n',
                  dedent=False)
    guarded.write('tests/data/cases.json', b'[1]\n')
    doc = json.loads(guarded.read(MANIFEST))
    doc['fixtures'] = {f'tests/fixtures/{key}': row for key, row in doc['fixtures'].items()}
    doc['fixtures']['tests/data/cases.json'] = {'sha256': sha256(b'[1]\n'), 'source': 'human',
                                                'purpose': 'the cases'}
    guarded.write_json(MANIFEST, doc)
    guarded.commit('guard tests/data/')
    touch_src(guarded)
    guarded.write('tests/data/cases.json', b'[2]\n')
    doc['fixtures']['tests/data/cases.json'].update(sha256=sha256(b'[2]\n'),
                                                    purpose='what the new code returns')
    guarded.write_json(MANIFEST, doc)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert 'existing manifest rows: tests/data/cases.json' in result.out, result.out


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


# -- rule 33: fixtures, markers, logging and output are not oracle ------------------------

FIXTURE_CONFTEST = '''\
import pytest


@pytest.fixture
def payload():
    return b"GET / HTTP/1.1\\r\\n\\r\\n"
'''


def test_fixture_only_conftest_added_in_a_new_test_folder_next_to_a_src_fix_passes(guarded):
    """Rule 33: an absent conftest controls nothing, so adding one with fixtures only is
    no oracle change (it used to be compared with an empty list and fail OG201)."""
    touch_src(guarded)
    guarded.write('tests/http/conftest.py', FIXTURE_CONFTEST)
    guarded.write('tests/http/test_http.py', 'def test_payload(payload):\n    assert payload\n')
    guarded.add()
    result = guarded.run(main)
    assert (result.rc, result.out) == (0, '')


def test_fixture_only_conftest_removed_next_to_a_src_fix_passes(guarded):
    guarded.write('tests/http/conftest.py', FIXTURE_CONFTEST)
    guarded.commit('fixtures')
    touch_src(guarded)
    guarded.rm('tests/http/conftest.py')
    guarded.add()
    assert guarded.run(main).rc == 0


PYPROJECT_WITH_PYTEST = '''\
[project]
name = "app"

[tool.oracle-guard]
src = ["src/"]

[tool.pytest.ini_options]
addopts = "-ra"
markers = ["slow: takes a while"]
'''


@pytest.mark.parametrize('edit', [
    ('markers = ["slow: takes a while"]',
     'markers = ["slow: takes a while", "network: talks to a socket"]'),
    ('addopts = "-ra"', 'addopts = "-ra"\nlog_cli = true\nlog_level = "DEBUG"'),
    ('addopts = "-ra"', 'addopts = "-ra"\nconsole_output_style = "count"\njunit_family = "xunit2"'),
])
def test_marker_or_log_setting_registered_next_to_a_src_fix_passes(guarded, edit):
    """Rule 33: only pytest settings that change what runs or how outcomes count are oracle."""
    guarded.write('pyproject.toml', PYPROJECT_WITH_PYTEST)
    guarded.commit('pytest settings')
    touch_src(guarded)
    guarded.write('pyproject.toml', PYPROJECT_WITH_PYTEST.replace(*edit))
    guarded.add()
    result = guarded.run(main)
    assert (result.rc, result.out) == (0, '')


@pytest.mark.parametrize('path, before, after', [
    ('pytest.ini', '[pytest]\nxfail_strict = true\n',
     '[pytest]\nxfail_strict = true\nmarkers =\n    slow: takes a while\n'),
    ('tox.ini', '[tox]\nenvlist = py311\n\n[pytest]\naddopts = -ra\n',
     '[tox]\nenvlist = py311\n\n[pytest]\naddopts = -ra\nlog_cli = true\n'),
    ('setup.cfg', '[tool:pytest]\naddopts = -ra\n',
     '[tool:pytest]\naddopts = -ra\nmarkers = slow\n'),
    ('pytest.toml', '[pytest]\naddopts = ["-ra"]\n',
     '[pytest]\naddopts = ["-ra"]\nmarkers = ["slow"]\n'),
])
def test_marker_registered_in_any_pytest_config_file_next_to_a_src_fix_passes(
        guarded, path, before, after):
    guarded.write(path, before)
    guarded.commit('pytest settings')
    touch_src(guarded)
    guarded.write(path, after)
    guarded.add()
    assert guarded.run(main).rc == 0


def test_new_pytest_table_with_only_markers_next_to_a_src_fix_passes(guarded):
    touch_src(guarded)
    guarded.write('pyproject.toml', guarded.read('pyproject.toml').decode() +
                  '\n[tool.pytest.ini_options]\nmarkers = ["slow"]\n')
    guarded.add()
    assert guarded.run(main).rc == 0


@pytest.mark.parametrize('edit', [
    ('addopts = "-ra"', 'addopts = "-ra --deselect tests/test_app.py::test_parse"'),
    ('addopts = "-ra"', 'addopts = "-ra"\nxfail_strict = false'),
    ('addopts = "-ra"', 'addopts = "-ra"\npython_functions = ["check_*"]'),
    ('addopts = "-ra"', 'addopts = "-ra"\nfilterwarnings = ["ignore"]'),
    ('addopts = "-ra"', 'addopts = "-ra"\nenv = ["HYPOTHESIS_PROFILE=quick"]'),  # a plugin's key
])
def test_setting_that_changes_what_runs_edited_next_to_a_src_fix_fails(guarded, edit):
    guarded.write('pyproject.toml', PYPROJECT_WITH_PYTEST)
    guarded.commit('pytest settings')
    touch_src(guarded)
    guarded.write('pyproject.toml', PYPROJECT_WITH_PYTEST.replace(*edit))
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert '[tool.pytest.ini_options] (what pytest runs)' in result.out


def test_markers_only_pytest_ini_that_takes_over_from_the_pyproject_table_fails(guarded):
    """pytest reads the first configuration file it finds: a new pytest.ini with nothing
    but markers silently drops the addopts of [tool.pytest.ini_options]."""
    guarded.write('pyproject.toml', PYPROJECT_WITH_PYTEST.replace(
        'addopts = "-ra"', 'addopts = "-ra -W error"'))
    guarded.commit('pytest settings')
    touch_src(guarded)
    guarded.write('pytest.ini', '[pytest]\nmarkers =\n    slow: takes a while\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert result.out.startswith('pytest.ini:1:1: OG201 pytest configuration file')


# -- rule 32: conftest.py / tests __init__.py test-run control, however written ----------

CONTROL = 'tests/conftest.py'
INIT = 'tests/__init__.py'


@pytest.mark.parametrize('path, text', [
    pytest.param(CONTROL, 'if True:\n    def pytest_collection_modifyitems(items):\n'
                 '        items.clear()\n', id='hook-nested-under-if'),
    pytest.param(CONTROL, 'def _drop(items):\n    items.clear()\n\n\n'
                 'globals()["pytest_collection_" + "modifyitems"] = _drop\n',
                 id='hook-bound-through-globals'),
    pytest.param(CONTROL, 'from tests.helpers import *\n', id='star-import'),
    pytest.param(CONTROL, 'from tests.helpers import drop as pytest_collection_modifyitems\n',
                 id='hook-imported-from-helper'),
    pytest.param(CONTROL, 'globals().setdefault("collect_" + "ignore", []).append("properties")\n',
                 id='collect-ignore-via-setdefault'),
    pytest.param(CONTROL, 'import _pytest.python\n\n'
                 '_pytest.python.Function.runtest = lambda self: None\n',
                 id='pytest-internal-patched'),
    pytest.param(CONTROL, 'import pytest\n\n\n@pytest.fixture(autouse=True, scope="session")\n'
                 'def done():\n    yield\n    pytest.exit("ok", returncode=0)\n',
                 id='pytest-exit-in-session-fixture'),
    pytest.param(CONTROL, 'import os as o\n\nleave = o._exit\n', id='os-exit-aliased'),
    pytest.param(INIT, 'import atexit\nimport os\n\natexit.register(os._exit, 0)\n',
                 id='init-exits-at-interpreter-exit'),
    pytest.param(INIT, 'import hypothesis\n\nhypothesis.settings.default = None\n',
                 id='init-patches-a-module'),
])
def test_test_run_control_added_next_to_a_src_fix_fails(guarded, path, text):
    """Rule 32: judged by what the module can do, not by its top-level names."""
    guarded.write('tests/helpers.py', 'def drop(items):\n    items.clear()\n')
    guarded.commit('helpers')
    touch_src(guarded)
    guarded.write(path, text)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert 'test-run control changed' in result.out
    assert result.out.startswith(f'{path}:1:1: OG201')


@pytest.mark.parametrize('text', [
    pytest.param('pytest_plugins = ["app"]\n\n\ndef test_x():\n    assert True\n',
                 id='pytest-plugins-named'),
    pytest.param('globals()["pytest_" + "plugins"] = ["app"]\n\n\ndef test_x():\n'
                 '    assert True\n', id='pytest-plugins-through-globals'),
    pytest.param('from tests.helpers import *\n\n\ndef test_x():\n    assert True\n',
                 id='star-import'),
])
def test_test_module_loading_a_plugin_next_to_a_src_fix_fails(guarded, text):
    """Rule 32: pytest loads what a test module's pytest_plugins names, so a plugin
    written in src/ and named from a unit test module can rewrite every outcome."""
    guarded.write('tests/helpers.py', 'def drop(items):\n    items.clear()\n')
    guarded.write('tests/test_unit.py', 'def test_x():\n    assert True\n')
    guarded.commit('unit test')
    touch_src(guarded)
    guarded.write('tests/test_unit.py', text)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG201']
    assert result.out.startswith('tests/test_unit.py:1:1: OG201 test module: the plugins')


def test_test_module_edited_without_plugins_next_to_a_src_fix_passes(guarded):
    guarded.write('tests/test_unit.py', 'import app\n\n\ndef test_x():\n    assert app\n')
    guarded.commit('unit test')
    touch_src(guarded)
    guarded.write('tests/test_unit.py', 'import app\n\napp.LIMIT = 3\n\n\n'
                  'def test_x():\n    assert app.LIMIT == 3\n')
    guarded.add()
    assert guarded.run(main).rc == 0


def test_test_run_control_added_alone_passes(guarded):
    guarded.write('tests/conftest.py', 'import os\n\n\ndef pytest_unconfigure(config):\n'
                  '    os._exit(0)\n')
    guarded.add()
    assert guarded.run(main).rc == 0


def test_fixture_edited_in_a_conftest_with_hooks_next_to_a_src_fix_passes(guarded):
    hook = 'def pytest_configure(config):\n    config.addinivalue_line("markers", "slow")\n'
    guarded.write('tests/conftest.py', FIXTURE_CONFTEST + '\n\n' + hook)
    guarded.commit('conftest')
    touch_src(guarded)
    guarded.write('tests/conftest.py', FIXTURE_CONFTEST.replace('GET', 'POST') + '\n\n' + hook)
    guarded.add()
    assert guarded.run(main).rc == 0


# -- rule 30: a test identity disappears in the same change as src/ ----------------------

TWO_TESTS = '''\
from app import parse


def test_parse():
    assert parse(b"x") == b"x"


class TestEdges:
    def test_empty(self):
        assert parse(b"") == b""
'''


@pytest.fixture
def two_tests(guarded):  # type: ignore[no-untyped-def]
    guarded.write('tests/test_app.py', TWO_TESTS)
    guarded.commit('two tests')
    return guarded


@pytest.mark.parametrize('edit, gone', [
    pytest.param(lambda r: r.rm('tests/test_app.py'), 'test_parse', id='file-deleted'),
    pytest.param(lambda r: r.write('tests/test_app.py', TWO_TESTS.replace(
        'def test_empty', 'def check_empty')), 'TestEdges::test_empty', id='test-renamed'),
    pytest.param(lambda r: r.write('tests/test_app.py', TWO_TESTS.replace(
        'class TestEdges', 'class Edges')), 'TestEdges::test_empty', id='class-renamed'),
    pytest.param(lambda r: r.git('mv', 'tests/test_app.py', 'tests/app_checks.py'),
                 'test_parse', id='file-renamed-out-of-collection'),
    pytest.param(lambda r: r.write('tests/test_app.py', '__test__ = False\n' + TWO_TESTS),
                 'test_parse', id='module-switched-off'),
    pytest.param(lambda r: r.write('tests/test_app.py', TWO_TESTS + '\ntest_parse = None\n'),
                 'test_parse', id='rebound-after-def'),
])
def test_test_identity_disappears_in_the_same_change_as_src_fails(two_tests, edit, gone):
    """Rule 30: tests leave in a change of their own."""
    touch_src(two_tests)
    edit(two_tests)
    two_tests.add()
    result = two_tests.run(main)
    assert result.rc == 1
    assert set(result.codes) == {'OG202'}
    assert f'OG202 test {gone} disappears in the same change as production code: src/app.py' \
        in result.out


def test_test_removed_alone_passes(two_tests):
    two_tests.rm('tests/test_app.py')
    assert two_tests.run(main).rc == 0


def test_test_moved_to_another_file_next_to_a_src_fix_passes(two_tests):
    touch_src(two_tests)
    two_tests.git('mv', 'tests/test_app.py', 'tests/test_parser.py')
    two_tests.write('tests/test_parser.py', TWO_TESTS + '\n\ndef test_new():\n    assert 1\n')
    two_tests.add()
    result = two_tests.run(main)
    assert (result.rc, result.out) == (0, '')


def test_test_removed_in_a_range_with_src_fails(two_tests):
    base = two_tests.git('rev-parse', 'HEAD').strip()
    two_tests.rm('tests/test_app.py')
    two_tests.commit('drop the tests')
    touch_src(two_tests)
    two_tests.commit('the fix')
    result = two_tests.run(main, '--from-ref', base, '--to-ref', 'HEAD')
    assert set(result.codes) == {'OG202'}


# -- rule 37: a git submodule under the tests roots --------------------------------------

def _add_gitlink(repo, path: str) -> None:  # type: ignore[no-untyped-def]
    sha = repo.git('rev-parse', 'HEAD').strip()
    repo.git('update-index', '--add', '--cacheinfo', f'160000,{sha},{path}')


@pytest.mark.parametrize('path', ['tests/vendored', 'tests/properties/more'])
def test_submodule_added_under_the_test_roots_fails(guarded, path):
    """Rule 37: what a submodule checkout holds (a conftest.py too) is never reviewed here."""
    _add_gitlink(guarded, path)
    result = guarded.run(main)
    assert result.codes == ['OG203']
    assert result.out.startswith(f'{path}:1:1: OG203 git submodule under the test roots')


def test_submodule_under_the_test_roots_fails_with_all_files(guarded):
    _add_gitlink(guarded, 'tests/vendored')
    guarded.git('commit', '-q', '--no-verify', '-m', 'vendor tests')
    guarded.git('commit', '-q', '--no-verify', '--allow-empty', '-m', 'something on top')
    assert guarded.run(main, '--all-files').codes == ['OG203']


def test_submodule_outside_the_test_roots_passes(guarded):
    _add_gitlink(guarded, 'third_party/lib')
    assert guarded.run(main).rc == 0


# -- rule 38: .pre-commit-config.yaml judged with the base side's hook args --------------

PRE_COMMIT = '''\
repos:
  - repo: local
    hooks:
      - id: forbid-mixed-oracle-diff
        name: forbid-mixed-oracle-diff
        entry: oracle-guard-forbid-mixed-oracle-diff
        language: system
        pass_filenames: false
        args: [--src, lib/]
'''


def test_pre_commit_args_re_pointed_away_from_the_code_fail(guarded):
    """Rule 38: the pull request's own args (--src vendor/) cannot hide its lib/ edit."""
    guarded.write('lib/core.py', 'x = 1\n')
    guarded.write('.pre-commit-config.yaml', PRE_COMMIT)
    guarded.commit('the guard, configured through hook args')
    guarded.write('lib/core.py', 'x = 2\n')
    guarded.write('.pre-commit-config.yaml', PRE_COMMIT.replace('lib/', 'vendor/'))
    guarded.add()
    # pre-commit runs the hook with the args of the file it is judging
    result = guarded.run(main, '--src', 'vendor/')
    assert result.codes == ['OG201']
    assert result.out.startswith('.pre-commit-config.yaml:1:1: OG201 oracle file changed in '
                                 'the same change as production code: lib/core.py')


def test_pre_commit_properties_re_pointed_with_a_property_edit_fails(guarded):
    guarded.write('.pre-commit-config.yaml', PRE_COMMIT.replace(
        '--src, lib/', '--properties, tests/props/'))
    guarded.write('tests/props/test_p.py', 'def test_p():\n    assert 1\n')
    guarded.commit('properties configured through hook args')
    touch_src(guarded)
    guarded.write('tests/props/test_p.py', 'def test_p():\n    pass\n')
    guarded.write('.pre-commit-config.yaml', PRE_COMMIT.replace(
        '--src, lib/', '--properties, tests/elsewhere/'))
    guarded.add()
    result = guarded.run(main, '--properties', 'tests/elsewhere/')
    assert sorted(result.codes) == ['OG201', 'OG201']
    assert 'tests/props/test_p.py:1:1: OG201 human-owned property test' in result.out


def test_pre_commit_args_changed_alone_passes(guarded):
    guarded.write('.pre-commit-config.yaml', PRE_COMMIT)
    guarded.commit('guard')
    guarded.write('.pre-commit-config.yaml', PRE_COMMIT.replace('lib/', 'vendor/'))
    guarded.add()
    assert guarded.run(main, '--src', 'vendor/').rc == 0
