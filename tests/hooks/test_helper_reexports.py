"""Rule 14 through a test helper: a silence imported from a helper module under the tests
roots (``from tests.harness import skip`` after ``skip = unittest.skip`` there, the layout of
pyflakes) is the silence itself. A new one fails without a freeze in every mode (rule 50);
the ones adoption baselined pass the hooks (rule 39), the plugin and the gate, also when a
test class of another module inherits the test they decorate."""
from __future__ import annotations

import json
import sys

import pytest

from builders.ci_repo import adopted_with
from builders.pre_commit import HookRepo
from builders.pre_commit import judge
from builders.repos import Repo
from oracle_guard.commands.baseline import main as baseline_main
from oracle_guard.hooks.check_named_freezes import main

TODAY = '2026-11-29'
HARNESS = 'import unittest\n\n__all__ = ["TestCase", "skip"]\n\nskip = unittest.skip\n' \
          'TestCase = unittest.TestCase\n'
TEST = 'tests/test_checker.py'


def _test(imports: str, decorator: str) -> str:
    return (f'{imports}\n\n\nclass Test(TestCase):\n    {decorator}\n'
            '    def test_todo(self):\n        assert 0\n\n'
            '    def test_fine(self):\n        assert 1\n')


# Each spelling reaches unittest.skip through tests/harness.py (tests/__init__.py makes
# `tests` a package, as pyflakes/test/ is).
THROUGH_A_HELPER = {
    'from the helper': ('from tests.harness import TestCase, skip', '@skip("later")'),
    'relative import': ('from .harness import TestCase, skip', '@skip("later")'),
    'module alias': ('import tests.harness as h\nfrom unittest import TestCase',
                     '@h.skip("later")'),
    'dotted module': ('import tests.harness\nfrom unittest import TestCase',
                      '@tests.harness.skip("later")'),
    'from the package': ('from tests import harness\nfrom unittest import TestCase',
                         '@harness.skip("later")'),
    'star import': ('from tests.harness import *', '@skip("later")'),
    'two helpers deep': ('from tests.support import TestCase, skip', '@skip("later")'),
    'renamed there': ('from tests.support import TestCase, later', '@later("skip it")'),
}


def _helpers(repo: Repo) -> None:
    repo.write('tests/__init__.py', '')
    repo.write('tests/harness.py', HARNESS)
    repo.write('tests/support.py', 'from tests.harness import TestCase, skip\n'
                                   'from tests.harness import skip as later\n')


@pytest.mark.parametrize('spelling', sorted(THROUGH_A_HELPER))
def test_new_skip_imported_from_a_test_helper_fails(guarded: Repo, spelling: str) -> None:
    _helpers(guarded)
    guarded.commit('test helpers')
    imports, decorator = THROUGH_A_HELPER[spelling]
    source = _test(imports, decorator)
    line = source.splitlines().index(f'    {decorator}') + 1
    guarded.write(TEST, source)
    guarded.add()
    result = guarded.run(main, '--today', TODAY, TEST)
    assert result.codes == ['OG301'], result.out
    assert result.out.startswith(f'{TEST}:{line}:6: OG301 unittest.skip without a freeze id')
    # the whole tree: the helper's own binding is a silence too (exported, rule 14)
    found = guarded.run(main, '--today', TODAY, '--all-files').out
    assert f'{TEST}:{line}:6: OG301 ' in found, found


def test_helper_that_binds_no_silence_passes(guarded: Repo) -> None:
    guarded.write('tests/__init__.py', '')
    guarded.write('tests/harness.py', 'import unittest\n\nTestCase = unittest.TestCase\n\n\n'
                                      'def skip(reason):\n    return lambda f: f\n')
    guarded.write(TEST, _test('from tests.harness import TestCase, skip', '@skip("later")'))
    guarded.add()
    assert guarded.run(main, '--today', TODAY, TEST).rc == 0


