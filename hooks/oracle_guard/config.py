"""``[tool.oracle-guard]`` in the user's pyproject.toml, with hook ``args:`` on top."""
from __future__ import annotations

import os
import sys

from oracle_guard.findings import ConfigError
from oracle_guard.reading.plain_toml import read_plain_toml
from oracle_guard.oracle.records import FrozenRecord

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import argparse
    import re
    from collections.abc import Mapping
    from typing import Any

    from oracle_guard.repo.tree_view import TreeView

PYPROJECT = 'pyproject.toml'
TABLE = 'tool.oracle-guard'

# key -> (default, kind); kind is 'paths' (folders, files and globs: see entry_matches),
# 'dirs' (one folder or a list of folders), 'file', 'str', 'strs', 'int' or 'bool'.
SCHEMA: dict[str, tuple[Any, str]] = {
    'src': (['src/'], 'paths'),
    'tests': (['tests/'], 'paths'),
    'properties': (['tests/properties/'], 'paths'),
    'fixtures': ('tests/fixtures/', 'dirs'),
    'manifest': ('tests/fixtures/manifest.json', 'file'),
    'traces': ('tests/fixtures/traces.txt', 'file'),
    'ledger': ('tests/freeze_ledger.yaml', 'file'),
    'domain-lock': ('tests/domain_lock.json', 'file'),
    'base-ref': (None, 'str'),
    'baseline': ('tests/oracle_baseline.json', 'file'),
    'allow-silences': ([], 'strs'),
    'optional-modules': ([], 'strs'),
    'max-freeze-days': (90, 'int'),
    'adopted': (None, 'str'),
    'history-limit': (300, 'int'),
    'acknowledged': ('tests/oracle_acknowledged.yaml', 'file'),
    'approval-label': ('oracle-approved', 'str'),
    'src-test-imports': ([], 'strs'),
    'src-capabilities': ([], 'strs'),
    'flaky-reruns': (5, 'int'),
    'require-fail-to-pass': (False, 'bool'),
    # What the oracle judges of the change (gate/reach.py): report-only unless a percent
    # is required; the mutant runs' budget in seconds (unset: the reference run's own time).
    'require-oracle-reach': (None, 'int'),
    'require-mutants-killed': (None, 'int'),
    'mutant-budget': (None, 'int'),
}
# Reruns of a newly frozen test (rule 48): enough to see a flip, few enough to stay cheap.
MAX_FLAKY_RERUNS = 50
# A freeze that may last longer than this is not a freeze.
MAX_FREEZE_DAYS = 3650
SILENCE_KINDS = (
    'skip', 'skipif', 'xfail', 'importorskip', 'unittest-skip', 'expectedFailure',
    'SkipTest', 'skipTest',
)


