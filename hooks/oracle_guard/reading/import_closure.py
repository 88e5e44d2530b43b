"""Which test files the properties' strategies can reach through helper modules (rule 23).

A property's strategy may come from a helper module (``from strategies import codes``),
so a commit that edits only ``tests/strategies.py`` narrows every property reading it.
check-generator-lock must then judge those properties; a commit that edits a test file
no property reaches needs no property read at all. Without this module that question is
a ``git grep`` of the test roots for the file's module name on every commit, which costs
what the repository weighs.

What the strategy reader can follow (``strategy_reader.StrategyReader``) is fixed by a
module's top-level imports: ``from M import n`` may read the module ``M`` itself and any
module at or below ``M.n``; ``import a.b`` (which binds ``a``) any module at or below
``a``; ``import a.b as c`` any at or below ``a.b``; each spelled relative to the importing
file as ``strategy_reader.module_candidates`` resolves it. From every test module that may
hold a property (the hook's own byte prefilter), those imports are followed through every
test module they reach: the **closure** of one tree of the test roots is the set of files
reached and the module paths named (exactly, or with anything below them). A staged test
file in none of them cannot change what any property of that tree draws.

Kept per tree (``import-closures-*.txt``), under the tree object ids of the test roots at
HEAD and the configuration's roots; each commit also stores it under the ids its staged
change will give the roots (``repo/tree_ids.py``) when that change cannot alter it, so
the next commit finds it. Building it for a tree nobody saw lists the roots once (``git
ls-tree``) and reads each test module's imports from a per-blob cache
(``import-specs-*.txt``, keyed by git's blob id) or, for a blob never seen, from the blob.

Where and when: ``reading/cache_policy.py`` (never in CI unless asked). Without the cache
the hook keeps its ``git grep``. A line that does not read back exactly as it was written
is ignored: the tree is built again.
"""
from __future__ import annotations

import os

from oracle_guard.reading.cache_policy import append
from oracle_guard.reading.cache_policy import cache_folder

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import ast
    from collections.abc import Callable
    from collections.abc import Iterable
    from collections.abc import Mapping
    from collections.abc import Sequence

_MAX_BYTES = 4 << 20
_SEP = '\x1f'
_HEX = frozenset('0123456789abcdef')
# The modules a closure comes from (beside this one): the reader's import rules and
# module paths, the hook and its prefilter, the readers of the helpers' users, the tree ids.
_SOURCES = ('reading/import_closure.py', 'reading/strategy_reader.py',
            'hooks/check_generator_lock.py', 'reading/property_prefilter.py',
            'reading/property_modules.py', 'reading/property_users.py', 'repo/tree_ids.py')
# (kind, module, level): 'e' the module itself, 'p' the module and every one below it.
Spec = tuple  # (str, str, int)


def _code_digest() -> str:
    """The version, the interpreter and the size and modification time of every module a
    closure comes from: a new install or an edited checkout writes them anew. (Their
    bytes are not hashed: on every commit that cost more than the rest of the lookup.)"""
    import sys

    from oracle_guard import __version__

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    marks = [__version__, sys.version]
    for relative in _SOURCES:
        try:
            info = os.stat(os.path.join(package, relative))
            marks.append(f'{info.st_size}.{info.st_mtime_ns}')
        except OSError:
            marks.append('?')
    from oracle_guard.repo.tree_ids import hasher

    return hasher(20)(' '.join(marks).encode()).hexdigest()[:16]


def import_specs(tree: ast.Module) -> list[Spec]:
    """What the strategy reader may follow from a module's top-level imports."""
    import ast

    specs: list[Spec] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            module = stmt.module or ''
            if module:
                specs.append(('e', module, stmt.level))
            for alias in stmt.names:
                if alias.name != '*':
                    specs.append(('p', f'{module}.{alias.name}' if module else alias.name,
                                  stmt.level))
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                specs.append(('p', alias.name if alias.asname else alias.name.split('.')[0], 0))
    return specs


def _stems(importer: str, spec: Spec, roots: list[str]) -> list[str]:
    from oracle_guard.reading.strategy_reader import module_candidates

    _, module, level = spec
    # pairs: stem.py, stem/__init__.py
    return [c[:-3] for c in module_candidates(importer, module, level, roots)[0::2]]


