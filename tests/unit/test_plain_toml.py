"""The plain-TOML reader the hooks use before tomllib: what it reads, tomllib reads the
same; everything else it leaves to tomllib (None)."""
from __future__ import annotations

import os
import sys

import random

import pytest

from oracle_guard.config import parse_toml
from oracle_guard.findings import ConfigError
from oracle_guard.reading.plain_toml import read_plain_toml
from oracle_guard.reading.plain_toml import toml_1_1_only

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tomllib_or_none(text: str):
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def test_reads_this_repository_pyproject_as_tomllib_does():
    with open(os.path.join(ROOT, 'pyproject.toml'), encoding='utf-8') as f:
        text = f.read()
    assert read_plain_toml(text) is not None
    assert read_plain_toml(text) == tomllib.loads(text)


@pytest.mark.parametrize('text', [
    '[tool.oracle-guard]\nsrc = ["src/"]\ntests = ["tests/"]\n',
    '[tool."oracle-guard"]\r\nmax-freeze-days = 30 # a comment\r\n',
    "[project]\nname = 'x'\nlicense = { text = \"MIT\" }\ndeps = [\n  'a', # one\n  'b',\n]\n",
    '[a.b]\nx = 1\n[a]\ny = -0\nz = +7\nt = true\nf = false\nempty = []\ninline = {}\n',
    '"" = 1\n\'quoted key\' = "value with # and \' inside"\n',
    'a = "tab\\tescape"\nb = "a \\"quoted\\" word, a \\\\ slash"\n',   # short escapes
    'a.b = 1\n',                                                      # dotted keys
    '[tool.ruff]\nline-length = 99\nlint.select = ["E"]\nlint.ignore = []\n'
    'format . "quote-style" = \'single\'\n[tool.other]\nx.y.z = 1\n',
    'dependencies = ["orjson>=3.10.7; implementation_name == \\"cpython\\""]\n',
    '[tool.ruff]\nlint.select = ["E"]\n[tool.ruff.lint.per-file-ignores]\n"x.py" = ["E1"]\n',
    '[x]\na.b = 1\n[x.a.c]\n[x.a.c.d]\n',  # headers under a table dotted keys made
    '[[a]]\nb = 1\n[[a]]\nb = 2\n[a.c]\nd = 3\n[[tool.mypy.overrides]]\nmodule = "x"\n',
    # multi-line strings: sympy 1.14's [tool.slotscheck] exclude-modules, as written there
    "[tool.slotscheck]\nstrict-imports = true\nexclude-modules = \'\'\'\n(\n"
    "    sympy.parsing.latex._antlr\n    |sympy.galgebra\n)\n\'\'\'\n\n[tool.x]\ny = 1\n",
    "a = \'\'\'\r\nCRLF\r\nread as LF\'\'\'\r\n",
    "a = \'\'\'no \\escape, \"quotes\" and \'one\' \'\'\'\n",
    "a = \'\'\'\'\'quotes before the end\'\'\'\'\'\nb = \'\'\'\'\'\'\n",
    'a = """\nbasic \\"escapes\\"\\t\\\\ and a\\\n    line-ending backslash"""\n',
    'a = """x\\  \r\n\n  y""""\nb = [""" in\nan array""", \'\'\'two\'\'\']\n',
    'a = {b = """one\nline""", c = 1}\n',
])
def test_plain_documents_are_read_as_tomllib_reads_them(text):
    assert read_plain_toml(text) is not None
    assert read_plain_toml(text) == tomllib.loads(text)


@pytest.mark.parametrize('text', [
    'a = "\\u00e9"\n',             # long escapes
    'a = """multi\\u00e9line"""\n',
    'a = 1.5\n', 'a = 1e3\n', 'a = 1_000\n', 'a = 0x1f\n', 'a = inf\n',
    'a = 1979-05-27\n',           # dates
])
def test_what_is_not_plain_is_left_to_tomllib(text):
    assert read_plain_toml(text) is None
    tomllib.loads(text)  # valid TOML all the same: tomllib reads it


