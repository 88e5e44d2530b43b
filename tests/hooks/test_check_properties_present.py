"""check-properties-present: decision-table row 22."""
from __future__ import annotations

import pytest

from oracle_guard.hooks.check_properties_present import main

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python


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
    # a hollow test is also named on its own line (OG403, rule 31)
    assert sorted(set(result.codes)) in (['OG401'], ['OG401', 'OG403'])


@pytest.mark.parametrize('body', [
    'def test_p():\n    assert parse(b"") == b""\n',
    'def test_p():\n    parse(b"")\n',
    'class TestP:\n    def test_p(self):\n        assert 1\n',
    'from hypothesis import given, strategies as st\n\n@given(st.binary())\ndef test_p(b):\n    parse(b)\n',
    'def test_p():\n    """Round trip."""\n    return check(b"")\n',
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


# -- rule 31: a property whose body asserts nothing ----------------------------------------

HOLLOW_NEXT_TO_A_REAL_ONE = '''\
from hypothesis import given, strategies as st


@given(st.binary())
def test_parse_never_throws(buf):
    assert isinstance(buf, bytes)


@given(st.binary())
def test_parse_round_trips(buf):
{body}
'''


@pytest.mark.parametrize('body', [
    pytest.param('    pass', id='pass'),
    pytest.param('    ...', id='ellipsis'),
    pytest.param('    """Round trip: parse(render(x)) == x."""', id='only-a-docstring'),
    pytest.param('    """Round trip."""\n    return\n    assert parse(buf) == buf', id='returns-at-once'),
])
def test_property_test_emptied_to_assert_nothing_fails(guarded, body):
    """Rule 31: @given alone is no test; a property must check something."""
    guarded.write('tests/properties/test_parse.py', HOLLOW_NEXT_TO_A_REAL_ONE.format(body=body))
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG403']
    assert result.out.startswith('tests/properties/test_parse.py:10:1: OG403 property test '
                                 'test_parse_round_trips asserts nothing')


def test_only_property_emptied_to_pass_fails_twice(guarded):
    guarded.write('tests/properties/test_parse.py', 'from hypothesis import given, strategies as st'
                  '\n\n\n@given(st.binary())\ndef test_p(b):\n    pass\n')
    guarded.add()
    assert sorted(guarded.run(main).codes) == ['OG401', 'OG403']
