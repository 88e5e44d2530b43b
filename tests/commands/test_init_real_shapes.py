"""``oracle-guard init`` on small replicas of what three real projects hold (sympy, cattrs,
django; benchmarks/RESULTS.md): the adoption commit passes ``oracle-guard check
--all-files`` as init wrote it, because init records what the hooks judge with the same
readers, and the same move on new content is still blocked."""
from __future__ import annotations

import pytest

from builders.repos import Repo
from oracle_guard.cli import main as cli
from oracle_guard.commands.init import main as init
from oracle_guard.hooks.check_named_freezes import main as named_freezes

TODAY = '2026-11-29'
REV = '0123456789abcdef0123456789abcdef01234567'


def adopt(repo: Repo) -> str:
    result = repo.run(init, '--hook-repo', '/somewhere/oracle-guard', '--rev', REV)
    assert result.rc == 0, result.out + result.err
    repo.commit('Adopt oracle-guard')
    checked = repo.run(cli, 'check', '--all-files')
    assert checked.rc == 0, checked.out + checked.err
    return result.out


# -- sympy: ``@XFAIL`` from the package's own test helpers (rule 14) ----------------------

# sympy/testing/pytest.py: pytest's xfail under pytest, a decorator raising XFail under
# sympy's own runner; a silence either way.
SYMPY_HELPER = '''\
import sys

try:
    import pytest
    USE_PYTEST = getattr(sys, "_running_pytest", False)
except ImportError:
    USE_PYTEST = False

if USE_PYTEST:
    XFAIL = pytest.mark.xfail
else:
    class XFail(Exception):
        pass

    def XFAIL(func):
        def wrapper():
            try:
                func()
            except Exception:
                raise XFail(func.__name__)
        return wrapper
'''
# No silence word of its own: only the helper makes @XFAIL one.
SYMPY_TEST = '''\
from pkg import add
from pkg.testing.pytest import XFAIL


def test_add():
    assert add(1, 2) == 3


@XFAIL
def test_add_strings_known_bug():
    assert add("a", 1) == "a1"
'''
# The same, in a file that also spells a word of rule 35b (getattr).
SYMPY_TEST_GETATTR = '''\
import pkg
from pkg.testing.pytest import XFAIL


def test_lookup():
    assert getattr(pkg, "add")(1, 1) == 2


@XFAIL
def test_lookup_missing_known_bug():
    assert getattr(pkg, "sub")(1, 1) == 0
'''


@pytest.fixture
def sympy_like(repo: Repo) -> Repo:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    for package in ('pkg/testing', 'pkg/testing/tests', 'pkg/core', 'pkg/core/tests'):
        repo.write(f'{package}/__init__.py', '')
    repo.write('pkg/testing/pytest.py', SYMPY_HELPER)
    repo.write('pkg/testing/tests/test_pytest.py',
               'from pkg.testing.pytest import USE_PYTEST\n\n\ndef test_mode():\n'
               '    assert USE_PYTEST in (True, False)\n')
    repo.write('pkg/core/tests/test_add.py', SYMPY_TEST)
    repo.write('pkg/core/tests/test_names.py', SYMPY_TEST_GETATTR)
    repo.commit('a sympy-like project')
    return repo


def test_init_baselines_the_silences_a_helper_passes_on_and_the_adoption_passes(
        sympy_like: Repo) -> None:
    """Rules 14 and 39: the baseline is built by check-named-freezes' own prefilter, so a
    file whose silence comes from a helper (no silence word in its bytes) is recorded."""
    import json

    adopt(sympy_like)
    baseline = json.loads(sympy_like.read('oracle-guard/oracle_baseline.json'))
    assert {(e['path'], tuple(e['tests'])) for e in baseline['silences']} >= {
        ('pkg/core/tests/test_add.py', ('test_add_strings_known_bug',)),
        ('pkg/core/tests/test_names.py', ('test_lookup_missing_known_bug',)),
    }


