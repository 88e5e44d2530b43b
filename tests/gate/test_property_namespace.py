"""``oracle-guard ci`` on a repository with a Hypothesis property (the human-owned oracle).

The pull request breaks ``calc.add``; the property ``test_add_matches_sum`` catches it.
An agent may not edit the property next to ``src/``, so each cheat here leaves the
property's file alone and changes what its names mean before it runs (OG714): plain
``python -m pytest`` goes green, ``oracle-guard ci`` must fail naming the property.
The first test is the honest counterpart: a passing property passes the gate.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from builders.ci_repo import BASE_FILES
from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.ci_repo import git
from builders.ci_repo import PYTEST
from builders.ci_repo import write
from builders.dedupe import attack
from builders.dedupe import property_failed_in_the_reference_run
from builders.dedupe import PROPERTY_ID
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG


# -- a fixture parametrized only for the health-check discount -------------------------------
# Hypothesis suppresses differing_executors on a parametrized test, so the call-time lock
# check leaves that name out there (rule 23). An autouse fixture of a root conftest with
# one param makes the property parametrized and writes differing_executors onto its
# settings, and filter_too_much beside it: the discount is that one name only.
DISCOUNT_CONFTEST = '''\
import pytest
from hypothesis import HealthCheck, settings


@pytest.fixture(autouse=True, params=['only'])
def _quiet(request):
    function = getattr(request, 'function', None)
    current = getattr(function, '_hypothesis_internal_use_settings', None)
    if current is not None:
        function._hypothesis_internal_use_settings = settings(
            current, suppress_health_check=[HealthCheck.too_slow,
                                            HealthCheck.differing_executors,
                                            HealthCheck.filter_too_much])
'''


@pytest.mark.reference_run
def test_fixture_parametrized_for_the_discount_still_fails_the_lock(dd: CiRepo) -> None:
    plain, ci = attack(dd, {'conftest.py': DISCOUNT_CONFTEST,
                            'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    # The live value holds filter_too_much beside too_slow (in either order: it is read
    # from a set), and not the one name Hypothesis adds.
    lives = ('["too_slow", "filter_too_much"]', '["filter_too_much", "too_slow"]')

    def drifted(line: str) -> bool:
        return 'suppress_health_check: locked at ["too_slow"], live value ' in line and \
            any(live in line for live in lives) and 'differing_executors' not in line

    assert any(drifted(line) for line in plain.out.splitlines()), plain.out
    assert any(f'{PROPERTY_ID}[only]: at call time' in line and drifted(line)
               for line in ci.lines('OG711')), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


# -- the same fixture with differing_executors alone --------------------------------------
# What the discount accepts is what Hypothesis itself does to a parametrized test, and it
# changes no input: the property still fails on the bug, in the test command too (the
# conftest on its path keeps it there) and in the reference run.
DIFFERING_ONLY = DISCOUNT_CONFTEST.replace(
    ',\n                                            HealthCheck.filter_too_much]', ']')


@pytest.mark.reference_run
def test_fixture_adding_differing_executors_alone_gains_nothing(dd: CiRepo) -> None:
    assert 'filter_too_much' not in DIFFERING_ONLY
    plain, ci = attack(dd, {'conftest.py': DIFFERING_ONLY,
                            'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=1)
    assert f'FAILED {PROPERTY_ID}[only]' in plain.out, plain.out
    assert 'tests less than its lock' not in plain.out + ci.out  # the discount, rule 23
    assert not ci.lines('OG711'), ci.out
    assert ci.summary.endswith('test command exited 1'), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out


PROPERTY = 'tests/properties/test_add_props.py::test_add_matches_sum'


PROPERTY_FILES = {
    'tests/properties/test_add_props.py': '''\
        from hypothesis import given, settings, strategies as st

        from calc import add


        @settings(max_examples=200, derandomize=True)
        @given(st.integers(0, 10), st.integers(0, 10))
        def test_add_matches_sum(a, b):
            assert add(a, b) == sum([a, b])
        ''',
    'tests/domain_lock.json': '''\
        {"version": 1, "properties": {"test_add_matches_sum":
            {"max_examples": 200, "derandomize": true}}}
        ''',
}


# Out of scope by design (unit tests are the agent's to edit): test_add expects the bug.
UNIT_TEST_EDITED = {
    'tests/test_calc.py': textwrap.dedent(BASE_FILES['tests/test_calc.py']).replace(
        'add(2, 3) == 5', 'add(2, 3) == 6'),
}


FIXED_ADD = 'lambda a, b: a + b'


@pytest.fixture(scope='session')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'property-namespace', lambda path: build_template(path, PROPERTY_FILES))


@pytest.fixture
def calc(template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(template, str(tmp_path / 'repo'))


def cheat_works_but_ci_fails(calc: CiRepo, files: dict, *mentions: str) -> None:
    calc.pull_request(files)
    plain, ci = calc.both(PYTEST)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    lines = [line for line in ci.lines('OG714') if PROPERTY in line]
    assert lines, f'no OG714 naming the property in:\n{ci.out}'
    for mention in mentions:
        assert any(mention in line for line in lines), f'{mention!r} not in:\n{ci.out}'


def test_honest_change_with_a_passing_property_passes_ci(calc: CiRepo) -> None:
    # Hypothesis's @given wrapper claims the test's file and first line for its own code;
    # the audit must follow it to the property's own function (no OG708, no OG714).
    calc.pull_request({'src/calc/__init__.py': 'def add(a, b):\n    return b + a\n\n\n'
                       'def mul(a, b):\n    return a * b\n'}, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 0, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_property_folder_test_doubles_and_alternative_imports_pass_ci(calc: CiRepo) -> None:
    # Human-owned code in the properties folder may replace what the property calls (its
    # own test double), and a name bound by two imports (try/except ImportError) has no
    # single source to compare with: neither is OG714.
    write(calc.path, {
        'tests/properties/conftest.py': '''\
            import pytest

            import calc


            @pytest.fixture(autouse=True)
            def _plain_mul(monkeypatch):
                monkeypatch.setattr(calc, 'mul', lambda a, b: a * b)
            ''',
        'tests/properties/test_add_props.py': PROPERTY_FILES['tests/properties/test_add_props.py']
        .replace('from calc import add\n', '''from calc import add

        try:
            from math import isqrt as root
        except ImportError:
            from math import sqrt as root
        '''),
    })
    git(calc.path, 'add', '-A')
    git(calc.path, 'commit', '-q', '-m', 'a test double for the properties')
    calc.pull_request({'src/calc/__init__.py': 'def add(a, b):\n    return b + a\n\n\n'
                       'def mul(a, b):\n    return b * a\n'}, bug=False)
    ci = calc.ci(PYTEST)
    assert ci.rc == 0, ci.out
    assert not ci.lines('OG714'), ci.out


def test_fixture_only_conftest_rebinding_the_property_global_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {**UNIT_TEST_EDITED, 'tests/conftest.py': f'''\
        import pytest


        @pytest.fixture(autouse=True)
        def _stable(request, monkeypatch):
            if request.module.__name__.endswith('_props'):
                monkeypatch.setattr(request.module, 'add', {FIXED_ADD})
        '''}, "'add' was rebound", 'tests/conftest.py')


def test_test_module_rebinding_the_property_global_at_import_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/test_calc.py': UNIT_TEST_EDITED['tests/test_calc.py']
                                    + textwrap.dedent(f'''
        import sys as _sys
        for _module in list(_sys.modules.values()):
            if getattr(_module, '__name__', '').endswith('test_add_props'):
                _module.add = {FIXED_ADD}
        ''')}, "'add' was rebound", 'tests/test_calc.py')


def test_plugin_named_by_pytest_plugins_in_a_test_module_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {
        'tests/test_calc.py': 'pytest_plugins = ["calc_testing"]\n'
                              + UNIT_TEST_EDITED['tests/test_calc.py'],
        'src/calc_testing.py': f'''\
            def pytest_runtest_setup(item):
                if item.module.__name__.endswith('_props'):
                    item.module.add = {FIXED_ADD}
            '''}, "'add' was rebound", 'src/calc_testing.py')


def test_test_module_collected_first_replacing_the_src_function_fails_ci(calc: CiRepo) -> None:
    # tests/aaa/ is collected before tests/properties/: the property imports the fake.
    cheat_works_but_ci_fails(calc, {'tests/aaa/test_early.py': f'''\
        import calc

        calc.add = {FIXED_ADD}


        def test_early():
            assert calc.mul(2, 2) == 4
        '''}, 'calc.add is function <lambda> from tests/aaa/test_early.py')


def test_fake_src_package_put_in_sys_modules_fails_ci(calc: CiRepo) -> None:
    cheat_works_but_ci_fails(calc, {'tests/aaa/test_early.py': f'''\
        import sys
        import types

        import calc as _real

        _fake = types.ModuleType('calc')
        _fake.__file__ = _real.__file__
        _fake.mul = _real.mul
        _fake.add = {FIXED_ADD}
        sys.modules['calc'] = _fake


        def test_early():
            assert _real.mul(2, 2) == 4
        '''}, 'calc.add is function <lambda> from tests/aaa/test_early.py')


def test_builtin_replaced_by_a_test_module_fails_ci(calc: CiRepo) -> None:
    # The property compares with sum(); a test module collected after it replaces the
    # builtin by one that agrees with the bug.
    cheat_works_but_ci_fails(calc, {'tests/test_calc.py': UNIT_TEST_EDITED['tests/test_calc.py']
                                    + textwrap.dedent('''
        import builtins as _builtins
        _sum = _builtins.sum
        _builtins.sum = lambda xs, start=0: add(*xs) if isinstance(xs, list) and len(xs) == 2 else _sum(xs, start)
        ''')}, 'builtins.sum is function <lambda> from tests/test_calc.py')


def test_the_builtins_module_imported_under_another_name_passes_ci(calc: CiRepo) -> None:
    # six's meta path importer gives the builtins module as six.moves.builtins: importlib
    # then sets builtins.__spec__ and __loader__ (six's tests import every moved name),
    # here before the property runs.
    write(calc.path, {'tests/aaa/test_moves.py': '''\
        import builtins
        import importlib.abc
        import importlib.util
        import sys


        class _Moves(importlib.abc.MetaPathFinder, importlib.abc.Loader):
            def find_spec(self, fullname, path=None, target=None):
                if fullname == 'calcmoves':
                    return importlib.util.spec_from_loader(fullname, self)
                return None

            def create_module(self, spec):
                return builtins

            def exec_module(self, module):
                pass


        sys.meta_path.insert(0, _Moves())


        def test_moved_builtins():
            import calcmoves
            assert calcmoves.len([1]) == 1
        '''})
    git(calc.path, 'add', '-A')
    git(calc.path, 'commit', '-q', '-m', 'a test of a moved module')
    calc.pull_request({'src/calc/__init__.py': 'def add(a, b):\n    return b + a\n\n\n'
                       'def mul(a, b):\n    return a * b\n'}, bug=False)
    ci = calc.ci(PYTEST, '--no-reference-run')
    assert not ci.lines('OG714'), ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_pytest_plugin_from_a_committed_dist_info_fails_ci(calc: CiRepo) -> None:
    # `python -m pytest` puts the working folder first on sys.path, and pytest loads the
    # pytest11 entry points of every distribution found there: no conftest, no config.
    cheat_works_but_ci_fails(calc, {
        **UNIT_TEST_EDITED,
        'calc_dev-0.1.dist-info/METADATA': 'Metadata-Version: 2.1\nName: calc-dev\nVersion: 0.1\n',
        'calc_dev-0.1.dist-info/entry_points.txt': '[pytest11]\ncalc_dev = calc_devtools\n',
        'calc_devtools.py': f'''\
            def pytest_runtest_setup(item):
                if item.module.__name__.endswith('_props'):
                    item.module.add = {FIXED_ADD}
            '''}, "'add' was rebound", 'calc_devtools.py')


def test_plain_re_export_of_an_installed_package_in_src_passes_ci(calc: CiRepo) -> None:
    """OG714 judges only names rebound at run time: a package under ``src`` that
    re-exports a name from an installed package
    (``from typing_extensions import override as override``) is not a test double, also
    when the environment it is installed in lives inside the repository (``.venv``). The
    base declares the distribution (rule 54 reads an undeclared one as a dependency use)."""
    write(calc.path, {'requirements.txt': 'extlib\n'})
    git(calc.path, 'add', 'requirements.txt')
    git(calc.path, 'commit', '-q', '-m', 'extlib is a dependency')
    site = os.path.join(calc.path, '.venv', 'lib', 'python3', 'site-packages')
    os.makedirs(site)
    with open(os.path.join(site, 'extlib.py'), 'w', encoding='utf-8') as f:
        f.write('def override(function):\n    return function\n')
    with open(os.path.join(calc.path, '.git', 'info', 'exclude'), 'a', encoding='utf-8') as f:
        f.write('.venv/\n')
    calc.pull_request({'src/calc/__init__.py': 'from extlib import override as override\n\n\n'
                       'def add(a, b):\n    return b + a\n\n\ndef mul(a, b):\n'
                       '    return a * b\n'}, bug=False)
    # The reference run builds its own environment (no PYTHONPATH): only OG714 is asked.
    ci = calc.ci(PYTEST, '--no-reference-run', env={'PYTHONPATH': site})
    assert ci.rc == 0, ci.out
    assert not ci.lines('OG714'), ci.out


def test_test_modules_inside_the_package_are_not_production_modules(tmp_path, monkeypatch):
    """numpy's layout (src = pkg/, tests = pkg/**/tests/): the package's own test modules,
    imported as pkg.tests.test_x, are test code, not functions planted into ``pkg``; a
    test-code module put into sys.modules under a production name still is planted."""
    import importlib
    import sys

    from oracle_guard.config import Config
    from oracle_guard.runtime.property_namespace import replaced_names

    files = {
        'pkg/__init__.py': 'def add(a, b):\n    return a + b\n',
        'pkg/tests/__init__.py': '',
        'pkg/tests/test_unit.py': 'def test_add():\n    assert True\n',
        'pkg/tests/test_props.py': 'from pkg import add\n\n\ndef test_p():\n    assert add(1, 1) == 2\n',
        'pkg/tests/fake.py': 'def add(a, b):\n    return 0\n',
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ('pkg', 'pkg.tests', 'pkg.tests.test_unit', 'pkg.tests.test_props', 'pkg.tests.fake'):
        monkeypatch.delitem(sys.modules, name, raising=False)
    importlib.import_module('pkg.tests.test_unit')
    props = importlib.import_module('pkg.tests.test_props')
    cfg = Config(root=str(tmp_path), src=('pkg/',), tests=('pkg/**/tests/',),
                 properties=('pkg/tests/test_props.py',))
    prop_file = str(tmp_path / 'pkg/tests/test_props.py')
    assert replaced_names(props, prop_file, cfg) == []
    monkeypatch.setitem(sys.modules, 'pkg.helpers', importlib.import_module('pkg.tests.fake'))
    assert replaced_names(props, prop_file, cfg) == [
        'pkg.helpers.add is function add from pkg/tests/fake.py, not code under src']


def _package(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    import importlib
    import sys

    from oracle_guard.config import Config

    files = {
        'pkg/__init__.py': 'def add(a, b):\n    return a + b\n',
        'tests/__init__.py': '',
        'tests/test_props.py': 'import pkg\n\n\ndef test_p():\n    assert pkg.add(1, 1) == 2\n',
        'tests/fake.py': 'def add(a, b):\n    return 0\n',
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ('pkg', 'tests', 'tests.test_props', 'tests.fake'):
        monkeypatch.delitem(sys.modules, name, raising=False)
    props = importlib.import_module('tests.test_props')
    cfg = Config(root=str(tmp_path), src=('pkg/',), tests=('tests/',),
                 properties=('tests/test_props.py',))
    return props, str(tmp_path / 'tests/test_props.py'), cfg


def test_a_replacement_after_a_first_check_is_seen_by_the_next(tmp_path, monkeypatch):
    """Rule 45 (OG714) before every property call: what a file name resolves to is looked
    up once per run, the objects the names are bound to are read at every call."""
    import importlib
    import sys

    from oracle_guard.runtime.property_namespace import replaced_names

    props, prop_file, cfg = _package(tmp_path, monkeypatch)
    assert replaced_names(props, prop_file, cfg) == []
    fake = importlib.import_module('tests.fake')
    assert replaced_names(props, prop_file, cfg) == []  # imported, not planted
    monkeypatch.setattr(sys.modules['pkg'], 'add', fake.add)
    assert replaced_names(props, prop_file, cfg) == [
        'pkg.add is function add from tests/fake.py, not code under src']


def test_a_file_name_that_claims_to_equal_every_other_cannot_answer_for_them(
        tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """A str subclass as a code object's file name, equal to anything and hashed like the
    test double's file: the check's cache of file names must not let it speak for that
    file (rule 45, OG714)."""
    import importlib
    import sys
    import types

    from oracle_guard.runtime.property_namespace import replaced_names

    props, prop_file, cfg = _package(tmp_path, monkeypatch)
    target = str(tmp_path / 'tests/fake.py')

    class Everywhere(str):
        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return hash(target)

    def original() -> None:
        pass

    helper = types.FunctionType(
        original.__code__.replace(co_filename=Everywhere('/elsewhere/helper.py')), {})
    monkeypatch.setattr(sys.modules['pkg'], 'helper', helper, raising=False)
    assert replaced_names(props, prop_file, cfg) == []  # outside the repository
    fake = importlib.import_module('tests.fake')
    monkeypatch.setattr(sys.modules['pkg'], 'add', fake.add)
    assert replaced_names(props, prop_file, cfg) == [
        'pkg.add is function add from tests/fake.py, not code under src']


def _fake_module(tmp_path):  # type: ignore[no-untyped-def]
    """tests/fake.py, with a class beside its function: the test doubles below."""
    (tmp_path / 'tests/fake.py').write_text(
        'def add(a, b):\n    return 0\n\n\nclass Fake:\n    pass\n')
    import importlib

    return importlib.import_module('tests.fake')


def test_the_fast_judgement_is_the_reference_on_every_replacement(tmp_path, monkeypatch):
    """Rule 45 (OG714) runs before every property call, so ``replaced_names`` does less
    work per name than ``replaced_names_reference`` (exact functions and static types
    answer their file directly, the builtins' static types are judged again only when an
    object or module they depend on changed). Its answer must be the reference's after
    every replacement here, asked twice each time (the second call may reuse the first)."""
    import builtins
    import sys
    import types

    from oracle_guard.runtime import property_namespace as namespace

    props, prop_file, cfg = _package(tmp_path, monkeypatch)
    fake = _fake_module(tmp_path)
    pkg = sys.modules['pkg']
    seen: list[list[str]] = []

    def same(fast: bool = True) -> list[str]:
        for _ in range(2):
            reference = namespace.replaced_names_reference(props, prop_file, cfg)
            assert namespace.replaced_names(props, prop_file, cfg) == reference
            if fast:  # the fast path itself answered, not the reference behind it
                assert namespace._replaced_names_fast(props, prop_file, cfg) == reference
        seen.append(reference)
        return reference

    assert same() == []
    with monkeypatch.context() as m:  # a src function replaced by test code
        m.setattr(pkg, 'add', fake.add)
        assert same() == ['pkg.add is function add from tests/fake.py, not code under src']
    with monkeypatch.context() as m:  # __func__ on a src function points at test code
        m.setattr(pkg.add, '__func__', fake.add, raising=False)
        assert same()
    with monkeypatch.context() as m:  # a builtin replaced by test code
        m.setattr(builtins, 'copyright', fake.add)
        assert same() == ['builtins.copyright is function add from tests/fake.py']
    with monkeypatch.context() as m:  # a class of the tests put among the builtins
        m.setattr(builtins, 'Fake', fake.Fake, raising=False)
        assert same() == ['builtins.Fake is class Fake from tests/fake.py']
    with monkeypatch.context() as m:  # every static type's module now names a test file
        stand_in = types.ModuleType('builtins')
        stand_in.__file__ = str(tmp_path / 'tests/fake.py')
        m.setitem(sys.modules, 'builtins', stand_in)
        found = same()
        assert 'builtins.int is class int from tests/fake.py' in found
    with monkeypatch.context() as m:  # ... and the same module object, its file changed
        m.setattr(sys.modules['builtins'], '__file__', str(tmp_path / 'tests/fake.py'),
                  raising=False)
        assert 'builtins.int is class int from tests/fake.py' in same()
    with monkeypatch.context() as m:  # a src class that now claims the test module
        m.setattr(pkg, 'Thing', type('Thing', (), {}), raising=False)
        m.setattr(pkg.Thing, '__module__', 'tests.fake')
        assert same() == ['pkg.Thing is class Thing from tests/fake.py, not code under src']
    with monkeypatch.context() as m:  # a name the property's module never binds
        m.setattr(props, 'helper', fake.add, raising=False)
        assert same()
    with monkeypatch.context() as m:  # a key that is not a str: the reference judges
        m.setitem(builtins.__dict__, 1, fake.add)
        with pytest.raises(TypeError):
            namespace.replaced_names_reference(props, prop_file, cfg)
        with pytest.raises(TypeError):
            namespace.replaced_names(props, prop_file, cfg)
    assert same() == []  # everything restored: nothing kept from the replacements
    assert len({tuple(found) for found in seen}) > 5


def test_a_builtin_that_is_not_what_it_was_at_start_up_is_judged_whatever_it_is(
        tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """Rule 45 (OG714): with the builtins as the plugin found them when it loaded
    (``source_code.BUILTINS_AT_START``), a builtin holding another object is a replacement
    whatever the object is (a callable instance, a type compiled into the interpreter, a
    ``functools.partial``, another module's function), unless the
    property folder's code made it; ``_`` (the display hook's) is not judged. The judge's
    own ``sorted`` is the one the plugin started with (this ``Sorted`` takes no ``key``).
    The fast judgement stays the reference's."""
    import builtins
    import functools
    import json
    import os

    from oracle_guard.runtime import property_namespace as namespace
    from oracle_guard.runtime.source_code import BUILTINS_AT_START

    props, prop_file, cfg = _package(tmp_path, monkeypatch)
    (tmp_path / 'tests/fake.py').write_text(
        'class Sorted:\n    def __call__(self, xs):\n        return list(xs)\n')
    import importlib

    fake = importlib.import_module('tests.fake')

    def judged() -> list[str]:
        for _ in range(2):  # the second call may reuse the first
            reference = namespace.replaced_names_reference(props, prop_file, cfg)
            assert namespace._replaced_names_fast(props, prop_file, cfg) == reference
        return reference

    monkeypatch.setattr(namespace, 'BUILTINS_AT_START', dict(vars(builtins)))
    assert judged() == []
    for value, found in [
            (fake.Sorted(), 'builtins.sorted is a Sorted object from tests/fake.py'),
            (list, 'builtins.sorted is class list from no Python file'),
            (functools.partial(sorted), 'builtins.sorted is a partial object from ' +
             os.path.realpath(functools.__file__)),
            (json.dumps, 'builtins.sorted is function dumps from ' +
             os.path.realpath(json.__file__))]:
        with monkeypatch.context() as m:
            m.setattr(builtins, 'sorted', value)
            assert judged() == [f'{found}, not what it was when the run started'], value
    with monkeypatch.context() as m:
        m.setattr(builtins, '_', fake.Sorted(), raising=False)
        assert judged() == []
    assert judged() == [] and not BUILTINS_AT_START  # in-process: no plugin loaded here
