"""Rule 55: a base property whose filters reject a larger share of its draws against the
pull request's ``src`` than the domain lock records fails the gate (OG742)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.dedupe import DD_PYTEST
from builders.dedupe import gate
from builders.filtered import adopt_fd
from builders.filtered import FIX
from builders.filtered import NARROWING_PREDICATE
from builders.filtered import PROPERTY_PATH
from builders.filtered import UNIT_TESTS
from builders.filtered import UNIT_TESTS_FOR_THE_BUG
from oracle_guard.oracle.rejected_share import rose
from oracle_guard.runtime.draw_rates import RATES_ENV

pytestmark = pytest.mark.reference_run


@pytest.fixture(scope='module')
def fd_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return shared_template(tmp_path_factory, 'fd', lambda path: adopt_fd(path))


def test_a_src_predicate_that_refuses_the_bugs_inputs_fails_ci(
        fd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(fd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/fd/__init__.py': NARROWING_PREDICATE,
                       'tests/test_fd.py': UNIT_TESTS_FOR_THE_BUG}, bug=False)
    report = tmp_path / 'review.md'
    plain = repo.start(DD_PYTEST)
    ci = repo.start([sys.executable, '-I', *repo.ci_args(DD_PYTEST, '--report',
                                                         str(report))[1:]])
    plain, ci = repo.finish(plain), repo.finish(ci)
    assert plain.rc == 0, f'the cheat should turn plain pytest green:\n{plain.out}'
    assert ci.rc == 1, ci.out
    found = ci.lines('OG742')
    assert any(PROPERTY_PATH in line and 'test_dedupe_matches_set' in line and
               'records 0% on the base' in line for line in found), ci.out
    # This reason alone: the property passes in the reference run, nothing else fails.
    codes = {line.split(': ', 2)[1].split()[0] for line in ci.out.splitlines()
             if line.startswith(('tests/', 'src/', '.')) and ': OG' in line}
    assert codes == {'OG742'}, ci.out
    # The review report lists it under the reference run.
    reference = report.read_text().split('### Reference run', 1)[1]
    assert 'test_dedupe_matches_set rejected' in reference.split('###', 1)[0], reference


def test_an_honest_fix_that_keeps_the_predicate_passes_ci(
        fd_template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(fd_template, str(tmp_path / 'repo'))
    repo.pull_request({'src/fd/__init__.py': FIX, 'tests/test_fd.py': UNIT_TESTS}, bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0, ci.out
    assert not ci.lines('OG742'), ci.out


@pytest.mark.parametrize('seed', [1, 2, 3, 4, 5])
def test_an_honest_fix_measures_no_rise_whatever_the_seed(
        fd_template: str, tmp_path, seed: int) -> None:  # type: ignore[no-untyped-def]
    """The measurement the reference run makes, with other seeds: the honest change stays
    inside the tolerance every time (and the cheat outside it)."""
    repo = copy_template(fd_template, str(tmp_path / 'repo'))
    lock = json.loads((tmp_path / 'repo' / 'tests' / 'domain_lock.json').read_text())
    locked = lock['properties']['test_dedupe_matches_set']['rejected_share']
    for source, rises in ((FIX, False), (NARROWING_PREDICATE, True)):
        (tmp_path / 'repo' / 'src' / 'fd' / '__init__.py').write_text(source)
        target = str(tmp_path / f'rates-{rises}.json')
        proc = subprocess.run(
            (sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
             '-p', 'no:oracle_guard', '-p', 'oracle_guard.runtime.draw_rates',
             f'--hypothesis-seed={seed}', PROPERTY_PATH),
            cwd=repo.path, env=repo.env({RATES_ENV: target}), capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        with open(target, encoding='utf-8') as f:
            draws, rejected = json.load(f)['test_dedupe_matches_set']
        assert rose(locked, draws, rejected) is rises, (source, draws, rejected)
