"""The one-file commit of check-freeze-ledger, check-generator-lock and check-named-freezes
imports only what the staged change needs: a test file without a property or a silence,
against a ledger without rows and a lock, needs no YAML library, no parser, no
dataclasses, no typing, no date and no domain lock (nor JSON) read."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = ('yaml', 'ast', 'dataclasses', 'inspect', 'typing', 'datetime', 'json',
         'oracle_guard.reading.scanner', 'oracle_guard.reading.property_reader',
         'oracle_guard.oracle.domain_lock')  # the lock's reader: no property, no lock read


def imported_during_commit(repo, module: str) -> tuple[int, set[str]]:  # type: ignore[no-untyped-def]
    code = (f'import sys; from {module} import main; rc = main([]); '
            f'print(rc, " ".join(m for m in {HEAVY!r} if m in sys.modules))')
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, '-c', code], cwd=repo.path, env=env,
                         capture_output=True, text=True, check=True).stdout
    out = out.splitlines()[-1].split()  # after the findings, the line the -c program prints
    return int(out[0]), set(out[1:])


@pytest.mark.parametrize('module', ['oracle_guard.hooks.check_freeze_ledger',
                                    'oracle_guard.hooks.check_generator_lock',
                                    'oracle_guard.hooks.check_named_freezes'])
def test_a_commit_of_a_test_file_without_properties_imports_nothing_heavy(guarded, module):
    guarded.write('tests/test_app.py', 'def test_other():\n    assert 1\n')
    guarded.add()
    if module.endswith('generator_lock'):
        # The first run in a repository learns what its properties import (rule 23
        # through helper modules, reading/import_closure.py): it parses them, once.
        assert imported_during_commit(guarded, module)[0] == 0

    rc, heavy = imported_during_commit(guarded, module)

    assert rc == 0
    assert heavy == set()


def test_without_the_closure_cache_the_first_commit_imports_nothing_heavy(guarded,
                                                                          monkeypatch):
    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '0')  # the git grep of the importers
    guarded.write('tests/test_app.py', 'def test_other():\n    assert 1\n')
    guarded.add()

    rc, heavy = imported_during_commit(guarded, 'oracle_guard.hooks.check_generator_lock')

    assert rc == 0
    assert heavy == set()


@pytest.mark.parametrize('helper', ['', 'def make():\n    return 1\n'])
def test_a_commit_of_a_test_file_importing_a_quiet_module_imports_nothing_heavy(
        guarded, helper):
    # rule 14 through helpers: the imports are read without ast, the helper by its bytes
    if helper:
        guarded.write('tests/helpers.py', helper)
    guarded.write('tests/test_app.py', 'from app import parse\n' +
                  ('from helpers import make\n' if helper else '') +
                  '\n\ndef test_other():\n    assert parse(b"x")\n')
    guarded.add()

    rc, heavy = imported_during_commit(guarded, 'oracle_guard.hooks.check_named_freezes')

    assert rc == 0
    assert heavy == set()


def test_a_commit_staging_a_property_still_reads_it(guarded):
    source = guarded.read('tests/properties/test_parse.py').decode()
    guarded.write('tests/properties/test_parse.py', source.replace(
        'import given,', 'import given, settings,').replace('@given', '@settings(max_examples=5)\n@given'))
    guarded.add()

    rc, heavy = imported_during_commit(guarded, 'oracle_guard.hooks.check_generator_lock')

    assert rc == 1  # the property is narrower than its lock entry now
    assert {'ast', 'oracle_guard.reading.property_reader'} <= heavy


def test_a_commit_judging_a_baselined_silence_imports_no_dataclasses_nor_hashlib(guarded):
    """Rule 39 on the commit path: the baseline, the judge and the environment
    conditions are slotted records, the digest comes from CPython's own SHA-256 module,
    and the verdict is the same (the baselined skip passes, a new one fails)."""
    import hashlib

    from oracle_guard.commands.baseline import main as baseline_main
    from oracle_guard.oracle.baseline import normalized_expression
    from oracle_guard.oracle.baseline import silence_digest
    from oracle_guard.reading.scanner import scan_file

    legacy = ('import sys\n\nimport pytest\n\n\n@pytest.mark.skipif(sys.platform == "win32", '
              'reason="posix")\ndef test_posix():\n    pytest.skip("later")\n')
    guarded.write('tests/test_legacy.py', legacy)
    guarded.commit('legacy')
    assert guarded.run(baseline_main).rc == 0
    guarded.commit('baseline')
    guarded.write('tests/test_legacy.py', legacy + '    assert 1\n')
    guarded.add()
    module = 'oracle_guard.hooks.check_named_freezes'
    code = (f'import sys; from {module} import main; rc = main([]); '
            'print(rc, " ".join(m for m in ("dataclasses", "inspect", "typing", "hashlib") '
            'if m in sys.modules))')
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)}

    def run() -> tuple[str, list[str]]:
        out = subprocess.run([sys.executable, '-c', code], cwd=guarded.path, env=env,
                             capture_output=True, text=True, check=True).stdout
        return out, out.splitlines()[-1].split()

    assert run()[1] == ['0']  # accepted by the baseline, nothing heavy imported
    silences = scan_file(legacy.encode(), 'tests/test_legacy.py').silences
    assert len(silences) == 2
    for silence in silences:
        text = f'{silence.kind}\0{normalized_expression(silence)}'.encode()
        assert silence_digest(silence) == hashlib.sha256(text).hexdigest()
    guarded.write('tests/test_legacy.py', legacy + '    pytest.skip("new")\n')
    guarded.add()
    out, last = run()
    assert last == ['1'] and 'OG301' in out, out


@pytest.mark.parametrize('module', ['oracle_guard.hooks.check_freeze_ledger',
                                    'oracle_guard.hooks.check_fixture_manifest',
                                    'oracle_guard.hooks.forbid_mixed_oracle_diff'])
def test_a_glob_tests_root_costs_no_regular_expressions(guarded, module):
    """sympy's shape: tests = ["pkg/**/tests/"]. Matching a path against it needs no
    ``re``, on a commit of a test file or of a src module whose bytes name nothing of
    rule 43."""
    pyproject = guarded.read('pyproject.toml').decode().replace(
        'src = ["src/"]', 'src = ["src/"]\ntests = ["tests/", "src/**/tests/"]')
    assert pyproject != guarded.read('pyproject.toml').decode()
    guarded.write('pyproject.toml', pyproject)
    guarded.commit('a glob tests root')
    guarded.write('src/pkg/tests/test_inner.py', 'def test_inner():\n    assert 1\n')
    guarded.write('src/app.py', 'def parse(b):\n    return bytes(b)\n')
    guarded.add()
    code = (f'import sys; from {module} import main; rc = main([]); '
            'print(rc, " ".join(m for m in ("re", "typing") if m in sys.modules))')
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, '-c', code], cwd=guarded.path, env=env,
                         capture_output=True, text=True, check=True).stdout.splitlines()[-1]
    assert out.split() == ['0'], out
