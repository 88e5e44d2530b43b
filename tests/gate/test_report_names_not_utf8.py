"""``oracle-guard ci --report`` on a repository whose file names are not all UTF-8 (a test
module named in Latin-1): the gate finishes with no traceback, writes the review report and
its findings with those names escaped (``\\xe9``), judges the run without the JUnit report
pytest cannot write for such a test, and still catches a bare skip in that module."""
from __future__ import annotations

import os
import subprocess

import pytest

from builders.ci_repo import build_template
from builders.ci_repo import copy_template
from builders.ci_repo import git
from builders.ci_repo import PYTEST
from builders.ci_repo import Run

# An honest change here must pass the whole gate, its reference run included.
pytestmark = pytest.mark.reference_run


LATIN1_TEST = b'tests/test_caf\xe9.py'
LATIN1_SRC = b'src/calc/caf\xe9.py'


def write_bytes(root: str, rel: bytes, content: bytes) -> None:
    with open(os.path.join(os.fsencode(root), rel), 'wb') as f:
        f.write(content)


def gate_with_latin1_names(tmp_path, test_body: bytes):  # type: ignore[no-untyped-def]
    calc = copy_template(build_template(str(tmp_path / 'template')), str(tmp_path / 'calc'))
    write_bytes(calc.path, LATIN1_TEST,
                b'from calc import add\n\n\ndef test_cafe():\n    assert add(1, 1) == 2\n')
    git(calc.path, 'add', '-A')
    git(calc.path, 'commit', '-q', '-m', 'a test module named in Latin-1')
    calc.pull_request({'src/calc/__init__.py': 'def add(a, b):\n    return b + a\n\n\n'
                                               'def mul(a, b):\n    return a * b\n'}, bug=False)
    write_bytes(calc.path, LATIN1_SRC, b'CAFE = 1\n')
    write_bytes(calc.path, LATIN1_TEST, test_body)
    git(calc.path, 'add', '-A')
    git(calc.path, 'commit', '-q', '-m', 'a module named in Latin-1, and the test module')
    report = str(tmp_path / 'review.md')
    # pytest prints the module's name as its bytes: the output is read as bytes.
    proc = subprocess.run(calc.ci_args(PYTEST, '--report', report), cwd=calc.path,
                          env=calc.env(), capture_output=True, timeout=240)
    return Run(proc.returncode, (proc.stdout + proc.stderr).decode('utf-8', 'surrogateescape')
               ), report


def test_the_report_names_what_is_not_utf8_escaped_and_the_run_passes(tmp_path) -> None:
    run, report = gate_with_latin1_names(
        tmp_path, b'from calc import add\n\n\ndef test_cafe():\n    assert add(1, 1) == 2\n'
                  b'\n\ndef test_creme():\n    assert add(2, 1) == 3\n')
    assert 'Traceback' not in run.out and 'internal error' not in run.out, run.out
    assert run.summary == 'oracle-guard ci: 0 finding(s); test command exited 0', run.out
    assert 'the name of tests/test_caf\\xe9.py is not UTF-8' in run.out
    with open(report, encoding='utf-8') as f:
        text = f.read()
    assert '`src/calc/caf\\xe9.py`' in text


def test_a_bare_skip_in_a_module_named_in_latin1_is_reported_escaped(tmp_path) -> None:
    run, report = gate_with_latin1_names(
        tmp_path, b'import pytest\n\nfrom calc import add\n\n\n@pytest.mark.skip\n'
                  b'def test_cafe():\n    assert add(1, 1) == 2\n')
    assert 'Traceback' not in run.out and 'internal error' not in run.out, run.out
    assert run.rc == 1
    assert 'tests/test_caf\\xe9.py:6:2: OG301 pytest.mark.skip without a freeze id' in run.out
    assert os.path.isfile(report)