class Config(FrozenRecord):
    __slots__ = ('root', 'src', 'tests', 'properties', 'fixtures', 'manifest', 'traces',
                 'ledger', 'domain_lock', 'base_ref', 'baseline', 'allow_silences',
                 'optional_modules', 'max_freeze_days',
                 'adopted', 'history_limit', 'acknowledged', 'approval_label',
                 'src_test_imports', 'src_capabilities', 'flaky_reruns', 'require_fail_to_pass',
                 'require_oracle_reach', 'require_mutants_killed', 'mutant_budget',
                 'has_table')
    # Whether the table exists at all: the pytest plugin stays inert without it.
    _uncompared = ('has_table',)
    root: str
    src: tuple[str, ...]
    tests: tuple[str, ...]
    properties: tuple[str, ...]
    # The fixture folders: every file below one of them needs a manifest row.
    fixtures: tuple[str, ...]
    manifest: str
    traces: str
    ledger: str
    domain_lock: str
    base_ref: str | None
    baseline: str
    allow_silences: tuple[str, ...]
    optional_modules: tuple[str, ...]
    max_freeze_days: int
    # History mode (--all-files with no base): where it starts, how far it walks, and
    # the human-owned list of commits it accepts although they broke a change rule.
    adopted: str | None
    history_limit: int
    acknowledged: str
    # The pull-request label that approves an oracle change (the gate reads it from the
    # base side), and the test-run modules production code may name (rule 43).
    approval_label: str
    src_test_imports: tuple[str, ...]
    # The interpreter capabilities code src runs may use without approval (rule 54):
    # kinds ("frames") or a kind in one path ("frames:src/pkg/debug.py").
    src_capabilities: tuple[str, ...]
    # The gate's evidence (rules 48, 49): how often a newly frozen test is rerun, and
    # whether a new test that passes without the change is a finding or only listed.
    flaky_reruns: int
    require_fail_to_pass: bool
    require_oracle_reach: int | None
    require_mutants_killed: int | None
    mutant_budget: int | None
    has_table: bool

    def __init__(self, root: str, src: tuple[str, ...] = ('src/',),
                 tests: tuple[str, ...] = ('tests/',),
                 properties: tuple[str, ...] = ('tests/properties/',),
                 fixtures: tuple[str, ...] | str = ('tests/fixtures/',),
                 manifest: str = 'tests/fixtures/manifest.json',
                 traces: str = 'tests/fixtures/traces.txt',
                 ledger: str = 'tests/freeze_ledger.yaml',
                 domain_lock: str = 'tests/domain_lock.json', base_ref: str | None = None,
                 baseline: str = 'tests/oracle_baseline.json',
                 allow_silences: tuple[str, ...] = (), optional_modules: tuple[str, ...] = (),
                 max_freeze_days: int = 90,
                 adopted: str | None = None, history_limit: int = 300,
                 acknowledged: str = 'tests/oracle_acknowledged.yaml',
                 approval_label: str = 'oracle-approved', src_test_imports: tuple[str, ...] = (),
                 src_capabilities: tuple[str, ...] = (), flaky_reruns: int = 5,
                 require_fail_to_pass: bool = False, require_oracle_reach: int | None = None,
                 require_mutants_killed: int | None = None, mutant_budget: int | None = None,
                 has_table: bool = False) -> None:
        if isinstance(fixtures, str):
            fixtures = (fixtures,)
        self._set(root=root, src=src, tests=tests, properties=properties, fixtures=fixtures,
                  manifest=manifest, traces=traces, ledger=ledger, domain_lock=domain_lock,
                  base_ref=base_ref, baseline=baseline, allow_silences=allow_silences,
                  optional_modules=optional_modules,
                  max_freeze_days=max_freeze_days, adopted=adopted,
                  history_limit=history_limit, acknowledged=acknowledged,
                  approval_label=approval_label, src_test_imports=src_test_imports,
                  src_capabilities=src_capabilities,
                  flaky_reruns=flaky_reruns, require_fail_to_pass=require_fail_to_pass,
                  require_oracle_reach=require_oracle_reach,
                  require_mutants_killed=require_mutants_killed, mutant_budget=mutant_budget,
                  has_table=has_table)

    def oracle_files(self) -> tuple[str, ...]:
        """Single files whose every change is an oracle change."""
        return (self.ledger, self.domain_lock, self.traces, self.acknowledged, self.baseline,
                '.pre-commit-config.yaml')

    # Membership: the one place that says which paths are tests, production code and
    # property tests. Every entry of src, tests and properties is a folder ("tests/"), a
    # file ("tests/test_hypothesis.py") or a glob of either ("pkg/**/tests/"): see
    # entry_matches. A file under both src and tests is a test (numpy's pkg/tests/).

    def is_test(self, path: str) -> bool:
        """Any file under the tests roots (data files too) or among the properties."""
        return in_paths(path, self.tests) or in_paths(path, self.properties)

    def is_test_code(self, path: str) -> bool:
        return path.endswith('.py') and self.is_test(path)

    def is_src(self, path: str) -> bool:
        return in_paths(path, self.src) and not self.is_test(path)

    def is_property(self, path: str) -> bool:
        return in_paths(path, self.properties)

    def test_roots(self) -> tuple[str, ...]:
        """Literal path prefixes that hold every test path (git pathspecs; filter the
        paths they give with is_test_code)."""
        return scan_roots((*self.tests, *self.properties))

    def src_roots(self) -> tuple[str, ...]:
        return scan_roots(self.src)

    def property_roots(self) -> tuple[str, ...]:
        return scan_roots(self.properties)

    def properties_label(self) -> str:
        """The properties as a person reads them in a message."""
        return ', '.join(p.rstrip('/') or '.' for p in self.properties)

    def is_fixture(self, path: str) -> bool:
        return (
            any(path.startswith(folder) for folder in self.fixtures)
            and path not in (self.manifest, self.traces)
        )

    def fixtures_label(self) -> str:
        """The fixture folders as a person reads them in a message."""
        return ', '.join(self.fixtures)

    def manifest_folder(self) -> str:
        """What the manifest's keys are relative to: its own folder when there is one
        fixture folder, the repository root when there are several (a key then names
        its file from the root, ``tests/data/cases.json``)."""
        if len(self.fixtures) > 1:
            return ''
        folder = self.manifest.rpartition('/')[0]
        return f'{folder}/' if folder else ''


