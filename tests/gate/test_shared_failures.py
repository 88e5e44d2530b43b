"""A base oracle test that errors because of the machine (natsort's conftest sets a locale
the machine lacks) errors against the base revision's own src/ too, and in the test command:
the reference run's failure is the environment's, not the change's. The gate gives plain
pytest's exit status and no finding (SPEC section 10), and lists it in the review report;
a failure the change causes still fails the gate. Real git repositories and real
``oracle-guard ci`` runs; nothing is mocked.
"""
from __future__ import annotations

import pytest

from builders.ci_repo import adopted_with
from builders.ci_repo import BASE_FILES
from builders.ci_repo import PYTEST

# The reference run is what these judge.
pytestmark = pytest.mark.reference_run

# A locale no machine has, set up by a fixture of a property module.
LOCALE_PROPERTY = '''\
import locale

import pytest

from calc import add


@pytest.fixture
def in_locale():
    locale.setlocale(locale.LC_ALL, 'xx_YY.UTF-8')
    yield
    locale.setlocale(locale.LC_ALL, 'C')


def test_add_in_locale(in_locale):
    assert add(2, 2) == 4
'''
# A fixture that calls src: an error at set-up the change can cause.
SRC_PROPERTY = '''\
import pytest

from calc import mul


@pytest.fixture
def unit():
    return mul(1, 1)


def test_mul_by_unit(unit):
    assert mul(3, unit) == 3
'''
HONEST_SRC = ('def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\n'
              'def double(a):\n    return add(a, a)\n')
HONEST_TEST = '''\
from calc import double


def test_double():
    assert double(2) == 4
'''


def test_a_property_the_machine_cannot_set_up_gives_no_finding_on_an_honest_change(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = adopted_with(str(tmp_path / 'r'), {
        'tests/properties/test_locale_props.py': LOCALE_PROPERTY})
    repo.pull_request({'src/calc/__init__.py': HONEST_SRC,
                       'tests/test_double.py': HONEST_TEST}, bug=False)
    report = tmp_path / 'review.md'
    plain, ci = repo.both(PYTEST, '--report', str(report))
    assert plain.rc == 1, plain.out  # the locale error, in plain pytest too
    assert not [line for line in ci.out.splitlines() if ': OG' in line], ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 1', ci.out
    assert ci.rc == 1
    text = report.read_text(encoding='utf-8')
    assert 'Oracle failures the base revision shares' in text, text
    assert 'tests/properties/test_locale_props.py::test_add_in_locale`: setup failed against ' \
           'the base src/ too' in text, text


def test_a_property_the_change_breaks_at_set_up_still_fails_ci(tmp_path) -> None:
    repo = adopted_with(str(tmp_path / 'r'), {
        'tests/properties/test_unit_props.py': SRC_PROPERTY})
    repo.pull_request({'src/calc/__init__.py': (
        'def add(a, b):\n    return a + b\n\n\n'
        'def mul(a, b):\n    if a == b == 1:\n        raise ValueError("no")\n    return a * b\n'),
    }, bug=False)
    ci = repo.ci()
    assert any(': OG731 ' in line and 'test_mul_by_unit' in line and 'errored in setup' in line
               for line in ci.out.splitlines()), ci.out
    assert ci.rc == 1, ci.out


# The only oracle test that runs mul fails on this machine after it has checked mul, at
# the base as at the change: its failure kills no mutant of the changed line.
LOCALE_MUL_PROPERTY = '''\
import locale

from calc import mul


def test_mul_in_locale():
    assert mul(2, 3) == 6
    locale.setlocale(locale.LC_ALL, 'xx_YY.UTF-8')
'''


def test_a_test_the_machine_fails_kills_no_mutant(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = adopted_with(str(tmp_path / 'r'), {
        'pyproject.toml': BASE_FILES['pyproject.toml'].replace('mutant-budget = 0',
                                                               'mutant-budget = 120'),
        'tests/properties/test_locale_props.py': LOCALE_MUL_PROPERTY})
    repo.pull_request({'src/calc/__init__.py': (
        'def add(a, b):\n    return a + b\n\n\n'
        'def mul(a, b):\n    product = a * b\n    return product\n')}, bug=False)
    report = tmp_path / 'review.md'
    ci = repo.ci(PYTEST, '--report', str(report))
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 1', ci.out
    assert 'mutants: 0 of 0 killed' in ci.out, ci.out
    text = report.read_text(encoding='utf-8')
    assert '- not judged: `src/calc/__init__.py:6`' in text, text
    assert 'every test that runs it fails without it' in text, text