class Closure:
    """The files the properties of one tree reach, and the module paths they name."""

    __slots__ = ('reached', 'exact', 'prefix')

    def __init__(self, reached: Iterable[str], exact: Iterable[str], prefix: Iterable[str]
                 ) -> None:
        self.reached = frozenset(reached)
        self.exact = frozenset(exact)
        self.prefix = frozenset(prefix)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Closure) and (self.reached, self.exact, self.prefix) == \
            (other.reached, other.exact, other.prefix)

    def __repr__(self) -> str:
        return (f'Closure(reached={sorted(self.reached)!r}, exact={sorted(self.exact)!r}, '
                f'prefix={sorted(self.prefix)!r})')

    def matters(self, path: str) -> bool:
        """Whether a property of this tree may read ``path`` (as it is, or once added)."""
        if path in self.reached:
            return True
        if not path.endswith('.py'):
            return False
        stem = path[:-3]
        if stem in self.exact or (path.endswith('/__init__.py') and path[:-12] in self.exact):
            return True
        if path == '__init__.py' and '' in self.exact:
            return True
        parts = stem.split('/')
        return any('/'.join(parts[:i]) in self.prefix for i in range(1, len(parts) + 1))

    def line(self, key: str) -> str | None:
        fields = [key, _SEP.join(sorted(self.reached)), _SEP.join(sorted(self.exact)),
                  _SEP.join(sorted(self.prefix))]
        text = '\t'.join(fields) + '\n'
        try:
            text.encode('utf-8')  # a path that is no UTF-8 (surrogate-escaped) is not kept
        except UnicodeEncodeError:
            return None
        if any(c in f for f in (*self.reached, *self.exact, *self.prefix, key)
               for c in '\t\n\r' + _SEP) or _parse_closure(text) != (key, self):
            return None  # what cannot be read back is not written
        return text


def _parse_closure(line: str) -> tuple[str, Closure] | None:
    if not line.endswith('\n'):
        return None
    fields = line[:-1].split('\t')
    if len(fields) != 4 or not fields[0]:
        return None
    split = [f.split(_SEP) if f else [] for f in fields[1:]]
    return fields[0], Closure(*split)


def build(files: Mapping[str, str], read: Callable[[Sequence[str]], Mapping[str, bytes | None]],
          roots: Sequence[str], specs_cache: SpecsCache,
          might_hold_properties: Callable[[bytes], bool]) -> Closure:
    """The closure of one tree: ``files`` (test modules, path -> blob id), ``read`` the
    bytes of several of them at once."""
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError

    known = {p: specs_cache.get(oid) for p, oid in files.items()}
    unread = [p for p, entry in known.items() if entry is None]
    data: dict[str, bytes | None] = dict(read(unread)) if unread else {}
    for path in unread:
        raw = data.get(path)
        flag = raw is not None and might_hold_properties(raw)
        known[path] = (flag, None)
        if raw is not None and not flag:
            specs_cache.put(files[path], False, None)

    def specs_of(path: str) -> list[Spec]:
        flag, found = known[path]  # type: ignore[misc]
        if found is not None:
            return found
        raw = data.get(path)
        if raw is None:
            return []
        try:
            found = import_specs(parse_python(raw, path))
        except ScanError:
            return []  # reported when the file itself is read; nothing is followed
        known[path] = (flag, found)
        specs_cache.put(files[path], flag, found)
        return found

    sorted_files = sorted(files)
    root_list = [r.rstrip('/') for r in roots]
    frontier = sorted(p for p, entry in known.items() if entry is not None and entry[0])
    reached = set(frontier)
    exact: set[str] = set()
    prefix: set[str] = set()
    while frontier:
        # one read of every blob of this round whose imports are not known yet
        wanted = [p for p in frontier if known[p][1] is None and p not in data]  # type: ignore[index]
        if wanted:
            data.update(read(wanted))
        following = []
        for path in frontier:
            for spec in specs_of(path):
                for stem in _stems(path, spec, root_list):
                    if spec[0] == 'e':
                        if stem in exact:
                            continue
                        exact.add(stem)
                        hits = [h for h in (f'{stem}.py', f'{stem}/__init__.py') if h in files]
                    else:
                        if stem in prefix:
                            continue
                        prefix.add(stem)
                        hits = [f'{stem}.py'] if f'{stem}.py' in files else []
                        hits += _below(sorted_files, stem + '/')
                    for hit in hits:
                        if hit not in reached:
                            reached.add(hit)
                            following.append(hit)
        frontier = following
    return Closure(reached, exact, prefix)


def _below(paths: list[str], folder: str) -> list[str]:
    import bisect

    start = bisect.bisect_left(paths, folder)
    end = start
    while end < len(paths) and paths[end].startswith(folder):
        end += 1
    return paths[start:end]


