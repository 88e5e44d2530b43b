"""Rule 54's packaging kind: which edits of the build configuration change where shipped
code comes from (gate/packaging). A source the head's configuration names outside the
``src`` roots, that the base did not name, is a use; a migration to another backend that
ships the same folders, a package list that gains a subpackage, a version bump, a
``setup.py`` refactor are not; what cannot be read statically is a note."""
from __future__ import annotations

import pytest

from oracle_guard.gate.packaging import build_sources
from oracle_guard.gate.packaging import new_sources

SETUPTOOLS = '''\
[build-system]
requires = ["setuptools>=61", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "dd"
version = "0.1"
dependencies = ["attrs>=22"]

[tool.setuptools.packages.find]
where = ["src"]
'''

FLIT = '''\
[build-system]
requires = ["flit_core>=3.4"]
build-backend = "flit_core.buildapi"

[project]
name = "dd"
version = "0.1"
'''

SETUP_PY = '''\
from setuptools import find_packages, setup

setup(
    name="dd",
    version="0.1",
    classifiers=["Programming Language :: Python :: 3.11"],
    install_requires=["attrs>=22"],
    package_dir={"": "src"},
    packages=find_packages("src"),
)
'''

# Code in three folders: the src root, a copy of the package beside it, the tests.
TREE = {'src/dd/__init__.py': '', 'src/dd/core.py': '', 'lib/dd/__init__.py': '',
        'tests/test_dd.py': '', 'README.md': ''}


def review(base: dict[str, str], head: dict[str, str]
           ) -> tuple[list[str], list[str]]:
    """(the uses' expressions, the notes) of the change from ``base`` to ``head``, files
    added to TREE, with ``src/`` the src root."""
    sides = []
    for files in (base, head):
        tree = {path: text.encode() for path, text in {**TREE, **files}.items()}
        sides.append((build_sources(tree.get, list(tree)), list(tree)))
    (before, _), (after, paths) = sides
    uses, notes = new_sources(before, after, paths,
                              lambda p: p == 'src' or p.startswith('src/'),
                              lambda p: p == 'tests' or p.startswith('tests/'))
    return [f'{path}: {use.expression}' for path, use in uses], \
        [f'{path}: {what}' for path, what in notes]


@pytest.mark.parametrize('base, head', [
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': SETUPTOOLS.replace('version = "0.1"', 'version = "0.2"')}),
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': SETUPTOOLS.replace('"setuptools>=61", "wheel"',
                                           '"setuptools>=68", "setuptools-scm"')}),
    # a build-system migration whose new backend ships the same package
    ({'pyproject.toml': SETUPTOOLS}, {'pyproject.toml': FLIT}),
    ({'pyproject.toml': FLIT}, {'pyproject.toml': SETUPTOOLS}),
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': FLIT + '\n[tool.flit.module]\nname = "dd"\n'}),
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': FLIT.replace('flit_core>=3.4', 'hatchling').replace(
         'flit_core.buildapi', 'hatchling.build')
      + '\n[tool.hatch.build.targets.wheel]\npackages = ["src/dd"]\n'}),
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': FLIT.replace('flit_core>=3.4', 'poetry-core').replace(
         'flit_core.buildapi', 'poetry.core.masonry.api')
      + '\n[tool.poetry]\npackages = [{include = "dd", from = "src"}]\n'}),
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': FLIT.replace('flit_core>=3.4', 'uv_build').replace(
         'flit_core.buildapi', 'uv_build')}),
    # a package list that gains a subpackage under the same src root
    ({'pyproject.toml': FLIT.replace('flit_core>=3.4', 'setuptools').replace(
        'flit_core.buildapi', 'setuptools.build_meta')
      + '\n[tool.setuptools]\npackage-dir = {"" = "src"}\npackages = ["dd"]\n'},
     {'pyproject.toml': FLIT.replace('flit_core>=3.4', 'setuptools').replace(
         'flit_core.buildapi', 'setuptools.build_meta')
      + '\n[tool.setuptools]\npackage-dir = {"" = "src"}\npackages = ["dd", "dd.text"]\n',
      'src/dd/text/__init__.py': ''}),
    # setup.py: metadata edits, and a refactor that names its values at module level
    ({'setup.py': SETUP_PY}, {'setup.py': SETUP_PY.replace('"0.1"', '"0.2"')}),
    ({'setup.py': SETUP_PY},
     {'setup.py': 'from setuptools import find_packages, setup\n\nWHERE = "src"\n'
                  'KWARGS = dict(package_dir={"": WHERE}, packages=find_packages(WHERE))\n\n'
                  'setup(name="dd", version=open("VERSION").read(), **KWARGS)\n'}),
    # setuptools to a setup.py of the same folders, and its own command class
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': SETUPTOOLS.split('[tool.setuptools')[0],
      'setup.py': SETUP_PY.replace('    name=', '    cmdclass={"test": PyTest},\n    name=')}),
])
def test_a_build_change_that_ships_from_the_same_src_is_no_use(
        base: dict[str, str], head: dict[str, str]) -> None:
    assert review(base, head) == ([], [])


