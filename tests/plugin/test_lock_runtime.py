"""The runtime lock check: what Hypothesis really runs, read from the collected items."""
from __future__ import annotations

import json

import pytest

# A tiny plugin standing in for oracle-guard's pytest plugin: it calls the function under
# test at collection and fails the session on problems, before any example runs.
CONFTEST = '''\
import pytest

from oracle_guard.config import load_config
from oracle_guard.runtime.lock_runtime import check_collected


def pytest_collection_modifyitems(session, config, items):
    problems = check_collected(load_config(str(config.rootpath)), items)
    for problem in problems:
        print("LOCK-PROBLEM " + problem)
    if problems:
        pytest.exit("domain lock drift", returncode=9)
'''
PROFILES = '''
from hypothesis import settings

settings.register_profile("quick", max_examples=3)
'''


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makefile('.toml', pyproject='[tool.oracle-guard]\nsrc = ["src/"]\n')
    return pytester


def lock(pytester, properties):  # type: ignore[no-untyped-def]
    (pytester.path / 'tests').mkdir(exist_ok=True)
    (pytester.path / 'tests' / 'domain_lock.json').write_text(
        json.dumps({'version': 1, 'properties': properties}))


def run(pytester, *args):  # type: ignore[no-untyped-def]
    # A subprocess each: profiles registered by one run must not leak into the next.
    result = pytester.runpytest_subprocess('-p', 'no:oracle_guard', '-p', 'no:cacheprovider',
                                           *args)
    problems = [line.split('LOCK-PROBLEM ', 1)[1] for line in result.outlines
                if line.startswith('LOCK-PROBLEM ')]
    return result, problems


def test_locked_properties_run_when_nothing_drifted(project):
    lock(project, {'test_p': {'max_examples': 20, 'max_size': 64}})
    project.makepyfile(test_x='''
        from hypothesis import given, settings, strategies as st

        @settings(max_examples=20)
        @given(st.binary(max_size=64))
        def test_p(buf):
            assert len(buf) <= 64
        ''')
    result, problems = run(project)
    assert problems == []
    result.assert_outcomes(passed=1)


def test_settings_computed_at_import_are_caught(project):
    lock(project, {'test_p': {'max_examples': 100}})
    project.makepyfile(test_x='''
        from hypothesis import given, settings, strategies as st

        EXAMPLES = int("7")

        @settings(max_examples=EXAMPLES)
        @given(st.binary())
        def test_p(buf):
            raise AssertionError("no example may run")
        ''')
    result, problems = run(project)
    assert result.ret == 9
    assert problems == ['test_x.py::test_p: tests less than its lock (tests/domain_lock.json): '
                        'max_examples: locked at 100, live value 7']
    assert 'no example may run' not in result.stdout.str()


def test_weaker_profile_loaded_in_conftest_is_caught(project):
    lock(project, {'test_p': {'max_examples': 50}})
    project.makepyfile(profiles=PROFILES)
    project.makeconftest(CONFTEST + '\nimport profiles\nfrom hypothesis import settings\n'
                         'settings.load_profile("quick")\n')
    project.makepyfile(test_x='''
        from hypothesis import given, strategies as st

        @given(st.binary())
        def test_p(buf):
            pass
        ''')
    _, problems = run(project)
    assert len(problems) == 1 and 'max_examples: locked at 50, live value 3' in problems[0]


def test_profile_chosen_on_the_command_line_is_caught(project):
    lock(project, {'test_p': {'max_examples': 50}})
    project.makeconftest(CONFTEST + PROFILES)
    project.makepyfile(test_x='''
        from hypothesis import given, strategies as st

        @given(st.binary())
        def test_p(buf):
            pass
        ''')
    assert run(project)[1] == []
    _, problems = run(project, '--hypothesis-profile=quick')
    assert len(problems) == 1 and 'live value 3' in problems[0]


def test_positional_and_keyword_strategy_bounds_are_compared(project):
    lock(project, {
        'test_positional': {'max_size': 100, 'alphabet': 'abc'},
        'TestK::test_keyword': {'args': {'n': {'min_value': 0, 'max_value': 1000},
                                         'xs': {'min_size': 0}}},
    })
    project.makepyfile(test_x='''
        from hypothesis import given, strategies as st

        LIMIT = len("0123456789")

        @given(st.text("ab", max_size=LIMIT).filter(bool))
        def test_positional(s):
            pass

        class TestK:
            @given(n=st.integers(0, LIMIT), xs=st.lists(st.integers(), min_size=2))
            def test_keyword(self, n, xs):
                pass
        ''')
    _, problems = run(project)
    text = '\n'.join(problems)
    assert 'test_x.py::test_positional' in text
    assert 'max_size: locked at 100, live value 10' in text
    assert 'alphabet: locked at "abc", live value "ab"' in text
    assert 'test_x.py::TestK::test_keyword' in text
    assert 'args.n.max_value: locked at 1000, live value 10' in text
    assert 'args.xs.min_size: locked at 0, live value 2' in text
    assert 'test_x.py::test_positional: tests less than its lock (tests/domain_lock.json): ' \
        'filters: locked at 0, live value 1' in text  # .filter(bool), as the static hook
    assert len(problems) == 5