def test_helpers_importing_each_other_in_a_cycle_are_read_once(guarded: Repo) -> None:
    guarded.write('tests/__init__.py', '')
    guarded.write('tests/a.py', 'import unittest\nfrom tests.b import later\n'
                                'skip = unittest.skip\n')
    guarded.write('tests/b.py', 'from tests.a import skip\nfrom tests.a import skip as later\n')
    guarded.write(TEST, _test('from unittest import TestCase\nfrom tests.b import later',
                              '@later("skip it")'))
    guarded.add()
    result = guarded.run(main, '--today', TODAY, TEST)
    assert result.codes == ['OG301'], result.out


def test_module_outside_the_tests_roots_is_not_read(guarded: Repo) -> None:
    """Code under src is not a test helper: its names are not followed (nor read)."""
    guarded.write('src/app.py', 'import unittest\nskip = unittest.skip\n')
    guarded.commit('src binds a name')
    guarded.write(TEST, _test('from unittest import TestCase\nfrom app import skip',
                              '@skip("later")'))
    guarded.add()
    assert guarded.run(main, '--today', TODAY, TEST).rc == 0


def _adopted(repo: Repo) -> None:
    """The pyflakes layout before adoption, then the baseline in a commit of its own."""
    _helpers(repo)
    repo.write(TEST, _test('from tests.harness import TestCase, skip', '@skip("todo")'))
    repo.commit('legacy tests')
    result = repo.run(baseline_main)
    assert result.rc == 0, result.err
    repo.commit('oracle-guard baseline')


def test_baselined_skip_imported_from_a_helper_passes(guarded: Repo) -> None:
    _adopted(guarded)
    entries = json.loads(guarded.read('tests/oracle_baseline.json'))['silences']
    assert [(e['path'], e['tests'], e['kind']) for e in entries] == [
        ('tests/harness.py', [], 'unittest-skip'),  # the binding, exported (rule 14)
        (TEST, ['Test::test_todo'], 'unittest-skip')]
    assert guarded.run(main, '--today', TODAY, '--all-files').rc == 0
    assert guarded.run(main, '--today', TODAY, TEST).rc == 0


def test_new_skip_through_the_helper_next_to_a_baselined_one_fails(guarded: Repo) -> None:
    _adopted(guarded)
    source = guarded.read(TEST).decode()
    guarded.write(TEST, source.replace('    def test_fine', '    @skip("later")\n'
                                       '    def test_fine'))
    guarded.add()
    result = guarded.run(main, '--today', TODAY, TEST)
    assert result.codes == ['OG301'], result.out
    assert result.out.startswith(f'{TEST}:9:6: OG301 unittest.skip')


def test_new_skip_through_a_helper_fails_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _helpers(user)
    user.commit('test helpers')

    def change(repo: Repo) -> None:
        repo.write(TEST, _test('from tests.harness import TestCase, skip', '@skip("later")'))

    result = judge(mode, user, hook_repo, change)
    assert result.rc == 1, result.out
    assert result.has('OG301', TEST), result.out


def test_skip_from_a_helper_in_a_file_without_a_silence_word_fails_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    _quiet_helper(user)

    def change(repo: Repo) -> None:
        repo.write(QUIET_TEST, QUIET)

    result = judge(mode, user, hook_repo, change)
    assert result.rc == 1, result.out
    assert result.has('OG301', QUIET_TEST), result.out


# -- the plugin and the gate accept what the baseline holds ------------------------------

