"""Environment conditions and declared imports: rows 40 and 41."""
from __future__ import annotations

import ast

import pytest

from oracle_guard.reading.declared_dependencies import normalize
from oracle_guard.reading.env_conditions import ALWAYS
from oracle_guard.reading.env_conditions import ConditionReader
from oracle_guard.reading.env_conditions import ENVIRONMENT
from oracle_guard.reading.env_conditions import judge
from oracle_guard.reading.env_conditions import python_minors
from oracle_guard.reading.env_conditions import UNKNOWN
from oracle_guard.hooks.check_named_freezes import main

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python

HEADER = 'import os\nimport platform\nimport sys\nimport unittest\n\nimport pytest\n'


def run(repo, source, pyproject='[project]\nname = "app"\nrequires-python = ">=3.9"\n'):
    repo.write('pyproject.toml', pyproject)
    repo.write('tests/freeze_ledger.yaml', 'budget: 0\nfreezes: []\n')
    path = repo.write('tests/test_env.py', HEADER + source)
    repo.add()  # judged as a commit judges it: the staged side
    return repo.run(main, path)


# Row 40: an environment condition false somewhere in the matrix passes with no freeze.
HONEST = {
    'platform': '@pytest.mark.skipif(sys.platform == "win32", reason="no fork")\n',
    'startswith': '@pytest.mark.skipif(sys.platform.startswith("win"), reason="posix")\n',
    'version': '@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib")\n',
    'version slice': '@pytest.mark.skipif(sys.version_info[:2] >= (3, 13), reason="x")\n',
    'version attribute': '@pytest.mark.skipif(sys.version_info.minor == 12, reason="x")\n',
    'implementation': '@pytest.mark.skipif(sys.implementation.name == "pypy", reason="gc")\n',
    'python_implementation': '@pytest.mark.xfail(platform.python_implementation() == '
                             '"PyPy", reason="refcount")\n',
    'bitness': '@pytest.mark.skipif(sys.maxsize <= 2**32, reason="64-bit only")\n',
    'os.name': '@unittest.skipUnless(os.name == "posix", "posix only")\n',
    'system and machine': '@pytest.mark.skipif(platform.system() == "Darwin" and '
                          'platform.machine() == "arm64", reason="x")\n',
    'module-level name': 'IS_PYPY = sys.implementation.name == "pypy"\n'
                         'WINDOWS = os.name == "nt"\n\n'
                         '@pytest.mark.skipif(IS_PYPY or WINDOWS, reason="x")\n',
    'string condition': '@pytest.mark.skipif("sys.platform == \'win32\'")\n',
    'xfail condition keyword': '@pytest.mark.xfail(condition=sys.platform == "darwin", '
                               'reason="x")\n',
    'unittest skipIf': '@unittest.skipIf(sys.platform == "win32", "x")\n',
}


@pytest.mark.parametrize('decorator', HONEST.values(), ids=HONEST.keys())
def test_environment_skip_false_somewhere_passes_without_a_freeze(repo, decorator):
    result = run(repo, decorator + 'def test_a():\n    assert 1\n')
    assert (result.rc, result.out) == (0, '')


# Row 41: true everywhere is a silence in disguise.
DISGUISED = {
    'True': '@pytest.mark.skipif(True, reason="later")\n',
    'platform never named': '@pytest.mark.skipif(sys.platform != "nope", reason="x")\n',
    'python 2': '@pytest.mark.skipif(sys.version_info > (2,), reason="x")\n',
    'tautology': '@pytest.mark.skipif(sys.platform == "linux" or sys.platform != "linux", '
                 'reason="x")\n',
    'bound name': 'ALWAYS = sys.maxsize > 0\n\n@pytest.mark.skipif(ALWAYS, reason="x")\n',
    'skipUnless false': '@unittest.skipUnless(sys.platform == "plan9", "x")\n',
    'string': '@pytest.mark.skipif("sys.version_info >= (3,)")\n',
    'xfail': '@pytest.mark.xfail(1 == 1, reason="x")\n',
    'below requires-python': '@pytest.mark.skipif(sys.version_info >= (3, 9), reason="x")\n',
}


@pytest.mark.parametrize('decorator', DISGUISED.values(), ids=DISGUISED.keys())
def test_condition_true_in_every_environment_fails(repo, decorator):
    result = run(repo, decorator + 'def test_a():\n    assert 1\n')
    assert result.rc == 1
    assert result.codes == ['OG320']
    assert 'silence in disguise' in result.out


@pytest.mark.parametrize('condition', [
    'os.environ.get("CI")', 'HAS_NUMPY', 'sys.platform == os.environ["P"]',
    'shutil.which("git") is None',
])
def test_condition_that_is_not_an_environment_fact_needs_a_freeze(repo, condition):
    source = f'@pytest.mark.skipif({condition}, reason="x")\ndef test_a():\n    assert 1\n'
    assert run(repo, source).codes == ['OG301']


