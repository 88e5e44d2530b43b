"""oracle_guard.oracle.plain_yaml against PyYAML: the plain reader is a shortcut, never a
second opinion. Wherever it reads a document, PyYAML (as documents.load_yaml configures
it) reads the same values, of the same types, with the same lines; wherever PyYAML would
refuse one, the plain reader hands it over."""
from __future__ import annotations

import datetime
import os
import random
import subprocess
import sys

import pytest

from oracle_guard.findings import ConfigError
from oracle_guard.oracle.documents import LinedDict
from oracle_guard.oracle.documents import load_yaml
from oracle_guard.oracle.documents import load_yaml_text
from oracle_guard.oracle.plain_yaml import NOT_PLAIN
from oracle_guard.oracle.plain_yaml import read_plain

LEDGER = """\
# the freeze ledger
budget: 2   # raised in its own change
freezes:
  - id: FZ-1
    nodeid: tests/test_clock.py::TestClock::test_midnight[utc]
    class: time-dependent
    owner: Alice Example
    evidence: "fails between 23:00 and 00:00 UTC, #412"
    expires: 2026-03-01
    fixtures:
    - clock/midnight.json
    agent_may_extend: false

  -   id: FZ-2
      nodeid: 'tests/test_order.py::test_after_cache'
      class: order-dependent
      owner: bob
      evidence: passes alone, fails after test_cache_fill
      expires: 2026-02-30
      mode: run
"""