class SpecsCache:
    """Per blob id: whether it may hold a property, and its import specs (None when not
    parsed). ``get``, ``put``, then ``save`` appends."""

    def __init__(self, path: str, load: bool = True) -> None:
        self.path = path
        self.known: dict[str, tuple[bool, list[Spec] | None]] = {}
        self.new: list[str] = []
        try:
            if load and os.path.getsize(path) <= _MAX_BYTES:
                with open(path, encoding='utf-8', errors='replace', newline='\n') as f:
                    for line in f:
                        parsed = _parse_specs(line)
                        if parsed is not None:
                            old = self.known.get(parsed[0])
                            if old is None or old[1] is None:
                                self.known[parsed[0]] = parsed[1]
        except (OSError, ValueError):
            pass

    def get(self, oid: str) -> tuple[bool, list[Spec] | None] | None:
        return self.known.get(oid)

    def put(self, oid: str, flag: bool, specs: list[Spec] | None) -> None:
        old = self.known.get(oid)
        if old is not None and (old[1] is not None or specs is None):
            return
        text = _specs_line(oid, flag, specs)
        if text is not None:
            self.known[oid] = (flag, specs)
            self.new.append(text)

    def save(self) -> None:
        if self.new and append(self.path, ''.join(self.new), _MAX_BYTES):
            self.new = []


def _specs_line(oid: str, flag: bool, specs: list[Spec] | None) -> str | None:
    body = '-' if specs is None else ' '.join(f'{k}{lv}:{m}' for k, m, lv in specs)
    text = f'{oid}\t{int(flag)}\t{body}\n'
    parsed = _parse_specs(text)
    return text if parsed == (oid, (flag, specs)) else None


def _parse_specs(line: str) -> tuple[str, tuple[bool, list[Spec] | None]] | None:
    if not line.endswith('\n'):
        return None
    fields = line[:-1].split('\t')
    if len(fields) != 3 or len(fields[0]) not in (40, 64) or not set(fields[0]) <= _HEX or \
            fields[1] not in ('0', '1'):
        return None
    if fields[2] == '-':
        return fields[0], (fields[1] == '1', None)
    specs: list[Spec] = []
    for item in fields[2].split(' ') if fields[2] else []:
        head, colon, module = item.partition(':')
        if not colon or len(head) < 2 or head[0] not in 'ep' or not head[1:].isdigit() or \
                not head[1:].isascii() or \
                not all(part.isidentifier() for part in module.split('.') if module):
            return None
        if module and any(not part for part in module.split('.')):
            return None
        specs.append((head[0], module, int(head[1:])))
    return fields[0], (fields[1] == '1', specs)


class ClosureCache:
    """The closures of the trees seen, one line each (the last line of a key wins)."""

    def __init__(self, folder: str, digest: str) -> None:
        self.path = os.path.join(folder, f'import-closures-{digest}.txt')
        self.specs_path = os.path.join(folder, f'import-specs-{digest}.txt')

    @classmethod
    def for_this_code(cls) -> ClosureCache:
        return cls(cache_folder(), _code_digest())

    def get(self, keys: Sequence[str]) -> dict[str, Closure]:
        """The closures kept under ``keys``: one pass over the file."""
        found: dict[str, Closure] = {}
        starts = tuple(key + '\t' for key in keys)
        try:
            if not starts or os.path.getsize(self.path) > _MAX_BYTES:
                return found
            with open(self.path, encoding='utf-8', errors='replace', newline='\n') as f:
                for line in f:
                    if line.startswith(starts):
                        parsed = _parse_closure(line)
                        if parsed is not None and parsed[0] in keys:
                            found[parsed[0]] = parsed[1]
        except (OSError, ValueError):
            pass
        return found

    def put(self, pairs: Sequence[tuple[str, Closure]]) -> None:
        lines = [closure.line(key) for key, closure in pairs]
        text = ''.join(line for line in lines if line)
        if text:
            append(self.path, text, _MAX_BYTES)

    def specs(self, load: bool = True) -> SpecsCache:
        """The per-blob imports; ``load=False`` only appends (a line kept twice reads
        as once)."""
        return SpecsCache(self.specs_path, load)


def tree_key(config: str, ids: Sequence[str | None]) -> str:
    """The key of a tree of the test roots: the configuration's roots and each root's
    object id (``-`` for a root the tree does not hold)."""
    return config + '|' + ','.join(i or '-' for i in ids)
