"""check-generator-lock: decision rows 23, 24, 25, 27, 28 and the evasions of issue 4."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from builders.repos import PROPERTY_TEST

from oracle_guard.hooks.check_generator_lock import main

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python

LOCK = 'tests/domain_lock.json'


def lock(repo, properties):  # type: ignore[no-untyped-def]
    repo.write_json(LOCK, {'version': 1, 'properties': properties})


def prop(repo, body, path='tests/properties/test_parse.py'):  # type: ignore[no-untyped-def]
    repo.write(path, body)


def run_all(repo, *args):  # type: ignore[no-untyped-def]
    """`pre-commit run --all-files`: what git tracks, as it is on disk."""
    repo.add()
    return repo.run(main, '--all-files', *args)


def test_guarded_repo_with_intact_lock_passes(guarded):
    result = run_all(guarded)
    assert result.rc == 0, result.out
    assert result.codes == []


# -- row 23: narrower than the lock ---------------------------------------------------------

def test_max_examples_lowered_below_lock_fails_naming_field_lock_and_live(guarded):
    prop(guarded, '''\
        from hypothesis import given, settings, strategies as st


        @settings(max_examples=10)
        @given(st.binary())
        def test_parse_never_throws(buf):
            assert isinstance(buf, bytes)
        ''')
    result = run_all(guarded)
    assert result.rc == 1
    assert result.codes == ['OG602']
    assert 'tests/properties/test_parse.py:4:' in result.out
    assert 'max_examples: locked at 100, live value 10' in result.out


@pytest.mark.parametrize(('locked', 'strategy'), [
    ({'max_size': 4096}, 'st.binary(max_size=64)'),
    ({'min_size': 0}, 'st.binary(min_size=3)'),
    ({'alphabet': '0123456789abcdef'}, 'st.text("0123456789")'),
    ({'min_value': 0, 'max_value': 1000}, 'st.integers(0, 10)'),
    ({'min_value': -5}, 'st.integers(min_value=0)'),
])
def test_strategy_bound_narrowed_below_lock_fails(guarded, locked, strategy):
    lock(guarded, {'test_p': locked})
    prop(guarded, f'''\
        from hypothesis import given, strategies as st


        @given({strategy})
        def test_p(x):
            assert x is not None
        ''')
    result = run_all(guarded)
    assert result.rc == 1, result.out
    assert set(result.codes) == {'OG602'}
    for name in locked:
        if name in ('max_size', 'min_size', 'alphabet') or name in result.out:
            assert f'{name}: locked at {json.dumps(locked[name])}' in result.out


@pytest.mark.parametrize(('locked', 'decorators'), [
    ({'seed': 20260916}, '@seed(1)'),
    ({'derandomize': True}, '@settings(derandomize=False)'),
    ({'deadline_ms': 400}, '@settings(deadline=timedelta(milliseconds=50))'),
    ({'deadline_ms': 400}, '@settings(deadline=100)'),
    ({'phases': ['generate', 'shrink']}, '@settings(phases=[Phase.generate])'),
    ({'suppress_health_check': []}, '@settings(suppress_health_check=list(HealthCheck))'),
    ({'database': True}, '@settings(database=None)'),
])
def test_settings_weakened_against_lock_fails(guarded, locked, decorators):
    lock(guarded, {'test_p': {'max_examples': 1, **locked}})
    prop(guarded, f'''\
        from datetime import timedelta

        from hypothesis import given, HealthCheck, Phase, seed, settings, strategies as st


        {decorators}
        @given(st.binary())
        def test_p(x):
            assert x is not None
        ''')
    result = run_all(guarded)
    assert result.rc == 1, result.out
    assert result.codes == ['OG602']
    assert f'{next(iter(locked))}: locked at' in result.out


def test_derandomize_dropped_to_hypothesis_default_fails(guarded):
    lock(guarded, {'test_parse_never_throws': {'derandomize': True}})
    result = run_all(guarded)
    assert result.codes == ['OG602']
    assert "Hypothesis 'default' profile" in result.out


def test_values_at_or_above_lock_pass(guarded):
    lock(guarded, {'test_p': {'max_examples': 200, 'deadline_ms': 400, 'seed': 7,
                              'derandomize': True, 'max_size': 4096, 'min_size': 1,
                              'alphabet': 'abc'}})
    prop(guarded, '''\
        from hypothesis import given, seed, settings, strategies as st


        @seed(7)
        @settings(max_examples=500, deadline=None, derandomize=True)
        @given(st.text(alphabet="abc", min_size=0, max_size=8192))
        def test_p(x):
            assert x is not None
        ''')
    result = run_all(guarded)
    assert result.rc == 0, result.out


def test_shrink_hidden_behind_aliases_and_module_constants_fails(guarded):
    lock(guarded, {'TestCodec::test_p': {'max_examples': 200, 'max_size': 4096}})
    prop(guarded, '''\
        import hypothesis.strategies as s
        from hypothesis import given as g, settings as cfg

        LIMIT = 4 * 16
        FAST = cfg(max_examples=LIMIT // 2)
        BUF = s.binary(max_size=LIMIT)


        class TestCodec:
            @FAST
            @g(BUF)
            def test_p(self, buf):
                assert buf is not None
        ''')
    result = run_all(guarded)
    assert result.codes == ['OG602', 'OG602']
    assert 'max_examples: locked at 200, live value 32' in result.out
    assert 'max_size: locked at 4096, live value 64' in result.out


def test_per_argument_lock_checks_each_given_argument(guarded):
    lock(guarded, {'test_p': {'args': {'key': {'min_size': 16}, 'buf': {'max_size': 512}}}})
    prop(guarded, '''\
        from hypothesis import given, strategies as st


        @given(key=st.binary(min_size=16), buf=st.binary(max_size=8))
        def test_p(key, buf):
            assert key != buf
        ''')
    result = run_all(guarded)
    assert result.codes == ['OG602']
    assert 'args.buf.max_size: locked at 512, live value 8' in result.out


def test_value_that_cannot_be_read_statically_is_unverifiable(guarded):
    lock(guarded, {'test_parse_never_throws': {'max_examples': 100, 'max_size': 10}})
    prop(guarded, '''\
        from hypothesis import given, settings, strategies as st
        from helpers import EXAMPLES, make_strategy


        @settings(max_examples=EXAMPLES)
        @given(make_strategy())
        def test_parse_never_throws(buf):
            assert buf is not None
        ''')
    result = run_all(guarded)
    assert result.rc == 1
    assert result.codes == ['OG603', 'OG603']
    assert 'EXAMPLES is not a constant of this module' in result.out


def test_new_filter_in_locked_property_fails(guarded):
    prop(guarded, '''\
        from hypothesis import given, strategies as st


        @given(st.binary().filter(lambda b: b"\\r" not in b))
        def test_parse_never_throws(buf):
            assert isinstance(buf, bytes)
        ''')
    result = run_all(guarded)
    assert result.codes == ['OG604']
    assert '1 .filter()/assume() call(s) but the lock allows 0' in result.out


def test_assume_counts_as_a_filter_and_lock_may_allow_it(guarded):
    prop(guarded, '''\
        from hypothesis import assume as a, given, strategies as st


        @given(st.binary())
        def test_parse_never_throws(buf):
            a(buf)
            assert isinstance(buf, bytes)
        ''')
    assert run_all(guarded).codes == ['OG604']
    lock(guarded, {'test_parse_never_throws': {'max_examples': 100, 'filters': 1}})
    assert run_all(guarded).rc == 0


# -- row 24: unlocked -----------------------------------------------------------------------

def test_hypothesis_test_without_lock_entry_fails_anywhere_under_tests(guarded):
    guarded.write('tests/unit/test_more.py', '''\
        from hypothesis import given
        from hypothesis.strategies import integers


        class TestMore:
            @given(integers())
            def test_ints(self, n):
                assert n == n
        ''')
    result = run_all(guarded)
    assert result.codes == ['OG601']
    assert 'unlocked property: TestMore::test_ints has no entry in tests/domain_lock.json' \
        in result.out


def test_hypothesis_test_spelt_in_fullwidth_letters_is_an_unlocked_property(guarded):
    # Rule 24. Python reads identifiers NFKC-normalised: `\uff47\uff49\uff56\uff45\uff4e` is
    # `given`, so this is a Hypothesis test although no ASCII byte of the file says so.
    given = '\uff47\uff49\uff56\uff45\uff4e'
    guarded.write('tests/unit/test_wide.py', f'''\
        from hypothesis import {given}
        from hypothesis.strategies import integers


        @{given}(integers())
        def test_ints(n):
            assert n == n
        ''')
    result = run_all(guarded)
    assert result.codes == ['OG601']
    assert 'unlocked property: test_ints has no entry' in result.out


# Every `given` of these sits on a line that begins with `#`, yet outside a comment.
GIVEN_AFTER_A_HASH_LINE = {
    'a multi-line string ends on it': (
        'import hypothesis\nfrom hypothesis.strategies import integers\n\nNOTE = """\n'
        '# """; g = hypothesis.given\n\n\n@g(integers())\ndef test_ints(n):\n'
        '    assert n == n\n'),
    'lines end with a lone CR': (
        '# property tests\rfrom hypothesis import given\r'
        'from hypothesis.strategies import integers\r\r\r@given(integers())\r'
        'def test_ints(n):\r    assert n == n\r'),
}


