"""check-named-freezes: decision-table rows 14 to 17 and the evasions of SPEC §5."""
from __future__ import annotations

import pytest

from oracle_guard.hooks.check_named_freezes import main

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python

TODAY = '2026-11-29'
LEDGER = '''\
budget: 3
freezes:
  - id: FZ-14
    nodeid: tests/test_headers.py::TestParse::test_crlf_roundtrip
    class: order-dependent
    evidence: "fails when scheduled after test_cache_warm"
    owner: alice
    expires: 2026-12-31
  - id: FZ-15
    nodeid: tests/test_headers.py::test_clock
    class: time-dependent
    evidence: "fails across midnight"
    owner: bob
    expires: 2026-01-31
  - id: FZ-16
    nodeid: tests/test_headers.py::test_fetch
    class: network
    evidence: "needs the internet"
    owner: carol
    expires: 2026-12-31
'''


def run(repo, source, *extra):
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('tests/test_headers.py', source)
    return repo.run(main, '--today', TODAY, *extra, path)


# Row 14: every spelling of a silence without an FZ id fails, at file:line.
UNNAMED = {
    'bare mark.skip': 'import pytest\n\n@pytest.mark.skip\ndef test_a():\n    assert 0\n',
    'skip with reason': 'import pytest\n\n@pytest.mark.skip(reason="flaky")\ndef test_a():\n    assert 0\n',
    'skipif': 'import os, pytest\n\n@pytest.mark.skipif(os.environ.get("CI"), reason="r")\ndef test_a():\n    assert 0\n',
    'xfail': 'import pytest\n\n@pytest.mark.xfail\ndef test_a():\n    assert 0\n',
    'skip call': 'import pytest\n\ndef test_a():\n    pytest.skip("later")\n',
    'xfail call': 'import pytest\n\ndef test_a():\n    pytest.xfail("later")\n',
    'importorskip': 'import pytest\n\ndef test_a():\n    pytest.importorskip(MODULE)\n',
    'import pytest as pt': 'import pytest as pt\n\n@pt.mark.skip\ndef test_a():\n    assert 0\n',
    'from pytest import mark': 'from pytest import mark\n\n@mark.xfail\ndef test_a():\n    assert 0\n',
    'from pytest import skip as s': 'from pytest import skip as s\n\ndef test_a():\n    s("x")\n',
    'marker re-bound to a name': 'import pytest\nlater = pytest.mark.skip\n\n@later\ndef test_a():\n    assert 0\n',
    'pytestmark module level': 'import pytest\npytestmark = pytest.mark.skip\n\ndef test_a():\n    assert 0\n',
    'pytestmark list': 'import pytest\npytestmark = [pytest.mark.xfail(reason="x")]\n\ndef test_a():\n    assert 0\n',
    'pytestmark class level': 'import pytest\n\nclass TestA:\n    pytestmark = [pytest.mark.skip]\n    def test_a(self):\n        assert 0\n',
    'param marks': 'import pytest\n\n@pytest.mark.parametrize("x", [pytest.param(1, marks=pytest.mark.xfail)])\ndef test_a(x):\n    assert x\n',
    'unittest.skip': 'import unittest\n\nclass T(unittest.TestCase):\n    @unittest.skip("x")\n    def test_a(self):\n        pass\n',
    'unittest alias skipIf': 'import unittest as ut\n\nclass T(ut.TestCase):\n    @ut.skipIf(FLAKY, "x")\n    def test_a(self):\n        pass\n',
    'from unittest import skipUnless as su': 'from unittest import skipUnless as su\n\n@su(FLAKY, "x")\ndef test_a():\n    pass\n',
    'expectedFailure': 'import unittest\n\nclass T(unittest.TestCase):\n    @unittest.expectedFailure\n    def test_a(self):\n        pass\n',
    'raise SkipTest': 'from unittest import SkipTest\n\ndef test_a():\n    raise SkipTest("x")\n',
    'raise unittest.case.SkipTest': 'import unittest.case\n\ndef test_a():\n    raise unittest.case.SkipTest\n',
    'self.skipTest': 'import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.skipTest("x")\n',
    'pytest.skip.Exception': 'import pytest\n\ndef test_a():\n    raise pytest.skip.Exception("x")\n',
    'star import': 'from pytest import *\n\n@mark.skip\ndef test_a():\n    pass\n',
    'private module': 'from _pytest.outcomes import skip\n\ndef test_a():\n    skip("x")\n',
}


@pytest.mark.parametrize('source', UNNAMED.values(), ids=UNNAMED.keys())
def test_silence_without_freeze_id_fails(repo, source):
    result = run(repo, source)
    assert result.rc == 1
    assert 'OG301' in result.codes
    line = result.out.split(':')[1]
    assert line != '1'  # points at the silence itself, not the file's top


