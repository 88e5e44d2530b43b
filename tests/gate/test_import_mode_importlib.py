"""A project whose pytest configuration says ``--import-mode=importlib``, its tests in
packages (``tests/__init__.py``): pytest loads a package's ``__init__.py`` through
``importlib.util.spec_from_file_location``, and the plugin's import hook compiles it from
its bytes there too, so the oracle's ``__init__.py`` files are never "run without being
compiled from its bytes" (OG737) in the test command or the reference run."""
from __future__ import annotations

import pytest

from builders.ci_repo import BASE_FILES
from builders.ci_repo import build_template
from builders.ci_repo import copy_template
from builders.ci_repo import PYTEST

# An honest change here must pass the whole gate, its reference run included.
pytestmark = pytest.mark.reference_run

@pytest.fixture(scope='module')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    pyproject = BASE_FILES['pyproject.toml'].replace(
        'pythonpath = ["src"]', 'pythonpath = ["src"]\n        addopts = "--import-mode=importlib"')
    return build_template(str(tmp_path_factory.mktemp('import-mode') / 'repo'), {
        'pyproject.toml': pyproject, 'tests/__init__.py': '',
        'tests/properties/__init__.py': '"""The human-owned properties."""\n'})


def test_unchanged_suite_in_importlib_mode_has_no_finding(
        template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(template, str(tmp_path / 'repo'))
    plain, ci = repo.both(PYTEST, '--base', 'HEAD')
    assert 'OG737' not in ci.out, ci.out
    assert ci.summary == f'oracle-guard ci: 0 finding(s); test command exited {plain.rc}', ci.out
    assert ci.rc == plain.rc == 0, plain.out