@pytest.mark.parametrize('spelling', sorted(GIVEN_AFTER_A_HASH_LINE))
def test_given_after_a_line_starting_with_a_hash_is_still_a_property(guarded, spelling):
    """Rule 24 in a commit: the prefilter passes over `given` in a comment line (sympy's
    `# no vargs given`), never over one that code follows on such a line."""
    guarded.write('tests/unit/test_more.py', GIVEN_AFTER_A_HASH_LINE[spelling])
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG601'], result.out
    assert 'unlocked property: test_ints has no entry' in result.out


def test_a_comment_saying_given_does_not_make_a_property_module(guarded):
    from oracle_guard.reading.property_prefilter import might_hold_properties

    source = 'def test_vargs():\n    # no vargs given\n    assert 1\n'
    guarded.write('tests/test_lambdify.py', source)
    guarded.add()
    assert guarded.run(main).rc == 0
    assert not might_hold_properties(source.encode())
    assert might_hold_properties(b'x = 1  # given\n')  # after code: not read as a comment


def test_the_property_prefilter_holds_to_the_tokens_python_reads():
    """``might_hold_properties`` beside a reference made with ``tokenize``: wherever
    `given` or `StateMachine` is part of a name Python reads (what the property reader
    resolves; not a comment, not a string's text), it says yes."""
    import io
    import tokenize

    from oracle_guard.reading.property_prefilter import might_hold_properties

    def reference(source: bytes) -> bool:
        tokens = tokenize.tokenize(io.BytesIO(source).readline)
        return any(t.type == tokenize.NAME and ('given' in t.string or
                                                'StateMachine' in t.string)
                   for t in tokens)

    sources = [*(s.encode() for s in GIVEN_AFTER_A_HASH_LINE.values()),
               b'# given\n', b'    # no vargs given\nx = 1\n', b'x = "given"\n',
               b'x = """\n# given\n"""\n', b'x = f"""\n# {given}\n"""\n',
               b"x = '''\n# ''' + given\n", b'class M(RuleBasedStateMachine):\n    pass\n',
               b'# RuleBasedStateMachine\n', b'x = 1\r\n# given\r\ny = given\r\n',
               b'\x0c# given\n', b'x = [\n    # given\n    1,\n]\n', b'given = 1  # given\n']
    for source in sources:
        assert might_hold_properties(source) or not reference(source), source
    assert sum(reference(source) for source in sources) >= 5
    assert not might_hold_properties(b'    # no vargs given\nx = 1\n')