def test_finding_points_at_file_line_and_column(repo):
    result = run(repo, 'import pytest\n\n\n@pytest.mark.skip\ndef test_a():\n    assert 0\n')
    assert result.out.startswith('tests/test_headers.py:4:2: OG301 pytest.mark.skip without a freeze id')


def test_freeze_id_not_in_ledger_fails(repo):
    result = run(repo, 'import pytest\n\n@pytest.mark.skip(reason="FZ-99 flaky")\ndef test_a():\n    assert 0\n')
    assert result.codes == ['OG302']


def test_expired_freeze_fails(repo):
    result = run(repo, 'import pytest\n\n@pytest.mark.skip(reason="FZ-15")\ndef test_clock():\n    assert 0\n')
    assert result.codes == ['OG303']
    assert 'expired on 2026-01-31' in result.out


def test_freeze_of_non_freezable_class_fails(repo):
    result = run(repo, 'import pytest\n\n@pytest.mark.skip(reason="FZ-16")\ndef test_fetch():\n    assert 0\n')
    assert result.codes == ['OG304']
    assert 'isolate' in result.out


def test_freeze_id_belonging_to_another_test_fails(repo):
    source = ('import pytest\n\nclass TestParse:\n    @pytest.mark.skip(reason="FZ-14")\n'
              '    def test_other(self):\n        assert 0\n')
    result = run(repo, source)
    assert result.codes == ['OG305']
    assert ('FZ-14 belongs to tests/test_headers.py::TestParse::test_crlf_roundtrip, '
            'not to tests/test_headers.py::TestParse::test_other') in result.out


def test_live_named_freeze_for_that_test_passes(repo):
    source = ('import pytest\n\nclass TestParse:\n    @pytest.mark.skip(reason="FZ-14: order")\n'
              '    def test_crlf_roundtrip(self):\n        assert 0\n')
    result = run(repo, source)
    assert result.rc == 0, result.out
    assert result.out == ''


def test_live_freeze_matches_after_the_test_moved_file(repo):
    source = ('import pytest\n\nclass TestParse:\n    def test_crlf_roundtrip(self):\n'
              '        pytest.xfail("FZ-14")\n')
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('tests/unit/test_moved_here.py', source)
    assert repo.run(main, '--today', TODAY, path).rc == 0


def test_freeze_in_unittest_expected_failure_comment_passes(repo):
    ledger = LEDGER.replace('TestParse::test_crlf_roundtrip', 'T::test_a')
    repo.write('tests/freeze_ledger.yaml', ledger)
    path = repo.write('tests/test_u.py', 'import unittest\n\nclass T(unittest.TestCase):\n'
                      '    @unittest.expectedFailure  # FZ-14\n    def test_a(self):\n        pass\n')
    assert repo.run(main, '--today', TODAY, path).rc == 0


def test_freeze_id_in_a_comment_does_not_name_a_skip(repo):
    result = run(repo, 'import pytest\n\nclass TestParse:\n    @pytest.mark.skip  # FZ-14\n'
                       '    def test_crlf_roundtrip(self):\n        assert 0\n')
    assert result.codes == ['OG301']


def test_module_level_silence_covering_several_tests_fails_even_with_an_id(repo):
    source = ('import pytest\npytestmark = pytest.mark.skip(reason="FZ-14")\n\n'
              'class TestParse:\n    def test_crlf_roundtrip(self):\n        assert 0\n'
              '    def test_two(self):\n        assert 0\n')
    assert 'OG306' in run(repo, source).codes


def test_param_with_live_freeze_passes(repo):
    ledger = LEDGER.replace('TestParse::test_crlf_roundtrip', 'test_p[slow]')
    repo.write('tests/freeze_ledger.yaml', ledger)
    path = repo.write('tests/test_p.py', 'import pytest\n\n@pytest.mark.parametrize("x", [\n'
                      '    pytest.param(1, marks=pytest.mark.xfail(reason="FZ-14"), id="slow")])\n'
                      'def test_p(x):\n    assert x\n')
    assert repo.run(main, '--today', TODAY, path).rc == 0


def test_except_skiptest_is_not_a_silence(repo):
    source = ('from unittest import SkipTest\n\ndef test_a():\n    try:\n        run()\n'
              '    except SkipTest:\n        raise AssertionError("must not skip")\n')
    assert run(repo, source).rc == 0


def test_file_without_marker_words_is_not_even_parsed(repo):
    # Not valid Python, but without a marker word the prefilter never parses it.
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('tests/test_x.py', 'def test_a(:\n')
    assert repo.run(main, path).rc == 0


def test_unparsable_test_file_with_marker_is_reported(repo):
    result = run(repo, 'import pytest\n@pytest.mark.skip\ndef test_a(:\n    pass\n')
    assert result.rc == 1
    assert result.codes == ['OG307']
    assert result.out.startswith('tests/test_headers.py:3:')