@pytest.mark.parametrize('base, head, expected', [
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': SETUPTOOLS.replace('where = ["src"]', 'where = ["lib"]')},
     'pyproject.toml: [tool.setuptools] packages lib/dd'),
    ({'pyproject.toml': FLIT},
     {'pyproject.toml': FLIT + '\n[tool.setuptools]\npackage-dir = {"" = "lib"}\n'},
     None),  # flit builds it: setuptools' table is not read
    ({'pyproject.toml': SETUPTOOLS.split('[tool.setuptools')[0]},
     {'pyproject.toml': SETUPTOOLS.split('[tool.setuptools')[0]
      + '[tool.setuptools]\npackage-dir = {"" = "lib"}\n'},
     'pyproject.toml: [tool.setuptools] package-dir lib/dd'),
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': FLIT.replace('flit_core>=3.4', 'hatchling').replace(
         'flit_core.buildapi', 'hatchling.build')
      + '\n[tool.hatch.build.targets.wheel]\npackages = ["lib/dd"]\n'},
     'pyproject.toml: [tool.hatch.build.targets.wheel] packages lib/dd'),
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': FLIT.replace('flit_core>=3.4', 'poetry-core').replace(
         'flit_core.buildapi', 'poetry.core.masonry.api')
      + '\n[tool.poetry]\npackages = [{include = "dd", from = "lib"}]\n'},
     'pyproject.toml: [tool.poetry] packages lib/dd'),
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': SETUPTOOLS.replace('"setuptools.build_meta"',
                                           '"backend"\nbackend-path = ["."]')},
     'pyproject.toml: [build-system] backend-path .'),
    ({'pyproject.toml': SETUPTOOLS},
     {'pyproject.toml': SETUPTOOLS + '\n[tool.setuptools.cmdclass]\nbuild_py = "hook.BuildPy"\n',
      'hook.py': 'class BuildPy: ...\n'},
     'pyproject.toml: [tool.setuptools] cmdclass hook.py'),
    ({'setup.py': SETUP_PY}, {'setup.py': SETUP_PY.replace('{"": "src"}', '{"": "lib"}')},
     'setup.py: setup() package_dir lib/dd'),
    ({'setup.py': SETUP_PY}, {'setup.py': SETUP_PY.replace('find_packages("src")', (
        'find_packages(exclude=["*.tests", "*.tests.*", "tests.*", "tests"])')).replace(
        'package_dir={"": "src"},\n', ''), 'dd/__init__.py': ''},
     'setup.py: setup() packages dd'),
    ({'setup.py': SETUP_PY},
     {'setup.py': SETUP_PY.replace('{"": "src"}', '{"dd": "lib/dd"}')},
     'setup.py: setup() package_dir lib/dd'),
    # computed, and a literal names the other folder
    ({'setup.py': SETUP_PY},
     {'setup.py': 'import os\n' + SETUP_PY.replace(
         '{"": "src"}', '{"": os.path.join("lib")}').replace('"src"', '"lib"')},
     'setup.py: setup() packages lib/dd'),
    ({'setup.py': SETUP_PY},
     {'setup.py': 'import os\n' + SETUP_PY.replace(
         '{"": "src"}', '{"": os.path.join("lib")}').replace(
         'find_packages("src")', '[p for p in os.listdir(".")]')},
     'setup.py: setup.py names lib'),
])
def test_a_new_source_outside_the_src_roots_is_a_use(
        base: dict[str, str], head: dict[str, str], expected: str | None) -> None:
    assert review(base, head)[0] == ([expected] if expected else [])


def test_a_source_the_base_named_already_is_no_use() -> None:
    lib = SETUPTOOLS.replace('where = ["src"]', 'where = ["lib"]')
    assert review({'pyproject.toml': lib},
                  {'pyproject.toml': lib.replace('"0.1"', '"0.2"')}) == ([], [])
    assert review({'pyproject.toml': lib},
                  {'pyproject.toml': FLIT.replace('flit_core>=3.4', 'hatchling').replace(
                      'flit_core.buildapi', 'hatchling.build')
                   + '\n[tool.hatch.build.targets.wheel]\npackages = ["lib/dd"]\n'}) \
        == ([], [])


def test_what_cannot_be_read_statically_is_said_not_flagged() -> None:
    computed = 'import os\n' + SETUP_PY.replace(
        '{"": "src"}', '{"": os.environ.get("WHERE", "s" + "rc")}')
    assert review({'setup.py': SETUP_PY}, {'setup.py': computed}) == (
        [], ['setup.py: setup() computes package_dir at run time'])
    # an edit of a setup.py already computed is said again
    assert review({'setup.py': computed}, {'setup.py': computed.replace('"0.1"', '"0.2"')}) \
        == ([], ['setup.py: setup() computes package_dir at run time'])
    meson = FLIT.replace('flit_core>=3.4', 'meson-python').replace('flit_core.buildapi',
                                                                   'mesonpy')
    assert review({'pyproject.toml': SETUPTOOLS}, {'pyproject.toml': meson}) == (
        [], ['pyproject.toml: build-backend mesonpy, not one the gate reads'])