@pytest.mark.parametrize('path', ['pkg/core/tests/test_add.py', 'pkg/core/tests/test_names.py'])
def test_a_new_helper_xfail_after_adoption_fails(sympy_like: Repo, path: str) -> None:
    """Rule 14 on new content, also in a file that spells ``getattr`` (the scan of rule
    35b's words must not stand in for the silence scan)."""
    adopt(sympy_like)
    source = sympy_like.read(path).decode()
    sympy_like.write(path, source + '\n\n@XFAIL\ndef test_new_known_bug():\n    assert 1 == 2\n')
    sympy_like.add()
    result = sympy_like.run(named_freezes, '--today', TODAY)
    assert result.codes == ['OG301'], result.out
    assert result.out.startswith(f'{path}:')


# -- cattrs: one test identity in several property modules (the domain lock) -------------

BOUNDED = '''\
from hypothesis import given, strategies as st


@given(st.integers(1, 5))
def test_nested_roundtrip(depth):
    assert 1 <= depth <= 5


@given(st.integers())
def test_simple_roundtrip(value):
    assert int(str(value)) == value
'''
UNBOUNDED = '''\
from hypothesis import assume, given, strategies as st


@given(st.text(), st.booleans())
def test_nested_roundtrip(text, flag):
    assert isinstance(text, str) and flag in (True, False)


@given(st.integers())
def test_simple_roundtrip(value):
    assume(value != 0)
    assert value // value == 1
'''


# cattrs' tests/test_generics_695.py is Python 3.12 syntax (PEP 695) and its conftest leaves
# it out below 3.12. The replica uses the first of these forms the running Python cannot
# parse: PEP 695 (3.12), PEP 758 (3.14), PEP 810 (proposed).
NEWER_SYNTAX = [
    'class Box[T]:\n    item: T\n',
    'try:\n    pass\nexcept ValueError, TypeError:\n    pass\n',
    'lazy import json\n',
]


def _unparsable_here(source: str) -> bool:
    import ast

    try:
        ast.parse(source)
    except SyntaxError:
        return True
    return False


NEWER = next(s for s in NEWER_SYNTAX if _unparsable_here(s))
NEWER_TEST = f'''\
import pytest

from ._compat import is_new_python

{NEWER}

@pytest.mark.skipif(not is_new_python, reason="newer syntax")
def test_generic_roundtrip():
    assert Box
'''
CONFTEST = '''\
import sys

collect_ignore_glob = []
if sys.version_info < (3, 99):
    collect_ignore_glob.append("*_newer.py")
'''


# cattrs' tests/typed.py: strategies its properties draw, transformed inside the helper.
TYPED = '''\
from hypothesis import strategies as st


def simple_typed_classes():
    return st.lists(st.integers()).map(tuple)
'''
TYPED_TEST = '''\
from hypothesis import given

from .typed import simple_typed_classes


@given(simple_typed_classes())
def test_type_overrides(cl_and_vals):
    assert isinstance(cl_and_vals, tuple)
'''


@pytest.fixture
def cattrs_like(repo: Repo) -> Repo:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('src/pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/__init__.py', '')
    repo.write('tests/_compat.py', 'import sys\n\nis_new_python = sys.version_info >= (3, 99)\n')
    repo.write('tests/conftest.py', CONFTEST)
    repo.write('tests/strategies/__init__.py', '')
    repo.write('tests/strategies/test_class_methods.py', BOUNDED)
    repo.write('tests/test_converter.py', UNBOUNDED)
    repo.write('tests/test_generics_newer.py', NEWER_TEST)
    repo.write('tests/typed.py', TYPED)
    repo.write('tests/test_typed.py', TYPED_TEST)
    repo.commit('a cattrs-like project')
    return repo