def test_non_utf8_test_file_is_reported(repo):
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('tests/test_x.py', b'import pytest\n# \xff\xfe skip\n')
    result = repo.run(main, path)
    assert result.codes == ['OG307']
    assert 'UTF-8' in result.out


def test_files_outside_test_roots_are_ignored(repo):
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('src/app.py', 'import pytest\npytest.skip("x")\n')
    assert repo.run(main, path).rc == 0


def test_allow_list_exempts_a_kind(repo):
    source = 'import pytest\n\ndef test_a():\n    pytest.importorskip("numpy")\n'
    assert run(repo, source).codes == ['OG321']
    assert run(repo, source, '--allow-silences', 'importorskip').rc == 0


def test_allow_list_from_pyproject(repo):
    repo.write('pyproject.toml', '[tool.oracle-guard]\nallow-silences = ["importorskip"]\n')
    assert run(repo, 'import pytest\nnp = pytest.importorskip("numpy")\n\ndef test_a():\n    assert np\n').rc == 0


def test_malformed_ledger_is_a_configuration_error(repo):
    repo.write('tests/freeze_ledger.yaml', 'budget: 1\nfreezes:\n  - id: FZ-1\n  - id: FZ-1\n    id: FZ-2\n')
    path = repo.write('tests/test_x.py', 'import pytest\n\n@pytest.mark.skip(reason="FZ-1")\ndef test_a():\n    pass\n')
    result = repo.run(main, path)
    assert result.rc == 2
    assert result.err.startswith('tests/freeze_ledger.yaml:5: duplicate key')


def test_without_filenames_the_staged_test_files_are_checked(repo):
    repo.write('tests/test_a.py', 'def test_a():\n    assert 1\n')
    repo.commit('init')
    repo.write('tests/test_a.py', 'import pytest\n\n@pytest.mark.skip\ndef test_a():\n    assert 1\n')
    repo.add()
    assert repo.run(main).codes == ['OG301']


@pytest.mark.parametrize('source', [
    'from _pytest.outcomes import Skipped\n\ndef test_a():\n    raise Skipped("flaky")\n',
    'from _pytest.outcomes import XFailed\n\ndef test_a():\n    raise XFailed("later")\n',
    'def test_a(request):\n    request.node.add_marker("xfail")\n',
    'def test_a(request):\n    request.applymarker("skip")\n',
], ids=['raise Skipped', 'raise XFailed', 'add_marker by name', 'applymarker by name'])
def test_outcome_exceptions_and_markers_by_name_are_silences(repo, source):
    assert run(repo, source).codes == ['OG301']


def test_silence_on_a_base_class_without_tests_cannot_carry_a_freeze(repo):
    # The base class defines no test, so whatever it silences (its subclasses' tests)
    # cannot be matched against the one test a ledger row names.
    source = ('import pytest\n\nclass Base:\n    pytestmark = pytest.mark.skip(reason="FZ-14")\n\n'
              'class TestParse(Base):\n    def test_a(self):\n        assert 0\n'
              '    def test_crlf_roundtrip(self):\n        assert 0\n')
    result = run(repo, source)
    assert result.codes == ['OG306']
    assert 'silences no test this file defines' in result.out


def test_valid_python_too_deep_to_walk_is_reported_not_a_traceback(repo):
    source = 'import pytest\nx = pytest.skip or ' + '+'.join(['1'] * 3000) + '\n\ndef test_a():\n    pass\n'
    result = run(repo, source)
    assert result.rc == 1
    assert result.codes == ['OG307']
    assert 'Traceback' not in result.err


def test_freeze_id_does_not_cover_a_same_named_test_in_another_file(repo):
    # FZ-14 freezes tests/test_headers.py::TestParse::test_crlf_roundtrip, which still
    # exists; a test of the same name in another file is another test.
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    repo.write('tests/test_headers.py', 'import pytest\n\nclass TestParse:\n'
               '    @pytest.mark.skip(reason="FZ-14")\n    def test_crlf_roundtrip(self):\n'
               '        assert 0\n')
    other = repo.write('tests/test_other.py', 'import pytest\n\nclass TestParse:\n'
                       '    @pytest.mark.skip(reason="FZ-14")\n    def test_crlf_roundtrip(self):\n'
                       '        assert 0\n')
    result = repo.run(main, '--today', TODAY, other)
    assert result.codes == ['OG305']
    assert repo.run(main, '--today', TODAY, 'tests/test_headers.py').rc == 0


def test_symlinked_test_file_is_reported_though_pre_commit_never_passes_it(repo):
    import os
    repo.write('qa/cases.py', 'import pytest\n\ndef test_a():\n    pytest.skip("later")\n')
    os.makedirs(os.path.join(repo.path, 'tests'))
    os.symlink('../qa/cases.py', os.path.join(repo.path, 'tests', 'test_cases.py'))
    repo.write('tests/test_real.py', 'def test_b():\n    assert 1\n')
    repo.add()
    result = repo.run(main, 'tests/test_real.py')  # what pre-commit passes
    assert result.codes == ['OG307']
    assert result.out.startswith('tests/test_cases.py:1:1: OG307 test file is a symlink')