PYPROJECT = '[project]\nname = "app"\nrequires-python = ">=3.9"\n\n[tool.oracle-guard]\nsrc = ["src/"]\n'
INHERITS = 'from tests import test_checker\n\n\nclass TestAgain(test_checker.Test):\n    pass\n'


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyprojecttoml(PYPROJECT)
    pytester.mkdir('tests')
    files = {'tests/__init__.py': '', 'tests/harness.py': HARNESS,
             TEST: _test('from tests.harness import TestCase, skip', '@skip("todo")'),
             'tests/test_again.py': INHERITS,
             'tests/domain_lock.json': '{"version": 1, "properties": {}}\n',
             'tests/freeze_ledger.yaml': 'budget: 0\nfreezes: []\n'}
    for path, text in files.items():
        pytester.path.joinpath(path).write_text(text)
    pytester.run('git', 'init', '-q')
    monkeypatch.chdir(pytester.path)
    assert baseline_main([]) == 0
    # The in-process runs import this project's `tests` package: one that an earlier test
    # of the same worker left in sys.modules (another folder's) would shadow it.
    for name in [m for m in sys.modules if m == 'tests' or m.startswith('tests.')]:
        monkeypatch.delitem(sys.modules, name)
    return pytester


def test_plugin_accepts_a_baselined_skip_imported_from_a_helper(project) -> None:
    # test_todo is skipped twice: in its class, and in the class of test_again.py that
    # inherits it (the skip is written, and baselined, in test_checker.py only).
    result = project.runpytest_inprocess('-p', 'no:cacheprovider')
    result.assert_outcomes(passed=2, skipped=2)


def test_plugin_fails_a_new_skip_imported_from_a_helper(project) -> None:
    source = project.path.joinpath(TEST).read_text()
    project.path.joinpath(TEST).write_text(source.replace(
        '    def test_fine', '    @skip("later")\n    def test_fine'))
    result = project.runpytest_inprocess('-p', 'no:cacheprovider')
    result.assert_outcomes()
    result.stdout.fnmatch_lines([f'{TEST}::Test::test_fine: @unittest.skip without a freeze id*'])


def test_plugin_does_not_lend_a_baselined_skip_to_a_test_of_another_file(project) -> None:
    """The inherited copy is accepted because its code is the baselined test's; a test
    the other module defines itself, with the same name and its own skip, is not."""
    project.path.joinpath('tests/test_again.py').write_text(
        INHERITS.replace('    pass\n', '    @__import__("unittest").skip("todo")\n'
                                       '    def test_todo(self):\n        assert 0\n'))
    result = project.runpytest_inprocess('-p', 'no:cacheprovider')
    result.assert_outcomes()
    result.stdout.fnmatch_lines(['tests/test_again.py::TestAgain::test_todo: @unittest.skip '
                                 'without a freeze id*'])




LEGACY = {'tests/__init__.py': '', 'tests/harness.py': HARNESS,
          TEST: _test('from tests.harness import TestCase, skip', '@skip("todo")'),
          'tests/test_again.py': INHERITS}


def test_gate_accepts_baselined_skips_through_a_helper_and_inherited(tmp_path) -> None:  # type: ignore[no-untyped-def]
    calc = adopted_with(str(tmp_path / 'repo'), LEGACY)
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci()
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_gate_fails_a_new_skip_through_a_helper(tmp_path) -> None:  # type: ignore[no-untyped-def]
    calc = adopted_with(str(tmp_path / 'repo'), LEGACY)
    source = LEGACY[TEST].replace('    def test_fine', '    @skip("later")\n    def test_fine')
    calc.pull_request({TEST: source}, bug=False)
    ci = calc.ci()
    assert ci.rc == 1, ci.out
    assert f'{TEST}:9:6: OG301 unittest.skip without a freeze id' in ci.out


# -- a test file that spells no silence word (the byte prefilter would not parse it) -----

LATER_HELPER = 'import pytest\n\nlater = pytest.mark.skip\n'
QUIET_TEST = 'tests/test_quiet.py'
QUIET = ('from helpers import later\n\n\n@later(reason="later")\ndef test_four():\n'
         '    assert 0\n\n\ndef test_small():\n    assert 1\n')


