"""Under pytest-xdist the plugin's stop names each problem: a worker's terminal summary is
never shown, only its message comes back to the controller. A real pytest run with two
workers in a guarded folder; nothing is mocked.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = '''\
import pytest


@pytest.mark.skip(reason="later")
def test_later():
    assert 1 + 1 == 2


@pytest.mark.xfail
def test_maybe():
    assert 1 + 1 == 3


def test_plain():
    assert 1 + 1 == 2
'''


def test_each_problem_is_named_when_the_plugin_stops_an_xdist_run(tmp_path: Path) -> None:
    (tmp_path / 'pyproject.toml').write_text('[project]\nname = "p"\nversion = "0.1"\n\n'
                                             '[tool.oracle-guard]\nsrc = ["src/"]\n')
    (tmp_path / 'tests').mkdir()
    (tmp_path / 'tests' / 'test_it.py').write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith(('PYTEST_', 'ORACLE_GUARD'))}
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           '-n', '2', 'tests'], cwd=tmp_path, env=env, capture_output=True,
                          text=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert '2 problem(s) found at collection' in out, out
    assert 'tests/test_it.py::test_later: @pytest.mark.skip without a freeze id' in out, out
    assert 'tests/test_it.py::test_maybe: @pytest.mark.xfail without a freeze id' in out, out