def test_weaker_profile_loaded_through_a_fullwidth_name_fails(guarded):
    load = '\uff4c\uff4f\uff41\uff44_profile'
    guarded.write('tests/conftest.py', f'''\
        from hypothesis import settings

        settings.register_profile("quick", max_examples=5)
        settings.{load}("quick")
        '''.replace('register_profile', '\uff52egister_profile'))
    result = run_all(guarded)
    assert result.codes == ['OG605', 'OG605']


def test_missing_lock_file_leaves_every_property_unlocked(guarded):
    os.remove(os.path.join(guarded.path, LOCK))
    assert run_all(guarded).codes == ['OG601']


# -- row 25: profiles -----------------------------------------------------------------------

def test_weaker_profile_registered_and_loaded_in_conftest_fails(guarded):
    guarded.write('tests/conftest.py', '''\
        from hypothesis import settings

        settings.register_profile("quick", max_examples=5)
        settings.load_profile("quick")
        ''')
    result = run_all(guarded)
    assert result.codes == ['OG605', 'OG605']
    assert 'tests/conftest.py:3:1: OG605 register_profile' in result.out
    assert 'tests/conftest.py:4:1: OG605 load_profile' in result.out
    assert 'max_examples: locked at 100, live value 5' in result.out


def test_profile_selected_by_environment_in_ci_file_fails(guarded):
    guarded.write('tests/conftest.py', '''\
        import os

        from hypothesis import settings

        settings.register_profile("ci", max_examples=1000)
        settings.register_profile("smoke", max_examples=3)
        settings.load_profile(os.getenv("HYPOTHESIS_PROFILE", "ci"))
        ''')
    assert run_all(guarded).codes == ['OG605']  # registering it already fails
    guarded.write('.github/workflows/test.yml', '''\
        jobs:
          test:
            env:
              HYPOTHESIS_PROFILE: smoke
        ''')
    result = run_all(guarded)
    assert '.github/workflows/test.yml:4:7: OG605 HYPOTHESIS_PROFILE' in result.out


