"""``oracle-guard ci --timings``: one line a step on stderr, the verdict untouched.

Only the lines' presence and shape are asserted, never a timing value.
"""

from __future__ import annotations

import re
import subprocess

import pytest

from builders.ci_repo import CiRepo
from builders.ci_repo import PYTEST
from oracle_guard.gate.timings import STEPS

pytestmark = pytest.mark.reference_run


NUMBER = r'\d+\.\d{3} s'


LINE = re.compile(rf'oracle-guard ci: timing: (?P<step>[a-z -]+): (?:not run|wall {NUMBER}, '
                  rf'cpu {NUMBER} gate \+ {NUMBER} children(?P<note> \(.*\))?)')


def ci(repo: CiRepo, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(repo.ci_args(PYTEST, *options), cwd=repo.path, env=repo.env(),
                          capture_output=True, text=True, timeout=240)


def timing_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith('oracle-guard ci: timing:')]


def test_timings_print_every_step_to_stderr_and_leave_the_verdict_alone(calc: CiRepo) -> None:
    calc.pull_request({})  # the bug: test_add fails
    plain = ci(calc)
    timed = ci(calc, '--timings', '--install-command', 'true')
    assert timed.returncode == plain.returncode == 1
    assert timed.stdout.splitlines()[-1] == plain.stdout.splitlines()[-1]
    assert timing_lines(timed.stdout) == []
    assert timing_lines(plain.stderr) == []
    lines = timing_lines(timed.stderr)
    matches = [LINE.fullmatch(line) for line in lines]
    assert all(matches), lines
    assert [m.group('step') for m in matches if m] == [*STEPS, 'total']
    # the base collection runs only when the baseline records tests left out (rule 39b;
    # tests/test_ci_attacks_stale.py times one)
    assert [line for line in lines if line.endswith('not run')] == [
        'oracle-guard ci: timing: base collection: not run'], lines
    by_step = {m.group('step'): m for m in matches if m}
    assert re.fullmatch(rf' \({NUMBER} of its wall time beside the test command\)',
                        by_step['reference run'].group('note') or '')


def test_timings_name_the_steps_that_did_not_run(calc: CiRepo) -> None:
    calc.pull_request({'NOTES.txt': 'a change that is not code\n'}, bug=False)
    timed = ci(calc, '--timings', '--no-reference-run')
    lines = timing_lines(timed.stderr)
    assert timed.returncode == 0, timed.stdout
    not_run = [line.split(': ')[2] for line in lines if line.endswith(': not run')]
    assert not_run == ['install step', 'reference tree build', 'base collection',
                       'reference run', 'base rerun', 'oracle reach', 'mutant runs',
                       'freeze reruns', 'new-test run']