def test_a_rebound_module_name_is_not_evaluable(repo):
    source = ('IS_WIN = sys.platform == "win32"\nIS_WIN = True\n\n'
              '@pytest.mark.skipif(IS_WIN, reason="x")\ndef test_a():\n    assert 1\n')
    assert run(repo, source).codes == ['OG301']


def test_requires_python_limits_the_versions_of_the_matrix(repo):
    source = ('@pytest.mark.skipif(sys.version_info >= (3, 9), reason="x")\n'
              'def test_a():\n    assert 1\n')
    assert run(repo, source, '[project]\nname = "a"\nrequires-python = ">=3.9"\n').codes == \
        ['OG320']
    assert run(repo, source, '[project]\nname = "a"\nrequires-python = ">=3.8"\n').rc == 0


@pytest.mark.parametrize('spec, minors', [
    ('>=3.9', tuple(range(9, 16))),
    ('>=3.8,<3.12', (8, 9, 10, 11)),
    ('~=3.10', tuple(range(10, 16))),
    ('==3.11.*', (11,)),
    ('>=3.9.2', tuple(range(9, 16))),
    ('>=2.7, !=3.0.*, !=3.1.*', tuple(range(2, 16))),
    (None, tuple(range(0, 16))),
])
def test_python_minors_of_requires_python(spec, minors):
    assert python_minors(spec) == minors


def verdict(expression: str, module: str = '') -> str:
    tree = ast.parse('import sys, os, platform\n' + module)
    reader = ConditionReader.of_tree(tree)
    return judge(reader, [ast.parse(expression, mode='eval').body], python_minors('>=3.9')).kind


def test_the_matrix_covers_platforms_implementations_and_bitness():
    assert verdict('sys.platform in ("linux", "darwin")') == ENVIRONMENT
    assert verdict('sys.platform in ("linux", "darwin", "win32")') == ALWAYS
    assert verdict('platform.python_implementation() in ("CPython", "PyPy")') == ALWAYS
    assert verdict('sys.maxsize > 2**31 - 1 or sys.maxsize == 2**31 - 1') == ALWAYS
    assert verdict('sys.maxsize > 2**32') == ENVIRONMENT
    assert verdict('os.name in ("posix", "nt")') == ALWAYS
    assert verdict('os.getenv("X")') == UNKNOWN


# Row 41, importorskip: a declared dependency (or optional-modules) passes, others fail.
PYPROJECT_DEPS = '''\
[project]
name = "app"
dependencies = ["PyYAML>=5"]

[project.optional-dependencies]
images = ["Pillow"]

[dependency-groups]
test = ["python-dateutil", {include-group = "other"}]

[tool.oracle-guard]
optional-modules = ["tomllib"]
'''


@pytest.mark.parametrize('module', ['yaml', 'PIL', 'PIL.Image', 'dateutil.parser', 'tomllib',
                                    'numpy', 'ruamel.yaml'])
def test_importorskip_of_a_declared_dependency_passes(repo, module):
    repo.write('requirements-dev.txt', '# dev\nnumpy>=1.20  # arrays\n-r base.txt\n')
    repo.write('requirements/docs.in', 'ruamel.yaml\n')
    source = f'def test_a():\n    pytest.importorskip({module!r})\n'
    assert run(repo, source, PYPROJECT_DEPS).rc == 0


def test_importorskip_of_an_undeclared_module_fails(repo):
    source = 'mod = pytest.importorskip("nosuchthing")\n\ndef test_a():\n    assert mod\n'
    result = run(repo, source, PYPROJECT_DEPS)
    assert result.codes == ['OG321']
    assert 'neither a declared dependency nor in optional-modules' in result.out


def test_names_are_compared_after_pep503_normalisation():
    assert normalize('Ruamel.YAML') == normalize('ruamel_yaml') == 'ruamel-yaml'


# Row 40b: an environment condition added to a test that ran at the base is a silence.
def _existing_test(repo, decorator='', body='def test_a():\n    assert 1\n'):
    run(repo, decorator + body)
    repo.commit('the test as it ran at the base')


@pytest.mark.parametrize('decorator', [HONEST['platform'], HONEST['unittest skipIf'],
                                       'pytestmark = pytest.mark.skipif(sys.platform != '
                                       '"win32", reason="flaky on linux")\n\n'],
                         ids=['skipif', 'unittest skipIf', 'module pytestmark'])
def test_environment_condition_added_to_an_existing_test_fails(repo, decorator):
    _existing_test(repo)
    result = run(repo, decorator + 'def test_a():\n    assert 1\n')
    assert result.codes == ['OG322']
    assert 'test_a, which ran without it at the base revision' in result.out


