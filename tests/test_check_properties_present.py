"""check-properties-present: decision-table row 22."""
from __future__ import annotations

import pytest

from oracle_guard.hooks.check_properties_present import main


def test_properties_with_a_real_test_pass(guarded):
    assert guarded.run(main).rc == 0
    assert guarded.run(main, '--all-files').rc == 0


def test_commit_deleting_the_only_property_file_fails(guarded):
    guarded.rm('tests/properties/test_parse.py')
    result = guarded.run(main)
    assert result.rc == 1
    assert result.codes == ['OG401']
    assert 'holds no test module' in result.out


def test_deleted_on_disk_but_still_in_the_index_passes(guarded):
    import os
    os.remove(os.path.join(guarded.path, 'tests/properties/test_parse.py'))
    guarded.write('src/app.py', 'x = 1\n')
    guarded.add('src/app.py')
    # The commit records the index, where the property file is still present.
    assert guarded.run(main).rc == 0


def test_untracked_property_file_does_not_count(repo):
    repo.write('src/a.py', 'x = 1\n')
    repo.add()
    repo.write('tests/properties/test_p.py', 'def test_p():\n    assert 1\n')  # never added
    assert repo.run(main).codes == ['OG401']


def test_missing_properties_folder_fails(repo):
    repo.write('src/a.py', 'x = 1\n')
    repo.commit('init')
    assert repo.run(main).codes == ['OG401']


@pytest.mark.parametrize('body', [
    'def test_p():\n    pass\n',
    'def test_p():\n    """A docstring is not a test."""\n',
    'def test_p():\n    ...\n',
    'class TestP:\n    def test_p(self):\n        pass\n',
    'def helper():\n    assert 1\n',
    '# only a comment\n',
])
def test_properties_without_a_real_test_fail(guarded, body):
    guarded.write('tests/properties/test_parse.py', body)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG401']


@pytest.mark.parametrize('body', [
    'def test_p():\n    assert parse(b"") == b""\n',
    'def test_p():\n    parse(b"")\n',
    'class TestP:\n    def test_p(self):\n        assert 1\n',
    'from hypothesis import given, strategies as st\n\n@given(st.binary())\ndef test_p(b):\n    pass\n',
    'import hypothesis as h\nimport hypothesis.strategies as s\n\n@h.given(s.binary())\ndef test_p(b):\n    pass\n',
])
def test_properties_with_a_test_that_does_something_pass(guarded, body):
    guarded.write('tests/properties/test_parse.py', body)
    guarded.add()
    assert guarded.run(main).rc == 0


def test_non_test_modules_do_not_count(guarded):
    guarded.rm('tests/properties/test_parse.py')
    guarded.write('tests/properties/helpers.py', 'def test_p():\n    assert 1\n')
    guarded.add()
    assert guarded.run(main).codes == ['OG401']


def test_unparsable_property_file_does_not_count(guarded):
    guarded.write('tests/properties/test_parse.py', 'def test_p(:\n    assert 1\n')
    guarded.add()
    assert guarded.run(main).codes == ['OG401']


def test_properties_folder_from_hook_args(guarded):
    assert guarded.run(main, '--properties', 'tests/elsewhere/').codes == ['OG401']


@pytest.mark.parametrize('body', [
    '__test__ = False\n\ndef test_p():\n    assert 1 + 1 == 2\n',
    'def test_p():\n    assert 1 + 1 == 2\n\ntest_p = None\n',
    'def test_p():\n    assert 1 + 1 == 2\n\ndel test_p\n',
    'def test_p():\n    assert 1 + 1 == 2\n\ntest_p.__test__ = False\n',
    'class TestP:\n    __test__ = False\n\n    def test_p(self):\n        assert 1\n',
], ids=['module off', 'rebound', 'deleted', 'function off', 'class off'])
def test_properties_pytest_would_not_collect_do_not_count(guarded, body):
    guarded.write('tests/properties/test_parse.py', body)
    guarded.add()
    assert guarded.run(main).codes == ['OG401']


def test_property_test_removed_together_with_test_edits_fails(guarded):
    guarded.write('tests/properties/test_more.py', 'def test_q():\n    assert bytes(range(3))\n')
    guarded.commit('a second property')
    guarded.rm('tests/properties/test_more.py')
    guarded.write('tests/test_app.py', 'def test_two():\n    assert 2\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG402']
    assert 'property test test_q removed in the same change as tests/test_app.py' in result.out


def test_property_test_removed_alone_passes(guarded):
    guarded.write('tests/properties/test_more.py', 'def test_q():\n    assert bytes(range(3))\n')
    guarded.commit('a second property')
    guarded.rm('tests/properties/test_more.py')
    assert guarded.run(main).rc == 0


def test_property_test_moved_within_the_folder_passes(guarded):
    guarded.git('mv', 'tests/properties/test_parse.py', 'tests/properties/test_parsing.py')
    guarded.write('src/app.py', 'x = 1\n')
    guarded.add()
    assert guarded.run(main).rc == 0


def test_properties_folder_moved_by_config_with_test_edits_fails(guarded):
    text = guarded.read('pyproject.toml').decode() + 'properties = "tests/props2/"\n'
    guarded.write('pyproject.toml', text)
    guarded.write('tests/props2/test_x.py', 'def test_x():\n    assert True\n')
    guarded.write('tests/test_app.py', 'def test_two():\n    assert 2\n')
    guarded.add()
    assert 'OG402' in guarded.run(main).codes
