"""The scan's shortcuts find what the reference finds (rules 14-17, 35 and 35b).

check-named-freezes takes four shortcuts: the byte prefilter (a file that is not parsed
holds no silence and no tampering), one collection of a file's imports for every rule,
and walks of rules 35 and 35b over the lines that spell one of their words only (rule
35b collecting the file's assignments from its statements, not from every node). Each is
compared here with the reference — parse every file, collect aliases per rule, walk every
node — on the cases of tests/test_scanner_real_forms.py, on hostile spellings, and on
every Python file of this repository.
"""

from __future__ import annotations

import ast

import pytest

from builders.scan_cases import HERE
from builders.scan_cases import HOSTILE
from builders.scan_cases import real_forms_cases
from oracle_guard.reading.runner_access import computed_access
from oracle_guard.reading.import_aliases import ImportAliases
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import scan_silences
from oracle_guard.reading.scanner import ScanError
from oracle_guard.reading.runner_access import tampering
from oracle_guard.reading.silence_prefilter import might_compute
from oracle_guard.reading.silence_prefilter import might_silence
from oracle_guard.reading.silence_prefilter import might_tamper


REPO = HERE.parent


def repository_files() -> list[str]:
    return [p.read_text(encoding='utf-8') for p in sorted(REPO.rglob('*.py'))
            if '.git' not in p.parts and 'site-packages' not in p.parts]


def reference(source: str) -> tuple[list, list] | None:
    """Silences and rule 35 sites, every file parsed, every node walked and the aliases
    collected per rule. Rule 35's byte prefilter (``might_tamper``) is not one of the
    shortcuts compared here, so its verdict is kept."""
    try:
        tree = parse_python(source.encode(), 't.py')
        silences = scan_silences(tree, source)
        return ([(s.line, s.col, s.kind, s.targets, s.freeze_ids) for s in silences],
                tampering(tree) if might_tamper(source.encode()) else [],
                computed_access(tree, source, every_node=True)
                if might_compute(source.encode()) else [])
    except ScanError:
        return None


def fast(source: str) -> tuple[list, list] | None:
    """What check-named-freezes computes: the prefilters, one alias collection, the
    rule 35 walk over the lines of its words."""
    raw = source.encode()
    silences_possible, tampering_possible = might_silence(raw), might_tamper(raw)
    computing_possible = might_compute(raw)
    if not (silences_possible or tampering_possible or computing_possible):
        return [], [], []
    try:
        tree = parse_python(raw, 't.py')
        aliases = ImportAliases(tree)
        silences = scan_silences(tree, source, aliases) if silences_possible else []
        tampered = tampering(tree, aliases, source) if tampering_possible else []
        computed = computed_access(tree, source, aliases) if computing_possible else []
    except ScanError:
        return None
    return ([(s.line, s.col, s.kind, s.targets, s.freeze_ids) for s in silences], tampered,
            computed)


# A comment naming setattr lets each hostile case past rule 35's byte prefilter, so what
# is compared is the walk over the lines of its words against the walk over every node.
CASES = real_forms_cases() + [case + '# setattr\n' for case in HOSTILE]


@pytest.mark.parametrize('source', CASES)
def test_the_fast_scan_finds_every_silence_and_tampering_the_reference_finds(source):
    assert fast(source) == reference(source)


def test_the_hostile_cases_are_sites_the_reference_finds():
    # The comparison above proves nothing about cases that hold nothing to find.
    found = [reference(case) for case in CASES]
    assert sum(bool(f and f[1]) for f in found) >= 28
    assert sum(bool(f and f[0]) for f in found) >= 12
    assert sum(bool(f and f[2]) for f in found) >= 14


def test_the_fast_scan_agrees_with_the_reference_on_every_file_of_this_repository():
    sources = repository_files()
    assert len(sources) > 100
    for source in sources:
        assert fast(source) == reference(source)