def _quiet_helper(repo: Repo) -> str:
    """tests/helpers.py passes pytest.mark.skip on as ``later`` (committed past the hooks)."""
    repo.write('tests/helpers.py', LATER_HELPER)
    return repo.commit('a helper')


def test_skip_from_a_helper_in_a_file_without_a_silence_word_fails_a_commit(
        guarded: Repo) -> None:
    _quiet_helper(guarded)
    guarded.write(QUIET_TEST, QUIET)
    guarded.add()
    result = guarded.run(main, '--today', TODAY, QUIET_TEST)
    assert result.codes == ['OG301'], result.out
    assert result.out.startswith(f'{QUIET_TEST}:4:2: OG301 pytest.mark.skip without a '
                                 'freeze id'), result.out


def test_skip_from_a_helper_in_a_file_without_a_silence_word_fails_a_range(
        guarded: Repo) -> None:
    base = _quiet_helper(guarded)
    guarded.write(QUIET_TEST, QUIET)
    guarded.commit('the quiet test')
    result = guarded.run(main, '--today', TODAY, '--from-ref', base, '--to-ref', 'HEAD')
    assert f'{QUIET_TEST}:4:2: OG301 ' in result.out, result.out


def test_skip_from_a_helper_in_a_file_without_a_silence_word_fails_all_files(
        guarded: Repo) -> None:
    _quiet_helper(guarded)
    guarded.write(QUIET_TEST, QUIET)
    guarded.commit('the quiet test')
    for _ in range(2):  # the second run with the scan cache warm
        result = guarded.run(main, '--today', TODAY, '--all-files')
        assert f'{QUIET_TEST}:4:2: OG301 ' in result.out, result.out


def test_quiet_test_file_cached_clean_is_judged_again_when_its_helper_silences(
        guarded: Repo) -> None:
    # the scan cache must not keep the verdict of a file whose helper changed
    guarded.write('tests/helpers.py', 'def later(reason):\n    return lambda f: f\n')
    guarded.write(QUIET_TEST, QUIET)
    guarded.commit('a harmless helper')
    assert guarded.run(main, '--today', TODAY, '--all-files').rc == 0
    _quiet_helper(guarded)
    result = guarded.run(main, '--today', TODAY, '--all-files')
    assert f'{QUIET_TEST}:4:2: OG301 ' in result.out, result.out


def test_skip_through_a_chain_of_quiet_helpers_fails_a_commit(guarded: Repo) -> None:
    guarded.write('tests/helpers.py', LATER_HELPER)
    guarded.write('tests/relay.py', 'from helpers import later as afterwards\n')
    guarded.commit('a helper and a relay')
    guarded.write(QUIET_TEST, QUIET.replace('from helpers import later', 
                                            'from relay import afterwards as later'))
    guarded.add()
    result = guarded.run(main, '--today', TODAY, QUIET_TEST)
    assert result.codes == ['OG301'], result.out


def test_quiet_test_file_importing_a_quiet_helper_passes(guarded: Repo) -> None:
    guarded.write('tests/helpers.py', 'def later(reason):\n    return lambda f: f\n')
    guarded.commit('a harmless helper')
    guarded.write(QUIET_TEST, QUIET)
    guarded.add()
    assert guarded.run(main, '--today', TODAY, QUIET_TEST).rc == 0


# -- re-exports the hooks missed --------------------------------------------------

