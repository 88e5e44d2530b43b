"""check-properties-present on the forms real property modules take: tests defined under
``try: import hypothesis / except ImportError / else:``, tests whose body is an import,
and hints that say what the change did to the module they name."""
from __future__ import annotations

import pytest

from builders.repos import Repo
from oracle_guard.hooks.check_properties_present import main

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python


GUARDED_IMPORT = '''\
try:
    import hypothesis
except ImportError:
    hypothesis = None
else:
    from hypothesis import given, strategies as st

    from app import parse

    @given(st.binary())
    def test_parse_never_throws(buf):
{body}
'''
REAL_BODY = '        assert parse(buf) == buf'

IMPORT_ONLY = '''\
from hypothesis import given, strategies as st


def test_public_names_import():
    from app import parse  # noqa: F401 -- an import that raises fails the test


@given(st.binary())
def test_parse_never_throws(buf):
    import app
'''


def with_properties(guarded: Repo, source: str) -> Repo:
    guarded.write('tests/properties/test_parse.py', source)
    guarded.commit('the properties as upstream writes them')
    return guarded


def test_properties_under_a_guarded_hypothesis_import_are_real_tests(guarded: Repo) -> None:
    with_properties(guarded, GUARDED_IMPORT.format(body=REAL_BODY))
    assert guarded.run(main, '--all-files').rc == 0
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 0, result.out


def test_a_guarded_property_emptied_after_that_fails(guarded: Repo) -> None:
    with_properties(guarded, GUARDED_IMPORT.format(body=REAL_BODY))
    guarded.write('tests/properties/test_parse.py', GUARDED_IMPORT.format(body='        pass'))
    guarded.add()
    result = guarded.run(main)
    assert sorted(result.codes) == ['OG401', 'OG403']
    assert 'tests/properties/test_parse.py:11:1: OG403 property test test_parse_never_throws' \
        in result.out
    assert 'this change emptied it' in result.out


def test_a_test_whose_body_imports_does_something(guarded: Repo) -> None:
    with_properties(guarded, IMPORT_ONLY)
    result = guarded.run(main, '--all-files')
    assert result.rc == 0, result.out
    assert result.codes == []


def test_a_property_emptied_to_pass_next_to_an_importing_test_still_fails(
        guarded: Repo) -> None:
    with_properties(guarded, IMPORT_ONLY)
    guarded.write('tests/properties/test_parse.py',
                  IMPORT_ONLY.replace('    import app\n', '    pass\n'))
    guarded.add()
    assert guarded.run(main).codes == ['OG403']


def test_a_hollow_property_the_change_did_not_touch_is_not_to_be_restored(
        guarded: Repo) -> None:
    """The hint describes the change: a src-only change did not empty the property, so
    "git checkout HEAD -- file" would restore nothing."""
    guarded.write('tests/properties/test_parse.py', IMPORT_ONLY + '\n\ndef test_later():\n'
                  '    pass\n')
    guarded.commit('a hollow property committed without the hooks')
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG403']
    assert 'git checkout HEAD' not in result.out
    assert 'this change does not empty test_later: it asserted nothing before it' in result.out


def test_a_hollow_property_in_a_module_the_change_edits_elsewhere_is_not_to_be_restored(
        guarded: Repo) -> None:
    guarded.write('tests/properties/test_parse.py', IMPORT_ONLY + '\n\ndef test_later():\n'
                  '    pass\n')
    guarded.commit('a hollow property committed without the hooks')
    guarded.write('tests/properties/test_parse.py', IMPORT_ONLY + '\n\ndef test_later():\n'
                  '    pass\n\n\ndef test_sum():\n    assert sum([1, 2]) == 3\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG403']
    assert 'git checkout HEAD' not in result.out
    assert 'this change does not empty test_later' in result.out


def test_properties_emptied_before_the_change_are_not_to_be_restored(guarded: Repo) -> None:
    guarded.rm('tests/properties/test_parse.py')
    guarded.commit('the properties removed without the hooks')
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG401']
    assert 'git checkout HEAD' not in result.out
    assert 'this change does not touch tests/properties,' in result.out


def test_properties_removed_by_the_change_are_to_be_restored(guarded: Repo) -> None:
    guarded.rm('tests/properties/test_parse.py')
    result = guarded.run(main)
    assert result.codes == ['OG401']
    assert 'git checkout HEAD -- tests/properties)' in result.out
