"""Lock version 2: rows 23, 24 and 27 for whole strategies (nested, helper modules, every
strategy kind), at commit time. Each narrowing fails; a legitimate widening passes."""
from __future__ import annotations

import json

import pytest

from oracle_guard.commands import lock as lock_command
from oracle_guard.hooks.check_generator_lock import main

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python

LOCK = 'tests/domain_lock.json'
PROP = 'tests/properties/test_domain.py'
LETTERS = 'abcdefghijklmnopqrstuvwxyz '
HEADER = '''\
import string
from hypothesis import given, strategies as st
from hypothesis import assume, reject
from hypothesis.errors import UnsatisfiedAssumption

'''


def prop_source(strategy: str, body: str = 'assert x is not None or x is None') -> str:
    return HEADER + f'''

@given(x={strategy})
def test_domain(x):
    {body}
'''


def locked_repo(guarded, strategy: str, **files: str):  # type: ignore[no-untyped-def]
    """A guarded repo whose property draws ``strategy``, locked as version 2."""
    for path, text in files.items():
        guarded.write(path.replace('__', '/') + '.py', text)
    guarded.write(PROP, prop_source(strategy))
    result = guarded.run(lock_command.main, '--upgrade')
    assert result.rc == 0, result.out + result.err
    data = json.loads(guarded.read(LOCK))
    assert data['version'] == 2
    assert 'x' in data['properties']['test_domain']['strategies']
    guarded.commit('lock version 2')
    return guarded


def commit_check(repo, path: str = PROP, text: str | None = None):  # type: ignore[no-untyped-def]
    """The hook in commit mode on one staged file."""
    if text is not None:
        repo.write(path, text)
    repo.add()
    return repo.run(main)


# (what is locked, a narrowing, a widening, the path the failure names)
CASES = [
    ('st.integers()', 'st.integers(0, 1)', 'st.integers() | st.none()',
     'integers(min_value): locked null, live 0'),
    ('st.integers(0, 10)', 'st.integers(0, 9)', 'st.integers(-5, 50)',
     'integers(max_value): locked 10, live 9'),
    ('st.text(max_size=200)', 'st.text(alphabet="abc:", max_size=200)',
     'st.text(max_size=300)', 'text(alphabet): locked characters(codec="utf-8"), live "abc:"'),
    (f'st.lists(st.text(alphabet={LETTERS!r}, max_size=20))',
     'st.lists(st.text(alphabet="ab", max_size=1))',
     f'st.lists(st.text(alphabet={LETTERS + "XYZ"!r}, max_size=40), max_size=None)',
     'lists(elements=text(alphabet)): locked "abc\u2026z ", live "ab"'),
    ('st.sampled_from(["GET", "PUT", "POST", "DELETE"])', 'st.sampled_from(["GET"])',
     'st.sampled_from(["GET", "PUT", "POST", "DELETE", "PATCH"])', 'sampled_from(elements)'),
    ('st.one_of(st.integers(), st.text())', 'st.integers()',
     'st.one_of(st.integers(), st.text(), st.none())', 'one_of(branches#2)'),
    ('st.integers().filter(lambda n: n > 0)', 'st.integers().filter(lambda n: n > 5)',
     'st.integers()', 'integers(filter)'),
    ('st.integers().map(abs)', 'st.integers().map(lambda n: 0)', 'st.integers().map(abs)',
     'integers(transforms)'),
    ('st.just(3)', 'st.just(4)', 'st.sampled_from([3, 4])', 'sampled_from(elements)'),
    ('st.builds(dict, a=st.integers(0, 100))', 'st.builds(dict, a=st.integers(0, 1))',
     'st.builds(dict, a=st.integers(0, 1000))', "builds(kwargs['a']=integers(max_value))"),
    ('st.fixed_dictionaries({"k": st.binary(max_size=64)})',
     'st.fixed_dictionaries({"k": st.binary(max_size=8)})',
     'st.fixed_dictionaries({"k": st.binary()})', "fixed_dictionaries(mapping['k']"),
    ('st.tuples(st.booleans(), st.floats(0, 1))', 'st.tuples(st.booleans(), st.floats(0, 0.5))',
     'st.tuples(st.booleans(), st.floats(-1, 1))', 'tuples(args#2=floats(max_value))'),
    ('st.recursive(st.none(), st.lists, max_leaves=50)',
     'st.recursive(st.none(), st.lists, max_leaves=5)',
     'st.recursive(st.none(), st.lists, max_leaves=500)', 'recursive(max_leaves)'),
    ('st.from_regex(r"[a-z]+", fullmatch=False)', 'st.from_regex(r"[a-z]+", fullmatch=True)',
     'st.from_regex(r"[a-z]+")', 'from_regex(fullmatch)'),
    ('st.from_type(int)', 'st.from_type(bool)', 'st.from_type(int)', 'from_type(thing)'),
    ('st.dictionaries(st.text(max_size=5), st.integers(), max_size=10)',
     'st.dictionaries(st.text(max_size=5), st.integers(0, 3), max_size=10)',
     'st.dictionaries(st.text(max_size=9), st.integers(), max_size=10)',
     'dictionaries(values=integers(min_value))'),
    ('st.lists(st.integers(), unique=False)', 'st.lists(st.integers(), unique=True)',
     'st.lists(st.integers())', 'lists(unique)'),
    ('st.text(alphabet=st.characters(codec="utf-8"))',
     'st.text(alphabet=st.characters(codec="ascii"))', 'st.text()',
     'text(alphabet=characters(codec)): locked "utf-8", live "ascii"'),
]