def test_init_accepts_a_test_file_this_python_cannot_parse_as_it_is(cattrs_like: Repo) -> None:
    """Rule 39 for rule 36's OG307: the baseline records the file by its bytes (read by
    the hook's own scan), so the adoption commit passes where the file cannot be parsed."""
    import json

    adopt(cattrs_like)
    unread = json.loads(cattrs_like.read('tests/oracle_baseline.json'))['unparsable']
    assert [u['path'] for u in unread] == ['tests/test_generics_newer.py']
    assert 'cannot be parsed as Python' in unread[0]['why']


@pytest.mark.parametrize('path', ['tests/test_generics_newer.py', 'tests/test_more_newer.py'])
def test_an_unparsable_test_file_edited_or_new_after_adoption_fails(
        cattrs_like: Repo, path: str) -> None:
    """Only those bytes at that path are accepted: one more line, or a new file in the
    syntax nobody here can read (a skip in it would pass unseen), is OG307 again."""
    adopt(cattrs_like)
    cattrs_like.write(path, NEWER_TEST + '\n\n@pytest.mark.skip\ndef test_later():\n    assert 0\n')
    cattrs_like.add()
    result = cattrs_like.run(named_freezes, '--today', TODAY)
    assert result.codes == ['OG307'], result.out
    assert result.out.startswith(f'{path}:')


def test_a_baseline_accepting_a_new_unparsable_file_with_it_fails(cattrs_like: Repo) -> None:
    """Rule 42: the baseline that accepts one more unreadable file grows; with the test
    file in the same change it is OG520."""
    from oracle_guard.commands.baseline import main as baseline
    from oracle_guard.hooks.check_freeze_ledger import main as freeze_ledger

    adopt(cattrs_like)
    cattrs_like.write('tests/test_generics_newer.py', NEWER_TEST + '\n# edited\n')
    assert cattrs_like.run(baseline, '--no-collect').rc == 0
    cattrs_like.add()
    result = cattrs_like.run(freeze_ledger, '--today', TODAY)
    assert result.codes == ['OG520'], result.out
    assert 'accepts tests/test_generics_newer.py unread' in result.out


def test_init_locks_only_what_every_test_of_one_identity_runs(cattrs_like: Repo) -> None:
    """Rules 23 and 24: check-generator-lock judges each test named test_nested_roundtrip
    against the one entry, so init must not lock the bounds only one of them draws (OG603)
    nor fewer filters than one of them calls (OG604)."""
    import json

    out = adopt(cattrs_like)
    lock = json.loads(cattrs_like.read('tests/domain_lock.json'))['properties']
    assert 'min_value' not in lock['test_nested_roundtrip']
    assert lock['test_simple_roundtrip']['filters'] == 1
    assert 'tests/test_converter.py:5: test_nested_roundtrip: max_value, min_value not ' \
           'locked' in out


def test_a_shared_identity_narrowed_after_adoption_still_fails(cattrs_like: Repo) -> None:
    """What the shared entry leaves out is still judged against the base's own source
    (rule 23, OG611), and one more filter than any of them had is OG604."""
    from oracle_guard.hooks.check_generator_lock import main as generator_lock

    adopt(cattrs_like)
    cattrs_like.write('tests/strategies/test_class_methods.py',
                      BOUNDED.replace('st.integers(1, 5)', 'st.integers(1, 2)'))
    cattrs_like.write('tests/test_converter.py', UNBOUNDED.replace(
        '    assume(value != 0)\n', '    assume(value != 0)\n    assume(value > 0)\n'))
    cattrs_like.add()
    result = cattrs_like.run(generator_lock)
    assert sorted(result.codes) == ['OG604', 'OG611'], result.out


# -- django: a flat package, its own runner, computed imports of data --------------------