def test_seed_and_derandomize_and_deadline_are_compared(project):
    lock(project, {'test_p': {'seed': 5, 'derandomize': True, 'deadline_ms': 400}})
    project.makepyfile(test_x='''
        import datetime
        from hypothesis import given, seed, settings, strategies as st

        @seed(6)
        @settings(deadline=datetime.timedelta(milliseconds=int("100")))
        @given(st.binary())
        def test_p(buf):
            pass
        ''')
    _, problems = run(project)
    text = '\n'.join(problems)
    assert 'seed: locked at 5, live value 6' in text
    assert 'derandomize: locked at true, live value false' in text
    assert 'deadline_ms: locked at 400, live value 100' in text


def test_unlocked_property_fails_the_session(project):
    lock(project, {})
    project.makepyfile(test_x='''
        import pytest
        from hypothesis import given, strategies as st

        @pytest.mark.parametrize("k", [1, 2])
        @given(st.binary())
        def test_p(k, buf):
            pass
        ''')
    result, problems = run(project)
    assert result.ret == 9
    assert len(problems) == 1  # one function, whatever its parameters
    assert 'unlocked property: test_p has no entry in tests/domain_lock.json' in problems[0]


def test_malformed_lock_is_reported_not_raised(project):
    (project.path / 'tests').mkdir()
    (project.path / 'tests' / 'domain_lock.json').write_text('{"version": 1, "version": 1}')
    project.makepyfile(test_x='def test_plain():\n    pass\n')
    _, problems = run(project)
    assert problems == ["tests/domain_lock.json:1: duplicate key 'version' (first on line 1)"]


def test_real_plugin_fails_the_session_on_lock_drift(pytester):
    pytester.makefile('.toml', pyproject='[tool.oracle-guard]\nsrc = ["src/"]\n')
    lock(pytester, {'test_p': {'max_examples': 100}})
    pytester.makepyfile(test_x='''
        from hypothesis import given, settings, strategies as st

        @settings(max_examples=int("4"))
        @given(st.binary())
        def test_p(buf):
            raise AssertionError("no example may run")
        ''')
    result = pytester.runpytest_subprocess('-p', 'no:cacheprovider')
    assert result.ret != 0
    result.stdout.fnmatch_lines(['*max_examples: locked at 100, live value 4*'])
    assert 'no example may run' not in result.stdout.str()


def test_phases_without_generate_count_as_zero_examples(project):
    lock(project, {'test_p': {'max_examples': 100}})
    project.makepyfile(test_x='''
        from hypothesis import given, Phase, settings, strategies as st

        PHASES = [Phase.explicit] if "x" else list(Phase)

        @settings(max_examples=500, phases=PHASES)
        @given(st.binary())
        def test_p(buf):
            pass
        ''')
    result, problems = run(project)
    assert result.ret == 9
    assert problems == [('test_x.py::test_p: tests less than its lock (tests/domain_lock.json): '
                         'max_examples: locked at 100, live value 0 (phases ["explicit"] leave '
                         'out "generate": no example is generated)')]


def test_map_on_a_strategy_counts_against_filters(project):
    lock(project, {'test_p': {'max_size': 1024}, 'test_q': {'filters': 1}})
    project.makepyfile(test_x='''
        from hypothesis import given, strategies as st

        @given(st.binary(max_size=1024).map(lambda b: b[:1]))
        def test_p(buf):
            pass

        @given(st.binary().map(bytes))
        def test_q(buf):
            pass
        ''')
    result, problems = run(project)
    assert result.ret == 9
    assert problems == [('test_x.py::test_p: tests less than its lock (tests/domain_lock.json): '
                         'filters: locked at 0, live value 1 (.map()/.filter()/.flatmap() on '
                         'its strategies)')]


def test_locked_property_patched_out_of_hypothesis_is_caught(project):
    # A conftest that rebinds hypothesis.given turns every locked property into a plain
    # function that draws nothing: the identity is collected, but no example would run.
    lock(project, {'test_p': {'max_examples': 20}})
    project.makeconftest(CONFTEST + '''
import functools
import hypothesis


def _given(*strategies, **kwargs):
    def deco(f):
        @functools.wraps(f)
        def run():
            pass
        del run.__wrapped__
        return run
    return deco


hypothesis.given = _given
''')
    project.makepyfile(test_x='''
        import hypothesis
        from hypothesis import strategies as st

        @hypothesis.given(st.binary())
        def test_p(buf):
            raise AssertionError("never drawn")
        ''')
    result, problems = run(project)
    assert result.ret == 9
    assert problems == ['test_x.py::test_p: locked property test_p is not a Hypothesis test '
                        'when collected; no example would run']


def test_unit_test_named_like_a_locked_property_is_not_that_property(project):
    """dateutil: tests/test_rrule.py::test_rrule_roundtrip is a plain parametrized test
    beside the locked property of that name; it is not judged against the lock."""
    lock(project, {'test_p': {'max_examples': 20}})
    project.makepyfile(test_a='''
        import pytest

        @pytest.mark.parametrize("n", [1, 2])
        def test_p(n):
            assert n
        ''', test_z='''
        from hypothesis import given, settings, strategies as st

        @settings(max_examples=20)
        @given(st.binary())
        def test_p(buf):
            assert isinstance(buf, bytes)
        ''')
    result, problems = run(project)
    assert (result.ret, problems) == (0, [])
    result.assert_outcomes(passed=3)