@pytest.mark.parametrize(('locked', 'narrowed', 'widened', 'where'), CASES,
                         ids=[c[0] for c in CASES])
def test_strategy_narrowed_anywhere_inside_fails_at_commit_time(guarded, locked, narrowed,
                                                                 widened, where):
    repo = locked_repo(guarded, locked)
    result = commit_check(repo, text=prop_source(narrowed))
    assert result.rc == 1, result.out
    assert 'OG610' in result.codes, result.out
    assert f'test_domain tests less than its lock: args.x: {where}' in result.out
    assert 're-locks with `oracle-guard lock --allow-loosen` in a change of its own' in \
        result.out


@pytest.mark.parametrize(('locked', 'narrowed', 'widened', 'where'), CASES,
                         ids=[c[0] for c in CASES])
def test_strategy_widened_or_unchanged_passes(guarded, locked, narrowed, widened, where):
    repo = locked_repo(guarded, locked)
    result = commit_check(repo, text=prop_source(widened))
    assert result.rc == 0, result.out
    assert result.codes == []


def test_nested_narrowing_message_names_the_path_lock_and_live(guarded):
    repo = locked_repo(guarded, f'st.lists(st.text(alphabet={LETTERS!r}, max_size=20))')
    result = commit_check(repo, text=prop_source('st.lists(st.text(alphabet="ab", '
                                                  'max_size=1))'))
    assert (f'{PROP}:8:1: OG610 test_domain tests less than its lock: args.x: '
            'lists(elements=text(alphabet)): locked "abc\u2026z ", live "ab"') in result.out
    assert 'args.x: lists(elements=text(max_size)): locked 20, live 1' in result.out


HELPER = '''\
from hypothesis import strategies as st

LETTERS = "abcdefghijklmnopqrstuvwxyz "
codes = st.lists(st.text(alphabet=LETTERS, max_size=20))
'''
USER = HEADER + '''from strategies import codes


@given(x=codes)
def test_domain(x):
    assert isinstance(x, list)
'''


def test_helper_module_narrowed_without_touching_the_property_fails(guarded):
    guarded.write('tests/properties/strategies.py', HELPER)
    guarded.write(PROP, USER)
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    form = json.loads(guarded.read(LOCK))['properties']['test_domain']['strategies']['x']
    assert form['elements']['alphabet'] == 'abcdefghijklmnopqrstuvwxyz '
    guarded.commit('lock')
    # only the helper changes: no property file is in the commit
    result = commit_check(guarded, 'tests/properties/strategies.py',
                          HELPER.replace('max_size=20', 'max_size=1'))
    assert result.rc == 1, result.out
    assert 'args.x: lists(elements=text(max_size)): locked 20, live 1' in result.out
    assert result.out.startswith(f'{PROP}:')