def test_hypothesis_profile_option_in_pytest_config_fails(guarded):
    guarded.write('tests/conftest.py', '''\
        from hypothesis import settings

        settings.register_profile("ci", max_examples=1000)
        settings.register_profile("dev", settings.get_profile("ci"), deadline=None,
                                  max_examples=2)
        ''')
    guarded.write('pytest.ini', '[pytest]\naddopts = --hypothesis-profile=dev\n')
    result = run_all(guarded)
    assert 'pytest.ini:2:11: OG605 --hypothesis-profile' in result.out


def test_profile_does_not_govern_a_test_that_sets_the_field_itself(guarded):
    guarded.write('tests/conftest.py', '''\
        from hypothesis import settings

        settings.register_profile("quick", max_examples=5)
        settings.load_profile("quick")
        ''')
    prop(guarded, '''\
        from hypothesis import given, settings, strategies as st


        @settings(max_examples=100)
        @given(st.binary())
        def test_parse_never_throws(buf):
            assert isinstance(buf, bytes)
        ''')
    assert run_all(guarded).rc == 0


# -- row 27: loosening is a change of its own ----------------------------------------------

def test_lock_lowered_together_with_src_change_fails(guarded):
    lock(guarded, {'test_parse_never_throws': {'max_examples': 50}})
    guarded.write('src/app.py', 'def parse(b):\n    return b or b""\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG606']
    assert 'max_examples 100 -> 50' in result.out and 'src/app.py' in result.out


def test_lock_entry_removed_together_with_test_change_fails(guarded):
    lock(guarded, {})
    prop(guarded, '''\
        from hypothesis import given, strategies as st


        @given(st.binary())
        def test_renamed(buf):
            assert isinstance(buf, bytes)
        ''')
    guarded.add()
    result = guarded.run(main)
    assert 'OG606' in result.codes
    assert 'entry removed' in result.out


def test_lock_lowered_alone_passes(guarded):
    lock(guarded, {'test_parse_never_throws': {'max_examples': 50}})
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 0, result.out


def test_loosening_in_a_pull_request_range_is_judged_as_one_change(guarded):
    base = guarded.git('rev-parse', 'HEAD').strip()
    lock(guarded, {'test_parse_never_throws': {'max_examples': 50}})
    guarded.commit('lower the lock')
    guarded.write('src/app.py', 'def parse(b):\n    return b or b""\n')
    guarded.commit('code')
    result = guarded.run(main, '--from-ref', base, '--to-ref', 'HEAD')
    assert result.codes == ['OG606']


def test_loosening_without_a_base_is_not_checked_unless_required(guarded):
    lock(guarded, {'test_parse_never_throws': {'max_examples': 50}})
    guarded.write('src/app.py', 'def parse(b):\n    return b or b""\n')
    guarded.commit('squashed', )
    guarded.git('update-ref', '-d', 'HEAD')  # HEAD^ gone: the clone has no base
    guarded.commit('root again')
    result = run_all(guarded)
    assert result.rc == 0 and 'not checked' in result.out
    assert run_all(guarded, '--require-base').codes == ['OG001']


# -- row 28: shadowing ----------------------------------------------------------------------

@pytest.mark.parametrize('path', ['hypothesis.py', 'tests/hypothesis/__init__.py',
                                  'src/hypothesis/strategies.py'])
def test_hypothesis_module_shadowing_the_library_fails(guarded, path):
    guarded.write(path, 'def given(*a, **k):\n    return lambda f: f\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG607']
    assert f'{path}:1:1: OG607' in result.out


