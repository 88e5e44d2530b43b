"""``oracle-guard init`` on the layouts real projects have (section 8 of docs/adoption.md):
tests inside the package, property tests named in place, what pytest does not collect,
no Hypothesis at all, and a ``.pre-commit-config.yaml`` pre-commit cannot load. Each
adoption commit passes as init wrote it; the next cheat is still blocked."""
from __future__ import annotations

import json
import os
import sys

from builders.pre_commit import HookRepo
from builders.pre_commit import pre_commit
from builders.pre_commit import run
from builders.repos import Repo
from oracle_guard.cli import main as cli
from oracle_guard.commands.init import main as init
from oracle_guard.config import load_config

GIVEN = '''\
from hypothesis import given, strategies as st

from pkg import add


@given(st.integers(), st.integers())
def test_add_commutes(a, b):
    assert add(a, b) == add(b, a)
'''
MACHINE = '''\
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule


class Counter(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.total = 0

    @rule(n=st.integers(min_value=0, max_value=9))
    def add(self, n):
        self.total += n
        assert self.total >= 0


TestCounter = Counter.TestCase
'''
UNIT = 'from pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n'


def adopt(repo: Repo, *args: str) -> dict[str, object]:
    result = repo.run(init, *args)
    assert result.rc == 0, result.out + result.err
    repo.commit('Adopt oracle-guard')
    checked = repo.run(cli, 'check', '--all-files')
    assert checked.rc == 0, checked.out + checked.err
    return {'out': result.out, 'check': checked.out}


def test_init_takes_tests_inside_the_package_as_one_glob_and_keeps_oracle_files_at_the_top(
        repo: Repo, hook_repo: HookRepo) -> None:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('pkg/tests/__init__.py', '')
    repo.write('pkg/tests/test_core.py', UNIT)
    repo.write('pkg/algorithms/__init__.py', '')
    repo.write('pkg/algorithms/approximation/__init__.py', '')
    repo.write('pkg/algorithms/approximation/tests/test_approx.py', GIVEN + '\n\n' + UNIT)
    repo.commit('numpy-style layout')
    done = adopt(repo, '--hook-repo', hook_repo.path, '--rev', hook_repo.rev)
    cfg = load_config(repo.path)
    assert cfg.tests == ('pkg/**/tests/',) and cfg.src == ('pkg/',)
    assert cfg.properties == ('pkg/algorithms/approximation/tests/test_approx.py',)
    assert cfg.ledger == 'oracle-guard/freeze_ledger.yaml', done['out']
    assert not any('tests/' in path for path in (cfg.ledger, cfg.domain_lock, cfg.baseline))
    lock = json.loads(repo.read(cfg.domain_lock))['properties']
    assert 'test_add_commutes' in lock
    env = hook_repo.env()
    ran = pre_commit('run', '--all-files', cwd=repo.path, env=env)
    assert ran.rc == 0, ran.out
    assert pre_commit('install', cwd=repo.path, env=env).rc == 0
    # An ordinary change: code and a unit test inside the package together.
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return b + a\n')
    repo.write('pkg/tests/test_core.py', UNIT + '\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n')
    ok = run(('git', 'commit', '-qam', 'code with its test'), repo.path, env)
    assert ok.rc == 0, ok.out
    # The cheat: the property edited next to the code.
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b + 0\n')
    prop = 'pkg/algorithms/approximation/tests/test_approx.py'
    repo.write(prop, GIVEN.replace('assert add(a, b) == add(b, a)', 'assert True') + '\n\n' + UNIT)
    blocked = run(('git', 'commit', '-qam', 'cheat'), repo.path, env)
    assert blocked.rc != 0 and blocked.has('OG201', prop), blocked.out


def test_init_names_hypothesis_files_in_place_and_moves_nothing(repo: Repo) -> None:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('src/pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/conftest.py', 'import pytest\n\n\n@pytest.fixture\ndef one():\n    return 1\n')
    repo.write('tests/test_core.py', UNIT)
    repo.write('tests/test_hypothesis.py', GIVEN)
    repo.write('tests/test_stateful.py', MACHINE)
    repo.commit('hypothesis among the others')
    before = sorted(repo.git('ls-files').split())
    done = adopt(repo)
    cfg = load_config(repo.path)
    assert cfg.properties == ('tests/test_hypothesis.py', 'tests/test_stateful.py'), done['out']
    assert 'named in place, nothing moved' in str(done['out'])
    after = set(repo.git('ls-files').split())
    assert set(before) <= after  # nothing was moved