def test_helper_module_constant_narrowed_through_a_package_import_fails(guarded):
    guarded.write('tests/__init__.py', '')
    guarded.write('tests/properties/__init__.py', '')
    guarded.write('tests/properties/strategies.py', HELPER)
    guarded.write(PROP, USER.replace('from strategies import codes',
                                     'from .strategies import codes'))
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    guarded.commit('lock')
    result = commit_check(guarded, 'tests/properties/strategies.py',
                          HELPER.replace('xyz ', 'x'))
    assert result.rc == 1, result.out
    assert 'lists(elements=text(alphabet)): locked "abc\u2026z ", live "abc\u2026wx"' in \
        result.out


@pytest.mark.parametrize('tests_entries', [
    '"tests/"', '"te*s/"', '"tests/properties/strategies.py", "tests/properties/test_domain.py"',
    # globs git greps as they are (sympy's `sympy/**/tests/`), and ones it cannot
    '"tests/**/properties/"', '"**/prop?rties/"', '"t*/**/"', '"tests/properties/*.py"',
    '"te[s]ts/"', '"tes**/"',
])
def test_helper_found_through_the_python_files_of_every_kind_of_test_root(guarded,
                                                                          tests_entries):
    # The helper's importers are looked for among the *.py files below the test roots: a
    # folder, a glob (itself, or the folder before it) or files named one by one (rule 23).
    guarded.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n'
                  f'tests = [{tests_entries}]\nproperties = ["{PROP}"]\n')
    guarded.write('tests/properties/strategies.py', HELPER)
    guarded.write(PROP, USER)
    # a fixture that names the helper is no importer
    guarded.write('tests/fixtures/strategies.json', '{"strategies": "codes"}\n')
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    guarded.commit('lock')
    result = commit_check(guarded, 'tests/properties/strategies.py',
                          HELPER.replace('max_size=20', 'max_size=1'))
    assert result.rc == 1, result.out
    assert result.codes == ['OG610'], result.out
    assert 'args.x: lists(elements=text(max_size)): locked 20, live 1' in result.out


@pytest.mark.parametrize('tests_entry', [
    'tests/**/unit/', '**/un?t/', 'tests/*/', 'tests/unit/*.py', 'te[s]ts/', 'tes**/',
])
def test_helper_importers_are_found_below_a_glob_test_root(guarded, tests_entry):
    """Rule 23 through a helper, the user outside the properties (sympy's tests are
    `sympy/**/tests/`): a glob git reads as the configuration does is grepped as it is, any
    other below its literal root; either way the user of the narrowed helper is found."""
    guarded.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n'
                  f'tests = ["{tests_entry}"]\nproperties = ["tests/properties/"]\n')
    guarded.write('tests/unit/strategies.py', HELPER)
    guarded.write('tests/unit/test_user.py', USER)
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    guarded.commit('lock')
    result = commit_check(guarded, 'tests/unit/strategies.py',
                          HELPER.replace('max_size=20', 'max_size=1'))
    assert result.codes == ['OG610'], result.out
    assert result.out.startswith('tests/unit/test_user.py:'), result.out


def test_helper_module_widened_passes(guarded):
    guarded.write('tests/properties/strategies.py', HELPER)
    guarded.write(PROP, USER)
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    guarded.commit('lock')
    result = commit_check(guarded, 'tests/properties/strategies.py',
                          HELPER.replace('max_size=20', 'max_size=50'))
    assert result.rc == 0, result.out


COMPOSITE = HEADER + '''
@st.composite
def pairs(draw, n=20):
    key = draw(st.text(alphabet=string.ascii_lowercase, max_size=n))
    return key, draw(st.integers(0, 100))


@given(x=pairs())
def test_domain(x):
    assert len(x) == 2
'''