GLOB_CHARS = frozenset('*?[')


def is_glob(entry: str) -> bool:
    return any(c in GLOB_CHARS for c in entry)


def is_file_entry(entry: str) -> bool:
    """An entry names a file when its last part is a Python file; otherwise a folder."""
    return not entry.endswith('/') and entry.endswith('.py')


def decode_utf8_sig(raw: bytes) -> str:
    """``raw.decode('utf-8-sig')``, the same text and errors (positions after the BOM),
    without importing the ``utf_8_sig`` codec module on every commit."""
    return (raw[3:] if raw.startswith(b'\xef\xbb\xbf') else raw).decode('utf-8')


def is_test_module(path: str) -> bool:
    """pytest's default ``python_files``: ``test_*.py`` and ``*_test.py``."""
    name = path.rsplit('/', 1)[-1]
    return name.endswith('.py') and (name.startswith('test_') or name.endswith('_test.py'))


def _glob_regex(pattern: str) -> str:
    """``**`` spans folders, ``*`` and ``?`` stay inside one, ``[...]`` is a class."""
    import re  # only a glob entry needs it: a hook that reads none does not import it

    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith('**/', i):
            out.append('(?:[^/]+/)*')
            i += 3
            continue
        if pattern.startswith('**', i):
            out.append('.*')
            i += 2
            continue
        if c == '*':
            out.append('[^/]*')
        elif c == '?':
            out.append('[^/]')
        elif c == '[':
            end = pattern.find(']', i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:end]
                if body.startswith('!'):
                    body = '^' + body[1:]
                out.append(f'[{body}]')
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return ''.join(out)


_COMPILED: dict[str, re.Pattern[str] | GlobMatcher] = {}


class GlobMatcher:
    """What ``re.compile(_glob_regex(pattern) + end).match`` answers, for a pattern with
    no ``[...]`` class, without importing ``re``: sympy's ``sympy/**/tests/`` root made
    every hook import it (with ``enum``, ``functools``, ``collections``: 0.6x a bare
    interpreter's start-up). ``full``: the pattern ends the path (``\\Z``);
    otherwise it matches a prefix of the path."""

    __slots__ = ('tokens', 'full')

    def __init__(self, pattern: str, full: bool) -> None:
        tokens: list[str] = []  # '**/', '**', '*', '?', or a literal string
        i = 0
        while i < len(pattern):
            for token in ('**/', '**', '*', '?'):
                if pattern.startswith(token, i):
                    tokens.append(token)
                    i += len(token)
                    break
            else:
                if tokens and tokens[-1] not in ('**/', '**', '*', '?'):
                    tokens[-1] += pattern[i]
                else:
                    tokens.append(pattern[i])
                i += 1
        self.tokens = [t if t in ('**/', '**', '*', '?') else '=' + t for t in tokens]
        self.full = full

    def match(self, path: str) -> bool:
        size = len(path)
        at = {0}  # where a match of the tokens so far may end
        for token in self.tokens:
            found: set[int] = set()
            for pos in at:
                if token == '?':  # [^/]
                    if pos < size and path[pos] != '/':
                        found.add(pos + 1)
                elif token == '*' or token == '**':  # [^/]* and .* (. is not a newline)
                    stop = path.find('/' if token == '*' else '\n', pos)
                    found.update(range(pos, (size if stop < 0 else stop) + 1))
                elif token == '**/':  # (?:[^/]+/)*
                    found.add(pos)
                    while True:
                        slash = path.find('/', pos)
                        if slash <= pos:
                            break
                        pos = slash + 1
                        found.add(pos)
                elif path.startswith(token[1:], pos):
                    found.add(pos + len(token) - 1)
            at = found
            if not at:
                return False
        return size in at if self.full else True