@pytest.mark.parametrize('source', [
    'from app import add\n__test__ = False\n\ndef test_m():\n    assert add(2, 2) == 4\n',
    'def test_other():\n    assert 0\n\ntest_other.__test__ = False\n',
    'class TestA:\n    __test__ = False\n\n    def test_a(self):\n        assert 0\n',
    'import pytest\n\n@pytest.mark.parametrize("n", [])\ndef test_a(n):\n    assert n\n',
], ids=['module __test__', 'function __test__', 'class __test__', 'empty parameter set'])
def test_tests_made_uncollectable_without_a_skip_word_fail(repo, source):
    result = run(repo, source)
    assert result.rc == 1
    assert result.codes == ['OG301']


def test_test_dunder_true_is_not_a_silence(repo):
    result = run(repo, 'class TestA:\n    __test__ = True\n\n    def test_a(self):\n        assert 1\n')
    assert result.rc == 0, result.out


@pytest.mark.parametrize('source', [
    "p = __import__('pytest')\n\ndef test_a():\n    p.skip('flaky')\n",
    "import importlib\np = importlib.import_module('pytest')\n\ndef test_a():\n    p.skip('x')\n",
    "import pytest\n\n@getattr(pytest.mark, 'skip')\ndef test_a():\n    assert 0\n",
    "import pytest\n\ndef test_a():\n    pytest.\uff53kip('later')\n",
], ids=['__import__', 'import_module', 'getattr', 'NFKC identifier'])
def test_indirect_spellings_of_a_silence_fail(repo, source):
    assert run(repo, source).codes == ['OG301']


@pytest.mark.parametrize('source', [
    'import pytest\nquarantine = pytest.mark.skip\n',
    'import pytest\nslow = pytest.mark.skipif(FLAKY, reason="slow")\n',
], ids=['bare mark', 'configured mark'])
def test_silence_exported_from_a_module_without_tests_fails(repo, source):
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('tests/helpers.py', source)
    result = repo.run(main, '--today', TODAY, path)
    assert result.codes == ['OG301']
    assert 'exported as' in result.out


# -- rule 29: a ledger row removed or renumbered while untouched test code names its id ---

FROZEN_TEST = '''\
import pytest


@pytest.mark.skip(reason="FZ-14 fails after test_cache_warm")
def test_crlf_roundtrip():
    assert True
'''


def _frozen(guarded):  # type: ignore[no-untyped-def]
    guarded.write('tests/freeze_ledger.yaml', LEDGER.replace(
        'tests/test_headers.py::TestParse::test_crlf_roundtrip',
        'tests/test_headers.py::test_crlf_roundtrip'))
    guarded.write('tests/test_headers.py', FROZEN_TEST)
    guarded.commit('freeze FZ-14')
    return guarded


@pytest.mark.parametrize('new_id', [None, 'FZ-17'], ids=['deleted', 'renumbered'])
def test_ledger_row_removed_while_an_untouched_test_names_its_id_fails(guarded, new_id):
    repo = _frozen(guarded)
    text = repo.read('tests/freeze_ledger.yaml').decode()
    head, _, rest = text.partition('  - id: FZ-14\n')
    row, _, tail = rest.partition('  - id: FZ-15\n')
    kept = f'  - id: {new_id}\n{row}' if new_id else ''
    repo.write('tests/freeze_ledger.yaml', head + kept + '  - id: FZ-15\n' + tail)
    repo.add()
    # pre-commit passes only the staged files; the test file is not among them
    result = repo.run(main, '--today', TODAY, 'tests/freeze_ledger.yaml')
    assert result.codes == ['OG302']
    assert result.out.startswith('tests/test_headers.py:4:2: OG302 FZ-14 is not a row of '
                                 'tests/freeze_ledger.yaml')


def test_ledger_row_removed_together_with_its_skip_passes(guarded):
    repo = _frozen(guarded)
    text = repo.read('tests/freeze_ledger.yaml').decode()
    head, _, rest = text.partition('  - id: FZ-14\n')
    repo.write('tests/freeze_ledger.yaml', head + '  - id: FZ-15\n' + rest.partition('  - id: FZ-15\n')[2])
    repo.write('tests/test_headers.py', FROZEN_TEST.replace(
        '@pytest.mark.skip(reason="FZ-14 fails after test_cache_warm")\n', ''))
    repo.add()
    result = repo.run(main, '--today', TODAY, 'tests/freeze_ledger.yaml', 'tests/test_headers.py')
    assert (result.rc, result.out) == (0, '')


# -- skip names from any _pytest module; references that do not skip --------------------

