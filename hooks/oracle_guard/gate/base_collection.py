"""What the base revision's own collection leaves out, so the record of adoption does not
outlive its reason (rule 39b).

The baseline's ``excluded`` list names the tests adoption's collection left out. A
conftest hook that leaves a test out may read ``src/``, so whether it still does is the
pull request's to choose; the record alone would let it. The gate therefore collects the
**base revision** once more: a fresh temporary tree holds every file of the base revision
(its tests, conftests, pytest configuration and ``src/``), read from git objects, none of
the pull request's; ``pytest --collect-only`` with the collection probe runs in it in a
fresh ``python -I`` process of the test environment. A recorded identity is accepted only
when that collection left it out too, and a case that collection kept which is gone from
the pull request's run (neither collected nor deselected) is not run.

Run only when the baseline records excluded tests: without a record there is nothing it
would accept.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

from oracle_guard.config import Config
from oracle_guard.gate.audit import BaseCollection
from oracle_guard.gate.reference import _Side
from oracle_guard.gate.reference import BOOTSTRAP
from oracle_guard.gate.reference import DROPPED_ENV
from oracle_guard.gate.reference import import_roots
from oracle_guard.gate.reference import is_test_side
from oracle_guard.gate.reference import TreeBuilder
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import identity_of
from oracle_guard.repo.gitrepo import TreeView

TIMEOUT = 1800
# The probe's output variable (runtime/collection_probe.py, which imports pytest: the gate
# process does not import it).
OUTPUT = 'ORACLE_GUARD_COLLECTION_PROBE'


class BaseCollector:
    """Writes the base tree and starts its collection at once; ``wait`` gives the result."""

    def __init__(self, cfg: Config, base: TreeView, python: str) -> None:
        self.folder = tempfile.mkdtemp(prefix='oracle-guard-base-collect-')
        side = _Side(base)
        self.sources: dict[str, bytes] = {}
        builder = TreeBuilder(cfg, side, side)
        builder.add_code()
        builder.add_pytest_config()
        builder.add_tests(sorted(p for p in side.files if is_test_side(p, cfg)), side)
        self.root = os.path.join(self.folder, 'base')
        os.mkdir(self.root)
        tree = builder.write(self.root)
        for path in tree.sources:
            if is_test_side(path, cfg):
                with open(os.path.join(self.root, *path.split('/')), 'rb') as f:
                    self.sources[path] = f.read()
        self.out = os.path.join(self.folder, 'collected.json')
        env = {k: v for k, v in os.environ.items() if k not in DROPPED_ENV}
        env[OUTPUT] = self.out
        # --assert=plain: a collection runs no assert, and rewriting every test module
        # was about 40 % of its CPU (attrs: 2.2 s against 1.3 s). Which tests are kept,
        # deselected or never collected does not depend on it; the tree holds only the
        # base revision's own code, nothing of the pull request's.
        command = [python, '-I', '-c', BOOTSTRAP, json.dumps(import_roots(self.root, cfg.src)),
                   '--collect-only', '-q', '-p', 'no:cacheprovider', '--assert=plain',
                   f'--rootdir={self.root}',
                   '--continue-on-collection-errors', '-p', 'no:oracle_guard',
                   '-p', 'oracle_guard.runtime.collection_probe']
        self.output = open(os.path.join(self.folder, 'output.txt'), 'w+b')  # noqa: SIM115
        self.proc: subprocess.Popen[bytes] | None = None
        self.error = ''
        try:
            self.proc = subprocess.Popen(command, cwd=self.root, env=env,
                                         stdin=subprocess.DEVNULL, stdout=self.output,
                                         stderr=subprocess.STDOUT)
        except OSError as exc:
            self.error = f'cannot run {python!r}: {exc.strerror}'

    def wait(self) -> BaseCollection:
        try:
            if self.proc is not None:
                try:
                    self.proc.wait(timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
                    self.error = f'it did not end within {TIMEOUT} s'
            return self._read()
        finally:
            self.close()

    def _read(self) -> BaseCollection:
        if not self.error:
            try:
                with open(self.out, encoding='utf-8') as f:
                    data = json.load(f)
                if not (isinstance(data, dict) and isinstance(data.get('items'), list)
                        and isinstance(data.get('removed'), list)
                        and all(isinstance(i, list) and len(i) == 2 and
                                all(isinstance(v, str) for v in i) for i in data['items'])
                        and all(isinstance(i, list) and len(i) == 3 and
                                all(isinstance(v, str) for v in i) for i in data['removed'])):
                    raise ValueError('not what the collection probe writes')
            except (OSError, ValueError):
                self.output.seek(0)
                tail = [line for line in self.output.read().decode('utf-8', 'replace')
                        .splitlines() if line.strip()][-3:]
                self.error = ' / '.join(tail) or 'no output'
        if self.error:
            return BaseCollection(error=self.error)
        real = os.path.realpath(self.root)

        def key(nodeid: str, path: str) -> str:
            full = path if os.path.isabs(path) else os.path.join(self.root, path)
            rel = os.path.relpath(os.path.realpath(full), real).replace(os.sep, '/')
            return f'{rel}::{identity_of(nodeid)}'

        kept = frozenset(key(n, p) for n, p in data['items'])
        functions: dict[str, set[str]] = {}
        for case in kept:
            functions.setdefault(function_of_nodeid(case), set()).add(case)
        return BaseCollection(kept=kept,
                              left_out=frozenset(key(n, p) for n, p, _ in data['removed']),
                              kept_functions={f: frozenset(c) for f, c in functions.items()},
                              sources=self.sources)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.output.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def needed(view: TreeView, cfg: Config) -> bool:
    """Whether the pull request's baseline records excluded tests (rule 39b)."""
    from oracle_guard.findings import ConfigError
    from oracle_guard.oracle.baseline import read_baseline

    try:
        baseline = read_baseline(view, cfg.baseline)
    except ConfigError:
        return False  # check-named-freezes reports it; nothing is accepted by it
    return bool(baseline and baseline.excluded)


def function_of_nodeid(nodeid: str) -> str:
    """``path::test_x[3]`` -> ``path::test_x``."""
    path, _, identity = nodeid.partition('::')
    return f'{path}::{function_of(identity)}'