def test_composite_body_edit_fails(guarded):
    guarded.write(PROP, COMPOSITE)
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    guarded.commit('lock')
    result = commit_check(guarded, text=COMPOSITE.replace('return key,', 'return key[:1],'))
    assert result.rc == 1, result.out
    assert 'composite(code)' in result.out


def test_composite_draw_narrowed_fails_and_a_wider_default_passes(guarded):
    guarded.write(PROP, COMPOSITE)
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    guarded.commit('lock')
    result = commit_check(guarded, text=COMPOSITE.replace('pairs()', 'pairs(n=2)'))
    assert result.rc == 1, result.out
    assert 'composite(draws#1=text(max_size)): locked 20, live 2' in result.out
    assert commit_check(guarded, text=COMPOSITE.replace('pairs()', 'pairs(n=30)')).rc == 0


DATA = HEADER + '''
@given(x=st.data())
def test_domain(x):
    n = x.draw(st.integers(0, 1000))
    assert n >= 0
'''


def test_data_draw_narrowed_fails(guarded):
    guarded.write(PROP, DATA)
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    guarded.commit('lock')
    result = commit_check(guarded, text=DATA.replace('1000', '10'))
    assert result.rc == 1, result.out
    assert 'data(draws#1=integers(max_value)): locked 1000, live 10' in result.out


@pytest.mark.parametrize('discard', [
    'raise UnsatisfiedAssumption()',
    'raise UnsatisfiedAssumption',
    'assume(x != 3)',
    'reject()',
])
def test_discarding_examples_in_the_body_stays_caught_with_version_2(guarded, discard):
    repo = locked_repo(guarded, 'st.integers()')
    body = f'if x == 3:\n        {discard}\n    assert x != 3'
    result = commit_check(repo, text=prop_source('st.integers()', body))
    assert result.rc == 1, result.out
    assert result.codes == ['OG604']


def test_filter_added_to_a_locked_strategy_fails(guarded):
    repo = locked_repo(guarded, 'st.integers()')
    result = commit_check(repo, text=prop_source('st.integers().filter(lambda n: n < 3)'))
    assert result.rc == 1
    assert set(result.codes) == {'OG604', 'OG610'}
    assert 'integers(filter)' in result.out


def test_unreadable_strategy_is_a_note_checked_at_run_time(guarded):
    repo = locked_repo(guarded, 'st.integers()')
    text = prop_source('make_strategy()').replace(
        'import string', 'import string\nfrom app_strategies import make_strategy')
    result = commit_check(repo, text=text)
    # the locked form cannot be compared statically: said, not silently passed
    assert 'note: test_domain: args.x: strategy: checked at run time' in result.out
    assert 'the pytest plugin checks it' in result.out
    assert result.codes == []


def test_argument_dropped_from_a_locked_property_fails(guarded):
    guarded.write(PROP, HEADER + '''
@given(x=st.integers(), y=st.text())
def test_domain(x, y):
    assert x is not None
''')
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    guarded.commit('lock')
    result = commit_check(guarded, text=prop_source('st.integers()'))
    assert result.rc == 1
    assert 'args.y: locked text(), but the test no longer draws this argument' in result.out


def test_argument_added_without_a_locked_form_is_an_unlocked_argument(guarded):
    repo = locked_repo(guarded, 'st.integers()')
    result = commit_check(repo, text=HEADER + '''
@given(x=st.integers(), y=st.text())
def test_domain(x, y):
    assert x is not None
''')
    assert result.codes == ['OG601'], result.out
    assert 'unlocked argument: test_domain draws y' in result.out


# -- row 27 for version 2 ----------------------------------------------------------------

def test_lock_form_narrowed_with_test_code_in_the_same_change_fails(guarded):
    repo = locked_repo(guarded, 'st.integers(0, 100)')
    data = json.loads(repo.read(LOCK))
    data['properties']['test_domain']['strategies']['x']['max_value'] = 1
    repo.write_json(LOCK, data)
    repo.write(PROP, prop_source('st.integers(0, 1)'))
    repo.add()
    result = repo.run(main)
    assert 'OG606' in result.codes, result.out
    assert 'strategies.x: integers(max_value): locked 100, live 1' in result.out


