"""What runs is what was reviewed: the test roots are compiled from their bytes in the
gate's runs, and a module or builtin put in place of another is found (rule 45).
"""

from __future__ import annotations

import os
import sys

import pytest

from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import git
from builders.ci_repo import write
from builders.dedupe import _OG_EXTRA
from builders.dedupe import attack
from builders.dedupe import BUG
from builders.dedupe import COMPILED_ELSEWHERE
from builders.dedupe import DD_PYTEST
from builders.dedupe import gate_alone
from builders.dedupe import gate_with_install
from builders.dedupe import GOOD
from builders.dedupe import HELPER
from builders.dedupe import HELPER_PROPERTY
from builders.dedupe import property_failed_in_the_reference_run
from builders.dedupe import PROPERTY_ID
from builders.dedupe import SELF_WEAKENING_SRC
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG

pytestmark = pytest.mark.reference_run


# -- compiled code in the pull request (rule 46) ------------------------------------------
def test_unchecked_hash_pyc_of_the_fixed_code_beside_the_buggy_source_fails_ci(
        dd: CiRepo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Review sees the buggy source; Python loads the committed cache file, whatever the
    # source's size and time say, and runs the fix.
    import py_compile

    (tmp_path / 'good.py').write_text(GOOD)
    cache = f'src/dd/__pycache__/__init__.{sys.implementation.cache_tag}.pyc'
    os.makedirs(os.path.join(dd.path, os.path.dirname(cache)))
    py_compile.compile(str(tmp_path / 'good.py'), cfile=os.path.join(dd.path, cache),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    git(dd.path, 'checkout', '-q', '-b', 'pr')
    git(dd.path, 'add', '-f', cache)
    git(dd.path, 'commit', '-q', '-m', 'speed-up')
    own_cache = {'PYTHONPYCACHEPREFIX': ''}  # Python's own __pycache__ folders, as in CI
    plain = dd.finish(dd.start(DD_PYTEST, own_cache))
    ci = dd.finish(dd.start([sys.executable, '-I', *dd.ci_args(DD_PYTEST)[1:]], own_cache))
    assert plain.rc == 0, plain.out
    assert ci.rc == 1, ci.out
    assert [line.split(':')[0] for line in ci.lines('OG719')] == [cache], ci.out


def test_a_property_rewritten_before_its_compile_and_put_back_fails_ci(
        with_properties_conftest: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(with_properties_conftest, str(tmp_path / 'repo'))
    ci = gate_alone(repo, {'src/dd/__init__.py': SELF_WEAKENING_SRC,
                           'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    compiled = ci.lines('OG737')
    assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' +
                               COMPILED_ELSEWHERE + ' its committed bytes')
               for line in compiled), ci.out
    assert any('reference run: ' + COMPILED_ELSEWHERE + ' the bytes the gate wrote' in line
               for line in compiled), ci.out


# -- the assertion rewriter turned off, then 95's move ---------------------------------
# ``--assert=plain`` in the pull request's addopts: the test command imports the property
# with Python's own import system, so no compile digest is sent there. src, imported by the
# properties conftest, appends a ``def sorted`` to the property in its run's tree (the test
# function's code stays its source's), headed by the lines that put the original bytes back
# as the module runs. The pytest options are an oracle change with production code (rule
# 11: OG201, OG740), and the reference run, under the base's options, compiles with the
# rewriter: OG737 (rule 45).
APPENDING_SRC = SELF_WEAKENING_SRC.replace(
    "strong.replace(b'== sorted(set(xs))', b'== dedupe(xs)')",
    "strong + b'\\n\\ndef sorted(xs):\\n    return dedupe(list(xs))\\n'")


def test_the_rewriter_turned_off_does_not_hide_a_property_rewritten_before_its_import(
        dd6: CiRepo) -> None:
    with open(f'{dd6.path}/pyproject.toml', encoding='utf-8') as f:
        pyproject = f.read()
    plain_assert = pyproject.replace('pythonpath = ["src"]\n',
                                     'pythonpath = ["src"]\naddopts = "--assert=plain"\n')
    assert plain_assert != pyproject
    _, ci = attack(dd6, {'src/dd/__init__.py': APPENDING_SRC, 'pyproject.toml': plain_assert,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    assert any('pyproject.toml: [tool.pytest.ini_options]' in line
               for line in ci.lines('OG740')), ci.out
    assert any('reference run: ' + COMPILED_ELSEWHERE + ' the bytes the gate wrote' in line
               for line in ci.lines('OG737')), ci.out


# -- a rewritten-module cache planted for pytest's rewriter to trust ---------------
# pytest's assertion rewriter looks for its own cached compile of a test file before it
# compiles it (``_read_pyc``: `__pycache__/<name>.<tag>-pytest-<version>.pyc`, or under
# ``sys.pycache_prefix``), and pytest 9 takes one whose header holds the first 8 bytes of
# the source's hash. src, imported by the base's properties conftest before the property is
# collected, writes such a cache for the property in its run's tree: the gate's own bytes'
# hash in the header, their code with a ``def sorted`` appended (the property then compares
# ``dedupe(xs)`` with ``dedupe`` of the same list). The tree's bytes never change. In the
# gate's runs the plugin makes ``_read_pyc`` find nothing (rule 45): the property is compiled
# from its bytes and fails, in the test command and in the reference run.
PLANTING_SRC = """\
import importlib.util
import marshal
import os
import sys


def _plant(root=None):
    tests = os.path.join(root or os.getcwd(), 'tests', 'properties')
    prop = os.path.join(tests, 'test_dd_props.py')
    try:
        with open(prop, 'rb') as f:
            source = f.read()
    except OSError:
        return
    name = ''.join(map(chr, (112, 121, 116, 101, 115, 116)))
    tool = sys.modules.get(name)
    if tool is None:
        return
    weak = source + b'\\n\\ndef sorted(xs):\\n    return dedupe(list(xs))\\n'
    code = compile(weak, prop, 'exec', dont_inherit=True)
    folder = os.path.join(tests, '__py' + 'cache__')
    if sys.pycache_prefix:  # where pytest's rewriter looks then (get_cache_dir)
        folder = os.path.join(sys.pycache_prefix, *tests.split(os.sep)[1:])
    os.makedirs(folder, exist_ok=True)
    tail = '.%s-%s-%s.pyc' % (sys.implementation.cache_tag, name, tool.__version__)
    with open(os.path.join(folder, 'test_dd_props' + tail), 'wb') as f:
        f.write(importlib.util.MAGIC_NUMBER + b'\\x03\\x00\\x00\\x00' +
                importlib.util.source_hash(source) + marshal.dumps(code))


_plant()


""" + BUG


# 101b: the same, and src puts back a reader of the cache that trusts it (undoing the
# plugin's, in the process it shares with it). No compile of the property is said to the
# gate, the module holds a ``sorted`` its bytes do not compile to, and the property calls
# it as a name its source never binds: OG737 twice (rule 45) and OG714.
TRUSTING_SRC = PLANTING_SRC.replace('\n_plant()\n', """
_plant()


def _trusting(source, pyc, trace=None):
    if 'test_dd_props' not in str(pyc):
        return None
    try:
        with open(pyc, 'rb') as f:
            f.read(16)
            return marshal.load(f)
    except (OSError, ValueError, EOFError):
        return None


sys.modules['_' + ''.join(map(chr, (112, 121, 116, 101, 115, 116))) +
            '.assertion.rewrite']._read_pyc = _trusting
""")


NOT_COMPILED_HERE = ('tests/properties/test_dd_props.py, a file of the oracle, ran without '
                     'being compiled from its bytes in the run')


NOT_ITS_CODE = ('tests/properties/test_dd_props.py, a file of the oracle, ran code its bytes '
                'do not compile to (sorted at line')


# 105c's payload without its chain: the pull request's install script (standing for a
# setup.py that ``pip install -e .`` runs) plants the same cache in the checkout.
PLANTING_INSTALL = """\
import os
import sys

import pytest  # noqa: F401 -- the cache's name carries pytest's version

sys.path.insert(0, os.path.join(os.getcwd(), 'src'))
from dd import _plant  # noqa: E402

_plant(os.getcwd())
"""


def test_a_rewritten_module_cache_planted_for_the_rewriter_is_not_what_runs(
        dd6_sound_main: CiRepo) -> None:
    _, ci = attack(dd6_sound_main, {'src/dd/__init__.py': PLANTING_SRC,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    # compiled from its bytes in both runs: the property fails, as it should
    assert f'FAILED {PROPERTY_ID}' in ci.out, ci.out
    assert ci.summary.endswith('test command exited 1'), ci.out
    assert property_failed_in_the_reference_run(ci), ci.out
    assert not ci.lines('OG737'), ci.out


def test_a_rewritten_module_cache_planted_by_the_install_step_is_not_what_runs(
        dd6: CiRepo) -> None:
    ci = gate_with_install(dd6, {
        'src/dd/__init__.py': PLANTING_SRC.replace('\n_plant()\n', '\n'),
        'tools/install.py': PLANTING_INSTALL, 'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG})
    assert f'FAILED {PROPERTY_ID}' in ci.out, ci.out
    assert ci.summary.endswith('test command exited 1'), ci.out
    assert not ci.lines('OG737'), ci.out


def test_a_cache_the_code_under_test_makes_pytest_trust_again_is_seen(dd6: CiRepo) -> None:
    _, ci = attack(dd6, {'src/dd/__init__.py': TRUSTING_SRC,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    compiled = ci.lines('OG737')
    for run in ('', 'reference run: '):
        assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' + run +
                                   NOT_COMPILED_HERE) for line in compiled), ci.out
        assert any(line.startswith('tests/properties/test_dd_props.py:1:1: OG737 ' + run +
                                   NOT_ITS_CODE) for line in compiled), ci.out
    assert any(PROPERTY_ID in line and "'sorted' was added to the property's module" in line
               for line in ci.lines('OG714')), ci.out


HELPER_WEAKENING_SRC = SELF_WEAKENING_SRC.replace(
    "'properties', 'test_dd_props.py')", "'properties', '_expected.py')").replace(
    "b'== sorted(set(xs))' not in strong or ", '').replace(
    "strong.replace(b'== sorted(set(xs))', b'== dedupe(xs)')",
    "b'\\n\\ndef expected(xs):\\n    from dd import dedupe\\n    return dedupe(xs)\\n'")


HELPER_COMPILED_ELSEWHERE = ('tests/properties/_expected.py, a file of the oracle, was '
                             'compiled from other bytes than')


def with_a_helper(dd6: CiRepo) -> CiRepo:
    """The base's property takes its expected value from ``_expected.py`` (a commit of the
    owner's on main: the strategy and settings the lock holds are the same)."""
    write(dd6.path, {'tests/properties/_expected.py': HELPER,
                      'tests/properties/test_dd_props.py': HELPER_PROPERTY})
    git(dd6.path, 'add', '-A')
    git(dd6.path, 'commit', '-q', '-m', 'properties: the expected value from a helper')
    return dd6


def test_a_helper_of_the_property_rewritten_before_its_import_fails_ci(dd6: CiRepo) -> None:
    _, ci = attack(with_a_helper(dd6), {'src/dd/__init__.py': HELPER_WEAKENING_SRC,
                                         'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG},
                   plain_rc=0)
    compiled = ci.lines('OG737')
    assert any(line.startswith('tests/properties/_expected.py:1:1: OG737 ' +
                               HELPER_COMPILED_ELSEWHERE + ' its committed bytes')
               for line in compiled), ci.out
    assert any(line.startswith('tests/properties/_expected.py:1:1: OG737 reference run: ' +
                               HELPER_COMPILED_ELSEWHERE + ' the bytes the gate wrote')
               for line in compiled), ci.out


def test_an_honest_fix_with_a_helper_and_a_conftest_importing_src_passes_ci(
        dd6: CiRepo) -> None:
    """The control: every module of the test roots compiled from source, the helper's and
    conftest's compiles said, the whole modules' code judged, and nothing to find."""
    dd6 = with_a_helper(dd6)
    dd6.pull_request({'src/dd/__init__.py': GOOD}, bug=False)
    ci = dd6.finish(dd6.start([sys.executable, '-I', *dd6.ci_args(DD_PYTEST)[1:]]))
    assert ci.rc == 0, ci.out


# -- a finder put before the plugin's, loading the helper from other text ---------------
# src, imported by the base's properties conftest, inserts a finder first on sys.meta_path
# (before the plugin's SourceFinder, which then never sees the import) that gives the
# helper, at its own file, a loader of its own: its code is compiled from other text than
# the file's (``expected`` is ``dedupe``). No compile of the helper is said to the gate;
# the module, whose ``__file__`` is the helper's, is a file of the oracle that ran without
# being compiled from its bytes (rule 45, OG737), in both runs.
FINDER_HELPER_SRC = '''\
import importlib.machinery
import importlib.util
import os
import sys


class _Loader(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):
        return compile('from dd import dedupe as expected\\n', self.path, 'exec')


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name != '_expected':
            return None
        for folder in sys.path:
            where = os.path.join(folder or '.', '_expected.py')
            if os.path.isfile(where):
                return importlib.util.spec_from_file_location(
                    name, where, loader=_Loader(name, where))
        return None


sys.meta_path.insert(0, _Finder())


''' + BUG


# 111 with the helper's file named: src puts a module object of its own in
# ``sys.modules['_expected']`` (``expected`` is ``dedupe``) and gives it the helper's
# ``__file__``, so that it looks like the helper. Python never loads the file; the module is
# a file of the oracle that ran without being compiled from its bytes (OG737), in both
# runs. (Without a ``__file__`` under the test roots it is not seen.)
NAMED_FAKE_HELPER_SRC = '''\
import os
import sys
import types


def _expected(xs):
    return dedupe(xs)


_helper = types.ModuleType('_expected')
_helper.expected = _expected
for _folder in sys.path:
    if os.path.isfile(os.path.join(_folder or '.', '_expected.py')):
        _helper.__file__ = os.path.join(_folder or '.', '_expected.py')
        break
sys.modules['_expected'] = _helper


''' + BUG


NOT_COMPILED = ('tests/properties/_expected.py, a file of the oracle, ran without being '
                'compiled from its bytes in the run')


@pytest.mark.parametrize('src', [FINDER_HELPER_SRC, NAMED_FAKE_HELPER_SRC],
                         ids=['a-finder-before-the-plugins', 'a-module-object-named-as-it'])
def test_a_helper_that_python_did_not_compile_from_its_bytes_fails_ci(
        dd7: CiRepo, src: str) -> None:
    # Rule 45 (OG737): a module of the test roots imported without a compile said to the
    # gate, whichever way it got into sys.modules.
    _, ci = attack(dd7, {'src/dd/__init__.py': src,
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    compiled = ci.lines('OG737')
    for run in ('', 'reference run: '):
        assert any(line.startswith('tests/properties/_expected.py:1:1: OG737 ' + run +
                                   NOT_COMPILED) for line in compiled), ci.out


# A callable ``sorted`` (the entry point module of _OG_EXTRA without its ``run``), made to
# answer its caller when that is the helper
CALLABLE_SORTED = _OG_EXTRA.split('\n\n\ndef run():')[0].replace('test_dd_props.py',
                                                                '_expected.py')


TEMPLATE = CALLABLE_SORTED.replace('import sys\n', 'import sys\nimport types\n{imports}', 1) + '''


def _expected(xs):
    return dedupe(xs)


_helper = types.ModuleType('_expected')
_helper.expected = _expected


{put}

'''


# name -> (imports, what puts the fake in place, the run-time finding it is). The run-time
# findings do not depend on how the fake got in place: one form each (OG737 for a module,
# OG714 for a builtin), and both through names rule 43 cannot read. The other forms rule 43
# reads (a setitem of vars(sys), a default argument, a partial of setattr) are proved by
# tests/hooks/test_src_test_run_reach.py, in the same hook the gate runs.
PUTS = {
    '123-for-target': ('', "for _m in [sys.modules]:\n    _m['_expected'] = _helper\n",
                       'OG737'),
    '126-with-target': ('import contextlib\n',
                        'with contextlib.nullcontext(len.__self__) as _b:\n'
                        '    _b.sorted = _Sorted()\n', 'OG714'),
    # both, through module names built at run time: nothing rule 43 reads
    'unread-by-rule-43': ('', "_S = __import__(chr(115) + 'ys')\n"
                              "_S.modules['_expected'] = _helper\n"
                              "_B = __import__(chr(98) + 'uiltins')\n"
                              '_B.sorted = _Sorted()\n', 'OG737 OG714'),
}


HELPER_IMPOSTOR = ('tests/properties/_expected.py:1:1: OG737 tests/properties/_expected.py, a '
                   "file of the oracle, did not run under its module name '_expected'")


SORTED_REPLACED = ('at call time, builtins.sorted is a _Sorted object from src/dd/__init__.py, '
                   'not what it was when the run started')


def src(name: str) -> str:
    imports, put, _ = PUTS[name]
    return TEMPLATE.format(imports=imports, put=put) + BUG


@pytest.mark.reference_run(False)  # the test command's findings only
@pytest.mark.parametrize('name', sorted(PUTS))
def test_a_fake_helper_or_builtin_put_in_place_through_any_form_fails_ci(
        dd7: CiRepo, name: str) -> None:
    # Rule 45: OG737 for a module under the helper's name that the plugin's import hook
    # did not load; OG714 for a builtin replaced since the plugin loaded.
    _, ci = attack(dd7, {'src/dd/__init__.py': src(name),
                          'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, plain_rc=0)
    codes = PUTS[name][2].split()
    if 'OG737' in codes:
        assert any(line.startswith(HELPER_IMPOSTOR) for line in ci.lines('OG737')), ci.out
    if 'OG714' in codes:
        assert any(SORTED_REPLACED in line for line in ci.lines('OG714')), ci.out
    # Rule 43 (OG204) reads the forms; names built by chr it cannot
    static = [line for line in ci.lines('OG204') if line.startswith('src/dd/__init__.py:')]
    assert bool(static) is (not name.startswith('unread')), ci.out