REEXPORTS = {
    # A star import of unittest in a helper, star-imported by the test
    'star import': ({'tests/_star.py': 'from unittest import *\n'},
                    'from _star import *', '@skip("later")'),
    'star import in the test': ({}, 'from unittest import *', '@skip("later")'),
    'star import of _pytest': ({'tests/_star.py': 'from _pytest.mark import *\n'},
                               'from _star import *', '@MARK_GEN.xfail'),
    # A helper outside the tests roots (and outside src)
    'outside the tests roots': ({'testing/__init__.py': '',
                                 'testing/harness.py': 'import unittest\n'
                                                       'later = unittest.skip\n'},
                                'from testing.harness import later', '@later("later")'),
    'outside, a namespace package': ({'testing/harness.py': 'import unittest\n'
                                                            'later = unittest.skip\n'},
                                     'import testing.harness as h', '@h.later("later")'),
    # A class attribute
    'class attribute': ({'tests/_cls.py': 'import unittest\n\n\nclass H:\n'
                                          '    later = unittest.skip\n'},
                        'from _cls import H', '@H.later("later")'),
    'class attribute, module imported': ({'tests/_cls.py': 'import unittest\n\n\nclass H:\n'
                                                           '    later = unittest.skip\n'},
                                         'import _cls', '@_cls.H.later("later")'),
    'class attribute, same file': ({}, 'import unittest\n\n\nclass H:\n'
                                       '    later = unittest.skip', '@H.later("later")'),
}


def _reexport_test(imports: str, decorator: str) -> tuple[str, int]:
    source = f'{imports}\n\n\n{decorator}\ndef test_four():\n    assert 0\n'
    return source, source.splitlines().index(decorator) + 1


@pytest.mark.parametrize('spelling', sorted(REEXPORTS))
def test_skip_re_exported_by_a_helper_fails_every_mode(guarded: Repo, spelling: str) -> None:
    helpers, imports, decorator = REEXPORTS[spelling]
    for path, source in helpers.items():
        guarded.write(path, source)
    base = guarded.commit('helpers, past the hooks')
    source, line = _reexport_test(imports, decorator)
    guarded.write('tests/test_re.py', source)
    guarded.add()
    result = guarded.run(main, '--today', TODAY, 'tests/test_re.py')
    assert result.codes == ['OG301'], result.out
    assert result.out.startswith(f'tests/test_re.py:{line}:2: OG301 '), result.out
    guarded.commit('the test')
    for args in (('--from-ref', base, '--to-ref', 'HEAD'), ('--all-files',)):
        found = guarded.run(main, '--today', TODAY, *args).out
        assert f'tests/test_re.py:{line}:2: OG301 ' in found, (args, found)


def test_class_attribute_that_is_no_silence_passes(guarded: Repo) -> None:
    guarded.write('tests/_cls.py', 'import unittest\n\n\nclass H:\n    later = unittest.skip\n'
                                   '    now = staticmethod(lambda reason: lambda f: f)\n')
    guarded.commit('a helper')
    guarded.write('tests/test_re.py', _reexport_test('from _cls import H', '@H.now("x")')[0])
    guarded.add()
    assert guarded.run(main, '--today', TODAY, 'tests/test_re.py').rc == 0


def test_skip_from_a_helper_outside_the_tests_roots_fails_in_every_mode(
        user: Repo, hook_repo: HookRepo, mode: str) -> None:
    user.write('testing/harness.py', 'import unittest\nlater = unittest.skip\n')
    user.commit('a harness outside tests/')

    def change(repo: Repo) -> None:
        repo.write('tests/test_re.py', _reexport_test('from testing.harness import later',
                                                      '@later("later")')[0])

    result = judge(mode, user, hook_repo, change)
    assert result.rc == 1, result.out
    assert result.has('OG301', 'tests/test_re.py'), result.out


