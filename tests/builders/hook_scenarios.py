"""A guarded repository's sources and the cheats the hooks block, shared by the tests
that drive the real pre-commit program.
"""

from __future__ import annotations

from collections.abc import Sequence

from builders.repos import PROPERTY_TEST
from builders.repos import Repo


HOOK_SRC = 'src/app.py'


HOOK_PROPERTY = 'tests/properties/test_parse.py'


FIXTURE = 'tests/fixtures/headers/ok.bin'


TEST = 'tests/test_app.py'


HOOK_FIXED_SRC = 'def parse(b):\n    return bytes(b)\n'


# Still a locked @given test (so only the mixing rules judge it), asserting nothing.
HOOK_WEAKER_PROPERTY = PROPERTY_TEST.replace('assert isinstance(buf, bytes)', 'assert True')


def finding_lines(out: str) -> list[str]:
    return sorted(line for line in out.splitlines() if ': OG' in line)


# --- pre-commit install + git commit -------------------------------------------------

def _src_and_property_test(repo: Repo) -> tuple[str, str]:
    repo.write(HOOK_SRC, HOOK_FIXED_SRC)
    repo.write(HOOK_PROPERTY, HOOK_WEAKER_PROPERTY)
    return 'OG201', HOOK_PROPERTY


def _bare_skip(repo: Repo) -> tuple[str, str]:
    repo.write(TEST, 'import pytest\n\n\n@pytest.mark.skip(reason="flaky")\n'
                     'def test_parse():\n    assert False\n')
    return 'OG301', TEST


def _fixture_bytes(repo: Repo) -> tuple[str, str]:
    repo.write(FIXTURE, b'GET / HTTP/1.1\n\n')
    return 'OG101', FIXTURE


def _src_reaches_into_the_run(repo: Repo) -> tuple[str, str]:
    repo.write(HOOK_SRC, 'import sys\n\n\ndef parse(b):\n    if "pytest" in sys.modules:\n'
                    '        return b\n    return bytes(b)\n')
    return 'OG204', HOOK_SRC


CHEATS = {
    'src-and-property-test': _src_and_property_test,
    'src-reaches-into-the-test-run': _src_reaches_into_the_run,
    'bare-skip': _bare_skip,
    'fixture-bytes-changed': _fixture_bytes,
}


# The cheats that write different files, judged together in one change by the tests of a
# pre-commit mode: each still gives its own finding (its code on its path), which the test
# checks one by one. The two that rewrite src/app.py cannot share a change.
CHEAT_GROUPS = (
    ('bare-skip', 'fixture-bytes-changed', 'src-and-property-test'),
    ('src-reaches-into-the-test-run',),
)
assert sorted(name for group in CHEAT_GROUPS for name in group) == sorted(CHEATS)


def group_id(group: Sequence[str]) -> str:
    return '+'.join(group)


def apply_cheats(repo: Repo, group: Sequence[str]) -> list[tuple[str, str]]:
    """Write every cheat of ``group``; the (code, path) of the finding each must give."""
    return [CHEATS[name](repo) for name in group]
