"""Rule 54's packaging kind: which edits of the build configuration change what ships
(gate/packaging). A version, a classifier, a dependency or a build requirement's version is
metadata; a package folder, a build hook, a backend is not."""
from __future__ import annotations

import pytest

from oracle_guard.gate.packaging import pyproject_build_settings
from oracle_guard.gate.packaging import setup_cfg_build_settings
from oracle_guard.gate.packaging import setup_py_shape

PYPROJECT = '''\
[build-system]
requires = ["setuptools>=61", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "dd"
version = "0.1"
dependencies = ["attrs>=22"]

[tool.setuptools.packages.find]
where = ["src"]
'''

SETUP_PY = '''\
from setuptools import find_packages, setup

setup(
    name="dd",
    version="0.1",
    classifiers=["Programming Language :: Python :: 3.11"],
    install_requires=["attrs>=22"],
    package_dir={"": "src"},
    packages=find_packages("src"),
)
'''


@pytest.mark.parametrize('edited, changed', [
    (PYPROJECT.replace('version = "0.1"', 'version = "0.2"'), False),
    (PYPROJECT.replace('"attrs>=22"', '"attrs>=23", "numpy"'), False),
    (PYPROJECT.replace('"setuptools>=61"', '"setuptools>=68"'), False),
    (PYPROJECT.replace('where = ["src"]', 'where = ["lib"]'), True),
    (PYPROJECT.replace('"wheel"', '"wheel", "my-build-hook"'), True),
    (PYPROJECT.replace('setuptools.build_meta', 'backend'), True),
    (PYPROJECT + '\n[tool.setuptools.cmdclass]\nbuild_py = "hook.BuildPy"\n', True),
])
def test_pyproject_build_settings(edited: str, changed: bool) -> None:
    base = pyproject_build_settings(PYPROJECT.encode())
    assert (pyproject_build_settings(edited.encode()) != base) == changed


@pytest.mark.parametrize('edited, changed', [
    (SETUP_PY.replace('version="0.1"', 'version="0.2"'), False),
    (SETUP_PY.replace('3.11"]', '3.11", "Programming Language :: Python :: 3.12"]'), False),
    (SETUP_PY.replace('"attrs>=22"', '"attrs>=23", "numpy"'), False),
    (SETUP_PY.replace('{"": "src"}', '{"": "lib"}'), True),
    (SETUP_PY.replace('find_packages("src")', 'find_packages("lib")'), True),
    (SETUP_PY.replace('setup(\n', 'import os\n\nos.system("true")\nsetup(\n'), True),
])
def test_setup_py_shape(edited: str, changed: bool) -> None:
    assert (setup_py_shape(edited.encode()) != setup_py_shape(SETUP_PY.encode())) == changed


def test_setup_cfg_build_settings() -> None:
    base = b'[metadata]\nversion = 0.1\n[options]\npackage_dir =\n    = src\npackages = find:\n'
    assert setup_cfg_build_settings(base.replace(b'0.1', b'0.2')) == \
        setup_cfg_build_settings(base)
    assert setup_cfg_build_settings(base.replace(b'= src', b'= lib')) != \
        setup_cfg_build_settings(base)
