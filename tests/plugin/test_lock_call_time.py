"""The plugin's domain-lock check at call time (lock version 2): after the fixtures ran, the
settings object and strategies Hypothesis is about to use are compared with the lock, so
a swap after collection fails the test; a property that generated no example fails."""
from __future__ import annotations

import ast
import json
import textwrap
import subprocess
import sys

import pytest

from oracle_guard.reading.property_reader import read_properties

PYPROJECT = '[tool.oracle-guard]\nsrc = ["src/"]\n'


def locked_project(pytester: pytest.Pytester, source: str, **fields: object) -> None:
    """A guarded project whose lock (version 2) is what the static reader reads in
    ``source``, as `oracle-guard lock` writes it, plus ``fields`` on every entry."""
    source = textwrap.dedent(source)
    pytester.makefile('.toml', pyproject=PYPROJECT)
    (pytester.path / 'tests').mkdir(exist_ok=True)
    (pytester.path / 'tests' / 'test_x.py').write_text(source)
    properties = {}
    for prop in read_properties('tests/test_x.py', ast.parse(source)):
        entry = {**fields, 'strategies': prop.forms}
        if prop.filters:
            entry['filters'] = prop.filters
        properties[prop.identity] = entry
    (pytester.path / 'tests' / 'domain_lock.json').write_text(
        json.dumps({'version': 2, 'properties': properties}, indent=2))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess('-p', 'no:cacheprovider', *args)


EVERY_KIND = '''
import enum
from hypothesis import given, settings, strategies as st


class Colour(enum.Enum):
    RED = 1
    BLUE = 2


def positive(n):
    return n > 0


@st.composite
def pairs(draw, n=3):
    return draw(st.text(alphabet="ab", max_size=n)), draw(st.integers(0, 9))


@settings(max_examples=5, deadline=None)
@given(
    a=st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", max_size=20), max_size=3),
    b=st.sampled_from(["GET", "PUT"]) | st.none(),
    c=st.integers(0, 100).filter(lambda n: n % 2 == 0).map(str),
    d=st.builds(dict, k=st.floats(0, 1)),
    e=st.fixed_dictionaries({"k": st.binary(max_size=8)}, optional={"o": st.just(1)}),
    f=st.tuples(st.booleans(), st.integers().filter(positive)),
    g=pairs(n=2),
    h=st.recursive(st.none(), st.lists, max_leaves=3),
    i=st.sampled_from(Colour),
    j=st.text(alphabet=st.characters(codec="ascii"), max_size=4),
    k=st.data(),
)
def test_every_kind(a, b, c, d, e, f, g, h, i, j, k):
    assert k.draw(st.integers(0, 3)) <= 3
'''


def test_every_strategy_kind_locked_statically_passes_at_call_time(pytester):
    locked_project(pytester, EVERY_KIND)
    result = run(pytester)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=1)


SWAPPED_SETTINGS = '''
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

FIXTURES_OK = [HealthCheck.function_scoped_fixture]


@pytest.fixture
def quick(request):
    # after collection: the settings Hypothesis reads when the test is called
    request.function._hypothesis_internal_use_settings = settings(
        max_examples=1, suppress_health_check=FIXTURES_OK)


@settings(max_examples=100, suppress_health_check=FIXTURES_OK)
@given(x=st.integers())
def test_p(quick, x):
    assert isinstance(x, int)
'''


def test_fixture_rewriting_settings_after_collection_fails_the_test(pytester):
    locked_project(pytester, SWAPPED_SETTINGS, max_examples=100)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        '*oracle-guard: at call time this property tests less than its domain lock:*',
        '*tests/test_x.py::test_p: tests less than its lock (tests/domain_lock.json): '
        'max_examples: locked at 100, live value 1*',
    ])


SWAPPED_STRATEGY = '''
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st


@pytest.fixture
def narrow(request):
    request.function.hypothesis._given_kwargs["x"] = st.integers(0, 1)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=st.integers())
def test_p(narrow, x):
    assert isinstance(x, int)
'''