def test_lock_form_narrowed_alone_passes(guarded):
    repo = locked_repo(guarded, 'st.integers(0, 100)')
    data = json.loads(repo.read(LOCK))
    data['properties']['test_domain']['strategies']['x']['max_value'] = 1000
    repo.write_json(LOCK, data)
    repo.add()
    assert repo.run(main).codes == ['OG610']  # the test no longer reaches its lock
    data['properties']['test_domain']['strategies']['x']['max_value'] = 100
    data['properties']['test_domain']['strategies']['x']['min_value'] = 50
    repo.write_json(LOCK, data)
    repo.add()
    result = repo.run(main)
    assert result.rc == 0, result.out


# -- the lock command --------------------------------------------------------------------

def test_upgrade_turns_version_1_into_version_2_keeping_every_field(guarded):
    guarded.write(PROP, prop_source('st.binary(max_size=400)'))
    guarded.write_json(LOCK, {'version': 1, 'properties': {
        'test_parse_never_throws': {'max_examples': 100},
        'test_domain': {'max_examples': 100, 'max_size': 4096}}})
    result = guarded.run(lock_command.main, '--upgrade')
    assert result.rc == 0
    data = json.loads(guarded.read(LOCK))
    assert data['version'] == 2
    entry = data['properties']['test_domain']
    assert entry['max_size'] == 4096 and entry['max_examples'] == 100  # nothing loosened
    assert entry['strategies']['x'] == {'strategy': 'binary', 'min_size': 0, 'max_size': 400}
    assert data['properties']['test_parse_never_throws']['strategies']['buf'] == {
        'strategy': 'binary', 'min_size': 0, 'max_size': None}
    assert '-  "version": 1' in result.out and '+  "version": 2' in result.out
    assert '"strategy": "binary"' in result.out
    assert guarded.run(lock_command.main).out.endswith('up to date\n')


def test_version_1_lock_stays_version_1_without_upgrade(guarded):
    guarded.write(PROP, prop_source('st.binary(max_size=400)'))
    assert guarded.run(lock_command.main).rc == 0
    data = json.loads(guarded.read(LOCK))
    assert data['version'] == 1
    assert 'strategies' not in data['properties']['test_domain']


def test_new_lock_is_version_2(guarded):
    guarded.rm(LOCK)
    guarded.write(PROP, prop_source('st.lists(st.integers(0, 9), max_size=3)'))
    result = guarded.run(lock_command.main)
    data = json.loads(guarded.read(LOCK))
    assert data['version'] == 2
    form = data['properties']['test_domain']['strategies']['x']
    assert form['elements'] == {'strategy': 'integers', 'min_value': 0, 'max_value': 9}
    assert '"max_size": 3' in result.out


def test_lock_keeps_a_locked_form_the_test_narrowed_unless_allowed(guarded):
    repo = locked_repo(guarded, 'st.integers(0, 100)')
    repo.write(PROP, prop_source('st.integers(0, 1)'))
    result = repo.run(lock_command.main)
    assert 'strategies.x kept: integers(max_value): locked 100, live 1' in result.out
    form = json.loads(repo.read(LOCK))['properties']['test_domain']['strategies']['x']
    assert form['max_value'] == 100
    result = repo.run(lock_command.main, '--allow-loosen')
    form = json.loads(repo.read(LOCK))['properties']['test_domain']['strategies']['x']
    assert form['max_value'] == 1
    assert 'strategies.x loosened' in result.out