BUILD_PY = '''\
class BuildPy(build_py):
    def run(self):
        super().run()
        shutil.copytree("lib/dd", os.path.join(self.build_lib, "dd"), dirs_exist_ok=True)


'''


@pytest.mark.parametrize('head, expected', [
    # a build command of setup.py's own that copies the other folder over the package
    ({'setup.py': 'import os\nimport shutil\n' + SETUP_PY.replace('setup(\n', BUILD_PY + (
        'setup(\n    cmdclass={"build_py": BuildPy},\n'))},
     (['setup.py: setup.py names lib/dd'], [])),
    # the same command copying what is under src already: said, not flagged
    ({'setup.py': 'import os\nimport shutil\n' + SETUP_PY.replace('setup(\n', BUILD_PY.replace(
        'lib/dd', 'src/dd') + 'setup(\n    cmdclass=dict(build_py=BuildPy),\n')},
     ([], ['setup.py: setup() replaces the build_py command; setup.py copies or writes files '
           'when it runs'])),
    # a test command is no build code; a version file written under src is said
    ({'setup.py': SETUP_PY.replace('    name=', '    cmdclass={"test": PyTest},\n    name=')},
     ([], [])),
    ({'setup.py': 'open("src/dd/_version.py", "w").write("V = 1")\n' + SETUP_PY},
     ([], ['setup.py: setup.py copies or writes files when it runs'])),
    # code installed as data: a module, a start-up hook
    ({'setup.py': SETUP_PY.replace('    name=', '    data_files=[("lib", ["lib/dd/__init__.py"])],'
                                              '\n    name=')},
     (['setup.py: setup() data_files lib/dd/__init__.py'], [])),
    ({'pyproject.toml': SETUPTOOLS + '\n[tool.setuptools.data-files]\n"." = ["*.pth"]\n',
      'hook.pth': 'import dd_hook\n'},
     (['pyproject.toml: [tool.setuptools] data-files hook.pth'], [])),
    ({'pyproject.toml': SETUPTOOLS + '\n[tool.setuptools.data-files]\n"share" = ["data/*"]\n',
      'data/icon.png': ''},
     ([], [])),
])
def test_build_code_and_data_files(head: dict[str, str],
                                   expected: tuple[list[str], list[str]]) -> None:
    base = {'setup.py': SETUP_PY} if 'setup.py' in head else {'pyproject.toml': SETUPTOOLS}
    assert review(base, head) == expected


POETRY = FLIT.replace('flit_core>=3.4', 'poetry-core').replace(
    'flit_core.buildapi', 'poetry.core.masonry.api') + '\n[tool.poetry]\n'
HATCH = FLIT.replace('flit_core>=3.4', 'hatchling').replace('flit_core.buildapi',
                                                           'hatchling.build')


@pytest.mark.parametrize('head, expected', [
    # the tests shipped in the sdist, or in the wheel under their own names: no new place
    ({'pyproject.toml': POETRY + 'packages = [{include = "dd", from = "src"}]\n'
                                 'include = [{path = "tests", format = "sdist"}]\n'}, []),
    ({'pyproject.toml': POETRY + 'packages = [{include = "dd", from = "src"}]\n'
                                 'include = ["tests/*.py"]\n'}, []),
    ({'pyproject.toml': HATCH + '\n[tool.hatch.build]\ninclude = ["/src", "/tests"]\n'}, []),
    # but a package folder mapped to the tests ships them as the package
    ({'pyproject.toml': SETUPTOOLS.split('[tool.setuptools')[0]
      + '[tool.setuptools]\npackage-dir = {"dd" = "tests/fake_dd"}\npackages = ["dd"]\n',
      'tests/fake_dd/__init__.py': ''},
     ['pyproject.toml: [tool.setuptools] package-dir tests/fake_dd']),
    ({'pyproject.toml': HATCH + '\n[tool.hatch.build.targets.wheel]\n'
                                'only-include = ["tests/fake_dd"]\n'
                                'sources = {"tests/fake_dd" = "dd"}\n',
      'tests/fake_dd/__init__.py': ''},
     ['pyproject.toml: [tool.hatch.build.targets.wheel] only-include tests/fake_dd']),
])
def test_the_tests_shipped_under_their_own_names(head: dict[str, str],
                                                 expected: list[str]) -> None:
    assert review({'pyproject.toml': SETUPTOOLS}, head)[0] == expected


def test_find_packages_finds_folders_with_an_init() -> None:
    """setup.py's find_packages() from the root: a folder of scripts is no package; the
    search of pyproject.toml finds namespace packages too."""
    root = SETUP_PY.replace('find_packages("src")', 'find_packages()').replace(
        '{"": "src"}', '{}')
    scripts = {'bench/run.py': ''}
    assert review({'setup.py': SETUP_PY, **scripts}, {'setup.py': root, **scripts})[0] == []
    found = SETUPTOOLS.replace('where = ["src"]', 'where = ["."]')
    assert review({'pyproject.toml': SETUPTOOLS, **scripts},
                  {'pyproject.toml': found, **scripts})[0] == [
        'pyproject.toml: [tool.setuptools] packages bench', 'pyproject.toml: '
        '[tool.setuptools] packages lib']