def shape(value):  # type: ignore[no-untyped-def]
    """The value with every type and every mapping's lines spelled out."""
    if isinstance(value, LinedDict):
        return ('map', value.line, dict(value.key_lines),
                [(shape(k), shape(v)) for k, v in value.items()])
    if isinstance(value, dict):
        return ('dict', [(shape(k), shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ('list', [shape(v) for v in value])
    return (type(value).__name__, value)


def pyyaml(text: str):  # type: ignore[no-untyped-def]
    try:
        return shape(load_yaml_text(text, 'ledger.yaml'))
    except ConfigError as exc:
        return ('error', exc.line, str(exc))


def assert_agrees(text: str) -> bool:
    """True when the plain reader read it (and agrees with PyYAML)."""
    plain = read_plain(text, LinedDict)
    if plain is NOT_PLAIN:
        return False
    assert shape(plain) == pyyaml(text), text
    return True


def test_a_ledger_in_plain_yaml_is_read_without_pyyaml_and_as_pyyaml_reads_it():
    assert assert_agrees(LEDGER)
    rows = read_plain(LEDGER, LinedDict)['freezes']
    assert rows[0]['expires'] == datetime.date(2026, 3, 1)
    assert rows[1]['expires'] == '2026-02-30'  # no such date: kept as text, as before
    assert rows[0].line_of('owner') == 7


@pytest.mark.parametrize('text', [
    'budget: 0\nfreezes: []\n',
    'budget: 0\nfreezes:\n',
    'budget: 0\nfreezes: []   # none yet\n',
    'budget: 1\nfreezes:\n- id: FZ-1\n  owner: yes\n  evidence: ~\n  mode: Null\n',
    'a: on\nb: OFF\nc: No\nd: TRUE\ne: plain, with commas [and] {braces}\nf: a#b\n',
    'a: 0\nb: 10\nc: x: y\n',
    "a: 'it''s'\n",
    'a: "x\\ty"\n',
    'a: 012\nb: 0x1f\nc: 1_000\nd: 1:30\ne: -1\nf: .5\ng: 1e3\n',
    'a: 2026-1-1\nb: 2026-01-01 10:00:00\nc: 0000-01-01\n',
    'a: &x 1\nb: *x\n',
    'a: !!str 1\n',
    '---\na: 1\n',
    'a: 1\n...\n',
    'a: 1\na: 2\n',
    'yes: 1\n',
    '1: a\n',
    'a:\n  b: 1\n c: 2\n',
    'a:\n  multi\n  line\n',
    'a: b\n  c\n',
    '- a\n- b\n',
    '  a: 1\n',
    'a: [1, 2]\n',
    'a: {}\n',
    'a: "unterminated\n',
    'a: b #c\nd: "q" # c\ne: "q"#c\n',
    'a:\n-\n  b: 1\n',
    'a:\n- - 1\n',
    'a: caf\u00e9\n',
    'a:\tb\n',
    'a: 1\r\nb: 2\r\n',
    '# only a comment\n',
    '',
    'a: <<\nb: =\nc: ?x\nd: %x\ne: @x\nf: `x\ng: |\n  block\n',
    'key with spaces: v\nkey : v\n',
])
def test_each_form_is_read_as_pyyaml_reads_it_or_left_to_pyyaml(text):
    assert_agrees(text)


# -- seeded random documents ------------------------------------------------------------

KEYS = ('id', 'nodeid', 'class', 'owner', 'evidence', 'expires', 'mode', 'fixtures',
        'budget', 'freezes', 'yes', 'on', 'null', '1', 'a b', 'a#b', 'x:y', '"q"', 'id')
SCALARS = ('FZ-1', 'tests/t.py::T::t[a-1]', 'time-dependent', 'alice', 'yes', 'No', 'ON',
           'off', 'true', 'False', '~', 'null', 'NULL', '0', '7', '012', '0x1', '1_0',
           '1:30', '-1', '+1', '.5', '1e3', '2026-03-01', '2026-02-30', '2026-1-1',
           '0000-01-01', '2026-03-01 10:00', 'a: b', 'a #b', 'a#b', 'end:', '"dq"',
           "'sq'", "'it''s'", '"a\\"b"', '"a # b"', '[]', '[] # c', '{}', '[a, b]', '&x',
           '*x', '!!str 1', '|', '>', '%x', '@x', '`x', '<<', '=', '?x', ':x', '-x',
           'caf\u00e9', 'a\tb', 'a , b', 'x  y', '', '# comment', 'a "b" c', "o'brien")
INDENTS = ('', ' ', '  ', '    ')


def random_document(rng: random.Random) -> str:
    out = []
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(KEYS)
        kind = rng.random()
        if kind < 0.4:
            out.append(f'{key}: {rng.choice(SCALARS)}')
            continue
        out.append(f'{key}:')
        indent = rng.choice(INDENTS)
        for _ in range(rng.randint(0, 3)):
            if rng.random() < 0.2:
                out.append(f'{indent}- {rng.choice(SCALARS)}')
                continue
            gap = rng.choice((' ', ' ', '   '))
            column = indent + ' ' + gap
            out.append(f'{indent}-{gap}{rng.choice(KEYS)}: {rng.choice(SCALARS)}')
            for _ in range(rng.randint(0, 4)):
                drift = rng.choice(('', '', '', '', ' ', '-'))
                here = column[:-1] if drift == '-' and column else column + drift
                if rng.random() < 0.15:
                    out.append(f'{here}{rng.choice(KEYS)}:')
                    out.append(f'{here}{rng.choice(INDENTS)}- {rng.choice(SCALARS)}')
                else:
                    out.append(f'{here}{rng.choice(KEYS)}: {rng.choice(SCALARS)}')
            if rng.random() < 0.2:
                out.append(rng.choice(('', '# between rows', '   # indented comment')))
    return '\n'.join(out) + rng.choice(('\n', '', '\n\n'))


def test_seeded_random_documents_agree_with_pyyaml():
    rng = random.Random(20)
    read = 0
    for _ in range(3000):
        read += assert_agrees(random_document(rng))
    # The generator stays honest only if the shortcut really takes a good share of them.
    assert read > 200


def test_a_plain_ledger_is_loaded_without_importing_yaml(tmp_path):
    path = tmp_path / 'freeze_ledger.yaml'
    path.write_text(LEDGER)
    code = ('import sys; from oracle_guard.oracle.documents import load_yaml; '
            f'load_yaml(open({str(path)!r}, "rb").read(), "ledger"); '
            'print("yaml" in sys.modules)')
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert out.strip() == 'False'


def test_load_yaml_still_reports_what_pyyaml_refuses():
    with pytest.raises(ConfigError, match='duplicate key'):
        load_yaml(b'budget: 0\nbudget: 1\n', 'ledger.yaml')
    with pytest.raises(ConfigError, match='aliases'):
        load_yaml(b'a: &x 1\nb: *x\n', 'ledger.yaml')
