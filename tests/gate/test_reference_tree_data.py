"""The reference tree holds what the base oracle reads: the data files beside its tests
(``tests/port/cases/sums.json``, outside the fixture root) and the helper modules its
conftest names in ``pytest_plugins``, not only the modules it imports. Without them the
oracle cannot even be collected there (OG731 FileNotFoundError, a run that stops at
start-up)."""
from __future__ import annotations

import pytest

from builders.ci_repo import BASE_FILES
from builders.ci_repo import build_template
from builders.ci_repo import copy_template

# An honest change here must pass the whole gate, its reference run included.
pytestmark = pytest.mark.reference_run

PORTED = '''\
    import json
    from pathlib import Path

    from calc import add

    CASES = json.loads((Path(__file__).parent / 'cases' / 'sums.json').read_text())


    def test_add_sums():
        for a, b, total in CASES:
            assert add(a, b) == total


    def test_add_two(two):
        assert add(two, two) == 4
    '''
HELPER_SRC = '''\
def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def double(a):
    return add(a, a)
'''
NEW_TEST = '''\
    import json
    from pathlib import Path

    from calc import double

    DOUBLES = json.loads((Path(__file__).parent / 'cases' / 'doubles.json').read_text())


    def test_double():
        for a, total in DOUBLES:
            assert double(a) == total
    '''


@pytest.fixture(scope='module')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    pyproject = BASE_FILES['pyproject.toml'].replace(
        'src = ["src/"]', 'src = ["src/"]\n        properties = ["tests/port/test_sums.py"]')
    return build_template(str(tmp_path_factory.mktemp('reference-data') / 'repo'), {
        'pyproject.toml': pyproject, 'tests/port/test_sums.py': PORTED,
        'tests/port/cases/sums.json': '[[1, 2, 3], [2, 2, 4]]\n',
        'tests/conftest.py': 'pytest_plugins = ["calc_fixtures"]\n',
        'tests/calc_fixtures.py': 'import pytest\n\n\n@pytest.fixture\ndef two():\n    return 2\n'})


def test_honest_pull_request_with_a_new_test_reading_new_data_passes(
        template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A src helper and a unit test of it that reads a data file it adds: the base oracle
    # runs against the new src (its data from the base), the new test against the base src
    # (its data from the pull request).
    repo = copy_template(template, str(tmp_path / 'repo'))
    repo.pull_request({'src/calc/__init__.py': HELPER_SRC, 'tests/port/test_double.py': NEW_TEST,
                       'tests/port/cases/doubles.json': '[[1, 2], [3, 6]]\n'}, bug=False)
    plain, ci = repo.both()
    assert ci.summary == f'oracle-guard ci: 0 finding(s); test command exited {plain.rc}', ci.out
    assert ci.rc == plain.rc == 0, plain.out