def test_environment_condition_of_an_existing_test_changed_fails(repo):
    _existing_test(repo, HONEST['platform'])
    result = run(repo, HONEST['platform'].replace('==', '!=') + 'def test_a():\n    assert 1\n')
    assert result.codes == ['OG322']


def test_environment_condition_kept_on_an_existing_test_passes(repo):
    _existing_test(repo, HONEST['platform'])
    result = run(repo, HONEST['platform'] + 'def test_a():\n    assert 2\n')
    assert (result.rc, result.out) == (0, '')


def test_environment_condition_on_a_test_new_next_to_an_existing_one_passes(repo):
    _existing_test(repo)
    result = run(repo, 'def test_a():\n    assert 1\n\n\n' + HONEST['platform'] +
                 'def test_b():\n    assert 1\n')
    assert (result.rc, result.out) == (0, '')


def test_environment_condition_added_in_a_range_fails(repo):
    _existing_test(repo)
    base = repo.git('rev-parse', 'HEAD').strip()
    run(repo, HONEST['platform'] + 'def test_a():\n    assert 1\n')
    repo.commit('skip on windows')
    result = repo.run(main, '--from-ref', base, '--to-ref', 'HEAD')
    assert result.codes == ['OG322']


def test_environment_condition_added_while_the_file_is_renamed_fails(repo):
    _existing_test(repo)
    repo.git('mv', 'tests/test_env.py', 'tests/test_env_renamed.py')
    repo.write('tests/test_env_renamed.py', HEADER + HONEST['platform'] +
               'def test_a():\n    assert 1\n')
    repo.add()
    result = repo.run(main)
    assert result.codes == ['OG322'], result.out


def test_an_environment_condition_reads_no_requirements_file(repo, monkeypatch):
    """Rule 40 judges a condition against requires-python alone: a commit that stages one
    lists no tracked path and reads no requirements file (those are rule 41's, for an
    importorskip), and the verdict is the one the whole project facts give."""
    repo.write('requirements-dev.txt', 'numpy>=1.20\n')
    repo.write('docs/requirements.txt', 'sphinx\n')
    run(repo, 'def test_a():\n    assert 1\n')
    repo.commit('a test and the project\'s requirements files')
    repo.write('tests/test_env.py', HEADER + HONEST['version'] + 'def test_b():\n    assert 2\n')
    repo.add()
    from oracle_guard.repo import gitrepo

    listings: list[tuple[str, ...]] = []
    real = gitrepo.run_git

    def counted(args, *rest, **options):  # type: ignore[no-untyped-def]
        if 'ls-files' in args:
            listings.append(tuple(args))
        return real(args, *rest, **options)

    monkeypatch.setattr(gitrepo, 'run_git', counted)

    result = repo.run(main)

    assert result.rc == 0, result.out
    # No listing of every tracked path (the requirements files' search); a listing of the
    # tests root for its helper modules (rule 14) names its folder.
    named = [args[args.index('--') + 1:] if '--' in args else () for args in listings]
    assert all(paths and '.' not in paths for paths in named), listings


def test_requires_python_of_setup_cfg_still_decides_the_matrix(repo):
    """requires-python comes from setup.cfg's python_requires when pyproject.toml has
    none: for a project of 3.11 and later, `>= (3, 11)` holds everywhere (rule 40: OG320),
    while the same condition passes for a project of 3.9 and later."""
    source = ('@pytest.mark.skipif(sys.version_info >= (3, 11), reason="x")\n'
              'def test_a():\n    assert 1\n')
    repo.write('setup.cfg', '[options]\npython_requires = >=3.11\n')
    assert run(repo, source, pyproject='[project]\nname = "app"\n').codes == ['OG320']
    repo.write('setup.cfg', '[options]\npython_requires = >=3.9\n')
    assert run(repo, source, pyproject='[project]\nname = "app"\n').rc == 0


def test_requires_python_of_pyproject_decides_and_setup_cfg_is_not_read(repo, monkeypatch):
    """pyproject.toml's requires-python decides the matrix over setup.cfg's; the matrix
    then needs nothing of setup.cfg (its dependencies are rule 41's, read only there)."""
    from oracle_guard.repo import tree_view

    reads = []
    real = tree_view.TreeView.read

    def read(self, path):  # type: ignore[no-untyped-def]
        reads.append(path)
        return real(self, path)

    monkeypatch.setattr(tree_view.TreeView, 'read', read)
    source = ('@pytest.mark.skipif(sys.version_info >= (3, 11), reason="x")\n'
              'def test_a():\n    assert 1\n')
    repo.write('setup.cfg', '[options]\npython_requires = >=3.9\n')
    result = run(repo, source, pyproject='[project]\nname = "app"\nrequires-python = ">=3.11"\n')
    assert result.codes == ['OG320'], result.out
    assert 'pyproject.toml' in reads and 'setup.cfg' not in reads, reads
