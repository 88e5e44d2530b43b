"""What the test environment's site-packages hold, against pip's ``RECORD`` files (rule 46).

Run by the gate as ``TEST_PYTHON -I -S integrity_probe.py``: isolated and without the
``site`` module, so no ``.pth`` file, ``sitecustomize`` or user site runs while the
environment is inspected. Standard library only (nothing of the environment is
imported). Prints one JSON object; ``gate/integrity.py`` turns it into findings.

* ``changed``: a file of ``pytest``/``_pytest``, ``pluggy``, ``hypothesis`` or
  ``oracle_guard`` (every file their distributions' ``RECORD`` lists with a hash), or any
  listed ``.pth`` file, whose bytes differ from the hash, or that is gone;
* ``stray``: a ``.pth``, ``sitecustomize`` or ``usercustomize`` in a site folder that no
  distribution's ``RECORD`` (or an egg's ``installed-files.txt``) lists;
* ``compiled``: a ``__pycache__`` file of those packages, for this interpreter, that
  Python would load instead of its source and whose code is not the code compiled from
  that source (checked for files ``RECORD`` does not list, or written after it), and a
  sourceless ``.pyc`` beside the packages' modules;
* ``editable``: judged distributions installed in editable mode: their source lives
  outside site-packages and ``RECORD`` says nothing about it.

With ``--entry-points ROOT [SITES [EXTRA]]`` it prints instead the ``pytest11`` and ``hypothesis``
entry points ``importlib.metadata`` finds where a test run in ROOT would look, what each
distribution requires, the site folders it read, and the ``import`` lines of their ``.pth``
files (``gate/installed_plugins.py`` judges them).
"""
from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import json
import marshal
import os
import stat
import sys
import types

JUDGED = ('pytest', 'pluggy', 'hypothesis', 'oracle_guard')
# The test run's machinery pulls in what these require (Hypothesis imports sortedcontainers
# when it is imported, pytest iniconfig, packaging, pygments): their files are judged too,
# found through each distribution's Requires-Dist lines, markers not weighed.
REQUIRED_BY = ('pytest', 'pluggy', 'hypothesis')
CUSTOMIZE = ('sitecustomize', 'usercustomize')


def environment() -> tuple[str, bool]:
    """(the environment's prefix, whether it is a venv). Without the ``site`` module a
    venv's ``sys.prefix`` is its base interpreter's: find ``pyvenv.cfg`` as ``site`` does."""
    here = os.path.dirname(os.path.abspath(sys.executable))
    for candidate in (here, os.path.dirname(here)):
        if os.path.isfile(os.path.join(candidate, 'pyvenv.cfg')):
            return candidate, True
    return sys.prefix, False


def site_folders() -> list[str]:
    import site

    prefix, venv = environment()
    prefixes = [prefix]
    if venv:
        with open(os.path.join(prefix, 'pyvenv.cfg'), encoding='utf-8', errors='replace') as f:
            if any(line.split('=', 1)[0].strip() == 'include-system-site-packages'
                   and line.split('=', 1)[1].strip().lower() == 'true'
                   for line in f if '=' in line):
                prefixes += [sys.base_prefix, sys.base_exec_prefix]
    else:
        prefixes.append(sys.exec_prefix)
    folders = list(site.getsitepackages(prefixes))
    if not venv:  # a user site is only used outside a venv
        folders.append(site.getusersitepackages())
    seen: list[str] = []
    for folder in folders:
        real = os.path.realpath(folder)  # the folders once; the files below by name
        if os.path.isdir(real) and real not in seen:
            seen.append(real)
    return seen


def normalize(name: str) -> str:
    return name.replace('-', '_').replace('.', '_').lower()


