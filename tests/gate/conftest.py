"""The gate's scenario repositories: each built once per run (shared by the workers) and
copied for each test."""

from __future__ import annotations

import pytest

import builders.ci_repo
from builders.calc import ORACLE
from builders.ci_repo import adopt
from builders.ci_repo import build_template
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.dedupe import adopt_dd
from builders.dedupe import BUG
from builders.dedupe import GOOD
from builders.dedupe import HELPER
from builders.dedupe import HELPER_PROPERTY
from builders.dedupe import HELPER_UNIT
from builders.dedupe import PROPERTIES_CONFTEST
from builders.dedupe import PYPROJECT
from builders.dedupe import SORTED_PROPERTY


@pytest.fixture(scope='session')
def dd_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'dd', lambda path: adopt_dd(path))


@pytest.fixture
def dd(dd_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(dd_template, str(tmp_path / 'repo'))


@pytest.fixture(scope='session')
def helper_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'helpers', lambda path: adopt(path, PYPROJECT, {
        'src/dd/__init__.py': GOOD, 'tests/test_dd.py': HELPER_UNIT,
        'tests/properties/test_dd_props.py': SORTED_PROPERTY}, [{'src/dd/__init__.py': BUG}]).path)


@pytest.fixture
def helpers(helper_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(helper_template, str(tmp_path / 'repo'))


@pytest.fixture(scope='session')
def with_properties_conftest(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'dd-properties-conftest', lambda path: adopt_dd(path,
        {'tests/properties/conftest.py': PROPERTIES_CONFTEST}))


@pytest.fixture(scope='session')
def dd6_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """dd adopted with a properties conftest that imports the package (src runs before the
    property is compiled)."""
    return shared_template(tmp_path_factory, 'dd-properties-conftest', lambda path: adopt_dd(path,
        {'tests/properties/conftest.py': PROPERTIES_CONFTEST}))


@pytest.fixture
def dd6(dd6_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(dd6_template, str(tmp_path / 'repo'))


@pytest.fixture(scope='session')
def dd6_sound_main_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """dd6 without the bug on main: a pull request that brings it fails the base oracle,
    which passes against the base revision's own src/ (a failure main shares is not the
    change's, rule 44)."""
    return shared_template(tmp_path_factory, 'dd-properties-conftest-sound', lambda path: adopt_dd(
        path, {'tests/properties/conftest.py': PROPERTIES_CONFTEST}, bug_on_main=False))


@pytest.fixture
def dd6_sound_main(dd6_sound_main_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(dd6_sound_main_template, str(tmp_path / 'repo'))


@pytest.fixture(scope='session')
def dd7_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """dd adopted with a properties conftest that imports the package and a helper that
    gives the property its expected value."""
    return shared_template(tmp_path_factory, 'dd-conftest-helper', lambda path: adopt_dd(path, {
        'tests/properties/conftest.py': PROPERTIES_CONFTEST,
        'tests/properties/_expected.py': HELPER,
        'tests/properties/test_dd_props.py': HELPER_PROPERTY}))


@pytest.fixture
def dd7(dd7_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(dd7_template, str(tmp_path / 'repo'))


@pytest.fixture(scope='session')
def calc_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'sealed-template', lambda path: build_template(path))


@pytest.fixture
def calc(calc_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(calc_template, str(tmp_path / 'repo'))


@pytest.fixture(scope='session')
def oracle_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'reference-template',
                           lambda path: build_template(path, ORACLE))


@pytest.fixture
def oracle_calc(oracle_template: str, tmp_path) -> CiRepo:  # type: ignore[no-untyped-def]
    return copy_template(oracle_template, str(tmp_path / 'repo'))


@pytest.fixture(autouse=True)
def _reference_run(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A gate run here has its reference run only in a test marked ``reference_run`` (by
    itself or by its module): the modules of the other mechanisms judge their own. In a
    module marked ``reference_run``, a test whose assertions read only the test command's
    findings says ``reference_run(False)``: the closest mark decides."""
    marker = request.node.get_closest_marker('reference_run')
    wanted = marker is not None and marker.args[:1] != (False,)
    monkeypatch.setattr(builders.ci_repo, 'REFERENCE_RUN', wanted)
