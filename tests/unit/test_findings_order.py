"""The order findings are printed in depends on nothing but the findings."""
from __future__ import annotations

import io
import os
import subprocess
import sys

from oracle_guard.findings import Finding
from oracle_guard.report import format_text, write_findings

# Eight findings of one place and one code that differ only in their message or hint: the
# shape a check gives for one line that holds several silences.
SAME_PLACE = [
    Finding('tests/test_a.py', 3, 1, 'OG301', f'silence {name}', hint)
    for name in ('h', 'c', 'f', 'a', 'g', 'd', 'b', 'e')
    for hint in ('', 'add a freeze')
]


def test_findings_of_one_place_and_code_come_out_sorted_by_message_and_hint() -> None:
    out = io.StringIO()
    write_findings(reversed(SAME_PLACE), 'text', out)
    by_text = sorted(SAME_PLACE, key=lambda f: (f.message, f.hint))
    assert out.getvalue() == ''.join(format_text(f) + '\n' for f in by_text)


PRINT = """
import sys
from oracle_guard.findings import Finding
from oracle_guard.report import write_findings
found = [Finding('t.py', 1, 1, 'OG301', m) for m in 'qwertyuiopasdfgh']
write_findings(found, 'text', sys.stdout)
write_findings(found, 'github', sys.stdout)
"""


def test_the_order_is_the_same_under_every_hash_seed() -> None:
    outputs = set()
    for seed in ('1', '2', '3', '4'):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outputs.add(subprocess.run([sys.executable, '-c', PRINT], env=env, check=True,
                                   capture_output=True, text=True).stdout)
    assert len(outputs) == 1