def file_hash(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            digest.update(chunk)
    return 'sha256=' + base64.urlsafe_b64encode(digest.digest()).decode().rstrip('=')


def recorded_hash(value: str) -> str:
    """A ``RECORD`` row's ``sha256=`` hash as the wheel format writes it (URL-safe base64,
    unpadded). uv_build before 0.8 writes the same digest in hex (bidict's editable
    install): read as the digest it is, not as another file's."""
    digest = value[len('sha256='):]
    if len(digest) == 64 and all(c in '0123456789abcdefABCDEF' for c in digest):
        raw = bytes.fromhex(digest)
        return 'sha256=' + base64.urlsafe_b64encode(raw).decode().rstrip('=')
    return value


def fingerprint(code: types.CodeType) -> str:
    """What a code object does, without where it was compiled (the same measure as the
    run record's; repeated here because this file imports nothing of the package)."""
    digest = hashlib.sha256()
    todo = [code]
    while todo:
        c = todo.pop()
        digest.update(c.co_code)
        digest.update(repr((c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars,
                            c.co_argcount, c.co_kwonlyargcount, c.co_flags)).encode())
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                todo.append(const)
            else:
                digest.update(constant_text(const).encode('utf-8', 'backslashreplace') + b'\0')
    return digest.hexdigest()


def constant_text(const: object) -> str:
    """A constant's repr with every frozenset in sorted order: a frozenset's repr follows
    the hash order of the process that built it, and a cache file's frozenset is rebuilt in
    the order of the process that compiled it (another hash seed, at install time)."""
    if isinstance(const, frozenset):
        return 'frozenset({' + ', '.join(sorted(constant_text(e) for e in const)) + '})'
    if isinstance(const, tuple):
        return '(' + ''.join(constant_text(e) + ', ' for e in const) + ')'
    return repr(const)


def loaded_instead_of_source(pyc: str, source: str, data: bytes) -> bool:
    """Whether the import system would run this cache file rather than recompile."""
    flags = int.from_bytes(data[4:8], 'little')
    if flags & 1:  # hash-based
        if not flags & 2:
            return True  # unchecked: used as it is
        with open(source, 'rb') as f:
            return importlib.util.source_hash(f.read()) == data[8:16]
    st = os.stat(source)
    return int.from_bytes(data[8:12], 'little') == int(st.st_mtime) & 0xFFFFFFFF and \
        int.from_bytes(data[12:16], 'little') == st.st_size & 0xFFFFFFFF


def compiled_problem(pyc: str, source: str) -> str | None:
    with open(pyc, 'rb') as f:
        data = f.read()
    if data[:4] != importlib.util.MAGIC_NUMBER:
        return None  # not for this interpreter: never loaded
    if not loaded_instead_of_source(pyc, source, data):
        return None
    optimize = 0
    for level in (1, 2):
        if f'.opt-{level}.' in os.path.basename(pyc):
            optimize = level
    try:
        cached = marshal.loads(data[16:])
        with open(source, 'rb') as f:
            fresh = compile(f.read(), source, 'exec', dont_inherit=True, optimize=optimize)
    except (ValueError, EOFError, TypeError, SyntaxError) as exc:
        return f'cannot be compared with its source ({type(exc).__name__})'
    if not isinstance(cached, types.CodeType):
        return 'holds no code object'
    if fingerprint(cached) != fingerprint(fresh):
        return f'is not the code compiled from {os.path.basename(source)}'
    return None


def file_key(path: str) -> list[int] | None:
    """What the kernel says of a regular file that changes whenever its bytes do: size,
    modification and change times in nanoseconds, inode, device and mode. The change time
    (ctime) is set by the kernel at every write, rename or ``utime`` and no system call sets
    it back. None for anything but a regular file (a symlink's target could change under
    an unchanged link) or a path that cannot be read."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode]


def inspect(known: dict | None = None) -> dict:  # type: ignore[type-arg]
    """What the environment holds. ``known``: the ``checked`` map of an earlier look at it
    (path -> ``file_key``): a file whose key is unchanged since that look, which found it
    as its ``RECORD`` says (or found its compiled code to be its source's), is not read
    again."""
    facts: dict = {'prefix': environment()[0], 'executable': sys.executable,  # type: ignore[type-arg]
                   'cache_tag': sys.implementation.cache_tag, 'folders': site_folders(),
                   'changed': [], 'stray': [], 'compiled': [], 'editable': [], 'present': [],
                   'checked': {}}
    known = known or {}
    listed: set[str] = set()
    # name -> [(site, rows, RECORD ctime, dist-info folder)], in the order of the path
    others: dict[str, list[tuple[str, list[list[str]], float, str]]] = {}
    for folder in facts['folders']:
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            meta = os.path.join(folder, name)
            if name.endswith('.egg-info') and os.path.isfile(
                    os.path.join(meta, 'installed-files.txt')):
                with open(os.path.join(meta, 'installed-files.txt'), encoding='utf-8',
                          errors='replace') as f:
                    listed.update(os.path.normpath(os.path.join(meta, line.strip()))
                                  for line in f if line.strip())
                continue
            record = os.path.join(meta, 'RECORD')
            if not name.endswith('.dist-info') or not os.path.isfile(record):
                continue
            with open(record, encoding='utf-8', errors='replace', newline='') as f:
                rows = [row for row in csv.reader(f) if row]
            for row in rows:
                listed.add(os.path.normpath(os.path.join(folder, row[0])))
            dist = normalize(name[:-len('.dist-info')].split('-')[0])
            if dist in JUDGED:
                facts['present'].append(dist)
                if _editable(meta):
                    facts['editable'].append([dist, name])
            others.setdefault(dist, []).append((folder, rows, os.stat(record).st_ctime, meta))
        for name in names:
            stem = name.split('.', 1)[0]
            full = os.path.normpath(os.path.join(folder, name))
            if full in listed:
                continue
            if name.endswith('.pth') or (stem in CUSTOMIZE and (
                    name.endswith(('.py', '.pyc')) or os.path.isdir(full))):
                facts['stray'].append(full)
        cache = os.path.join(folder, '__pycache__')
        if os.path.isdir(cache):
            for name in sorted(os.listdir(cache)):
                if name.split('.', 1)[0] in CUSTOMIZE:
                    full = os.path.normpath(os.path.join(cache, name))
                    if full not in listed:
                        facts['stray'].append(full)
    judged = set(JUDGED) & set(others)
    todo = [d for d in REQUIRED_BY if d in others]
    while todo:
        for required in {r for entry in others[todo.pop()] for r in _requires(entry[3])}:
            if required in others and required not in judged:
                judged.add(required)
                todo.append(required)
    for dist, entries in sorted(others.items()):
        for folder, rows, record_time, _meta in entries:
            if dist in judged:
                _verify(facts, dist, folder, rows, known)
                _verify_compiled(facts, dist, folder, rows, listed, record_time, known)
            else:
                _verify(facts, dist, folder, [row for row in rows if row[0].endswith('.pth')],
                        known)
    return facts


def _requires(meta: str) -> list[str]:
    """The normalized names of a dist-info's ``Requires-Dist`` lines."""
    found = []
    try:
        with open(os.path.join(meta, 'METADATA'), encoding='utf-8', errors='replace') as f:
            for line in f:
                if not line.strip():
                    break  # the headers end at the first blank line
                if line.startswith('Requires-Dist:'):
                    head = ''
                    for char in line[len('Requires-Dist:'):].strip():
                        if not (char.isalnum() or char in '._-'):
                            break
                        head += char
                    if head:
                        found.append(normalize(head))
    except OSError:
        pass
    return found


def _editable(meta: str) -> bool:
    try:
        with open(os.path.join(meta, 'direct_url.json'), encoding='utf-8') as f:
            return bool(json.load(f).get('dir_info', {}).get('editable'))
    except (OSError, ValueError, AttributeError):
        return False


def _verify(facts: dict, dist: str, folder: str, rows: list[list[str]],  # type: ignore[type-arg]
            known: dict) -> None:  # type: ignore[type-arg]
    checked = facts['checked']
    for row in rows:
        if len(row) < 2 or not row[1].startswith('sha256='):
            continue
        path = os.path.join(folder, row[0])
        key = file_key(path)
        # The same RECORD row found right by the earlier look, the file unchanged since
        if key is not None and known.get(path) == [row[1], key]:
            checked[path] = [row[1], key]
            continue
        try:
            actual = file_hash(path)
        except OSError:
            facts['changed'].append([dist, os.path.normpath(path), 'is gone'])
            continue
        if actual != recorded_hash(row[1]):
            facts['changed'].append([dist, os.path.normpath(path),
                                     'differs from its hash in RECORD'])
        elif key is not None and key == file_key(path):
            checked[path] = [row[1], key]


def _verify_compiled(facts: dict, dist: str, folder: str, rows: list[list[str]],  # type: ignore[type-arg]
                     listed: set[str], record_time: float, known: dict) -> None:  # type: ignore[type-arg]
    packages = {os.path.dirname(os.path.join(folder, row[0])) for row in rows
                if row[0].endswith('.py') and '/' in row[0].replace(os.sep, '/')}
    tag = sys.implementation.cache_tag
    for package in sorted(packages):
        cache = os.path.join(package, '__pycache__')
        try:
            beside = sorted(os.listdir(package))
        except OSError:
            continue
        for name in beside:
            full = os.path.normpath(os.path.join(package, name))
            if name.endswith('.pyc') and full not in listed:
                facts['compiled'].append([dist, full, 'is compiled code with no source that '
                                          'no RECORD lists'])
        if not os.path.isdir(cache):
            continue
        for name in sorted(os.listdir(cache)):
            parts = name.split('.')
            if not name.endswith('.pyc') or len(parts) < 3 or parts[1] != tag:
                continue
            pyc = os.path.normpath(os.path.join(cache, name))
            source = os.path.join(package, parts[0] + '.py')
            if not os.path.isfile(source):
                continue  # a cache file without its source is never imported
            try:
                if pyc in listed and os.stat(pyc).st_ctime <= record_time + 1:
                    continue  # compiled by the installer, before it wrote RECORD
                keys = ['compiled', file_key(pyc), file_key(source)]
                if keys[1] is not None and keys[2] is not None and known.get(pyc) == keys:
                    facts['checked'][pyc] = keys  # found to be its source's, both unchanged
                    continue
                problem = compiled_problem(pyc, source)
            except OSError:
                continue
            if problem:
                facts['compiled'].append([dist, pyc, problem])
            elif None not in keys and keys == ['compiled', file_key(pyc), file_key(source)]:
                facts['checked'][pyc] = keys


# -- the entry points pytest and Hypothesis load (rule 46, OG738) --------------------------
ENTRY_POINT_GROUPS = ('pytest11', 'hypothesis')


def search_path(root: str, sites: list[str] | None = None,
                extra: list[str] | None = None) -> list[str]:
    """Where ``importlib.metadata`` looks in a test run, read without running anything: the
    checkout (``python -m pytest`` puts its working folder first), ``extra`` (the folders
    the gate found a run puts on ``sys.path`` besides: the pytest configuration's
    ``pythonpath``, the test files' folders, what the ``.pth`` import lines added at
    start-up before the install step), the site folders (this interpreter's, or ``sites``),
    and the folders their ``.pth`` files add (the lines that are not imports)."""
    paths = [root, *(extra or ())]
    for folder in site_folders() if sites is None else sites:
        paths.append(folder)
        for _, lines in pth_files(folder):
            for line in lines:
                line = line.strip()
                if not line or line.startswith(('#', 'import ', 'import\t')):
                    continue
                path = os.path.join(folder, line)
                if os.path.isdir(path):
                    paths.append(path)
    return list(dict.fromkeys(os.path.realpath(p) for p in paths))


def pth_files(folder: str) -> list[tuple[str, list[str]]]:
    """(path, lines) of each ``.pth`` file of a site folder, in the order ``site`` reads
    them."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    found = []
    for name in names:
        if not name.endswith('.pth'):
            continue
        try:
            with open(os.path.join(folder, name), 'rb') as f:
                found.append((os.path.join(folder, name), os.fsdecode(f.read()).splitlines()))
        except OSError:
            continue
    return found


def start_up_lines(sites: list[str]) -> list[list[str]]:
    """[the ``.pth`` file, the line] for every ``import`` line of the ``.pth`` files in
    ``sites``: the code ``site`` runs at every start-up of the interpreter."""
    return [[path, line] for folder in sites for path, lines in pth_files(folder)
            for line in lines if line.startswith(('import ', 'import\t'))]


def entry_points(root: str, paths: list[str] | None = None) -> list[list[str]]:
    """[group, name, value, distribution, its metadata folder, its ``direct_url.json`` url,
    where the entry's top-level module is found] for every entry point of the two groups."""
    from importlib import machinery
    from importlib import metadata

    paths = search_path(root) if paths is None else paths
    found = []
    for dist in metadata.distributions(path=paths):
        try:
            eps = [ep for ep in dist.entry_points if ep.group in ENTRY_POINT_GROUPS]
            name = dist.metadata['Name'] or ''
        except Exception:  # noqa: BLE001 -- unreadable metadata: nothing it declares loads
            continue
        if not eps:
            continue
        meta = getattr(dist, '_path', None)
        url = ''
        try:
            text = dist.read_text('direct_url.json')
            url = str(json.loads(text).get('url', '')) if text else ''
        except Exception:  # noqa: BLE001 -- not JSON: no url
            url = ''
        for ep in eps:
            module = ep.value.split(':', 1)[0].strip().split('.', 1)[0]
            origin = ''
            try:
                spec = machinery.PathFinder.find_spec(module, paths)
            except Exception:  # noqa: BLE001 -- a name no finder takes
                spec = None
            if spec is not None:
                origin = spec.origin if spec.origin not in (None, 'namespace') else \
                    next(iter(spec.submodule_search_locations or ()), '')
            found.append([ep.group, ep.name, ep.value, str(name),
                          os.path.realpath(str(meta)) if meta is not None else '', url,
                          os.path.realpath(origin) if origin else ''])
    return found


def requirements(root: str, paths: list[str] | None = None) -> dict[str, list[str]]:
    """Each distribution's name -> the names its ``Requires-Dist`` lines give (extras and
    markers not weighed: what it may pull in)."""
    from importlib import metadata

    paths = search_path(root) if paths is None else paths
    found: dict[str, list[str]] = {}
    for dist in metadata.distributions(path=paths):
        try:
            name = dist.metadata['Name'] or ''
            lines = dist.requires or []
        except Exception:  # noqa: BLE001 -- unreadable metadata
            continue
        names = []
        for line in lines:
            head = ''
            for char in str(line).strip():
                if not (char.isalnum() or char in '._-'):
                    break
                head += char
            if head:
                names.append(head)
        found.setdefault(str(name), []).extend(names)
    return found


if __name__ == '__main__':
    if sys.argv[1:2] == ['--entry-points']:
        # ROOT [SITES [EXTRA], as JSON]: with SITES (null: this interpreter's), another
        # interpreter's site folders are read (the gate's own interpreter, once the install
        # step may have replaced the test one); EXTRA: more folders a test run searches
        sites = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
        extra = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
        where = search_path(sys.argv[2], sites, extra)
        sites = site_folders() if sites is None else sites
        json.dump({'entry_points': entry_points(sys.argv[2], where),
                   'requires': requirements(sys.argv[2], where),
                   'sites': sites, 'start_up': start_up_lines(sites)}, sys.stdout)
    else:
        # --known: the ``checked`` map of the earlier look, as JSON on stdin. dumps, not
        # dump: json.dump encodes in Python, dumps with the C encoder (thousands of files)
        sys.stdout.write(json.dumps(
            inspect(json.load(sys.stdin) if sys.argv[1:2] == ['--known'] else None)))