def entry_matches(path: str, entry: str) -> bool:
    """Whether ``path`` is the file ``entry`` names or lies below the folder it names."""
    regex = _COMPILED.get(entry)  # a glob seen before: most calls, on a glob tests root
    if regex is not None:
        return bool(regex.match(path))
    if not is_glob(entry):
        return path.startswith(entry) if not is_file_entry(entry) else path == entry
    pattern = entry if is_file_entry(entry) else entry.rstrip('/') + '/'
    if '[' not in pattern:
        regex = GlobMatcher(pattern, full=is_file_entry(entry))
    else:
        import re

        if is_file_entry(entry):
            regex = re.compile(_glob_regex(entry) + r'\Z')
        else:
            regex = re.compile(_glob_regex(entry.rstrip('/')) + '/')
    _COMPILED[entry] = regex
    return bool(regex.match(path))


def in_paths(path: str, entries: tuple[str, ...]) -> bool:
    return any(entry_matches(path, entry) for entry in entries)


def under_any(path: str, roots: tuple[str, ...]) -> bool:
    return in_paths(path, roots)


def scan_root(entry: str) -> str:
    """The literal part of an entry before its first glob part: a folder that holds
    every path the entry matches ('' for the whole repository)."""
    if not is_glob(entry):
        return entry
    parts = entry.split('/')
    literal = []
    for part in parts:
        if is_glob(part):
            break
        literal.append(part)
    return '/'.join(literal) + '/' if literal else ''


def scan_roots(entries: tuple[str, ...]) -> tuple[str, ...]:
    roots = sorted({scan_root(e) for e in entries})
    # A root inside another one adds nothing to a pathspec.
    return tuple(r for r in roots if not any(o != r and not is_file_entry(o) and
                                              r.startswith(o) for o in roots))


def _attr(key: str) -> str:
    return key.replace('-', '_')


