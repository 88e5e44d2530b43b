"""reading/setup_py: the keywords of a ``setup()`` call read without running setup.py,
literal values only; a computed one is named unread, never guessed."""
from __future__ import annotations

from oracle_guard.reading.setup_py import Extension
from oracle_guard.reading.setup_py import Find
from oracle_guard.reading.setup_py import read_setup_py

WANTED = frozenset(('packages', 'package_dir', 'ext_modules', 'install_requires',
                    'extras_require'))


def test_literal_values_names_bound_once_and_finders_are_read() -> None:
    call = read_setup_py(b'''\
import setuptools
from setuptools import Extension, find_packages

DEPS = ["attrs>=22"] + ["sortedcontainers"]
OPTIONS = dict(package_dir={"": "src"})

setuptools.setup(
    name="dd",
    version=open("VERSION").read(),
    packages=find_packages("src", exclude=["tests*"]),
    ext_modules=[Extension("dd._speed", sources=["src/dd/_speed.c"])],
    install_requires=DEPS,
    extras_require={"fast": "cython"},
    **OPTIONS,
)
''', WANTED)
    assert call is not None and call.found and call.unread == ()
    assert call.keywords == {
        'packages': Find('src', ('tests*',), ('*',)),
        'ext_modules': [Extension('dd._speed', ('src/dd/_speed.c',))],
        'install_requires': ['attrs>=22', 'sortedcontainers'],
        'extras_require': {'fast': 'cython'},
        'package_dir': {'': 'src'}}  # version: not wanted, not read, not unread


def test_computed_values_are_named_unread() -> None:
    call = read_setup_py(b'''\
import os
from setuptools import setup

DEPS = []
DEPS += ["attrs"]
setup(package_dir={"": os.path.join("src")}, install_requires=DEPS,
      packages=[p for p in os.listdir("src")])
''', WANTED)
    assert call is not None and call.keywords == {}
    assert call.unread == ('package_dir', 'install_requires', 'packages')
    assert {'src', 'attrs'} <= call.strings


def test_no_setup_call_and_not_python() -> None:
    call = read_setup_py(b'print("hello")\n', WANTED)
    assert call is not None and not call.found
    assert read_setup_py(b'def (:\n', WANTED) is None


def test_the_commands_it_replaces_and_whether_it_writes_files() -> None:
    call = read_setup_py(b'''\
from setuptools import setup

COMMANDS = {"build_py": BuildPy, "test": PyTest}
setup(cmdclass=COMMANDS)
''', WANTED)
    assert call is not None and call.commands == ('build_py', 'test') and not call.writes
    call = read_setup_py(b'import pathlib\nfrom setuptools import setup\n\n'
                         b'pathlib.Path("v.py").write_text("V = 1")\n'
                         b'setup(cmdclass=make_commands())\n', WANTED)
    assert call is not None and call.commands == ('*',) and call.writes
    reading = read_setup_py(b'from setuptools import setup\n\nsetup(long_description='
                            b'open("README.md").read().replace("a", "b"))\n', WANTED)
    assert reading is not None and not reading.writes
