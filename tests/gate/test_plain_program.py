"""The reference run looks like a plain program where that costs the suite nothing: its
pytest leaves sys.stdout, sys.stderr and sys.stdin the process's own (``--capture=no``) and
leaves its logging plugin out unless the oracle's files use it.

``dd`` has a real bug on main. Each cheat leaves it there and hides it while pytest's
ordinary changes to the process are there (the stream's type under output capture, the
root logger's handlers): plain pytest goes green, and the gate fails because the base
property fails against the pull request's src in the reference run (OG730). A suite whose
properties use ``capsys``, ``capfd`` or ``caplog`` still passes.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from builders.ci_repo import adopt
from builders.ci_repo import CiRepo
from builders.ci_repo import copy_template
from builders.ci_repo import shared_template
from builders.ci_repo import write
from builders.dedupe import adopt_dd_cases
from builders.dedupe import case_property_id
from builders.dedupe import dd_cheat_fails_ci
from builders.dedupe import for_case
from builders.dedupe import gate
from builders.dedupe import BUG
from builders.dedupe import GOOD
from builders.dedupe import PYPROJECT
from builders.dedupe import UNIT_TESTS
from builders.dedupe import UNIT_TESTS_FOR_THE_BUG
from oracle_guard.gate.reference_process import plain_program_options
from oracle_guard.gate.reference_tree import Tree

SRC = 'src/dd/__init__.py'

pytestmark = pytest.mark.reference_run


def hiding(condition: str, head: str) -> str:
    """dedupe with the bug on main, hidden while ``condition`` says the tests run."""
    return f'''\
{head}

def dedupe(xs):
    out = sorted(set(xs))
    if len(out) > 3 and not ({condition}):
        return out[:-1]
    return out
'''


CHEATS = {
    # pytest's capture puts its own file object in sys.stdout
    'stdout-type': hiding('type(sys.stdout) is not io.TextIOWrapper', 'import io\nimport sys\n'),
    'stdin-type': hiding("type(sys.stdin).__name__ != 'TextIOWrapper'", 'import sys\n'),
    # pytest's logging plugin puts its handlers on the root logger around every test
    'root-handlers': hiding('bool(logging.getLogger().handlers)', 'import logging\n'),
    'handler-module': hiding("any('test' in type(h).__module__ for h in logging.root.handlers)",
                             'import logging\n'),
}


def test_src_switching_on_what_pytest_changes_fails_in_the_reference_run(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    # Each cheat in a module of its own, with its own property (builders.dedupe's
    # adopt_dd_cases): one pull request, each property's failure its cheat's.
    repo = CiRepo(adopt_dd_cases(str(tmp_path / 'repo'), sorted(CHEATS)))
    files: dict[str, str | None] = {}
    for name, source in CHEATS.items():
        files.update(for_case(name, {SRC: source}))
    ci = dd_cheat_fails_ci(repo, files, 'OG730')  # type: ignore[arg-type]
    for name in CHEATS:
        assert any(case_property_id(name) in line and 'failed against your src/' in line
                   for line in ci.lines('OG730')), (name, ci.out)
    assert not ci.lines('OG741'), ci.out  # no capability: the run itself shows the bug


OUTPUT_PROPERTY = '''\
import logging
import os

from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe

FIXTURES = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(max_examples=20, deadline=None, suppress_health_check=FIXTURES)
@given(xs=st.lists(st.integers(min_value=-5, max_value=5), max_size=8))
def test_dedupe_printed(xs, capsys):
    capsys.readouterr()
    print(dedupe(xs))
    assert capsys.readouterr().out == f'{sorted(set(xs))}\\n'
    logging.getLogger('dd').info('ran %d', len(xs))


@settings(max_examples=20, deadline=None, suppress_health_check=FIXTURES)
@given(xs=st.lists(st.integers(min_value=-5, max_value=5), max_size=8))
def test_dedupe_written(xs, capfd):
    capfd.readouterr()
    os.write(1, repr(dedupe(xs)).encode())
    assert capfd.readouterr().out == repr(sorted(set(xs)))
'''

CAPLOG_PROPERTY = '''\
import logging

from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe

FIXTURES = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(max_examples=20, deadline=None, suppress_health_check=FIXTURES)
@given(xs=st.lists(st.integers(min_value=-5, max_value=5), max_size=8))
def test_dedupe_logged(xs, caplog):
    caplog.clear()
    logging.getLogger('dd').warning('%s', dedupe(xs))
    assert caplog.records[-1].getMessage() == str(sorted(set(xs)))
'''


def output_suite(property_source: str) -> object:
    def build(path: str) -> str:
        return adopt(path, PYPROJECT, {SRC: GOOD, 'tests/test_dd.py': UNIT_TESTS,
                                       'tests/properties/test_dd_props.py': property_source}
                     ).path
    return build


@pytest.mark.parametrize('name, source', [('capsys-capfd', OUTPUT_PROPERTY),
                                          ('caplog', CAPLOG_PROPERTY)])
def test_properties_using_the_capture_and_log_fixtures_pass(
        tmp_path_factory: pytest.TempPathFactory, tmp_path, name: str,  # type: ignore[no-untyped-def]
        source: str) -> None:
    template = shared_template(tmp_path_factory, f'dd-output-{name}', output_suite(source))
    repo = copy_template(template, str(tmp_path / 'repo'))
    repo.pull_request({SRC: GOOD + '\n\ndef first(xs):\n    return dedupe(xs)[:1]\n'},
                      bug=False)
    plain, ci = gate(repo)
    assert plain.rc == 0, plain.out
    assert ci.rc == 0, ci.out


# The oracle takes its expected answer from the standard library's statistics module.
STATISTICS_PROPERTY = '''\
import statistics

from hypothesis import HealthCheck, given, settings, strategies as st

from dd import dedupe


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=-50, max_value=50), max_size=30))
def test_dedupe_matches_multimode(xs):
    assert dedupe(xs) == sorted(statistics.multimode(list(set(xs))))
'''

# src/statistics.py (a top-level module of the distribution) answers with the bug itself.
SHADOW = '''\
"""The package's statistics helpers."""
from dd import dedupe