def normalize_path(value: str, *, folder: bool, source: str, line: int, key: str) -> str:
    """A repository-relative POSIX path; '..', absolute paths and backslashes refused."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(source, line, f'{key!r} must be a non-empty path')
    path = value.strip()
    parts = path.split('/')
    drive = len(path) > 1 and path[1] == ':' and path[0].isascii() and path[0].isalpha()
    if path.startswith('/') or drive or '\\' in path or '..' in parts:
        raise ConfigError(
            source, line,
            f'{key!r} = {value!r} leaves the repository; use a path relative to its root',
        )
    path = '/'.join(p for p in parts if p not in ('', '.'))
    if folder:
        return f'{path}/' if path else ''
    return path


def key_line(text: str, key: str) -> int:
    """The line of ``key`` in the table, for a message (a valid table never asks)."""
    import re

    header = re.search(r'^\s*\[\s*tool\s*\.\s*"?oracle-guard"?\s*\]', text, re.M)
    start = header.end() if header else 0
    match = re.compile(rf'^\s*"?{re.escape(key)}"?\s*=', re.M).search(text, start)
    if match:
        return text.count('\n', 0, match.start()) + 1
    return text.count('\n', 0, start) + 1 if header else 0



def parse_toml(text: str, source: str = PYPROJECT) -> dict[str, Any]:
    """A TOML document; invalid TOML is a ConfigError naming the line.

    Plain documents (most pyproject.toml files) are read without tomllib, whose import
    costs a hook more than its own work; tomllib reads the rest and reports every error.
    """
    plain = read_plain_toml(text)
    if plain is not None:
        return plain
    from oracle_guard.reading.plain_toml import toml_1_1_only

    newer = toml_1_1_only(text)  # the same TOML on every Python: 1.0
    if newer is not None:
        raise ConfigError(source, newer[0], f'invalid TOML 1.0: {newer[1]}')
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except ValueError as exc:  # TOMLDecodeError subclasses ValueError
        import re

        match = re.search(r'line (\d+)', str(exc))
        line = int(match.group(1)) if match else text.count('\n') + 1
        raise ConfigError(source, line, f'invalid TOML: {exc}') from None


def read_table(text: str, source: str = PYPROJECT) -> dict[str, Any] | None:
    """The raw ``[tool.oracle-guard]`` table, or None when there is none."""
    if 'oracle-guard' not in text:
        return None  # fast path: most pyprojects never mention us
    data = parse_toml(text, source)
    table = data.get('tool', {})
    if not isinstance(table, dict):
        return None
    table = table.get('oracle-guard')
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(source, key_line(text, 'oracle-guard'), f'[{TABLE}] must be a table')
    return table


def config_from_table(root: str, table: Mapping[str, Any] | None, text: str = '',
                      source: str = PYPROJECT) -> Config:
    cfg = Config(root=root, has_table=table is not None)
    if not table:
        return cfg
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in SCHEMA:
            known = ', '.join(sorted(SCHEMA))
            raise ConfigError(
                source, key_line(text, key), f'unknown key {key!r} in [{TABLE}]',
                f'use one of: {known}',
            )
        try:
            values[_attr(key)] = _coerce(key, value, source=source, line=0)
        except ConfigError as exc:  # the line is looked up only for a message
            raise ConfigError(exc.path, key_line(text, key), exc.message, exc.hint) from None
    return cfg.replace(**values)


def _coerce(key: str, value: Any, *, source: str, line: int) -> Any:
    kind = SCHEMA[key][1]
    if kind == 'paths':
        if isinstance(value, str):
            value = [value]
        # properties = [] is a choice not made yet: the properties lane waits with a note.
        if not isinstance(value, list) or (not value and key != 'properties'):
            raise ConfigError(source, line, f'{key!r} must be a list of folders, files or globs')
        return tuple(dict.fromkeys(
            normalize_path(v, folder=not is_file_entry(v.strip()) if isinstance(v, str)
                           else True, source=source, line=line, key=key)
            for v in value
        ))
    if kind == 'dirs':
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not value or \
                not all(isinstance(v, str) for v in value):
            raise ConfigError(source, line, f'{key!r} must be a folder or a list of folders')
        folders = tuple(dict.fromkeys(normalize_path(v, folder=True, source=source,
                                                     line=line, key=key) for v in value))
        if '' in folders or any(is_glob(f) for f in folders):
            raise ConfigError(source, line, f'{key!r}: each entry is a folder inside the '
                              'repository, not its root or a glob')
        return folders
    if kind in ('dir', 'file'):
        if not isinstance(value, str):
            raise ConfigError(source, line, f'{key!r} must be a string path')
        return normalize_path(value, folder=kind == 'dir', source=source, line=line, key=key)
    if kind == 'str':
        if not isinstance(value, str) or not value:
            raise ConfigError(source, line, f'{key!r} must be a non-empty string')
        return value
    if kind == 'strs':
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(source, line, f'{key!r} must be a list of strings')
        if key == 'allow-silences':
            bad = [v for v in value if v not in SILENCE_KINDS]
            if bad:
                raise ConfigError(
                    source, line, f'{key!r}: unknown kind {bad[0]!r}',
                    f'use any of: {", ".join(SILENCE_KINDS)}',
                )
        return tuple(value)
    if kind == 'bool':
        if isinstance(value, str) and value.lower() in ('true', 'false'):
            return value.lower() == 'true'  # from hook args
        if not isinstance(value, bool):
            raise ConfigError(source, line, f'{key!r} must be true or false')
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(source, line, f'{key!r} must be a whole number >= 0')
    if key == 'max-freeze-days' and value > MAX_FREEZE_DAYS:
        raise ConfigError(source, line, f'{key!r} = {value} is more than {MAX_FREEZE_DAYS} '
                          'days; a freeze is temporary')
    if key == 'history-limit' and value < 1:
        raise ConfigError(source, line, f'{key!r} must be at least 1 (1 judges HEAD only)')
    if key == 'flaky-reruns' and not 2 <= value <= MAX_FLAKY_RERUNS:
        raise ConfigError(source, line, f'{key!r} = {value} must be between 2 and '
                          f'{MAX_FLAKY_RERUNS}: a flip needs at least two runs')
    if key.startswith('require-') and value > 100:
        raise ConfigError(source, line, f'{key!r} = {value} is a percent: 0 to 100')
    return value


def load_config(root: str, view: TreeView | None = None) -> Config:
    """Read ``[tool.oracle-guard]`` from the repository's pyproject.toml (if any).

    Hooks pass the side of the change they judge (the index during a commit, the to-ref
    of a range): an untracked or unstaged pyproject.toml must not reconfigure a check.
    Without a view (the pytest plugin, the human-run commands) the disk is read.
    """
    if view is not None:
        raw = view.read(PYPROJECT)
        if raw is None:
            return Config(root=root)
    else:
        path = os.path.join(root, PYPROJECT)
        try:
            with open(path, 'rb') as f:
                raw = f.read()
        except FileNotFoundError:
            return Config(root=root)
        except (OSError) as exc:
            raise ConfigError(PYPROJECT, 0, f'cannot read: {exc.strerror}') from None
    try:
        text = decode_utf8_sig(raw)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            PYPROJECT, raw.count(b'\n', 0, exc.start) + 1, 'is not valid UTF-8',
        ) from None
    return config_from_table(root, read_table(text), text)


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Hook ``args:`` that override the pyproject table, one flag per key."""
    group = parser.add_argument_group('configuration (overrides [tool.oracle-guard])')
    for key, (_default, kind) in SCHEMA.items():
        if kind in ('paths', 'strs', 'dirs'):
            group.add_argument(f'--{key}', action='append', metavar='VALUE', dest=_attr(key))
        elif kind == 'int':
            group.add_argument(f'--{key}', type=int, metavar='N', dest=_attr(key))
        elif kind == 'bool':
            group.add_argument(f'--{key}', metavar='true|false', dest=_attr(key))
        else:
            metavar = 'REV' if kind == 'str' else 'PATH'
            group.add_argument(f'--{key}', metavar=metavar, dest=_attr(key))


def apply_arguments(cfg: Config, args: argparse.Namespace) -> Config:
    values: dict[str, Any] = {}
    for key in SCHEMA:
        value = getattr(args, _attr(key), None)
        if value is not None:
            values[_attr(key)] = _coerce(key, value, source='hook args', line=0)
    return cfg.replace(**values) if values else cfg


def find_root(start: str) -> str:
    """The nearest folder at or above ``start`` with a pyproject.toml, stopping at a .git."""
    here = os.path.abspath(start)
    while True:
        if os.path.isfile(os.path.join(here, PYPROJECT)) or os.path.exists(
                os.path.join(here, '.git')):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return os.path.abspath(start)
        here = parent


def table_config(root: str, raw: bytes | None) -> Config | None:
    """The ``[tool.oracle-guard]`` table of one side's pyproject.toml bytes, without hook args:
    an empty Config when the side has no pyproject.toml, None when its table cannot be read
    (the hooks report that as a configuration error)."""
    if raw is None:
        return Config(root=root)
    try:
        text = decode_utf8_sig(raw)
        return config_from_table(root, read_table(text), text)
    except (ConfigError, UnicodeDecodeError):
        return None