def test_fixture_swapping_a_strategy_after_collection_fails_the_test(pytester):
    locked_project(pytester, SWAPPED_STRATEGY)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        '*tests/test_x.py::test_p: tests less than its lock (tests/domain_lock.json): '
        'args.x: integers(min_value): locked null, live 0*',
    ])


def test_untouched_strategy_passes_at_call_time(pytester):
    locked_project(pytester, SWAPPED_STRATEGY.replace('st.integers(0, 1)', 'st.integers()'))
    result = run(pytester)
    result.assert_outcomes(passed=1)


NO_EXAMPLES = '''
from hypothesis import Phase, example, given, settings, strategies as st


@settings(phases=[Phase.explicit])
@example(x=3)
@given(x=st.integers())
def test_p(x):
    assert x == 3
'''


def test_property_that_generated_no_example_fails(pytester):
    locked_project(pytester, NO_EXAMPLES)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        '*oracle-guard: tests/test_x.py::test_p passed but generated no example '
        '(1 run, 1 explicit @example)*',
    ])


def test_property_that_generated_examples_passes(pytester):
    locked_project(pytester, NO_EXAMPLES.replace('@settings(phases=[Phase.explicit])\n',
                                                 '').replace('x == 3', 'isinstance(x, int)'))
    result = run(pytester)
    result.assert_outcomes(passed=1)


DISCARDS_EVERYTHING = '''
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from hypothesis.errors import UnsatisfiedAssumption


@settings(max_examples=5, suppress_health_check=list(HealthCheck))
@given(x=st.integers())
def test_p(x):
    raise UnsatisfiedAssumption()
'''


def test_property_discarding_every_example_does_not_pass(pytester):
    locked_project(pytester, DISCARDS_EVERYTHING)
    result = run(pytester)
    outcomes = result.parseoutcomes()
    assert outcomes.get('passed', 0) == 0 and outcomes.get('failed') == 1, result.stdout.str()


# -- what the source does not show: locked from a collection run --------------------------

HELPER_PROPERTY = '''\
from hypothesis import given, settings, strategies as st


def bounded():
    limit = 10  # more than `return <strategy>`: the static reader cannot read it
    return st.integers(0, limit)


@settings(max_examples=5)
@given(x=bounded())
def test_domain(x):
    assert x >= 0
'''


def test_part_the_source_hides_is_locked_by_collect_and_checked_by_the_plugin(guarded):
    import subprocess
    import sys

    from oracle_guard.commands import lock as lock_command
    from oracle_guard.hooks import check_generator_lock

    guarded.write('tests/properties/test_domain.py', HELPER_PROPERTY)
    result = guarded.run(lock_command.main, '--upgrade', '--collect')
    assert result.rc == 0, result.out + result.err
    assert 'test_domain: args.x: 1 part(s) locked from the collection run' in result.out
    lock = json.loads(guarded.read('tests/domain_lock.json'))
    assert lock['properties']['test_domain']['strategies']['x'] == {
        'strategy': 'integers', 'min_value': 0, 'max_value': 10}
    guarded.commit('lock, with the collected form')

    # the helper narrows what it returns; the static hook cannot see it and says so
    guarded.write('tests/properties/test_domain.py',
                  HELPER_PROPERTY.replace('limit = 10', 'limit = 1'))
    guarded.add()
    hook = guarded.run(check_generator_lock.main)
    assert hook.rc == 0 and 'checked at run time' in hook.out, hook.out
    # the plugin does see it
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           'tests/properties/test_domain.py'], cwd=guarded.path,
                          capture_output=True, text=True)
    assert proc.returncode == 1, proc.stdout
    assert ('tests/properties/test_domain.py::test_domain: tests less than its lock '
            '(tests/domain_lock.json): args.x: integers(max_value): locked 10, live 1') in \
        proc.stdout


def test_without_collect_a_hidden_part_stays_unresolved_and_is_noted(guarded):
    from oracle_guard.commands import lock as lock_command

    guarded.write('tests/properties/test_domain.py', HELPER_PROPERTY)
    result = guarded.run(lock_command.main, '--upgrade')
    assert 'args.x: strategy: checked at run time (bounded()' in result.out
    form = json.loads(guarded.read('tests/domain_lock.json'))['properties']['test_domain'][
        'strategies']['x']
    assert form['unresolved'] == 'bounded()'


