"""The gate never judges its own canaries. With the tests inside the package
(``calc/tests/``, a package of tests as in numpy or toolz), the twin canary beside a
property is a module of that tests package, not something planted under the production
package's name (OG714 in the test command, OG734 in the reference run). And the log says
of each planted failure what it is, so a person reading it is not alarmed."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import git
from builders.ci_repo import write
from oracle_guard.runtime.canary_items import PLANTED_TO_FAIL

# An honest change here must pass the whole gate, its reference run included.
pytestmark = pytest.mark.reference_run

FILES = {
    'pyproject.toml': '''\
        [project]
        name = "calc"
        version = "0.1"

        [tool.oracle-guard]
        src = ["calc/"]
        tests = ["calc/tests/"]
        properties = "calc/tests/properties/"
        ledger = "calc/tests/freeze_ledger.yaml"
        ''',
    'calc/__init__.py': 'def add(a, b):\n    return a + b\n',
    'calc/tests/__init__.py': '',
    'calc/tests/test_calc.py': '''\
        from calc import add


        def test_add():
            assert add(2, 3) == 5
        ''',
    'calc/tests/properties/__init__.py': '',
    'calc/tests/properties/test_props.py': '''\
        from calc import add


        def test_add_commutes():
            for a in range(5):
                assert add(a, 1) == add(1, a)
        ''',
    'calc/tests/freeze_ledger.yaml': 'budget: 1\nfreezes: []\n',
}
PYTEST = (sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-p', 'no:hypothesispytest')


@pytest.fixture(scope='module')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp('canaries-in-packages') / 'repo')
    subprocess.run(('git', 'init', '-q', '-b', 'main', path), check=True)
    write(path, FILES)
    git(path, 'add', '-A')
    git(path, 'commit', '-q', '-m', 'base')
    return path


def test_honest_pull_request_with_tests_inside_the_package_passes_and_says_what_failed(
        template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo: CiRepo = copy_template(template, str(tmp_path / 'repo'))
    repo.pull_request({
        'calc/__init__.py': 'def add(a, b):\n    return a + b\n\n\ndef double(a):\n'
                            '    return add(a, a)\n',
        'calc/tests/test_calc.py': FILES['calc/tests/test_calc.py'] + '''

        def test_double():
            from calc import double

            assert double(3) == 6
        '''}, bug=False)
    plain, ci = repo.both(PYTEST)
    assert 'OG714' not in ci.out and 'OG734' not in ci.out, ci.out
    assert ci.summary == f'oracle-guard ci: 0 finding(s); test command exited {plain.rc}', ci.out
    assert ci.rc == plain.rc == 0, plain.out
    # Every failure in the test command's log is a canary planted to fail, and says so.
    failed = int(re.search(r'(\d+) failed', ci.out).group(1))  # type: ignore[union-attr]
    assert failed >= 2 and ci.out.count(PLANTED_TO_FAIL) == failed, ci.out