def test_hypothesis_submodule_inside_a_package_does_not_shadow(guarded):
    guarded.write('src/app/__init__.py', '')
    guarded.write('src/app/hypothesis.py', 'X = 1\n')
    guarded.add()
    assert guarded.run(main).rc == 0


# -- scope, input, qualities ----------------------------------------------------------------

def test_commit_context_only_reads_the_changed_test_files(guarded):
    guarded.write('tests/test_old.py', '''\
        from hypothesis import given, strategies as st


        @given(st.integers())
        def test_old(n):
            assert n == n
        ''')
    guarded.commit('an unlocked property slipped in with --no-verify')
    guarded.write('tests/test_app.py', 'def test_parse():\n    assert True\n')
    guarded.add()
    assert guarded.run(main).rc == 0
    assert run_all(guarded).codes == ['OG601']


def test_lock_change_in_commit_context_rechecks_every_property(guarded):
    lock(guarded, {'test_parse_never_throws': {'max_examples': 300}})
    guarded.add()
    assert guarded.run(main).codes == ['OG602']


@pytest.mark.parametrize(('text', 'line', 'message'), [
    ('{"version": 1, "properties": {"a": {}, "a": {}}}', 1, "duplicate key 'a'"),
    ('{"version": 1,\n "properties": {"t": {\n  "max_exampels": 5}}}', 3, "unknown field"),
    ('{"version": 1,\n "properties": {"t": {"max_size": -1}}}', 2, 'max_size must be'),
    ('{"version": 3, "properties": {}}', 1, 'unsupported domain lock version'),
    ('{"version": 1,\n "properties": {"t": {\n  "strategies": {}}}}', 3, 'needs "version": 2'),
    ('{"version": 2,\n "properties": {"t": {"strategies": {\n  "x": 5}}}}', 3,
     'strategies.x: must be an object'),
    ('not json', 1, 'invalid JSON'),
])
def test_malformed_lock_is_a_clear_error_with_exit_2(guarded, text, line, message):
    guarded.write(LOCK, text)
    result = run_all(guarded)
    assert result.rc == 2
    assert result.err.startswith(f'{LOCK}:{line}: ')
    assert message in result.err and 'Traceback' not in result.err


def test_unparsable_test_file_with_given_is_reported(guarded):
    guarded.write('tests/test_broken.py', '@given(\ndef test_x(:\n')
    result = run_all(guarded)
    assert result.codes == ['OG608']


def test_hook_writes_nothing(guarded):
    prop(guarded, '''\
        from hypothesis import given, settings, strategies as st


        @settings(max_examples=1)
        @given(st.binary())
        def test_parse_never_throws(buf):
            assert buf is not None
        ''')
    before = guarded.snapshot()
    assert run_all(guarded).rc == 1
    assert guarded.snapshot() == before


def test_static_hook_never_imports_hypothesis(guarded):
    code = ('import sys; from oracle_guard.hooks.check_generator_lock import main; '
            'rc = main(["--all-files"]); '
            'print(rc, "hypothesis" in sys.modules)')
    proc = subprocess.run((sys.executable, '-c', code), cwd=guarded.path,
                          capture_output=True, text=True)
    assert proc.stdout.split()[-2:] == ['0', 'False'], proc.stdout + proc.stderr


# -- review findings: properties that drop out of view, generation switched off ------------

def test_given_bound_to_a_module_name_is_still_a_property(guarded):
    lock(guarded, {'test_parse_never_throws': {'max_examples': 100, 'max_size': 4096}})
    prop(guarded, '''\
        from hypothesis import given, settings, strategies as st

        tiny = given(st.binary(max_size=1))


        @settings(max_examples=1)
        @tiny
        def test_parse_never_throws(buf):
            assert isinstance(buf, bytes)
        ''')
    result = run_all(guarded)
    assert result.codes == ['OG602', 'OG602'], result.out
    assert 'max_examples: locked at 100, live value 1' in result.out
    assert 'max_size: locked at 4096, live value 1' in result.out


def test_given_name_bound_twice_is_a_property_with_unverifiable_strategies(guarded):
    lock(guarded, {'test_parse_never_throws': {'max_size': 4096}})
    prop(guarded, '''\
        import os

        from hypothesis import given, strategies as st

        if os.environ.get("FAST"):
            drawn = given(st.binary(max_size=1))
        else:
            drawn = given(st.binary(max_size=4096))


        @drawn
        def test_parse_never_throws(buf):
            assert isinstance(buf, bytes)
        ''')
    result = run_all(guarded)
    assert result.codes == ['OG603'], result.out
    assert 'drawn is bound more than once' in result.out