@pytest.mark.parametrize('text', [
    'a = 1\na = 2\n',                      # duplicate key
    '"a" = 1\na = 2\n',
    '[a]\n[a]\n',                           # a table defined twice
    'a = 1\n[a]\n',                         # a value extended by a header
    'a = {b = 1}\n[a.c]\n',                 # an inline table extended by a header
    '[a]\nb = 1\n[a.b]\n',
    '[a.b]\nc = 1\n[a]\nb = 2\n',
    'a.b = 1\na.b = 2\n', 'a = 1\na.b = 2\n', 'a.b = 1\n[a]\n', 'a.b = 1\n[a.b]\n',
    '[x.y]\n[x]\ny.z = 1\n', '[x]\na.b = 1\n[x.a]\n', 'a = {b = 1}\na.c = 2\n',
    '[x]\na.b.c = 1\n[x.a.b]\n', '[x]\na.b = 1\n[x.a.c]\n[x]\n', '[t]\na.b = 1\n[u]\n[t.a]\n',
    'a = []\n[[a]]\n', '[[a]]\n[a]\n', '[a]\n[[a]]\n', '[[a] ]\n', '[ [a]]\n',
    '[[a]]\nb = 1\n[a.b]\n', 'a = [{b = 1}]\n[[a]]\n',
    'a = "\\q"\n', 'a = "\\"\n', 'a. = 1\n', '.a = 1\n', '# a lone CR at the end\r',
    'a = 1 b = 2\n', 'a = "x\n', 'a = \'x\n', 'a = [1, 2\n', 'a = [,]\n', '= 1\n',
    'a = 01\n', 'a = {b = 1,}\n', 'a = {b = 1\n}\n',
    'a = "bell\x07"\n', '# bell\x07\n', 'a = 1\rb = 2\n', '[a\n', '[a] x\n', 'a =\n',
    "a = \'\'\'x\'\'\'\'\'\'\n", "a = \'\'\'x\ry\'\'\'\n", "a = \'\'\'open\n", 'a = """x\\ y"""\n',
    'a = """\\q"""\n', 'a = """x\\\n\r y"""\n', "\'\'\'a\'\'\' = 1\n", '["""a"""]\n',
    'a = {"""b""" = 1}\n', 'a = """bell\x07"""\n', "a = \'\'\'x\'\'\' y\n",
])
def test_invalid_toml_is_never_read(text):
    assert read_plain_toml(text) is None
    with pytest.raises(ConfigError):
        parse_toml(text)


# TOML 1.1 forms: tomli 2.3+ (Python 3.9, 3.10) reads them, tomllib of 3.11-3.13 does not.
TOML_1_1 = {
    'trailing comma in an inline table': 'a = {b = 1,}\n',
    'newline in an inline table': 'a = {b = 1\n}\n',
    'newline after a nested array': 'a = {b = [1],\n c = 2}\n',
    'escape e': 'a = "\\e"\n',
    'escape x': 'a = "\\x41"\n',
    'time without seconds': 'a = 07:32\n',
    'date-time without seconds': 'a = 1979-05-27T07:32Z\n',
}


@pytest.mark.parametrize('text', TOML_1_1.values(), ids=TOML_1_1.keys())
def test_toml_1_1_forms_are_refused_on_every_python(text):
    """One pyproject.toml configures the guard the same way on every Python: TOML 1.0."""
    with pytest.raises(ConfigError, match=r'pyproject.toml:1: invalid TOML 1.0: .*TOML 1.1'):
        parse_toml(text)
    assert toml_1_1_only(text) is not None


@pytest.mark.parametrize('text', [
    'a = {b = [1,\n2]}\n', 'a = [1,\n2,\n]\n', 'a = "x # {"\nb = 1\n', "a = '\\e'\n",
    'a = """\n{b = 1,}\n"""\n', 'a = "\\\\e"\n', 'a = 07:32:00\n', 'a = "12:30"\n',
    '[[a]]\nb = {c = 1}\n', 'a = [ {b = 1}, ]\n',
])
def test_toml_1_0_forms_near_them_are_read(text):
    assert toml_1_1_only(text) is None
    assert parse_toml(text) == tomllib.loads(text)


def test_no_document_tomllib_reads_is_refused_as_toml_1_1():
    rng = random.Random(19)
    for _ in range(4000):
        text = random_document(rng)
        if sys.version_info >= (3, 11) and tomllib_or_none(text) is not None:
            assert toml_1_1_only(text) is None, text