@pytest.mark.parametrize('source', [
    pytest.param('from _pytest.python import skip\n\ndef test_a():\n    skip("later")\n',
                 id='_pytest.python.skip'),
    pytest.param('import _pytest.runner\n\ndef test_a():\n    raise _pytest.runner.Skipped("x")\n',
                 id='_pytest.runner.Skipped'),
    pytest.param('from _pytest import outcomes as o\n\ndef test_a():\n    o.skip("x")\n',
                 id='_pytest.outcomes-module-alias'),
    pytest.param('from _pytest.mark.structures import MARK_GEN\n\n@MARK_GEN.xfail\n'
                 'def test_a():\n    assert 0\n', id='MARK_GEN.xfail'),
])
def test_skip_imported_from_a_private_pytest_module_fails(repo, source):
    result = run(repo, source)
    assert result.codes == ['OG301']


@pytest.mark.parametrize('source', [
    pytest.param('import pytest\n\ndef test_a():\n    with pytest.raises(pytest.skip.Exception):\n'
                 '        pytest.importorskip("nope", reason="FZ-14")\n',
                 id='pytest.raises(pytest.skip.Exception)'),
    pytest.param('import unittest\n\nclass TestA(unittest.TestCase):\n    def test_a(self):\n'
                 '        self.assertRaises(unittest.SkipTest, run)\n', id='assertRaises(SkipTest)'),
    pytest.param('from _pytest.outcomes import Skipped\n\ndef test_a():\n'
                 '    assert not isinstance(ValueError(), Skipped)\n', id='isinstance(Skipped)'),
])
def test_reference_to_a_skip_exception_that_skips_nothing_is_not_a_site(repo, source):
    result = run(repo, source.replace('pytest.importorskip("nope", reason="FZ-14")', 'run()'))
    assert (result.rc, result.out) == (0, '')


@pytest.mark.parametrize('source', [
    pytest.param('import pytest\n\ndef test_a():\n    with pytest.raises(pytest.skip.Exception):\n'
                 '        pytest.importorskip("nope")\n', id='with-pytest.raises'),
    pytest.param('import pytest\n\ndef test_a():\n    try:\n        pytest.skip("x")\n'
                 '    except pytest.skip.Exception:\n        pass\n', id='try-except'),
    pytest.param('import pytest\n\ndef test_a():\n    try:\n        pytest.importorskip("sys")\n'
                 '    except pytest.skip.Exception:\n        assert False, "spurious skip"\n',
                 id='except-asserts'),
])
def test_skip_the_test_itself_catches_is_not_a_site(repo, source):
    result = run(repo, source)
    assert (result.rc, result.out) == (0, '')


@pytest.mark.parametrize('source', [
    pytest.param('import pytest\n\ndef test_a():\n    try:\n        pytest.skip("x")\n'
                 '    except pytest.skip.Exception:\n        raise\n', id='handler-re-raises'),
    pytest.param('import pytest\n\ndef test_a():\n    with pytest.raises(ValueError):\n'
                 '        pytest.skip("x")\n', id='raises-another-exception'),
    pytest.param('import pytest\n\ndef test_a():\n    try:\n        pytest.xfail("x")\n'
                 '    except pytest.skip.Exception:\n        pass\n', id='xfail-not-caught-by-skip'),
])
def test_skip_that_escapes_the_handler_is_still_a_site(repo, source):
    assert run(repo, source).codes == ['OG301']


def test_skip_exception_raised_or_derived_from_is_still_a_site(repo):
    source = ('import unittest\n\nclass Later(unittest.SkipTest):\n    pass\n\n\n'
              'def test_a():\n    raise Later()\n')
    assert run(repo, source).codes == ['OG301']


# -- rule 35: __code__ and pytest internals assigned in test code -----------------------

@pytest.mark.parametrize('source', [
    pytest.param('import _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n',
                 id='Function.runtest'),
    pytest.param('from _pytest.python import Function as F\n\nF.runtest = lambda self: None\n',
                 id='aliased-class'),
    pytest.param('import pytest\n\npytest.fail = print\n', id='pytest.fail'),
    pytest.param('import pytest\n\n\ndef test_a():\n    pytest.raises.__defaults__ = ()\n',
                 id='in-a-test-body'),
    pytest.param('def fixed():\n    return 1\n\n\ndef parse():\n    return 0\n\n\n'
                 'parse.__code__ = fixed.__code__\n\n\ndef test_parse():\n    assert parse() == 1\n',
                 id='__code__-swapped'),
    pytest.param('import pytest\n\n\ndef test_a(monkeypatch):\n'
                 '    monkeypatch.setattr("_pytest.python.Function.runtest", lambda s: None)\n',
                 id='monkeypatch-by-name'),
    pytest.param('import pytest\n\nsetattr(pytest, "fail", print)\n', id='setattr'),
    pytest.param('import pytest\n\nvars(pytest)["fail"] = print\n', id='vars-namespace'),
    # Python reads identifiers NFKC-normalised: `__\uff43\uff4f\uff44\uff45__` is `__code__`,
    # and no ASCII byte of the file spells it.
    pytest.param('def fixed():\n    return 1\n\n\ndef parse():\n    return 0\n\n\n'
                 'parse.__\uff43\uff4f\uff44\uff45__ = fixed.__\uff43\uff4f\uff44\uff45__\n\n\n'
                 'def test_parse():\n    assert parse() == 1\n', id='__code__-fullwidth'),
])
def test_assignment_to_code_or_pytest_internals_fails(repo, source):
    """Rule 35: test code may not change pytest or swap a function's code."""
    result = run(repo, source)
    assert result.codes == ['OG308']


