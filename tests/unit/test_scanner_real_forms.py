"""Silence spellings found in real test suites (numpy, pandas, scipy): benchmarks/real_suites.py."""
from __future__ import annotations

from oracle_guard.reading.scanner import might_silence
from oracle_guard.reading.scanner import scan_file


def silences(source: str) -> list[tuple[int, str, tuple[str, ...], tuple[str, ...]]]:
    return [(s.line, s.kind, s.targets, s.freeze_ids)
            for s in scan_file(source.encode()).silences]


def test_mark_named_at_module_level_silences_the_tests_it_decorates_not_the_module() -> None:
    # numpy/_core/tests/test_stringdtype.py: `unicode_bug_fail = pytest.mark.xfail(...)`
    source = (
        'import pytest\n'
        'unicode_bug_fail = pytest.mark.xfail(reason="FZ-3 width", strict=True)\n'
        '@pytest.mark.parametrize("a", [1, pytest.param(2, marks=unicode_bug_fail)])\n'
        'def test_a(a): assert a\n'
        '@unicode_bug_fail\n'
        'def test_b(): assert 1\n'
        'def test_c(): assert 1\n'
    )
    assert silences(source) == [
        (3, 'xfail', ('test_a',), ('FZ-3',)),
        (5, 'xfail', ('test_b',), ('FZ-3',)),
    ]


def test_named_unittest_skip_decorator_is_recorded_where_applied() -> None:
    source = (
        'import unittest\n'
        'skip_win = unittest.skipIf(True, "windows")\n'
        'class TestC(unittest.TestCase):\n'
        '    @skip_win\n'
        '    def test_c(self): self.assertTrue(1)\n'
        '    def test_d(self): self.assertTrue(1)\n'
    )
    assert silences(source) == [(4, 'unittest-skip', ('TestC::test_c',), ())]


def test_mark_named_at_class_level_is_recorded_where_applied() -> None:
    source = (
        'import pytest\n'
        'class TestX:\n'
        '    slow_xfail = pytest.mark.xfail(reason="x")\n'
        '    @slow_xfail\n'
        '    def test_x(self): assert 1\n'
        '    def test_y(self): assert 1\n'
    )
    assert silences(source) == [(4, 'xfail', ('TestX::test_x',), ())]


def test_named_mark_applied_at_run_time_is_a_silence_of_that_test() -> None:
    # pandas: `request.applymarker(mark)` with a mark named at module level
    source = (
        'import pytest\n'
        'skip_no_numexpr = pytest.mark.skipif(True, reason="no numexpr")\n'
        'def test_eval(request):\n'
        '    request.applymarker(skip_no_numexpr)\n'
        '    assert 1\n'
    )
    assert silences(source) == [(4, 'skipif', ('test_eval',), ())]


def test_module_level_pytestmark_and_importorskip_still_silence_the_module() -> None:
    source = (
        'import pytest\n'
        'scipy = pytest.importorskip("scipy")\n'
        'pytestmark = pytest.mark.skipif(True, reason="x")\n'
        'def test_a(): assert 1\n'
        'def test_b(): assert 1\n'
    )
    assert silences(source) == [
        (2, 'importorskip', ('test_a', 'test_b'), ()),
        (3, 'skipif', ('test_a', 'test_b'), ()),
    ]


def test_mark_named_inside_a_test_stays_recorded_at_its_assignment() -> None:
    # pandas: `mark = pytest.mark.xfail(...)` then `request.applymarker(mark)`, in the test
    source = (
        'import pytest\n'
        'def test_a(request):\n'
        '    mark = pytest.mark.xfail(reason="FZ-9")\n'
        '    request.applymarker(mark)\n'
        'def test_b(request):\n'
        '    mark = 1\n'
        '    assert mark\n'
    )
    assert silences(source) == [(3, 'xfail', ('test_a',), ('FZ-9',))]


def test_unused_named_mark_silences_nothing_and_prefilter_still_parses() -> None:
    source = 'import pytest\nspare = pytest.mark.skip(reason="x")\ndef test_a(): assert 1\n'
    assert might_silence(source.encode())
    assert silences(source) == []


def test_statements_without_a_silence_word_are_skipped_but_lines_count_like_the_parser() -> None:
    # Old-Mac \r newlines and a form feed (str.splitlines() splits on it, the parser does not)
    # must not shift the line a silence is found on.
    source = ('import pytest\r\x0c\r'
              'def test_a():\r    assert 1\r'
              'def test_b():\r    pytest.\\\r        skip("x")\r')
    assert silences(source) == [(6, 'skip', ('test_b',), ())]


def test_decorator_lines_count_as_part_of_the_decorated_test() -> None:
    source = (
        'import pytest as pt\n'
        'sk = pt.mark.skip\n'
        '@sk\n'
        'def test_a(): assert 1\n'
    )
    assert silences(source) == [(3, 'skip', ('test_a',), ())]