def test_lock_takes_a_wider_form_and_notes_what_is_left_to_run_time(guarded):
    repo = locked_repo(guarded, 'st.integers(0, 100)')
    repo.write(PROP, prop_source('st.integers(0, 1000)'))
    repo.run(lock_command.main)
    form = json.loads(repo.read(LOCK))['properties']['test_domain']['strategies']['x']
    assert form['max_value'] == 1000
    text = prop_source('make()').replace('import string',
                                         'import string\nfrom elsewhere import make')
    repo.write(PROP, text)
    result = repo.run(lock_command.main, '--dry-run')
    assert 'args.x: strategy: checked at run time (make()' in result.out


# -- rows 23-25 against the base revision's own source, whatever the lock's version -------

def version_1_repo(guarded, strategy: str, **files: str):  # type: ignore[no-untyped-def]
    """A guarded repo whose property draws ``strategy``, with a version-1 entry that has
    no field for most of it."""
    for path, text in files.items():
        guarded.write(path, text)
    guarded.write(PROP, prop_source(strategy))
    guarded.write_json(LOCK, {'version': 1, 'properties': {
        'test_parse_never_throws': {'max_examples': 100},
        'test_domain': {'max_examples': 100},
    }})
    guarded.commit('lock version 1')
    return guarded


@pytest.mark.parametrize(('locked', 'narrowed', 'widened', 'where'), CASES,
                         ids=[c[0] for c in CASES])
def test_strategy_narrowed_under_a_version_1_entry_fails_against_the_base(
        guarded, locked, narrowed, widened, where):
    repo = version_1_repo(guarded, locked)
    result = commit_check(repo, text=prop_source(narrowed))
    assert result.rc == 1, result.out
    assert 'OG611' in result.codes, result.out
    base_where = where.split(': locked ')[0]
    assert f'test_domain tests less than at the base revision: args.x: {base_where}' in \
        result.out
    assert '`oracle-guard lock --upgrade` records the whole strategy' in result.out


@pytest.mark.parametrize(('locked', 'narrowed', 'widened', 'where'), CASES,
                         ids=[c[0] for c in CASES])
def test_strategy_widened_under_a_version_1_entry_passes(guarded, locked, narrowed, widened,
                                                         where):
    repo = version_1_repo(guarded, locked)
    result = commit_check(repo, text=prop_source(widened))
    assert 'OG611' not in result.codes, result.out  # the entry's own fields may still judge


def test_helper_module_narrowed_under_a_version_1_entry_fails_in_a_range(guarded):
    repo = version_1_repo(guarded, 'codes', **{'tests/properties/strategies.py': HELPER})
    repo.write(PROP, USER)
    repo.commit('the property draws from the helper')
    base = repo.git('rev-parse', 'HEAD').strip()
    repo.write('tests/properties/strategies.py', HELPER.replace('max_size=20', 'max_size=1'))
    repo.commit('narrow the helper')
    result = repo.run(main, '--from-ref', base, '--to-ref', 'HEAD')
    assert result.codes == ['OG611'], result.out
    assert result.out.startswith(f'{PROP}:')
    assert 'lists(elements=text(max_size)): base 20, now 1' in result.out


def test_narrowing_re_locked_as_version_2_in_a_change_of_its_own_passes(guarded):
    """The way to narrow on purpose: upgrade the lock alone, re-lock the narrower strategy
    alone; from then on the lock, not the base source, is the measure."""
    repo = version_1_repo(guarded, 'st.text()')
    assert repo.run(lock_command.main, '--upgrade').rc == 0
    repo.commit('lock --upgrade')
    repo.write(PROP, prop_source('st.text(alphabet="ab")'))
    assert repo.run(lock_command.main, '--allow-loosen').rc == 0
    repo.commit('re-lock the narrower strategy', LOCK)  # the lock alone
    result = commit_check(repo)
    assert (result.rc, result.codes) == (0, []), result.out


def test_strategy_narrowed_while_the_file_is_renamed_fails_against_the_base(guarded):
    repo = version_1_repo(guarded, 'st.text()')
    repo.git('mv', PROP, 'tests/properties/test_domain_renamed.py')
    repo.write('tests/properties/test_domain_renamed.py', prop_source('st.text(alphabet="ab")'))
    repo.add()
    result = repo.run(main)
    assert result.codes == ['OG611'], result.out