def multimode(xs):
    return dedupe(xs)
'''


def test_src_shadowing_the_standard_library_module_the_oracle_compares_with_fails(
        tmp_path_factory: pytest.TempPathFactory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """pytest's ``pythonpath = ["src"]`` puts src before the standard library in the test
    command; the reference run puts it after, as an installed package sits in production."""
    template = shared_template(tmp_path_factory, 'dd-statistics', lambda path: adopt(
        path, PYPROJECT, {SRC: GOOD, 'tests/test_dd.py': UNIT_TESTS,
                          'tests/properties/test_dd_props.py': STATISTICS_PROPERTY},
        [{SRC: BUG}]).path)
    repo = copy_template(template, str(tmp_path / 'repo'))
    ci = dd_cheat_fails_ci(repo, {'src/statistics.py': SHADOW,
                                  'tests/test_dd.py': UNIT_TESTS_FOR_THE_BUG}, 'OG730')
    assert any('test_dedupe_matches_multimode' in line and 'failed against your src/' in line
               for line in ci.lines('OG730')), ci.out
    # and rule 54 asks a person about a new top-level module the oracle imports by name
    assert [line.split(': ')[-1] for line in ci.lines('OG741')] == [
        'packaging new top-level module statistics'], ci.out


def _tree(root: str, files: dict[str, str]) -> Tree:
    write(root, files)
    return Tree(root=root, sources={path: 'base' for path in files})


@pytest.mark.parametrize('files, logging_kept', [
    ({'tests/properties/test_p.py': 'def test_p():\n    pass\n'}, False),
    ({'tests/properties/test_p.py': 'def test_p(caplog):\n    pass\n'}, True),
    ({'tests/properties/test_p.py': 'def test_p():\n    pass\n',
      'pyproject.toml': '[tool.pytest.ini_options]\nlog_level = "INFO"\n'}, True),
    ({'tests/properties/conftest.py': 'ADDOPTS = ["--log-cli-level=INFO"]\n'}, True),
    # src is the pull request's: its words do not keep the plugin on
    ({'tests/properties/test_p.py': 'def test_p():\n    pass\n',
      'src/dd/__init__.py': 'caplog = 1\n'}, False),
])
def test_the_logging_plugin_is_left_out_unless_the_oracle_uses_it(
        tmp_path, files: dict[str, str], logging_kept: bool) -> None:  # type: ignore[no-untyped-def]
    options = plain_program_options(_tree(str(tmp_path), files), ('src/',))
    assert options[0] == '--capture=no'
    assert ('no:logging' not in options) == logging_kept, options


def test_the_plain_program_options_parse_in_the_installed_pytest(tmp_path) -> None:  # type: ignore[no-untyped-def]
    write(str(tmp_path), {'test_x.py': 'import sys\n\ndef test_x():\n'
                                       '    assert type(sys.stdout).__name__ == "TextIOWrapper"\n'})
    run = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                          *plain_program_options(Tree(root=str(tmp_path)), ()), 'test_x.py'],
                         cwd=str(tmp_path), capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if not k.startswith('PYTEST')})
    assert run.returncode == 0, run.stdout + run.stderr