def test_ordinary_attribute_assignment_in_tests_passes(repo):
    source = ('import pytest\n\n\nclass TestA:\n    def setup_method(self):\n'
              '        self.value = 1\n\n    def test_a(self, monkeypatch):\n'
              '        monkeypatch.setattr("os.sep", "/")\n        assert self.value\n')
    result = run(repo, source)
    assert (result.rc, result.out) == (0, '')


# -- rule 35b: pytest's marks, outcomes or internals reached by a computed name ------------

COMPUTED_ACCESS = {
    'getattr-mark': 'import pytest\n\npytestmark = getattr(pytest.mark, "s" + "kip")\n',
    'getattr-unittest': 'import unittest\n\n\nclass T(unittest.TestCase):\n'
                        '    @getattr(unittest, "".join(["sk", "ip"]))("later")\n'
                        '    def test_a(self):\n        pass\n',
    'getattr-outcome': 'import pytest\n\n\ndef test_a():\n    getattr(pytest, NAME)("x")\n',
    'import-module-in-pieces': 'import importlib\n\npython = importlib.import_module('
                               '"_py" "test" ".python")\n',
    'import-module-computed': 'from importlib import import_module\n\nmarks = import_module('
                              '"py" + "test").mark\n',
    '__import__-computed': 'pt = __import__("".join(["py", "test"]))\n',
    'globals-lookup': 'import pytest\n\nmark = globals()["py" + "test"].mark\n',
    'vars-of-pytest': 'import pytest\n\nskip = vars(pytest.mark)["skip"]\n',
    'dict-of-pytest': 'import pytest\n\nskip = pytest.__dict__.get("skip")\n',
    'sys-modules': 'import sys\n\nimport pytest\n\nskip = sys.modules["py" + "test"].skip\n',
    'sys-modules-in-pieces': 'import sys\n\nimport pytest\n\n'
                             'python = sys.modules["_py" "test.python"]\n',
    # No byte of the file spells pytest or unittest: the key alone names it.
    'sys-modules-no-runner-word': 'import sys\n\nskip = sys.modules["_py" + "test"]\n',
    'sys-modules-escaped': 'import sys\n\nimport pytest\n\nmark = sys.modules["\\x70ytest"].mark\n',
    'getattr-in-pieces': 'import pytest\n\npytestmark = getattr(pytest.mark, "s" "kip")\n',
    'variable-assigned-in-pieces': 'import importlib\n\nNAME = "_py" + "test.outcomes"\n'
                                   'outcomes = importlib.import_module(NAME)\n',
    'variable-naming-pytest': 'import importlib\n\nNAME = "_pytest.outcomes"\n'
                              'outcomes = importlib.import_module(NAME)\n',
    'bytes-folded': 'import importlib\n\nm = importlib.import_module(bytes([95, 112, 121, 116, '
                    '101, 115, 116]).decode())\n',
    # A probe of spellings against the rule (each passed main or a branch of it once):
    'list-index': 'import importlib\n\nNAMES = ["_pytest", "x"]\nm = importlib.import_module(NAMES[0])\n',
    'dict-value': 'import importlib\n\nD = {"x": "_pytest.outcomes"}\nm = importlib.import_module(D["x"])\n',
    'chr-map-join': 'import importlib\n\nm = importlib.import_module("".join(map(chr, [95, 112, 121, '
                    '116, 101, 115, 116])))\n',
    'rpartition': 'import importlib\n\nm = importlib.import_module("x._pytest".rpartition(".")[2])\n',
    'lstrip-dots': 'import importlib\n\nm = importlib.import_module(".._pytest".lstrip("."))\n',
    'format-method': 'import importlib\n\nm = importlib.import_module("{}.outcomes".format("_py" + '
                     '"test"))\n',
    'chr-folded': 'pt = __import__(chr(95) + "pytest")\n',
    'percent-format': 'import importlib\n\nm = importlib.import_module("%s" % WHERE)\n',
}


@pytest.mark.parametrize('source', COMPUTED_ACCESS.values(), ids=COMPUTED_ACCESS.keys())
def test_computed_access_to_pytest_in_test_code_fails(repo, source):
    """Rule 35b: a name nobody can read cannot be judged, so computing it is the finding."""
    result = run(repo, source + '\n\ndef test_z():\n    assert True\n')
    assert 'OG310' in result.codes, result.out


def test_pytest_internals_patched_through_a_name_in_pieces_fails(repo):
    """The byte prefilter of rule 35 selects a file that imports by name, so the patch is
    judged (OG308) as well as the computed import (OG310)."""
    result = run(repo, 'import importlib\n\npython = importlib.import_module("_py" "test" '
                       '".python")\npython.Function.runtest = lambda self: None\n')
    assert sorted(result.codes) == ['OG308', 'OG310']


@pytest.mark.parametrize('source', [
    'import pytest\n\nskip = getattr(pytest.mark, "skip", None)\n',
    'import importlib\n\njson = importlib.import_module("json")\n',
    'import os\n\n\ndef test_a():\n    assert getattr(os, NAME, None) is None\n',
    'import pytest\n\n\ndef test_a():\n    assert globals()["test_a"] is test_a\n',
    'def test_a():\n    assert vars(OBJ)[KEY]\n',
    'import importlib\n\n\ndef test_a(name):\n    importlib.import_module(name)\n',
    'import importlib\n\n\ndef test_a(x):\n    importlib.import_module(f"numpy.{x}")\n',
    'import sys\n\nimport pytest\n\nME = sys.modules[__name__]\n',
    'import importlib\n\nmodule = importlib.import_module(temp_module_name())\n',
], ids=['getattr-literal', 'import-literal', 'getattr-other-module', 'globals-literal',
        'vars-of-other', 'parameter', 'fixed-package-prefix', 'own-module', 'helper-result'])
def test_spelled_or_unrelated_lookups_are_not_computed_access(repo, source):
    result = run(repo, source)
    assert 'OG310' not in result.codes, result.out


# -- rule 36: a coding cookie other than UTF-8 ---------------------------------------------

UTF7_HIDDEN_SKIP = (b'# -*- coding: utf-7 -*-\nimport pytest\n\n\n'
                    b'def test_a():\n    # nothing here +AAo-    pytest.skip("later")\n'
                    b'    assert False\n')


@pytest.mark.parametrize('source', [
    pytest.param(UTF7_HIDDEN_SKIP, id='utf-7-hides-a-skip'),
    pytest.param(b'#!/usr/bin/env python\n# vim: set fileencoding=utf-16 :\n'
                 b'def test_a():\n    assert True\n', id='utf-16-on-line-2'),
    pytest.param(b'# coding: iso2022_jp\ndef test_a():\n    assert True\n', id='stateful-codec'),
    pytest.param(b'# coding: my_rot13\ndef test_a():\n    assert True\n', id='unknown-codec'),
])
def test_test_file_with_a_coding_cookie_other_than_utf8_fails(repo, source):
    """Rule 36: what is reviewed must be what runs."""
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('tests/test_headers.py', source)
    result = repo.run(main, '--today', TODAY, path)
    assert result.codes == ['OG307']
    assert 'declares coding' in result.out


@pytest.mark.parametrize('codec', ['latin-1', 'cp1252', 'iso-8859-15'])
def test_test_file_in_an_ascii_compatible_legacy_codec_passes(repo, codec):
    """Rule 36 as amended: ASCII bytes stand for themselves, so the code reads the same."""
    source = (f'# -*- coding: {codec} -*-\n\n\ndef test_a():\n'
              '    assert len("caf\xe9") == 4\n').encode(codec)
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('tests/test_headers.py', source)
    result = repo.run(main, '--today', TODAY, path)
    assert (result.rc, result.out) == (0, '')


def test_test_file_declaring_ascii_passes(repo):
    """pytz's ``# -*- coding: ascii -*-``: ASCII bytes stand for themselves and any other
    byte fails the import, so the code reads as UTF-8 shows it (rule 36)."""
    source = b'# -*- coding: ascii -*-\n\n\ndef test_a():\n    assert len("cafe") == 4\n'
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('tests/test_headers.py', source)
    result = repo.run(main, '--today', TODAY, path)
    assert (result.rc, result.out) == (0, '')


def test_skip_spelled_in_a_legacy_codec_letter_still_fails(repo):
    """latin-1's b"\\xaa" is the letter "a" to Python (NFKC): the prefilter decodes with
    the declared codec, so ``pytest.mark.xf\\xaail`` is still parsed and judged."""
    source = (b'# coding: latin-1\nimport pytest\n\n\n@pytest.mark.xf\xaail\n'
              b'def test_a():\n    assert False\n')
    repo.write('tests/freeze_ledger.yaml', LEDGER)
    path = repo.write('tests/test_headers.py', source)
    result = repo.run(main, '--today', TODAY, path)
    assert result.codes == ['OG301']


