"""A src root that is a package itself (``src = ["natsort/"]``, natsort's layout) is
imported from its parent: its one top-level name is the package's. The names of the
modules inside it (``__main__``, ``utils``) are not top-level names of the code under test,
so a module of that name the tests import from elsewhere shadows nothing: pytest's own
``__main__`` (``python -m pytest`` with the README's venv inside the checkout) and a test
helper module next to the tests. Real git repositories and real ``oracle-guard ci`` runs.
"""
from __future__ import annotations

import os
import venv

import pytest

import oracle_guard
from builders.ci_repo import adopt
from builders.ci_repo import CiRepo
from builders.ci_repo import PYTEST
from builders.venvs import install
from builders.venvs import site_packages

PYPROJECT = '''\
[project]
name = "calc"
version = "0.1"

[tool.oracle-guard]
src = ["calc/"]
tests = ["tests/"]
'''
PROJECT = {
    '.gitignore': '.venv/\n',
    'calc/__init__.py': 'def add(a, b):\n    return a + b\n',
    'calc/__main__.py': 'from calc import add\n\nprint(add(1, 2))\n',
    'calc/helpers.py': 'def twice(a):\n    return a * 2\n',
    # tests/ has no __init__.py: pytest puts it first on sys.path, ``helpers`` is this file.
    'tests/helpers.py': 'def pair():\n    return 2, 3\n',
    'tests/test_calc.py': '''\
        from helpers import pair

        from calc import add
        from calc.helpers import twice


        def test_add():
            assert add(*pair()) == 5


        def test_twice():
            assert twice(2) == 4
        ''',
    'tests/properties/test_add_props.py': '''\
        from calc import add


        def test_add_commutes():
            for a in range(5):
                for b in range(5):
                    assert add(a, b) == add(b, a)
        ''',
}


def _repo(path: str) -> CiRepo:
    return adopt(path, PYPROJECT, PROJECT)


def _venv_with_pytest_inside(checkout: str) -> str:
    """``python3 -m venv .venv`` in the checkout with pytest's package in its
    site-packages (``python -m pytest`` runs ``.venv/.../pytest/__main__.py``); the rest
    of this suite's environment reached through a ``.pth`` path line."""
    prefix = os.path.join(checkout, '.venv')
    venv.EnvBuilder(with_pip=False, symlinks=True).create(prefix)
    site = site_packages(prefix)
    package = os.path.dirname(os.path.abspath(pytest.__file__))
    files = {}
    for name in sorted(os.listdir(package)):
        if name.endswith('.py'):
            with open(os.path.join(package, name), encoding='utf-8') as f:
                files[f'pytest/{name}'] = f.read()
    outer = dict.fromkeys([os.path.dirname(package),
                           os.path.dirname(os.path.dirname(os.path.abspath(oracle_guard.__file__)))])
    install(site, 'aa_suite', {'aa_suite.pth': ''.join(f'{p}\n' for p in outer)})
    install(site, 'pytest', files)
    return os.path.join('.venv', 'bin', 'python')


def test_a_test_helper_named_like_a_module_of_the_package_root_is_no_shadow(tmp_path) -> None:
    repo = _repo(str(tmp_path / 'repo'))
    plain, ci = repo.both(PYTEST, '--base', 'HEAD')
    assert plain.rc == 0, plain.out
    assert 'OG712' not in ci.out, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_pytest_main_from_a_venv_inside_the_checkout_is_no_shadow(tmp_path) -> None:
    repo = _repo(str(tmp_path / 'repo'))
    python = _venv_with_pytest_inside(repo.path)
    command = [python, *PYTEST[1:]]
    plain, ci = repo.both(command, '--base', 'HEAD', '--test-python', python)
    assert plain.rc == 0, plain.out
    assert 'OG712' not in ci.out, ci.out
    assert ci.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', ci.out


def test_a_package_root_shadowed_from_the_tests_still_fails_ci(tmp_path) -> None:
    # The package's own name, imported from a copy under tests/, is a shadow.
    repo = _repo(str(tmp_path / 'repo'))
    repo.pull_request({'tests/calc/__init__.py': 'def add(a, b):\n    return a + b\n',
                       'tests/calc/helpers.py': 'def twice(a):\n    return a + a\n',
                       'tests/conftest.py': 'import calc  # noqa: F401\n'}, bug=False)
    ci = repo.ci()
    assert any('OG712' in line and "'calc'" in line and 'tests/calc/__init__.py' in line
               for line in ci.out.splitlines()), ci.out
    assert ci.rc == 1, ci.out