REPLACED_BY_PARAMETRIZE = '''\
    import pytest


    @pytest.mark.parametrize("buf", [b""])
    def test_parse_never_throws(buf):
        assert isinstance(buf, bytes)
    '''


def test_locked_property_replaced_by_parametrize_fails_in_every_scope(guarded):
    prop(guarded, REPLACED_BY_PARAMETRIZE)
    guarded.write('src/app.py', 'def parse(b):\n    return b[:1]\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG609'], result.out
    assert f'{LOCK}:3:1: OG609 test_parse_never_throws: locked property no longer exists' \
        in result.out
    assert 'tests/properties/test_parse.py at the base revision' in result.out
    assert run_all(guarded).codes == ['OG609']


def test_deleted_test_file_with_a_locked_property_fails(guarded):
    guarded.rm('tests/properties/test_parse.py')
    guarded.write('src/app.py', 'def parse(b):\n    return b[:1]\n')
    guarded.add()
    assert guarded.run(main).codes == ['OG609']


def test_locked_property_vanishing_in_a_pull_request_range_fails(guarded):
    base = guarded.git('rev-parse', 'HEAD').strip()
    prop(guarded, REPLACED_BY_PARAMETRIZE)
    guarded.commit('no more property')
    result = guarded.run(main, '--from-ref', base, '--to-ref', 'HEAD')
    assert result.codes == ['OG609'], result.out


def test_locked_property_moved_to_another_file_passes(guarded):
    moved = guarded.read('tests/properties/test_parse.py')
    guarded.rm('tests/properties/test_parse.py')
    guarded.write('tests/test_moved_here.py', moved, dedent=False)
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 0, result.out
    assert run_all(guarded).rc == 0


def test_property_still_defined_in_an_untouched_file_passes(guarded):
    guarded.write('tests/test_other.py', PROPERTY_TEST.replace('bytes)', 'bytes) or True'))
    guarded.commit('the same property in a second file')
    prop(guarded, REPLACED_BY_PARAMETRIZE)
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 0, result.out


def test_retiring_a_property_with_its_lock_entry_alone_passes(guarded):
    guarded.rm('tests/properties/test_parse.py')
    lock(guarded, {})
    guarded.add()
    result = guarded.run(main)
    assert result.rc == 0, result.out
    guarded.write('src/app.py', 'def parse(b):\n    return b[:1]\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG606'] and 'entry removed' in result.out


def test_phases_without_generate_count_as_zero_examples(guarded):
    prop(guarded, '''\
        from hypothesis import given, Phase, settings, strategies as st


        @settings(max_examples=500, phases=[Phase.explicit])
        @given(st.binary())
        def test_parse_never_throws(buf):
            assert isinstance(buf, bytes)
        ''')
    guarded.write('src/app.py', 'def parse(b):\n    return b[:1]\n')
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG602'], result.out
    assert 'tests/properties/test_parse.py:4:36: OG602' in result.out
    assert 'max_examples: locked at 100, live value 0 (phases ["explicit"] leave out ' \
        '"generate"' in result.out


def test_profile_without_generate_phase_governs_a_test_setting_max_examples(guarded):
    guarded.write('tests/conftest.py', '''\
        from hypothesis import Phase, settings

        settings.register_profile("replay", phases=[Phase.explicit, Phase.reuse])
        settings.load_profile("replay")
        ''')
    prop(guarded, PROPERTY_TEST.replace('@given', '@settings(max_examples=500)\n@given')
         .replace('given, ', 'given, settings, '), )
    result = run_all(guarded)
    assert result.codes == ['OG605', 'OG605'], result.out
    assert 'live value 0 (phases ["explicit", "reuse"] leave out "generate"' in result.out


@pytest.mark.parametrize('strategy', ['st.binary(max_size=1024).map(lambda b: b[:1])',
                                      'st.just(1).flatmap(lambda n: st.binary(max_size=n))'])
def test_map_on_a_locked_strategy_counts_against_filters(guarded, strategy):
    lock(guarded, {'test_p': {'max_size': 1024}})
    prop(guarded, f'''\
        from hypothesis import given, strategies as st


        @given({strategy})
        def test_p(b):
            assert len(b) <= 1024
        ''')
    result = run_all(guarded)
    assert 'OG604' in result.codes, result.out
    assert '1 .filter()/assume() call(s) but the lock allows 0' in result.out


