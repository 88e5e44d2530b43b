"""A pytest run recorded as the gate records it, read back for the tests of what the
record holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any


def recorded_events(root: Any, files: dict[str, str],
                    extra_env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The events, in order, of a recorded pytest run (as the gate's runs are) of a guarded
    git repository at ``root`` holding ``files``, its properties locked."""
    files = {'pyproject.toml': '[project]\nname = "dd"\nversion = "0.1"\n\n'
             '[tool.pytest.ini_options]\npythonpath = ["src"]\n\n[tool.oracle-guard]\n'
             'src = ["src/"]\n', **files}
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), 'w') as f:
            f.write(text)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('PYTEST_', 'ORACLE_GUARD', 'PYTHONPYCACHEPREFIX'))}
    subprocess.run(['git', 'init', '-q'], cwd=root, check=True)
    locked = subprocess.run([sys.executable, '-m', 'oracle_guard.cli', 'lock'], cwd=root,
                            env=env, capture_output=True, text=True)
    assert locked.returncode == 0, locked.stdout + locked.stderr
    record = os.path.join(root, 'record')
    os.mkdir(record)
    env['ORACLE_GUARD_RECORD'] = record
    env.update(extra_env or {})
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                           '-p', 'oracle_guard', 'tests'], cwd=root, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    events = []
    for name in sorted(os.listdir(record)):
        with open(os.path.join(record, name)) as f:
            events.extend(json.loads(line) for line in f)
    return events


def recorded_run(root: Any, files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The ``call`` events, by test name, of ``recorded_events``."""
    return {e['nodeid'].rsplit('::', 1)[-1]: e for e in recorded_events(root, files)
            if e.get('event') == 'call'}