# Pieces of documents, valid and not: the fuzz below joins them at random (seeded, so every
# run sees the same documents) and checks the reader against tomllib on each.
KEYS = ['a', 'b', 'src', 'x-y', 'A_1', '1', '"a"', '"q q"', "'lit'", '""', 'a.b', '"a\\"b"',
        'a b', '', 'a . b', 'b.c.d', 'a."b"']
ATOMS = ['0', '7', '-12', '+1', '-0', '99999999999999999999', 'true', 'false', 'tru', '01',
         '1_0', '1.5', '1e3', 'inf', '0x1f', '1979-05-27', '', '"', "'"]
STRING_CHARS = 'ab #\'"\\\t\x07\x7f\u00e9,[]{}=tnu0'
MULTI_LINE_PIECES = ['a', ' ', '\t', '\n', '\r\n', '\r', '\\', '\\\n', '\\ \n', '\\  \r\n  ',
                     '"', "\'", '""', "\'\'", '\\"', '\\n', '\\u00e9', '\\e', '\x07', '#', ']']
SEPARATORS = [' = ', '=', ' =  ', ' ']
ENDINGS = ['', ' # note', '#\x07', ' x']
HEADERS = ['[{}]', '[[{}]]', '[ {} ]', '[{}']
BLANKS = ['', '# comment', '   ', '\t# x']


def random_value(rng: random.Random, depth: int = 0) -> str:
    kind = rng.randrange(5 if depth < 2 else 3)
    if kind == 0:
        return rng.choice(ATOMS)
    if kind == 1:
        body = ''.join(rng.choice(STRING_CHARS) for _ in range(rng.randrange(6)))
        return rng.choice(['"{}"', "'{}'"]).format(body)
    if kind == 2:  # multi-line: newlines, quotes and backslashes near the ends
        body = ''.join(rng.choice(MULTI_LINE_PIECES) for _ in range(rng.randrange(6)))
        quote = rng.choice(['"""', "\'\'\'"])
        return quote + rng.choice(['', '\n', '\r\n']) + body + quote + rng.choice(
            ['', quote[0], quote[:2], quote])
    if kind == 3:
        items = [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
        return ('[' + rng.choice([', ', ',\n ', ',#c\n']).join(items) +
                rng.choice(['', ',']) + ']')
    pairs = [f'{rng.choice(KEYS)} = {random_value(rng, depth + 1)}'
             for _ in range(rng.randrange(4))]
    return '{' + ', '.join(pairs) + '}'


def random_document(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randrange(9)):
        kind = rng.randrange(4)
        if kind < 2:
            lines.append(rng.choice(KEYS) + rng.choice(SEPARATORS) + random_value(rng) +
                         rng.choice(ENDINGS))
        elif kind == 2:
            keys = [rng.choice(KEYS) for _ in range(rng.randrange(1, 4))]
            lines.append(rng.choice(HEADERS).format('.'.join(keys)))
        else:
            lines.append(rng.choice(BLANKS))
    return rng.choice(['\n', '\r\n', '\r']).join(lines)


def test_agrees_with_tomllib_or_leaves_it_to_tomllib():
    rng = random.Random(13)
    read = 0
    for _ in range(4000):
        text = random_document(rng)
        plain = read_plain_toml(text)
        assert plain is None or plain == tomllib_or_none(text), text
        read += plain is not None
    assert read > 400  # the fuzz reaches the reader's own path, not only the fallback


def test_multi_line_strings_agree_with_tomllib_or_are_left_to_it():
    """Seeded one-value documents near the edges of a multi-line string: the newline
    after the opening quotes, CRLF and lone CRs, quotes before the closing three, escapes
    and line-ending backslashes; what the reader reads, tomllib reads the same."""
    rng = random.Random(20)
    read = 0
    for _ in range(3000):
        value = random_value(rng, depth=2) if rng.randrange(4) else "'''x'''"
        while not value.startswith(('"""', "'''")):
            value = random_value(rng, depth=2)
        text = 'a = ' + value + rng.choice(['\n', '', ' # c\n', '\r\n', ' x\n'])
        plain = read_plain_toml(text)
        assert plain is None or plain == tomllib_or_none(text), text
        read += plain is not None
    assert read > 600