def test_a_parametrized_file_without_an_empty_parameter_set_is_not_parsed():
    source = b'import pytest\n@pytest.mark.parametrize("x", [1, 2])\ndef test_a(x): pass\n'
    assert not might_silence(source)
    assert might_silence(source.replace(b'[1, 2]', b'[]'))


def test_the_rule_35_walk_skips_lines_without_its_words():
    source = ('import pytest\n' + 'x = [1, 2, 3]\n' * 50 + 'pytest.skip = None\n')
    tree = parse_python(source.encode(), 't.py')
    from oracle_guard.reading.runner_access import tamper_words
    from oracle_guard.reading.source_lines import word_lines
    from oracle_guard.reading.source_lines import walk_lines

    walked = walk_lines(tree, word_lines(source, tamper_words(ImportAliases(tree))))
    assert len(walked) < len(list(ast.walk(tree))) // 10
    assert tampering(tree, None, source) == tampering(tree) == [
        (52, 1, 'assigns pytest.skip, an attribute of pytest')]


def test_the_rule_35b_walk_skips_lines_without_its_words():
    source = ('import pytest\n' + 'x = [1, 2, 3]\n' * 50 +
              'skip = getattr(pytest.mark, NAME)\n')
    tree = parse_python(source.encode(), 't.py')
    from oracle_guard.reading.runner_access import compute_words
    from oracle_guard.reading.source_lines import word_lines
    from oracle_guard.reading.source_lines import walk_lines

    walked = walk_lines(tree, word_lines(source, compute_words(ImportAliases(tree))))
    assert len(walked) < len(list(ast.walk(tree))) // 10
    assert computed_access(tree, source) == computed_access(tree, source, every_node=True) \
        == [(52, 8, 'getattr of a computed name on pytest.mark')]


def pattern_lines(text: str, words: list[str]) -> list[int]:
    """The reference of ``word_lines``: one ``re`` pattern of every word, ``\\b`` each side."""
    import re
    import unicodedata

    if not text.isascii():
        text = unicodedata.normalize('NFKC', text)
    text = text.replace('\r\n', '\n').replace('\r', '\n')
    pattern = re.compile(r'\b(?:' + '|'.join(map(re.escape, sorted(set(words)))) + r')\b')
    lines = [text.count('\n', 0, match.start()) + 1 for match in pattern.finditer(text)]
    return sorted(set(lines))


def test_word_lines_finds_the_lines_one_pattern_of_the_words_finds():
    import random

    from oracle_guard.reading.source_lines import word_lines

    # Identifiers that hold one another, a Devanagari vowel sign (a letter of an
    # identifier, yet no `\w`), a word that is no identifier, line breaks of every kind.
    pieces = ['a', 'b', '_', '1', ' ', '\n', '\r', '\r\n', '.', 'é', 'e\u0301', '\u0915',
              '\u093f', 'ab', 'skip', '(']
    words = ['a', 'ab', 'ba', 'a_b', 'b1', '\u0915\u093f', '\u093fa', 'é', 'aa', 'skip',
             'skipif', 'a.b']
    rng = random.Random(20261205)
    for _ in range(20000):
        text = ''.join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        chosen = rng.sample(words, rng.randint(1, 4))
        assert word_lines(text, chosen) == pattern_lines(text, chosen), (text, chosen)
    for source in repository_files()[:80]:
        for chosen in (['skip', 'xfail', 'Exception', 'parametrize'], ['getattr', 'modules']):
            assert word_lines(source, chosen) == pattern_lines(source, chosen)


def test_a_scan_leaves_no_syntax_tree_to_the_cyclic_collector():
    # check-named-freezes pauses the cyclic collector while it scans a file: a reference
    # cycle holding the tree would keep it in memory until a collection.
    import gc

    from oracle_guard.hooks.check_named_freezes import scan_file

    sources = [case.encode() for case in real_forms_cases() + HOSTILE]
    for source in sources:  # the lazy imports and their classes made first
        scan_file('tests/test_x.py', source)
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for source in sources:
            scan_file('tests/test_x.py', source)
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if isinstance(o, ast.AST)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []
