"""Silences a test gets from where pytest finds it, judged where they are written
(rules 14, 39, 40): a test a class inherits from a mixin of its file, a class-level marker
on a class whose tests are inherited, a decorator function of the file that applies a
marker, and a fixture's skip, which pytest reports at the test's own line (the layouts of
python-dateutil's tests/test_tz.py and tests/test_tzfile.py). The plugin and the gate accept
them when the silence is baselined, and nothing else."""
from __future__ import annotations

import pytest

from builders.ci_repo import adopted_with
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from oracle_guard.commands.baseline import main as baseline_main

PYPROJECT = '[project]\nname = "app"\nrequires-python = ">=3.9"\n\n[tool.oracle-guard]\nsrc = ["src/"]\n'
TEST = 'tests/test_zones.py'
ZONES = '''\
import unittest

import pytest

UNKNOWN = object()
requires_data = pytest.mark.skipif(UNKNOWN is not None, reason="needs the zone data")


def mark_unix(f):
    return pytest.mark.skipif(UNKNOWN is not None, reason="requires Unix")(f)


class FoldMixin:
    @unittest.skip("known failure")
    def testAmbiguous(self):
        assert 0

    def testFold(self):
        assert 1


class RangeTest(unittest.TestCase, FoldMixin):
    def testRange(self):
        assert 1


@requires_data
class ZoneTest(RangeTest):
    def testZone(self):
        assert 0


@mark_unix
def test_local():
    assert 0


@pytest.fixture(params=[1, 2])
def transition(request):
    if request.param == 2:
        pytest.skip("out of range for v1 files")
    return request.param


def test_transition(transition):
    assert transition
'''


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyprojecttoml(PYPROJECT)
    pytester.mkdir('tests')
    for path, text in {TEST: ZONES, 'tests/domain_lock.json': '{"version": 1, "properties": {}}\n',
                       'tests/freeze_ledger.yaml': 'budget: 0\nfreezes: []\n'}.items():
        pytester.path.joinpath(path).write_text(text)
    pytester.run('git', 'init', '-q')
    monkeypatch.chdir(pytester.path)
    assert baseline_main([]) == 0
    return pytester


def test_plugin_accepts_baselined_silences_of_inherited_and_decorated_tests(project) -> None:
    result = project.runpytest_inprocess('-p', 'no:cacheprovider', '-rs')
    # RangeTest: testAmbiguous skipped (the mixin's skip), testFold and testRange pass;
    # ZoneTest: all four skipped (the class marker); test_local skipped (mark_unix);
    # test_transition[2] skipped by its fixture.
    result.assert_outcomes(passed=3, skipped=7)


def test_plugin_fails_a_class_marker_the_baseline_does_not_hold(project) -> None:
    source = project.path.joinpath(TEST).read_text()
    project.path.joinpath(TEST).write_text(source.replace(
        'class RangeTest(', '@pytest.mark.skip(reason="later")\nclass RangeTest('))
    result = project.runpytest_inprocess('-p', 'no:cacheprovider')
    result.assert_outcomes()
    result.stdout.fnmatch_lines([f'{TEST}::RangeTest::testFold: @pytest.mark.skip without a '
                                 'freeze id*'])


BASE = 'tests/test_windows.py'
WINDOWS = '''\
import pytest

UNKNOWN = object()


@pytest.mark.skipif(UNKNOWN is not None, reason="WINDOWS only")
class WindowsTestCase:
    pass


class TestCpuAPIs(WindowsTestCase):
    def test_cpu_count(self):
        assert 0
'''


def test_plugin_accepts_a_baselined_marker_of_a_base_class(project) -> None:
    """psutil: the marker on the base class is inherited by every test of its subclasses;
    it is judged, and baselined, where it is written."""
    project.path.joinpath(BASE).write_text(WINDOWS)
    assert baseline_main([]) == 0
    result = project.runpytest_inprocess('-p', 'no:cacheprovider', BASE)
    result.assert_outcomes(skipped=1)


HARNESS = '''\
import unittest

__all__ = ["TestCase", "skip"]

skip = unittest.skip


class TestCase(unittest.TestCase):
    pass
'''
USES_HARNESS = '''\
from harness import TestCase


class TestApi(TestCase):
    def test_empty(self):
        assert 1
'''


# The gate on the three layouts at once, each in a test module of its own, adopted once per
# run: an honest pull request passes; a skip through a computed name in the baselined
# fixture, and another in a subclass of tests/harness.py's base class, each fail it.
@pytest.fixture(scope='session')
def layouts_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'class-silences', lambda path: adopted_with(
        path, {TEST: ZONES, BASE: WINDOWS, 'tests/harness.py': HARNESS,
               'tests/test_api.py': USES_HARNESS}))


@pytest.fixture
def calc(layouts_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(layouts_template, str(tmp_path / 'repo'))


def test_gate_accepts_baselined_silences_of_inherited_tests_fixtures_and_base_classes(
        calc: CiRepo) -> None:
    calc.pull_request({'NOTES.md': 'a pull request\n'}, bug=False)
    ci = calc.ci()
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_gate_fails_another_skip_through_the_baselined_fixture_or_a_base_class_module(
        calc: CiRepo) -> None:
    """The fixture's skip is accepted by its reason; a skip through a computed name in the
    same fixture (the hooks say OG310; the gate's audit must fail it too) gives another
    reason, and is not that skip. pyflakes' layout: tests/harness.py re-exports
    `unittest.skip` (baselined at adoption, module scope) and holds the base class of the
    tests; a new computed-name skip in a subclass's test is not explained by the base's
    module-level entry: only a marker of the base class itself is inherited (rule 39)."""
    cheat = ZONES.replace('    return request.param\n',
                          '    getattr(pytest, "sk" "ip".strip())("later")\n'
                          '    return request.param\n')
    calc.pull_request({TEST: cheat, 'tests/test_api.py': USES_HARNESS.replace(
        '        assert 1\n', '        getattr(__import__("pytest"), "sk" + "ip")("later")\n'
        '        assert 1\n')}, bug=False)
    ci = calc.ci()
    assert ci.rc == 1, ci.out
    assert any('test_transition[1] was skipped' in line for line in ci.lines('OG706')), ci.out
    assert any('tests/test_api.py::TestApi::test_empty was skipped' in line
               for line in ci.lines('OG706')), ci.out
    assert not any('TestCpuAPIs' in line for line in ci.out.splitlines() if ': OG' in line), \
        ci.out