def test_init_never_takes_what_pytest_does_not_collect(repo: Repo) -> None:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n\n'
               '[tool.pytest.ini_options]\ntestpaths = ["testing"]\n'
               'norecursedirs = ["testing/example_scripts", ".*"]\n')
    repo.write('src/pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('testing/test_core.py', UNIT)
    repo.write('testing/example_scripts/tests/properties/test_x.py', GIVEN)
    repo.write('bench/tests/test_speed.py', GIVEN)  # outside testpaths
    repo.commit('pytest-style layout')
    done = adopt(repo)
    cfg = load_config(repo.path)
    assert cfg.tests == ('testing/',), done['out']
    assert cfg.properties == ()
    assert cfg.ledger == 'testing/freeze_ledger.yaml'
    # The data folder's tests are recorded as left out by the configuration.
    excluded = json.loads(repo.read(cfg.baseline))['excluded']
    assert [e['nodeid'] for e in excluded] == [
        'testing/example_scripts/tests/properties/test_x.py::test_add_commutes']


def test_without_hypothesis_tests_init_says_so_and_the_properties_check_waits_with_a_note(
        repo: Repo) -> None:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_core.py', UNIT)
    repo.commit('no properties')
    done = adopt(repo)
    assert 'properties: none named' in str(done['out'])
    assert 'properties = []' in repo.read('pyproject.toml').decode()
    assert 'no property tests are named yet' in str(done['check'])
    # Once a person names the file, the lane judges it like any other.
    text = repo.read('pyproject.toml').decode().replace(
        'properties = []', 'properties = ["tests/test_core.py"]')
    repo.write('pyproject.toml', text)
    repo.commit('name the property tests')
    assert repo.run(cli, 'check', '--all-files').rc == 0
    repo.write('tests/test_core.py', 'def test_add():\n    pass\n')
    repo.commit('hollow it out')
    hollow = repo.run(cli, 'check', '--all-files')
    assert hollow.rc == 1 and 'OG403' in hollow.out, hollow.out


def test_init_does_not_propose_a_hypothesis_module_with_a_test_that_asserts_nothing(
        repo: Repo) -> None:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_props.py', GIVEN + '\n\ndef test_placeholder():\n    pass\n')
    repo.write('tests/test_more.py', GIVEN.replace('test_add_commutes', 'test_add_again'))
    repo.commit('a placeholder among the properties')
    done = adopt(repo)
    assert load_config(repo.path).properties == ('tests/test_more.py',)
    assert 'tests/test_props.py holds Hypothesis tests but also a test that asserts nothing' \
        in str(done['out'])


def test_init_leaves_a_pre_commit_config_pre_commit_cannot_load_untouched(repo: Repo) -> None:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_core.py', UNIT)
    dialect = 'repos:\n  - repo: https://example.invalid/linters\n    hooks:\n      - id: lint\n'
    repo.write('.pre-commit-config.yaml', dialect)
    repo.commit('another runner')
    result = repo.run(init, '--hook-repo', 'https://example.invalid/oracle-guard', '--rev', 'v1')
    assert result.rc == 1
    assert repo.read('.pre-commit-config.yaml').decode() == dialect
    assert 'pre-commit cannot load it as it is' in result.err and 'rev' in result.err
    assert '- repo: https://example.invalid/oracle-guard\n    rev: v1\n' in result.err
    # Everything else is written, and the adoption commit passes.
    assert os.path.exists(os.path.join(repo.path, 'tests/freeze_ledger.yaml'))
    repo.commit('Adopt oracle-guard')
    assert repo.run(cli, 'check', '--all-files').rc == 0


def test_init_takes_tests_at_the_top_and_inside_the_package_together(repo: Repo) -> None:
    """A test inside the package left out of `tests` would count as production code."""
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('pkg/tests/test_inner.py', 'import pytest\n\n\n' + UNIT)
    repo.write('tests/test_outer.py', UNIT)
    repo.commit('tests in both places')
    adopt(repo)
    cfg = load_config(repo.path)
    assert cfg.tests == ('tests/', 'pkg/tests/')
    assert not cfg.is_src('pkg/tests/test_inner.py') and cfg.is_src('pkg/__init__.py')


STRATEGIES = '''\
from hypothesis import assume, strategies as st


def pairs():
    """Strategies the package ships for its users' tests."""
    return st.tuples(st.integers(), st.integers()).map(_ordered)


def _ordered(pair):
    assume(pair[0] != pair[1])
    return tuple(sorted(pair))
'''


def test_init_lists_the_hypothesis_modules_src_uses_already_in_src_test_imports(
        repo: Repo) -> None:
    # A package that ships strategies calls assume() in its own code: the gate judges
    # every discarded example at run time (rule 43), so the code that predates the guard
    # is listed at adoption, not failed on every pull request.
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('src/pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('src/pkg/strategies.py', STRATEGIES)
    repo.write('tests/test_hypothesis.py', GIVEN)
    repo.commit('a package with strategies of its own')
    done = adopt(repo)
    cfg = load_config(repo.path)
    assert 'hypothesis.assume' in cfg.src_test_imports, done['out']
    assert all(m.split('.')[0] == 'hypothesis' for m in cfg.src_test_imports)
    assert 'found src-test-imports: ' in str(done['out'])


def test_init_lists_nothing_in_src_test_imports_when_src_uses_no_hypothesis(
        repo: Repo) -> None:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('src/pkg/__init__.py', '"""No hypothesis here, only the word."""\n'
                                      'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_hypothesis.py', GIVEN)
    repo.commit('a package without')
    adopt(repo)
    assert load_config(repo.path).src_test_imports == ()
    assert b'src-test-imports' not in repo.read('pyproject.toml')


def test_init_puts_the_fixture_root_aside_when_the_tests_fixtures_folder_is_a_package(
        repo: Repo) -> None:
    # django's tests/fixtures/ is one of its test apps (models, tests, and data files in a
    # fixtures/ folder of its own): its modules are code of the suite, not fixture files.
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_core.py', UNIT)
    repo.write('tests/fixtures/__init__.py', '')
    repo.write('tests/fixtures/models.py', 'NAMES = ("a", "b")\n')
    repo.write('tests/fixtures/test_fixtures.py',
               'from fixtures.models import NAMES\n\n\ndef test_names():\n'
               '    assert NAMES == ("a", "b")\n')
    repo.write('tests/fixtures/fixtures/db.json', '[]\n')
    repo.commit('a test app named fixtures')
    done = adopt(repo)
    cfg = load_config(repo.path)
    # Its data folder (no Python file below it) is guarded beside the fixture root.
    assert cfg.fixtures == ('tests/oracle-guard-fixtures/', 'tests/fixtures/fixtures/'), \
        done['out']
    assert 'tests/fixtures/ is a Python package' in str(done['out'])
    manifest = json.loads(repo.read(cfg.manifest))
    assert list(manifest['fixtures']) == ['tests/fixtures/fixtures/db.json']
    # An edit of the test app's code is a test change like any other, not a fixture
    # changed behind the manifest's back.
    repo.write('tests/fixtures/models.py', 'NAMES = ("a", "b")  # the two names\n')
    repo.git('add', 'tests/fixtures/models.py')
    checked = repo.run(cli, 'check')
    assert checked.rc == 0, checked.out + checked.err


def test_init_proposes_a_property_module_a_conftest_ignores_only_on_other_interpreters(
        repo: Repo) -> None:
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/conftest.py', 'import sys\n\ncollect_ignore = []\n'
                                    'if sys.version_info < (3, 0):\n'
                                    '    collect_ignore.append("test_hypothesis.py")\n'
                                    'if sys.platform == "nope":\n'
                                    '    pass\n'
                                    'else:\n'
                                    '    collect_ignore.append("test_stateful.py")\n')
    repo.write('tests/test_hypothesis.py', GIVEN)
    repo.write('tests/test_stateful.py', MACHINE)
    repo.commit('a conftest that leaves tests out on some interpreters')
    done = adopt(repo)
    cfg = load_config(repo.path)
    # pytest collects test_hypothesis.py here (the if is false); test_stateful.py it does not.
    assert cfg.properties == ('tests/test_hypothesis.py',), done['out']


CASES = '''\
import json
import os

from pkg import add

HERE = os.path.dirname(os.path.abspath(__file__))


def load_cases():
    for root, _, names in os.walk(HERE):
        for name in names:
            if name.endswith('.json'):
                with open(os.path.join(root, name)) as f:
                    for case in json.load(f):
                        yield case['a'], case['b'], case['sum']


def test_cases():
    for a, b, total in load_cases():
        assert add(a, b) == total
'''


def test_init_keeps_oracle_files_out_of_a_tests_folder_the_suite_walks(
        repo: Repo, hook_repo: HookRepo) -> None:
    """jmespath's layout: a test module loads every .json under its own folder as a case;
    the oracle files (JSON too) must not land there, or adoption breaks the suite."""
    repo.write('pyproject.toml', '[project]\nname = "pkg"\nversion = "1"\n')
    repo.write('pkg/__init__.py', 'def add(a, b):\n    return a + b\n')
    repo.write('tests/test_cases.py', CASES)
    repo.write('tests/compliance/add.json', '[{"a": 1, "b": 2, "sum": 3}]\n')
    repo.commit('a suite that walks its folder')
    done = adopt(repo, '--hook-repo', hook_repo.path, '--rev', hook_repo.rev)
    cfg = load_config(repo.path)
    assert cfg.tests == ('tests/',)
    assert cfg.manifest == 'oracle-guard/fixtures/manifest.json', done['out']
    assert not any(p.startswith('tests/') for p in (cfg.ledger, cfg.domain_lock, cfg.baseline,
                                                   cfg.manifest, cfg.traces))
    assert 'tests/test_cases.py reads the files under its folder' in str(done['out'])
    ran = run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'],
              repo.path, hook_repo.env())
    assert ran.rc == 0, ran.out