@pytest.mark.parametrize('cookie', [b'# -*- coding: utf-8 -*-\n', b'# coding=UTF8\n', b''])
def test_test_file_declaring_utf8_passes(repo, cookie):
    result = run(repo, (cookie + b'def test_a():\n    assert "\xc3\xa9"\n').decode())
    assert (result.rc, result.out) == (0, '')


def test_utf7_hidden_skip_really_runs_as_a_skip(repo, tmp_path):
    """The move rule 36 blocks is real: Python decodes the cookie, the skip executes."""
    import subprocess
    import sys

    test_file = tmp_path / 'test_hidden.py'
    test_file.write_bytes(UTF7_HIDDEN_SKIP)
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           '-p', 'no:oracle_guard', str(test_file)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert '1 skipped' in proc.stdout, proc.stdout


# -- rule 34: a test module or package shadowing the code under test ---------------------

@pytest.mark.parametrize('path', [
    'tests/app.py', 'tests/app/__init__.py', 'tests/hypothesis.py', 'tests/unit/pytest/__init__.py',
])
def test_test_module_shadowing_the_code_under_test_fails(guarded, path):
    """Rule 34: pytest puts tests/ first on sys.path, so `import app` finds this."""
    guarded.write(path, 'def parse(b):\n    return b\n')
    guarded.add()
    result = guarded.run(main, '--today', TODAY, path)
    assert result.codes == ['OG309']
    assert result.out.startswith(f'{path}:1:1: OG309 importable as ')


def test_src_package_added_under_the_name_of_an_untouched_test_helper_fails(guarded):
    """Rule 34 from the src side: the test helper is not in the change, yet the commit that
    adds src/helpers/ makes it shadow that package; judged as --all-files would."""
    guarded.write('tests/helpers.py', 'def make():\n    return 1\n')
    guarded.commit('a test helper')
    guarded.write('src/helpers/__init__.py', 'X = 1\n')
    guarded.add()
    result = guarded.run(main, '--today', TODAY)
    assert result.codes == ['OG309']
    assert result.out.startswith('tests/helpers.py:1:1: OG309 importable as ')


def test_tests_init_deleted_so_a_helper_shadows_src_fails(guarded):
    guarded.write('tests/unit/__init__.py', '')
    guarded.write('tests/unit/app.py', 'def parse(b):\n    return b\n')
    guarded.commit('a package of helpers')
    guarded.rm('tests/unit/__init__.py')
    result = guarded.run(main, '--today', TODAY)
    assert result.codes == ['OG309']
    assert result.out.startswith('tests/unit/app.py:1:1: OG309 importable as ')


@pytest.mark.parametrize('path', ['pytest.py', 'pytest/__init__.py', '_pytest/python.py',
                                  'hypothesis/__init__.py'])
def test_module_at_the_root_shadowing_pytest_fails(guarded, path):
    """Rule 34: `python -m pytest` runs ./pytest.py instead of pytest, so the change's own
    code would be the test runner (found by the adversarial review)."""
    guarded.write(path, 'import sys\nsys.exit(0)\n')
    guarded.add()
    result = guarded.run(main, '--today', TODAY, path)
    assert result.codes == ['OG309']
    assert result.out.startswith(f'{path}:1:1: OG309 importable as ')
    assert guarded.run(main, '--today', TODAY, '--all-files').codes == ['OG309']


def test_root_module_with_its_own_name_passes(guarded):
    guarded.write('pytest_helpers.py', 'X = 1\n')
    guarded.write('tools/pytest.py', 'X = 1\n')
    guarded.add()
    result = guarded.run(main, '--today', TODAY, 'pytest_helpers.py', 'tools/pytest.py')
    assert (result.rc, result.out) == (0, '')


def test_root_pytest_module_really_replaces_pytest(tmp_path):
    """The move is real: `python -m pytest` in that folder runs it and exits 0."""
    import subprocess
    import sys

    (tmp_path / 'pytest.py').write_text('raise SystemExit(0)\n')
    (tmp_path / 'test_bug.py').write_text('def test_bug():\n    assert False\n')
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q'], capture_output=True,
                          text=True, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, '')


def test_test_package_named_like_the_code_inside_a_tests_package_passes(guarded):
    guarded.write('tests/__init__.py', '')
    guarded.write('tests/app/__init__.py', '')
    guarded.add()
    result = guarded.run(main, '--today', TODAY, 'tests/__init__.py', 'tests/app/__init__.py')
    assert (result.rc, result.out) == (0, '')


def test_test_helper_with_its_own_name_passes(guarded):
    guarded.write('tests/app_helpers.py', 'def build():\n    return b""\n')
    guarded.add()
    assert guarded.run(main, '--today', TODAY, 'tests/app_helpers.py').rc == 0