ADMIN_SCRIPTS = '''\
import os
from importlib import import_module

from pkg.conf import settings


def ext_backend_paths():
    paths = []
    for backend in settings.DATABASES.values():
        package = backend["ENGINE"].split(".")[0]
        if package != "pkg":
            backend_pkg = __import__(package)
            paths.append(os.path.dirname(backend_pkg.__file__))
    return paths


def migrations_of(apps, app_label="migrations", module=None):
    if module is None:
        module = apps.get_app_config(app_label).name + ".migrations"
    return import_module(module)


def submodules(top, prefix):
    for root, _dirs, files in os.walk(top):
        package = root.replace(prefix, "").replace(os.sep, ".")
        for file in files:
            yield __import__(package + "." + file[:-3])


def test_paths():
    assert ext_backend_paths() == []
'''


@pytest.fixture
def django_like(repo: Repo) -> Repo:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', '')
    repo.write('pkg/apps/__init__.py', 'apps = None\n')
    repo.write('pkg/urls.py', 'PATTERNS = []\n')
    repo.write('pkg/conf.py', 'class settings:\n    DATABASES = {}\n')
    # django's runtests.py puts tests/ on sys.path: tests/apps/ is `apps`, not `pkg.apps`
    repo.write('tests/apps/__init__.py', '')
    repo.write('tests/apps/tests.py', 'def test_ready():\n    assert True\n')
    repo.write('tests/urls.py', 'urlpatterns = []\n')
    repo.write('tests/migrations/test_base.py', ADMIN_SCRIPTS)
    repo.commit('a django-like project')
    return repo


def test_init_on_a_flat_package_with_computed_imports_of_data_passes(django_like: Repo) -> None:
    """Rule 34: a src root that is a package is imported under its own name, so
    tests/apps/ and tests/urls.py shadow nothing of pkg.apps and pkg.urls; rule 35b: a name
    computed from data (a loop variable's piece, a helper's return value plus a submodule,
    a folder made dotted) cannot be one of pytest's."""
    out = adopt(django_like)
    assert 'found src: pkg/' in out


@pytest.mark.parametrize(('path', 'source', 'code'), [
    ('tests/pkg/__init__.py', '', 'OG309'),
    ('tests/pkg.py', 'X = 1\n', 'OG309'),
    ('tests/migrations/test_hidden.py',
     'first = "_py"\nrest = "test"\nrunner = __import__(first + rest)\n', 'OG310'),
    ('tests/migrations/test_hidden.py',
     'import base64\nrunner = __import__(base64.b64decode("X3B5dGVzdA==").decode())\n', 'OG310'),
    ('tests/migrations/test_hidden.py',
     'name = "_pytest.python"\nrunner = __import__(name.split(".")[0])\n', 'OG310'),
    ('tests/migrations/test_hidden.py',
     'runner = __import__("".join(chr(c) for c in [95, 112, 121, 116, 101, 115, 116]))\n',
     'OG310'),
])
def test_shadowing_or_a_computed_runner_name_after_adoption_fails(
        django_like: Repo, path: str, source: str, code: str) -> None:
    adopt(django_like)
    django_like.write(path, source)
    django_like.add()
    result = django_like.run(named_freezes, '--today', TODAY)
    assert result.codes == [code], result.out
    assert result.out.startswith(f'{path}:')


def test_init_locks_the_transforms_of_helper_strategies_the_plugin_counts(
        cattrs_like: Repo) -> None:
    """Rules 23 and 24 at run time: the plugin counts the .map() inside tests/typed.py on
    the live strategy; a lock of 0 filters stopped cattrs' whole suite at collection
    (OG716). init's lock holds what the plugin counts, and the collection runs."""
    import json
    import subprocess
    import sys

    adopt(cattrs_like)
    lock = json.loads(cattrs_like.read('tests/domain_lock.json'))['properties']
    assert lock['test_type_overrides']['filters'] == 1
    proc = subprocess.run([sys.executable, '-m', 'pytest', '--collect-only', '-q',
                           '-p', 'no:cacheprovider', 'tests/test_typed.py'],
                          cwd=cattrs_like.path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '1 test collected' in proc.stdout