def test_a_commit_asks_git_once_for_the_top_names_not_once_per_imported_library(
        guarded: Repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A helper may live outside the tests roots, so an import of a name the
    repository might hold is looked up on the committed side; the top of the tree is
    listed once, and only a name it holds is listed further: three libraries the
    repository does not hold cost no listing of their own."""
    from builders.repos import git_calls

    guarded.write('testing/harness.py', 'import unittest\nlater = unittest.skip\n')
    guarded.commit('a harness outside tests/')
    guarded.write('tests/test_re.py', 'import sys\n\nimport numpy\nimport pandas\n'
                  'import scipy\nimport pytest\nfrom testing.harness import later\n\n\n'
                  '@later("later")\ndef test_a():\n    assert numpy and pandas and scipy\n')
    guarded.add()
    calls = git_calls(monkeypatch)

    result = guarded.run(main, 'tests/test_re.py')

    assert result.rc == 1 and 'OG301' in result.out, result.out  # the harness still found
    # the top of the tree, then `testing` (which it holds); no listing of numpy, pandas, scipy
    assert calls.count('ls-tree') == 2, calls


# -- the prefilter reads a quiet file's imports from its bytes ---------------------------

def test_imports_read_from_the_bytes_hold_every_import_the_compiler_sees() -> None:
    """On code nobody here wrote (the installed pytest, _pytest and hypothesis), what the
    byte reading finds is a superset of the imports in the compiled syntax tree, or it
    says it is not sure and the tree is read."""
    import glob
    import os

    import _pytest
    import hypothesis
    from oracle_guard.reading.helper_paths import _compiled_imports
    from oracle_guard.reading.helper_paths import _imports_in_bytes
    from oracle_guard.reading.silence_prefilter import as_python_reads

    files = [f for package in (pytest, _pytest, hypothesis)
             for f in glob.glob(os.path.join(os.path.dirname(package.__file__), '**', '*.py'),
                                recursive=True)]
    read = 0
    for path in files:
        with open(path, 'rb') as f:
            source = f.read()
        compiled = _compiled_imports(source, path)
        found = _imports_in_bytes(as_python_reads(source))
        if compiled is None or found is None:
            continue
        read += 1
        assert set(compiled) <= set(found), path
    assert read > 100


TRICKY_IMPORTS = (
    'from \\\n  helpers import later\n'
    'from . import (\n    a,  # one\n    b as c,\n)\n'
    'import x . y as z, w\n'
    'if True: from .pkg.mod import *\n'
    'from .import sibling\n'
    'x = 1; import q\n'
    '# from commented import out\n'
    'importlib = __import__("os")\n'
)


def test_imports_read_from_the_bytes_of_tricky_spellings() -> None:
    from oracle_guard.reading.helper_paths import _compiled_imports
    from oracle_guard.reading.helper_paths import imports_of

    found = imports_of(TRICKY_IMPORTS.encode())
    assert found == [(0, 'helpers', ('later',)), (1, None, ('a', 'b')), (0, 'x.y', ()),
                     (0, 'w', ()), (1, 'pkg.mod', ('*',)), (1, None, ('sibling',)),
                     (0, 'q', ())]
    assert set(_compiled_imports(TRICKY_IMPORTS.encode(), 't.py')) <= set(found)


# -- rule 39: a new call of a helper function whose skip the baseline holds --------------

NEED = 'import pytest\n\n\ndef need(module):\n    pytest.skip(f"{module} is not here")\n'
LEGACY_CALLS = ('from _support import need\n\n\ndef test_old():\n    need("gpu")\n'
                '    assert 0\n\n\ndef test_b():\n    assert 1\n')
CALLS_TEST = 'tests/test_calls.py'
FROZEN = '''\
budget: 1
freezes:
  - id: FZ-7
    nodeid: tests/test_calls.py::test_b
    class: order-dependent
    evidence: "fails after test_cache_warm"
    owner: alice
    expires: 2026-12-31
'''


def _baselined_need(repo: Repo) -> str:
    """tests/_support.py's need() skips; test_old calls it; both baselined at adoption."""
    repo.write('tests/_support.py', NEED)
    repo.write(CALLS_TEST, LEGACY_CALLS)
    repo.commit('legacy tests')
    assert repo.run(baseline_main).rc == 0
    entries = json.loads(repo.read('tests/oracle_baseline.json'))['silences']
    assert [(e['path'], e['tests']) for e in entries] == [('tests/_support.py', ['need'])]
    return repo.commit('oracle-guard baseline')


NEW_CALLS = {
    'an existing test calls it': LEGACY_CALLS.replace(
        'def test_b():\n    assert 1\n', 'def test_b():\n    need("net")\n    assert 1\n'),
    'a new test calls it': LEGACY_CALLS + '\n\ndef test_new():\n    need("net")\n',
    'through the module': LEGACY_CALLS + '\n\ndef test_new():\n    import _support\n'
                                         '    _support.need("net")\n',
    'a new fixture calls it': 'import pytest\n\n' + LEGACY_CALLS +
                              '\n\n@pytest.fixture\ndef net():\n    need("net")\n',
    # Python reads identifiers NFKC-normalised: no ASCII byte of these lines says need
    'spelt in fullwidth letters': LEGACY_CALLS.replace('need', '\uff4eeed') +
                                  '\n\ndef test_new():\n    \uff4eeed("net")\n',
}


@pytest.mark.parametrize('change', sorted(NEW_CALLS))
def test_new_call_of_a_baselined_helper_skip_fails(guarded: Repo, change: str) -> None:
    base = _baselined_need(guarded)
    source = NEW_CALLS[change]
    line = next(n for n, text in enumerate(source.splitlines(), 1)
                if 'eed("net")' in text)
    guarded.write(CALLS_TEST, source)
    guarded.add()
    result = guarded.run(main, '--today', TODAY, CALLS_TEST)
    assert result.codes == ['OG301'], result.out
    assert f'{CALLS_TEST}:{line}:' in result.out
    assert 'calls tests/_support.py::need, whose skip the baseline holds, in a call the ' \
           'base did not have' in result.out, result.out
    guarded.commit('the change')
    for args in (('--from-ref', base, '--to-ref', 'HEAD'), ('--all-files',)):
        found = guarded.run(main, '--today', TODAY, *args)
        assert f'{CALLS_TEST}:{line}:' in found.out and 'OG301' in found.out, (args, found.out)


def test_calls_the_baseline_saw_pass_in_every_mode(guarded: Repo) -> None:
    base = _baselined_need(guarded)
    guarded.write(CALLS_TEST, LEGACY_CALLS.replace('assert 0', 'assert 0  # still broken'))
    guarded.add()
    assert guarded.run(main, '--today', TODAY, CALLS_TEST).rc == 0
    guarded.commit('an edit beside the old call')
    for args in (('--from-ref', base, '--to-ref', 'HEAD'), ('--all-files',)):
        result = guarded.run(main, '--today', TODAY, *args)
        assert result.rc == 0, (args, result.out)


def test_new_call_of_a_baselined_helper_skip_with_its_own_freeze_passes(guarded: Repo) -> None:
    _baselined_need(guarded)
    guarded.write('tests/freeze_ledger.yaml', FROZEN)
    guarded.commit('a freeze for test_b')
    guarded.write(CALLS_TEST, NEW_CALLS['an existing test calls it'].replace(
        'need("net")', 'need("net")  # FZ-7'))
    guarded.add()
    result = guarded.run(main, '--today', TODAY, CALLS_TEST)
    assert result.rc == 0, result.out


# sympy's shape: module-level tests whose own skips the baseline holds (so each is a
# "function" of the baseline), named a thousand times in other files' tests too.
OWN_SKIPS = ('import pytest\n\n\ndef test_old():\n    pytest.skip("no gpu")\n\n\n'
             'def test_b():\n    assert 1\n')
OWN_CALLS = {
    'a new test calls it': OWN_SKIPS + '\n\ndef test_new():\n    test_old()\n',
    'on the def line': OWN_SKIPS + '\n\ndef test_new(): test_old()\n',
    'a method calls it': OWN_SKIPS + '\n\nclass TestX:\n    def test_m(self):\n'
                                     '        return test_old()\n',
    'an async def calls it': OWN_SKIPS + '\n\nasync def test_new():\n    test_old()\n',
    'a continued def line': OWN_SKIPS + '\n\ndef \\\n  test_new(): test_old()\n',
}


def _baselined_own_skip(repo: Repo) -> str:
    repo.write(CALLS_TEST, OWN_SKIPS)
    repo.write('tests/test_other.py', 'import pytest\n\n\ndef test_old():\n'
                                      '    pytest.skip("elsewhere")\n')
    repo.commit('legacy tests')
    assert repo.run(baseline_main).rc == 0
    entries = json.loads(repo.read('tests/oracle_baseline.json'))['silences']
    assert sorted((e['path'], e['tests']) for e in entries) == [
        (CALLS_TEST, ['test_old']), ('tests/test_other.py', ['test_old'])]
    return repo.commit('oracle-guard baseline')


@pytest.mark.parametrize('change', sorted(OWN_CALLS))
def test_new_call_of_a_test_whose_own_skip_the_baseline_holds_fails(guarded: Repo,
                                                                     change: str) -> None:
    """Rule 39's byte check passes over a file whose baselined tests nobody calls (the
    name is spelled only at its def), never over one where a test is called."""
    _baselined_own_skip(guarded)
    source = OWN_CALLS[change]
    guarded.write(CALLS_TEST, source)
    guarded.add()
    result = guarded.run(main, '--today', TODAY)
    assert result.codes == ['OG301'], result.out
    assert f'calls {CALLS_TEST}::test_old, whose skip the baseline holds' in result.out


def test_the_byte_check_of_rule_39_holds_to_the_calls_it_stands_for(guarded: Repo) -> None:
    """``may_call`` beside the reference (``calls`` on the parsed file): true wherever a
    call is found; false for an edit that calls nothing, although the baselined names
    are in the bytes (sympy's test_lambdify.py)."""
    from oracle_guard.oracle.baseline import read_baseline
    from oracle_guard.reading.helper_calls import baselined_functions
    from oracle_guard.reading.helper_calls import calls
    from oracle_guard.reading.helper_calls import may_call
    from oracle_guard.reading.helper_modules import HelperModules
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.config import load_config
    from oracle_guard.repo.tree_view import TreeView

    _baselined_own_skip(guarded)
    guarded.write('tests/_support.py', NEED)
    cfg = load_config(guarded.path)
    view = TreeView(guarded.path, None)
    wanted = baselined_functions(read_baseline(view, cfg.baseline))
    wanted['tests/_support.py'] = {'need': next(iter(wanted[CALLS_TEST].values()))}
    helpers = HelperModules.of(cfg, view)
    sources = [*OWN_CALLS.values(), *NEW_CALLS.values(), OWN_SKIPS, LEGACY_CALLS,
               OWN_SKIPS + '\n\ndef test_c():\n    assert "test_old" != 2  # test_old_x\n',
               # sympy's @tooslow: a baselined helper named, imported, never called
               'from _support import need\n\n\n@need\ndef test_d():\n    assert need\n',
               LEGACY_CALLS + '\ndef test_e():\n    (need)("x")\n',
               LEGACY_CALLS + '\ndef test_e():\n    (need  # a comment\r  )\\\n  ("x")\n',
               OWN_SKIPS.replace('"no gpu"', '"no gp\u00fc"') + 'test_old()\n']
    verdicts = []
    for source in sources:
        raw = source.encode()
        found = calls(parse_python(raw, CALLS_TEST), CALLS_TEST,
                      helpers.seen_from(CALLS_TEST), wanted)
        assert may_call(CALLS_TEST, raw, wanted) or not found, source
        verdicts.append((bool(found), may_call(CALLS_TEST, raw, wanted)))
    assert verdicts[-7] == (False, False)  # OWN_SKIPS: its test_old is called by nobody
    assert verdicts[-4] == (False, False)  # need as a decorator and a value: no call
    assert verdicts[-3:] == [(True, True)] * 3  # a parenthesised name, a comment between
