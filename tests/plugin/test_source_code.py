"""The test roots compiled from source in the gate's runs (runtime/source_code.py, rule 45).

A compiled cache that the code under test can write is not what runs under the plugin's
recording (``ORACLE_GUARD_RECORD``, as ``oracle-guard ci`` sets it): pytest's cache of a
rewritten test module, and Python's own ``__pycache__`` file of a helper module beside it.
Each cache is planted in the format the running pytest and Python accept (pytest 9 checks
the source's hash, pytest 8 its size and mtime), and shown to work first: plain pytest runs
the planted code. Real pytest processes in a real folder; nothing is mocked.
"""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

from _pytest.assertion import rewrite

STRONG_TEST = 'from helper import expected\n\n\ndef test_it():\n    assert expected() == 42\n'
HELPER = 'def expected():\n    return 42\n'
ANSWER = 'def expected():\n    return 41\n'  # what the test's own bytes are checked against


def project(tmp_path: Path) -> Path:
    (tmp_path / 'pyproject.toml').write_text('[project]\nname = "p"\nversion = "0.1"\n')
    tests = tmp_path / 'tests'
    tests.mkdir()
    (tests / 'test_it.py').write_text(STRONG_TEST.replace('42', '43'))
    (tests / 'helper.py').write_text(HELPER)
    return tmp_path


def pytest_run(root: Path, recorded: bool) -> tuple[int, str, list[dict]]:  # type: ignore[type-arg]
    """(exit code, output, events) of ``python -m pytest`` in ``root``; ``recorded``: with
    the plugin recording as the gate's runs do."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('PYTEST_', 'ORACLE_GUARD', 'PYTHONPYCACHEPREFIX',
                                'PYTHONDONTWRITEBYTECODE'))}
    args = [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests']
    record = root / 'record'
    if recorded:
        record.mkdir()
        env['ORACLE_GUARD_RECORD'] = str(record)
        args += ['-p', 'oracle_guard']
    proc = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True)
    events = [json.loads(line) for name in sorted(os.listdir(record))
              for line in (record / name).read_text().splitlines()] if recorded else []
    return proc.returncode, proc.stdout + proc.stderr, events


def plant_rewriter_cache(test_file: Path, code_source: str) -> None:
    """pytest's cache of ``test_file``, valid for its bytes, holding ``code_source``'s code."""
    code = compile(code_source, str(test_file), 'exec', dont_inherit=True)
    folder = test_file.parent / '__pycache__'
    folder.mkdir(exist_ok=True)
    pyc = folder / (test_file.name[:-3] + rewrite.PYC_TAIL)
    key_name = list(inspect.signature(rewrite._write_pyc_fp).parameters)[1]
    key = importlib.util.source_hash(test_file.read_bytes()) if key_name == 'source_hash' \
        else os.stat(test_file)  # pytest 8: the source's stat
    with open(pyc, 'wb') as fp:
        rewrite._write_pyc_fp(fp, key, code)  # type: ignore[arg-type]


def plant_python_cache(module: Path, code_source: str) -> None:
    """Python's own timestamp ``__pycache__`` file of ``module``, holding other code."""
    code = compile(code_source, str(module), 'exec', dont_inherit=True)
    stat = os.stat(module)
    header = importlib.util.MAGIC_NUMBER + b'\0\0\0\0' + \
        (int(stat.st_mtime) & 0xFFFFFFFF).to_bytes(4, 'little') + \
        (stat.st_size & 0xFFFFFFFF).to_bytes(4, 'little')
    pyc = Path(importlib.util.cache_from_source(str(module)))
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(header + marshal.dumps(code))


def compiled(events: list[dict], path: Path) -> list[str]:  # type: ignore[type-arg]
    real = os.path.realpath(path)
    return [e['sha256'] for e in events if e.get('event') == 'compiled' and e['path'] == real]


def test_a_planted_cache_of_a_rewritten_test_module_is_not_run(tmp_path: Path) -> None:
    root = project(tmp_path)
    test_file = root / 'tests' / 'test_it.py'
    plant_rewriter_cache(test_file, STRONG_TEST)  # the bytes say 43, the cache 42
    rc, out, _ = pytest_run(root, recorded=False)
    assert rc == 0, out  # plain pytest runs the planted code
    rc, out, events = pytest_run(root, recorded=True)
    assert rc == 1 and '1 failed' in out, out
    assert compiled(events, test_file) == [hashlib.sha256(test_file.read_bytes()).hexdigest()]


def test_a_planted_cache_of_a_helper_module_is_not_run_and_its_compile_is_said(
        tmp_path: Path) -> None:
    root = project(tmp_path)
    test_file, helper = root / 'tests' / 'test_it.py', root / 'tests' / 'helper.py'
    test_file.write_text(STRONG_TEST.replace('42', '41'))
    plant_python_cache(helper, ANSWER)  # the helper's bytes say 42, its cache 41
    rc, out, _ = pytest_run(root, recorded=False)
    assert rc == 0, out
    rc, out, events = pytest_run(root, recorded=True)
    assert rc == 1 and '1 failed' in out, out
    assert compiled(events, helper) == [hashlib.sha256(helper.read_bytes()).hexdigest()]
    finish = [e for e in events if e.get('event') == 'finish']
    assert os.path.realpath(helper) in finish[0]['imported'], finish
    assert finish[0]['foreign'] == {}, finish


def test_the_gate_names_a_file_of_the_oracle_that_ran_without_its_compile(tmp_path: Path) -> None:
    """OG737 (rule 45) from the events alone: a collected or imported ``.py`` file of the
    oracle with no compile in its process, and one whose module ran code its bytes do not
    compile to; a test collected from another kind of file (a YAML test) is not compiled."""
    from oracle_guard.gate.sealed import compiled_from_other_bytes
    from oracle_guard.runtime.run_record import record_of

    root = str(tmp_path)
    prop, helper, data = (os.path.join(root, 'tests', 'properties', name)
                          for name in ('test_p.py', '_expected.py', 'test_cases.yml'))
    events = [
        {'event': 'start'},
        {'event': 'compiled', 'path': helper, 'sha256': 'aa'},
        {'event': 'collected', 'items': [{'nodeid': 'tests/properties/test_p.py::test_p',
                                          'path': prop},
                                         {'nodeid': 'tests/properties/test_cases.yml::one',
                                          'path': data}]},
        {'event': 'finish', 'imported': [prop, helper],
         'foreign': {helper: ['expected at line 9']}},
    ]
    expected = {'tests/properties/test_p.py': 'bb', 'tests/properties/_expected.py': 'aa',
                'tests/properties/test_cases.yml': 'cc'}
    found = [(f.path, f.code, f.message) for f in
             compiled_from_other_bytes(record_of([('record-1.jsonl', events)]), root, expected)]
    assert found == [
        ('tests/properties/test_p.py', 'OG737', 'tests/properties/test_p.py, a file of the '
         'oracle, ran without being compiled from its bytes in the run (a cached compile was '
         "loaded: pytest's cache of rewritten modules or a __pycache__ file, which the code "
         'under test can write)'),
        ('tests/properties/_expected.py', 'OG737', 'tests/properties/_expected.py, a file of '
         'the oracle, ran code its bytes do not compile to (expected at line 9): its module '
         'was run from a planted compile, or a function was built under its name'),
    ]
