"""The code check at the end of a recorded session (``RunRecorder._imported_code``, rule 45):
what it reads is bounded by the modules of the test roots the run imported, not by the
objects the tests made.

A suite whose tests make many objects through the package under test (here one class
with a million attributes, hung on a registry class of ``src``) gives the check nothing
more to read: classes of ``src`` are not walked. A function built under the name of a
test file, in a module imported after those objects were made, is still reported, and so
it is beside two classes of a test module that name each other (bidict's ``_inv_cls``),
which the check reads once each.
Real pytest processes with the plugin recording as the gate's runs do; nothing is mocked.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PYPROJECT = '''\
[project]
name = "pkg"
version = "0.1"

[tool.pytest.ini_options]
pythonpath = ["src"]

[tool.oracle-guard]
src = ["src/"]
'''
# The package under test keeps every class it makes on a registry class.
SRC = '''\
class Registry:
    pass


def make(name, size):
    cls = type(name, (), {f'a{i}': object() for i in range(size)})
    setattr(Registry, name, cls)
    return cls
'''
MAKES_OBJECTS = '''\
from pkg import make
from pkg import Registry


def test_makes_a_wide_class():
    assert len(vars(make('Wide', 1_000_001))) > 1_000_000
    assert Registry.Wide
'''
HONEST = '''\
class TestPlain:
    def test_it(self):
        assert sum([1, 2]) == 3
'''
# A function built at run time under this file's name: code its bytes do not compile to.
FORGED = HONEST + '''

import types as _types

_CODE = compile('def expected():\\n    return 41\\n', __file__, 'exec').co_consts[0]
TestPlain.expected = _types.FunctionType(_CODE, {})
'''

# Two classes of the test file that name each other, as a bidict class and its
# inverse class do.
CYCLE = '''

class Forward:
    pass


class Inverse:
    inverse = Forward


Forward.inverse = Inverse
'''


def project(tmp_path: Path, last_test: str) -> Path:
    (tmp_path / 'pyproject.toml').write_text(PYPROJECT)
    (tmp_path / 'src' / 'pkg').mkdir(parents=True)
    (tmp_path / 'src' / 'pkg' / '__init__.py').write_text(SRC)
    (tmp_path / 'tests').mkdir()
    (tmp_path / 'tests' / 'test_a_makes.py').write_text(MAKES_OBJECTS)
    (tmp_path / 'tests' / 'test_b_plain.py').write_text(last_test)
    return tmp_path


def finish_event(root: Path) -> dict:  # type: ignore[type-arg]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('PYTEST_', 'ORACLE_GUARD', 'PYTHONPYCACHEPREFIX'))}
    record = root / 'record'
    record.mkdir()
    env['ORACLE_GUARD_RECORD'] = str(record)
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           '-p', 'oracle_guard', 'tests'], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    events = [json.loads(line) for name in sorted(os.listdir(record))
              for line in (record / name).read_text().splitlines()]
    finish = [e for e in events if e.get('event') == 'finish']
    assert len(finish) == 1, events
    return finish[0]


def test_objects_the_tests_made_leave_a_forged_function_reported(tmp_path: Path) -> None:
    root = project(tmp_path, FORGED)
    finish = finish_event(root)
    forged = os.path.realpath(root / 'tests' / 'test_b_plain.py')
    assert finish['foreign'] == {forged: ['expected at line 1']}, finish['foreign']


def test_objects_the_tests_made_are_no_finding_on_an_honest_suite(tmp_path: Path) -> None:
    root = project(tmp_path, HONEST)
    finish = finish_event(root)
    assert finish['foreign'] == {}, finish['foreign']
    assert os.path.realpath(root / 'tests' / 'test_b_plain.py') in finish['imported']


def test_classes_that_name_each_other_are_read_once_and_a_forged_function_reported(
        tmp_path: Path) -> None:
    root = project(tmp_path, FORGED + CYCLE)
    finish = finish_event(root)  # it ends (the walk went round the two classes for ever)
    forged = os.path.realpath(root / 'tests' / 'test_b_plain.py')
    assert finish['foreign'] == {forged: ['expected at line 1']}, finish['foreign']