PARAMETRIZED_PROPERTY = '''\
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st


@pytest.mark.parametrize("k", [1, 2])
@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(xs=st.lists(st.integers()))
def test_p(k, xs):
    assert len(xs) >= 0 < k
'''


def adopted(repo, source: str) -> None:
    """A repository with one property, adopted with `oracle-guard init` (the lock it writes
    is what the test module spells) and committed."""
    from oracle_guard.commands.init import main as init_main

    repo.write('pyproject.toml', '[project]\nname = "app"\n')
    repo.write('src/app.py', 'X = 1\n')
    repo.write('tests/properties/test_p.py', source)
    repo.commit('before adoption')
    result = repo.run(init_main)
    assert result.rc == 0, result.out + result.err
    repo.commit('adopt oracle-guard')


def run_pytest(repo, *args: str):  # type: ignore[no-untyped-def]
    return subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           *args], cwd=repo.path, capture_output=True, text=True)


def test_health_check_hypothesis_adds_to_a_parametrized_property_passes_at_call_time(repo):
    # Hypothesis' pytest plugin suppresses differing_executors on a parametrized @given
    # test just before its call; init locks what the test spells (too_slow only).
    adopted(repo, PARAMETRIZED_PROPERTY)
    lock = json.loads(repo.read('tests/domain_lock.json'))
    assert lock['properties']['test_p']['suppress_health_check'] == ['too_slow']
    proc = run_pytest(repo)
    assert proc.returncode == 0, proc.stdout
    assert '2 passed' in proc.stdout


def test_health_check_hypothesis_adds_through_a_parametrized_fixture_passes(repo):
    adopted(repo, PARAMETRIZED_PROPERTY.replace(
        '@pytest.mark.parametrize("k", [1, 2])\n',
        '@pytest.fixture(params=[1, 2])\ndef k(request):\n    return request.param\n\n\n'
    ).replace('[HealthCheck.too_slow]',
              '[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]'))
    proc = run_pytest(repo)
    assert proc.returncode == 0, proc.stdout
    assert '2 passed' in proc.stdout


def test_differing_executors_the_test_spells_and_the_lock_lacks_still_fails(repo):
    # the same health check written by the test: the settings at collection hold it
    adopted(repo, PARAMETRIZED_PROPERTY)
    repo.write('tests/properties/test_p.py', PARAMETRIZED_PROPERTY.replace(
        '[HealthCheck.too_slow]', '[HealthCheck.too_slow, HealthCheck.differing_executors]'))
    proc = run_pytest(repo)
    assert proc.returncode != 0, proc.stdout
    assert ('tests/properties/test_p.py::test_p[1]: tests less than its lock '
            '(tests/domain_lock.json): suppress_health_check: locked at ["too_slow"], live '
            'value ["too_slow", "differing_executors"]') in proc.stdout
    assert '2 failed' in proc.stdout and 'no test was run' not in proc.stdout  # that test


DIFFERING_FROM_A_FIXTURE = '''\
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st


@pytest.fixture
def quiet(request):
    request.function._hypothesis_internal_use_settings = settings(
        request.function._hypothesis_internal_use_settings,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                               HealthCheck.differing_executors])


@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow,
                                                  HealthCheck.function_scoped_fixture])
@given(xs=st.lists(st.integers()))
def test_p(quiet, xs):
    assert len(xs) >= 0
'''


def test_differing_executors_a_fixture_adds_to_an_unparametrized_property_fails(repo):
    # Hypothesis adds nothing here, so the call-time check discounts nothing
    adopted(repo, DIFFERING_FROM_A_FIXTURE)
    proc = run_pytest(repo)
    assert proc.returncode == 1, proc.stdout
    assert 'oracle-guard: at call time this property tests less than its domain lock' in \
        proc.stdout
    assert ('suppress_health_check: locked at ["too_slow", "function_scoped_fixture"], '
            'live value ["too_slow", "function_scoped_fixture", "differing_executors"]') in \
        proc.stdout
