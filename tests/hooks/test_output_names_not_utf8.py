"""The hooks' output on a test file whose name is not UTF-8 (git's bytes): the finding is
written with the name escaped (``\\xe9``) to a strict UTF-8 stream, never a traceback."""
from __future__ import annotations

import os
import subprocess
import sys

from builders.repos import Repo


def test_a_bare_skip_in_a_file_named_in_latin1_is_reported_escaped(repo: Repo) -> None:
    repo.write('pyproject.toml', '[project]\nname = "x"\n\n[tool.oracle-guard]\n'
               'src = ["src/"]\nproperties = []\n')
    repo.write('src/x.py', 'X = 1\n')
    repo.write('tests/test_x.py', 'def test_x():\n    assert 1\n')
    repo.commit('base')
    with open(os.path.join(os.fsencode(repo.path), b'tests', b'test_caf\xe9.py'), 'wb') as f:
        f.write(b'import pytest\n\n\n@pytest.mark.skip\ndef test_cafe():\n    assert 1\n')
    repo.add()
    env = {**os.environ, 'PYTHONIOENCODING': 'utf-8:strict', 'LC_ALL': 'C.UTF-8'}
    for fmt, expected in (('text', b'tests/test_caf\\xe9.py:4:2: OG301 pytest.mark.skip'),
                          ('github', b'::error file=tests/test_caf\\xe9.py,line=4,col=2,'
                                     b'title=OG301::')):
        proc = subprocess.run([sys.executable, '-m', 'oracle_guard.cli', 'check', '--format',
                               fmt], cwd=repo.path, env=env, capture_output=True)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert expected in proc.stdout
        assert b'Traceback' not in proc.stderr and b'internal error' not in proc.stderr
        proc.stdout.decode('utf-8')  # what was written is UTF-8