def test_map_allowed_by_the_lock_passes(guarded):
    lock(guarded, {'test_p': {'max_size': 1024, 'filters': 1}})
    prop(guarded, '''\
        from hypothesis import given, strategies as st


        @given(st.binary(max_size=1024).map(bytes))
        def test_p(b):
            assert len(b) <= 1024
        ''')
    result = run_all(guarded)
    assert result.rc == 0, result.out


def test_commit_mode_reads_only_the_conftests_that_mention_profiles(guarded, monkeypatch,
                                                                    tmp_path):
    for i in range(30):
        guarded.write(f'tests/unit{i}/conftest.py', 'import pytest\n')
    guarded.write('tests/unit0/deep/conftest.py', '''\
        from hypothesis import settings

        settings.register_profile("quick", max_examples=5)
        settings.load_profile("quick")
        ''')
    guarded.commit('many conftests, one weak profile')
    prop(guarded, PROPERTY_TEST.replace('bytes)', 'bytes) or True'))
    guarded.add()
    trace = tmp_path / 'git-trace.txt'
    monkeypatch.setenv('GIT_TRACE', str(trace))
    result = guarded.run(main)
    monkeypatch.delenv('GIT_TRACE')
    assert result.codes == ['OG605', 'OG605'], result.out  # the one that matters is read
    reads = [line for line in trace.read_text().splitlines()
             if 'built-in: git cat-file' in line]
    assert len(reads) < 8, '\n'.join(reads)
    whole_tree = [line for line in trace.read_text().splitlines()
                  if line.rstrip().endswith('git ls-files -s -z')]
    assert not whole_tree


def test_commit_mode_honours_git_index_file(guarded, monkeypatch):
    guarded.write('tests/conftest.py', '''\
        from hypothesis import settings

        settings.register_profile("quick", max_examples=5)
        settings.load_profile("quick")
        ''')
    guarded.add()  # staged in the default index, not part of the commit below
    assert set(guarded.run(main).codes) == {'OG605'}
    other = os.path.join(guarded.path, '.git', 'other-index')
    env = {**os.environ, 'GIT_INDEX_FILE': other}
    prop(guarded, PROPERTY_TEST.replace('bytes)', 'bytes) or True'))
    subprocess.run(('git', 'read-tree', 'HEAD'), cwd=guarded.path, env=env, check=True)
    subprocess.run(('git', 'add', 'tests/properties/test_parse.py'), cwd=guarded.path,
                   env=env, check=True)
    monkeypatch.setenv('GIT_INDEX_FILE', other)  # `git commit tests/properties/test_parse.py`
    result = guarded.run(main)
    assert result.rc == 0, result.out


@pytest.mark.parametrize('conftest', [
    'import hypothesis\n\nhypothesis.given = lambda *a, **k: (lambda f: f)\n',
    'import hypothesis as h\n\nsetattr(h, "settings", lambda *a, **k: (lambda f: f))\n',
    'import sys\nimport types\n\nsys.modules["hypothesis"] = types.ModuleType("hypothesis")\n',
    'import pytest\n\n@pytest.fixture(autouse=True)\ndef hollow(monkeypatch):\n'
    '    monkeypatch.setattr("hypothesis.given", lambda *a, **k: (lambda f: f))\n',
    'from hypothesis import strategies as st\n\nst.binary = lambda **k: st.just(b"")\n',
], ids=['assign', 'setattr', 'sys.modules', 'monkeypatch', 'strategies'])
def test_test_code_patching_the_hypothesis_library_fails(guarded, conftest):
    from oracle_guard.hooks.check_generator_lock import main as hook
    guarded.write('tests/conftest.py', conftest)
    guarded.add()
    result = guarded.run(hook)
    assert 'OG607' in result.codes, result.out
    assert 'the hypothesis library itself is changed' in result.out
    guarded.commit('patched, with --no-verify')
    assert 'OG607' in guarded.run(hook, '--all-files').codes


def test_test_code_configuring_hypothesis_with_profiles_passes(guarded):
    from oracle_guard.hooks.check_generator_lock import main as hook
    guarded.write('tests/conftest.py', 'from hypothesis import settings\n\n'
                  'settings.register_profile("thorough", max_examples=500)\n'
                  'settings.load_profile("thorough")\n')
    guarded.add()
    result = guarded.run(hook)
    assert 'OG607' not in result.codes, result.out
