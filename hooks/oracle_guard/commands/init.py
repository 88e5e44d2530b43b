"""``oracle-guard init``: adopt the guard in a new or existing repository.

Detects the layout (``src/`` or flat packages; ``tests/`` or ``test/``; the folder that
holds the Hypothesis properties), then writes what is missing: the ``[tool.oracle-guard]``
table (appended to pyproject.toml), an empty ledger with budget 0, the fixture manifest
with a row for every fixture already there (``source: human``, its purpose saying that it
predates the guard), the trace store, the domain lock of every property there is
(``oracle-guard lock``), the baseline of the silences there are (``oracle-guard
baseline``), the ``.pre-commit-config.yaml`` entry pinned to the commit this oracle-guard
was installed from, and with ``--codeowners OWNER`` CODEOWNERS lines for the oracle files.
An existing file or table is never overwritten (``--force`` rewrites the generated files);
``--dry-run`` prints what would be written and writes nothing.

Exit codes: 0 done (or nothing to do), 1 a file init cannot safely edit (the
snippet to paste is printed), 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import os
import posixpath
import sys
from collections.abc import Sequence
from typing import Any

from oracle_guard.commands import automated_run
from oracle_guard.commands.init_fixtures import guard_data_folders
from oracle_guard.commands.init_fixtures import unguarded_data_folders
from oracle_guard.commands import refuse_unattended
from oracle_guard.hooks import HOOKS
from oracle_guard.config import config_from_table
from oracle_guard.config import is_file_entry
from oracle_guard.config import is_glob
from oracle_guard.config import load_config
from oracle_guard.config import normalize_path
from oracle_guard.config import parse_toml
from oracle_guard.config import PYPROJECT
from oracle_guard.config import read_table
from oracle_guard.config import SCHEMA
from oracle_guard.config import TABLE
from oracle_guard.findings import ConfigError
from oracle_guard.repo.gitrepo import repo_root
from oracle_guard.runner import guarded

PRE_COMMIT_CONFIG = '.pre-commit-config.yaml'
PLACEHOLDER_REPO = 'https://example.invalid/oracle-guard'
PATH_KEYS = ('src', 'tests', 'properties', 'fixtures', 'manifest', 'traces', 'ledger',
             'domain-lock', 'baseline')
NOT_SOURCE = ('tests', 'test', 'testing', 'docs', 'doc', 'examples', 'example', 'benchmarks',
              'bench', 'scripts', 'tools', 'build', 'dist', 'site', 'ci')
EMPTY_LEDGER = (
    '# Named freezes: every skipped or xfailed test, owned and dated (oracle-guard).\n'
    'budget: 0\n'
    'freezes: []\n'
)
EMPTY_TRACES = (
    '# Recorded trace ids, one a line. Add an id in a commit of its own, before the\n'
    '# manifest row that cites it: a change cannot mint its own evidence.\n'
)


class CannotEdit(Exception):
    """A file init will not edit by itself; the message carries what to paste."""


def hook_repo_url() -> str:
    """Where this oracle-guard comes from: the URL or folder it was installed from, its
    package metadata, else a placeholder."""
    from oracle_guard.reading.install_origin import installed_origin

    origin = installed_origin().url
    if origin and not origin.startswith('file://'):
        return origin
    try:
        from importlib.metadata import metadata
        urls = metadata('oracle-guard').get_all('Project-URL') or []
    except Exception:  # noqa: BLE001 -- metadata is optional (running from a checkout)
        urls = []
    for label in ('source', 'repository', 'homepage'):
        for entry in urls:
            name, _, url = entry.partition(',')
            if name.strip().lower() == label and url.strip():
                return url.strip()
    return PLACEHOLDER_REPO


def check_toml(text: str) -> None:
    """An existing pyproject.toml must parse before init appends to it."""
    try:
        parse_toml(text)
    except ConfigError as exc:
        raise ConfigError(exc.path, exc.line, f'{exc.message}; init leaves it alone') from None


def toml_table(values: dict[str, Any]) -> str:
    lines = [f'[{TABLE}]']
    for key in PATH_KEYS:
        lines.append(f'{key} = {json.dumps(values[key])}')
    if values.get('src-test-imports'):
        lines.append(f'src-test-imports = {json.dumps(values["src-test-imports"])}')
    return '\n'.join(lines) + '\n'


def table_values(src: Sequence[str] | None, tests: Sequence[str] | None,
                 layout: dict[str, Any] | None = None) -> dict[str, Any]:
    values = {key: SCHEMA[key][0] for key in PATH_KEYS}
    values.update(layout or {})
    for key, given in (('src', src), ('tests', tests)):
        if given:
            values[key] = [normalize_path(v, folder=not is_file_entry(v), source='command line',
                                          line=0, key=key)
                           for v in given]
    return values


def pre_commit_entry(url: str, rev: str, indent: int) -> str:
    """One ``repos:`` item, its dash at column ``indent``."""
    pad = ' ' * indent
    lines = [f'{pad}- repo: {url}', f'{pad}  rev: {rev}', f'{pad}  hooks:']
    lines.extend(f'{pad}    - id: {hook_id}' for hook_id in HOOKS)
    return '\n'.join(lines) + '\n'


def runs_oracle_guard(config: Any) -> bool:
    repos = config.get('repos') if isinstance(config, dict) else None
    for repo in repos if isinstance(repos, list) else ():
        if not isinstance(repo, dict):
            continue
        if 'oracle-guard' in str(repo.get('repo', '')):
            return True
        hooks = repo.get('hooks')
        for hook in hooks if isinstance(hooks, list) else ():
            if isinstance(hook, dict) and hook.get('id') in HOOKS:
                return True
    return False


def pre_commit_refuses(text: str) -> str | None:
    """Why pre-commit itself would refuse this configuration (its own schema), or None.
    Without pre-commit installed next to oracle-guard, the YAML checks below decide."""
    try:
        import cfgv
        from pre_commit.clientlib import CONFIG_SCHEMA
        from pre_commit.yaml import yaml_load
    except ImportError:  # pragma: no cover -- pre-commit is installed with the hooks
        return None
    try:
        cfgv.validate(yaml_load(text), CONFIG_SCHEMA)
    except cfgv.ValidationError as exc:
        lines = [line.strip('=> ').strip() for line in str(exc).splitlines() if line.strip()]
        return '; '.join(lines[-2:]) or 'invalid'
    except Exception as exc:  # noqa: BLE001 -- a YAML error: pre-commit refuses it too
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


def add_pre_commit_entry(text: str, url: str, rev: str) -> str | None:
    """The config with our repo entry appended to ``repos:``; None if it already runs us.

    Edited as text, so the user's comments and layout survive; the result is parsed
    again, and checked against pre-commit's own schema, before it is written. A file
    pre-commit cannot load today (another runner's dialect, a repo without ``rev:``) is
    left as it is: init never writes a file that pre-commit then refuses.
    """
    import yaml

    newline = '\r\n' if '\r\n' in text else '\n'
    if not text.strip():
        return 'repos:\n' + pre_commit_entry(url, rev, 2)
    try:
        if runs_oracle_guard(yaml.safe_load(text)):
            return None
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        raise ConfigError(PRE_COMMIT_CONFIG, mark.line + 1 if mark else 0,
                          f'invalid YAML: {getattr(exc, "problem", None) or exc}') from None
    refused = pre_commit_refuses(text)
    if refused is not None:
        raise CannotEdit(f'{PRE_COMMIT_CONFIG}: pre-commit cannot load it as it is ({refused}); '
                         'init left it untouched. Once pre-commit accepts it, add this entry '
                         'to "repos:":\n' + pre_commit_entry(url, rev, 2))
    repos = None
    if isinstance(root, yaml.MappingNode):
        repos = next((v for k, v in root.value if getattr(k, 'value', None) == 'repos'), None)
    if isinstance(repos, yaml.SequenceNode) and not repos.flow_style:
        at = repos.end_mark.index
        entry = pre_commit_entry(url, rev, repos.start_mark.column)
        lead = '' if text[:at].endswith('\n') else newline
        result = text[:at] + lead + entry.replace('\n', newline) + text[at:]
    elif isinstance(repos, yaml.SequenceNode) and not repos.value:  # `repos: []`
        start, end = repos.start_mark.index, repos.end_mark.index
        line_end = text.find('\n', end)
        line_end = len(text) if line_end < 0 else line_end + 1
        rest = text[end:line_end]
        lead = '' if rest.endswith('\n') else newline
        entry = pre_commit_entry(url, rev, 2)
        result = text[:start].rstrip(' ') + rest + lead + entry.replace('\n', newline) + text[line_end:]
    else:
        raise CannotEdit(f'{PRE_COMMIT_CONFIG} has no block-style "repos:" list init can '
                         'extend; add this entry to it by hand:\n' + pre_commit_entry(url, rev, 2))
    try:
        ok = runs_oracle_guard(yaml.safe_load(result)) and pre_commit_refuses(result) is None
    except yaml.YAMLError:
        ok = False
    if not ok:  # never write a config that does not parse to what we meant
        raise CannotEdit(f'{PRE_COMMIT_CONFIG}: init could not append its entry safely; add '
                         'this to "repos:" by hand:\n' + pre_commit_entry(url, rev, 2))
    return result


class Scaffold:
    def __init__(self, root: str) -> None:
        self.root = root
        self.wrote: list[str] = []
        self.kept: list[str] = []
        self.problems: list[str] = []

    def full(self, path: str) -> str:
        return os.path.join(self.root, path)

    def read(self, path: str) -> str | None:
        try:
            with open(self.full(path), 'rb') as f:
                raw = f.read()
        except FileNotFoundError:
            return None
        try:
            return raw.decode('utf-8')
        except UnicodeDecodeError:
            raise ConfigError(path, 0, 'is not valid UTF-8; init leaves it alone') from None

    dry_run = False

    def write(self, path: str, text: str, what: str) -> None:
        if self.dry_run:
            self.wrote.append(f'would write {path}: {what}')
            return
        target = self.full(path)
        os.makedirs(os.path.dirname(target) or '.', exist_ok=True)
        with open(target, 'w', encoding='utf-8', newline='') as f:
            f.write(text)
        self.wrote.append(f'wrote {path}: {what}')

    def create(self, path: str, text: str, what: str, force: bool = False) -> bool:
        if os.path.lexists(self.full(path)) and not force:
            self.kept.append(f'kept  {path}: it exists (--force rewrites it)')
            return False
        self.write(path, text, what)
        return True

    def plan_pyproject(self, values: dict[str, Any]) -> tuple[str | None, str | None]:
        """(current text, new text or None when the table is already there)."""
        text = self.read(PYPROJECT)
        if text is not None:
            check_toml(text.lstrip('\ufeff'))
            if read_table(text.lstrip('\ufeff')) is not None:
                return text, None
        table = toml_table(values)
        if text is None:
            return None, table
        body = text.lstrip('\ufeff')
        new = text + ('' if body.endswith('\n') or not body else '\n') + \
            ('\n' if body.strip() else '') + table
        try:  # the appended table must read back as a valid configuration
            table_read = read_table(new)
            if table_read is not None:
                config_from_table(self.root, table_read, new)
        except ConfigError:
            table_read = None
        if table_read is None:
            raise CannotEdit(f'{PYPROJECT}: appending [{TABLE}] would not parse (is "tool" '
                             'an inline table?); add this table by hand:\n' + table)
        return text, new

    def pyproject(self, text: str | None, new: str | None) -> None:
        if new is None:
            self.kept.append(f'kept  {PYPROJECT}: [{TABLE}] is already there')
            return
        self.write(PYPROJECT, new, f'[{TABLE}] table' if text is None
                   else f'appended the [{TABLE}] table')

    def plan_pre_commit(self, url: str, rev: str) -> tuple[str | None, str | None]:
        """(current text, new text or None when it already runs us), before anything is written."""
        text = self.read(PRE_COMMIT_CONFIG)
        return text, add_pre_commit_entry(text or '', url, rev)

    def pre_commit(self, text: str | None, new: str | None) -> None:
        if new is None:
            self.kept.append(f'kept  {PRE_COMMIT_CONFIG}: it already runs oracle-guard')
            return
        self.write(PRE_COMMIT_CONFIG, new, 'created with the oracle-guard hooks' if text is None
                   else 'appended the oracle-guard hooks to "repos:"')


# -- the layout of an existing repository ---------------------------------------------------

def tracked_files(root: str) -> list[str]:
    """Tracked files and untracked ones git does not ignore: what the repository holds."""
    from oracle_guard.repo.gitrepo import git
    from oracle_guard.repo.gitrepo import split_z

    return sorted(set(split_z(git('ls-files', '-z', '--cached', '--others',
                                  '--exclude-standard', cwd=root))))


TEST_FOLDERS = ('tests', 'test', 'testing')
# Folders of example or data files that a test suite ships but pytest is not meant to
# collect as the project's tests (pytest's own testing/example_scripts/).
DATA_FOLDERS = ('example_scripts', 'examples', 'example', 'data', 'testdata', 'test_data',
                'fixtures', 'resources', 'samples')
# Where the oracle files go when no tests folder sits at the top: a name no Python
# package can have, so it never collides with the code.
ORACLE_HOME = 'oracle-guard/'
# The fixture root when the tests folder's fixtures/ is a package of the suite: a name no
# Python package can have.
FIXTURE_HOME = 'oracle-guard-fixtures/'
# How a test module reads every file under a folder: from its own ``__file__``, the files
# under the tests folder (init's oracle files there too).
WALKS = ('os.walk(', '.rglob(', 'recursive=True', ".glob('**", '.glob("**')
# Python files at the top of a repository that build, configure or drive it: never its code.
NOT_SOURCE_MODULES = ('setup.py', 'conftest.py', 'noxfile.py', 'tasks.py', 'fabfile.py',
                      'dodo.py', 'pavement.py', 'runtests.py', 'run_tests.py', 'bootstrap.py')


class Layout:
    """What ``init`` makes of an existing repository: the configuration values and one
    line per thing it found (or could not decide)."""

    def __init__(self, root: str, files: Sequence[str]) -> None:
        from oracle_guard.reading.pytest_exclusions import CollectionScope
        from oracle_guard.repo.tree_view import TreeView

        self.root = root
        self.files = list(files)
        self.scope = CollectionScope(TreeView(root, None), self.files)
        self.said: list[str] = []
        self.values: dict[str, Any] = {}

    def collected(self, path: str) -> bool:
        """A test module pytest collects from the root (not left out by the pytest
        configuration, not in an example or data folder)."""
        from oracle_guard.reading.scanner import is_test_module

        return is_test_module(path) and self.scope.excluded_by(path) is None and \
            not any(part in DATA_FOLDERS for part in path.split('/')[:-1])

    def test_roots(self) -> list[str]:
        """tests/, test/ or testing/ at the top, and the test folders inside the
        packages, as one glob per package when there are several (pkg/**/tests/)."""
        modules = [f for f in self.files if self.collected(f)]
        tops = [f'{d}/' for d in TEST_FOLDERS
                if any(m.startswith(f'{d}/') for m in modules)]
        nested: dict[tuple[str, str], set[str]] = {}
        for path in modules:
            if any(path.startswith(top) for top in tops):
                continue
            parts = path.split('/')[:-1]
            for depth, part in enumerate(parts):
                if part in TEST_FOLDERS and depth > 0:
                    nested.setdefault((parts[0], part), set()).add('/'.join(parts[:depth + 1]))
                    break
        roots = []
        for (top, name), folders in sorted(nested.items()):
            if len(folders) == 1:
                roots.append(f'{next(iter(folders))}/')
            else:
                roots.append(f'{top}/**/{name}/')
        return tops + roots + self.root_test_files(modules)

    def root_test_files(self, modules: Sequence[str]) -> list[str]:
        """Test modules at the top of the repository (a single-module package's
        test_mymod.py), as pytest's own name patterns, so a test file added beside them
        is test code too; with them the conftest.py at the top, which they load."""
        patterns = []
        for path in modules:
            if '/' in path:
                continue
            patterns.append('test_*.py' if path.startswith('test_') else '*_test.py')
        if patterns and 'conftest.py' in self.files:
            patterns.append('conftest.py')
        return list(dict.fromkeys(patterns))

    def top_modules(self) -> list[str]:
        """Python modules at the top that are production code (a single-module
        package's mymod.py): not tests, not the build or task scripts beside them."""
        return [f for f in self.files if '/' not in f and f.endswith('.py') and
                not self.collected(f) and f not in NOT_SOURCE_MODULES and
                not f.startswith(('.', 'test_'))]

    def detect(self) -> tuple[dict[str, Any], list[str]]:
        files = self.files
        tops = {f.split('/', 1)[0] for f in files if '/' in f}
        values, said = self.values, self.said
        tests = self.test_roots()
        if tests:
            said.append(f'tests: {", ".join(tests)}')
        else:
            tests = ['tests/']
            said.append('tests: tests/ (no test module found: the folder where tests will go; '
                        'set `tests` if they go elsewhere)')
        values['tests'] = tests
        # Production code: src/, else the top-level packages, else the top-level modules.
        if 'src' in tops:
            src = ['src/']
            said.append('src: src/')
        else:
            packages = sorted(d for d in tops if f'{d}/__init__.py' in files and
                              d.lower() not in NOT_SOURCE and not d.startswith('.'))
            src = [f'{d}/' for d in packages] or self.top_modules()
            if src:
                said.append(f'src: {", ".join(src)} (flat layout)')
            else:
                src = ['src/']
                said.append('src: src/ (no package or module found: the folder where the '
                            'code will go; set `src` if it goes elsewhere)')
        values['src'] = src
        # The oracle files go to one place at the top: the tests folder there, else a
        # folder of their own, never into the first subpackage found.
        home = next((t for t in tests if t.count('/') == 1 and not is_glob(t)), ORACLE_HOME)
        walker = self.walks_its_folder(home) if home != ORACLE_HOME else None
        if walker:
            # The suite reads every file under its own folder (jmespath loads each *.json
            # under tests/ as a test case): the oracle files there would become its input.
            said.append(f'oracle files: {ORACLE_HOME} ({walker} reads the files under its '
                        f'folder: {home} would feed them to the suite)')
            home = ORACLE_HOME
        fixtures = f'{home}fixtures/'
        if f'{fixtures}__init__.py' in files:
            # A Python package of that name is code of the suite (django's tests/fixtures/
            # is one of its test apps), not a folder of data files: its modules must not
            # become manifest rows that every edit of a test there would have to rehash.
            fixtures = f'{home}{FIXTURE_HOME}'
            said.append(f'fixtures: {fixtures} ({home}fixtures/ is a Python package of the '
                        'suite, not a folder of fixture files)')
        values['fixtures'] = fixtures
        values['manifest'] = f'{fixtures}manifest.json'
        values['traces'] = f'{fixtures}traces.txt'
        values['ledger'] = f'{home}freeze_ledger.yaml'
        values['domain-lock'] = f'{home}domain_lock.json'
        values['baseline'] = f'{home}oracle_baseline.json'
        values['properties'] = []
        return values, said

    def walks_its_folder(self, home: str) -> str | None:
        """A test module or conftest of the ``home`` folder that walks the folder it sits in
        (``os.walk``, ``rglob``, a recursive glob from ``__file__``), or None."""
        for path in self.files:
            if not (path.startswith(home) and path.endswith('.py')) or \
                    not (self.collected(path) or path.endswith('conftest.py')):
                continue
            text = (self.read(path) or b'').decode('utf-8', 'replace')
            if '__file__' in text and any(walk in text for walk in WALKS):
                return path
        return None

    def read(self, path: str) -> bytes | None:
        from oracle_guard.commands.lock import read_file

        return read_file(self.root, path)

    def properties(self, tests: Sequence[str]) -> tuple[list[str], list[str]]:
        """(the property tests init proposes, notes): the collected test modules under the
        tests roots that hold ``@given`` tests or Hypothesis state machines, named where
        they are (a folder when one folder holds them all and nothing else); a module
        with a test that asserts nothing is left for a person (rule 31)."""
        from oracle_guard.config import Config
        from oracle_guard.reading.scanner import parse_python
        from oracle_guard.reading.scanner import ScanError
        from oracle_guard.reading.scanner import scan_tests
        from oracle_guard.reading.property_reader import holds_properties

        cfg = Config(root=self.root, tests=tuple(tests))
        found, hollow, modules = [], [], []
        for path in self.files:
            if not (cfg.is_test_code(path) and self.collected(path)):
                continue
            modules.append(path)
            source = self.read(path)
            if source is None or b'given' not in source and b'StateMachine' not in source:
                continue
            try:
                tree = parse_python(source, path)
            except ScanError:
                continue
            if not holds_properties(tree):
                continue
            if all(t.does_something for t in scan_tests(tree)):
                found.append(path)
            else:
                hollow.append(path)
        notes = [f'{path} holds Hypothesis tests but also a test that asserts nothing: not '
                 'proposed as a property (name it in `properties` once it checks something)'
                 for path in hollow]
        if not found:
            return [], notes
        folders = {posixpath.dirname(p) for p in found}
        if len(folders) == 1 and '' not in folders:
            # A folder of its own (tests/property/) is named as a folder; an ordinary
            # tests folder never is: every test added there would become human-owned.
            folder = f'{folders.pop()}/'
            if folder not in tests and posixpath.basename(folder[:-1]) not in TEST_FOLDERS \
                    and all(m in found for m in modules if m.startswith(folder)):
                return [folder], notes
        return sorted(found), notes


    def src_test_imports(self, src: Sequence[str], tests: Sequence[str]) -> list[str]:
        """The Hypothesis modules code under ``src`` uses already (a project that ships
        strategies, or calls ``assume`` in a helper), to list in ``src-test-imports``.
        The hooks judge only code a change adds (rule 43), but the gate judges every
        example thrown away at run time: unlisted, the code that predates the guard would
        fail every pull request's gate (OG717)."""
        from oracle_guard.config import Config
        from oracle_guard.reading.scanner import parse_python
        from oracle_guard.reading.scanner import ScanError
        from oracle_guard.reading.test_run_reach import may_reach
        from oracle_guard.reading.test_run_reach import reach_sites

        cfg = Config(root=self.root, src=tuple(src), tests=tuple(tests))
        found: set[str] = set()
        for path in self.files:
            if not path.endswith('.py') or not cfg.is_src(path) or cfg.is_test_code(path):
                continue
            source = self.read(path)
            if source is None or b'hypothesis' not in source or not may_reach(source):
                continue
            try:
                sites = reach_sites(parse_python(source, path))
            except (ScanError, RecursionError):
                continue
            found.update(site.module for site in sites
                         if site.module and site.module.split('.')[0] == 'hypothesis')
        return sorted(found)


def detect_layout(files: Sequence[str], root: str = '.') -> tuple[dict[str, Any], list[str]]:
    """Configuration values for the repository as it is, and one line per finding."""
    return Layout(root, files).detect()


def codeowners_lines(cfg: Any, owner: str) -> list[str]:
    paths = [cfg.ledger, cfg.manifest, cfg.traces, cfg.domain_lock, cfg.baseline,
             *cfg.properties, '.pre-commit-config.yaml']
    return [f'/{p} {owner}' for p in dict.fromkeys(paths)]


def run_init(args: argparse.Namespace) -> int:
    from oracle_guard.reading.install_origin import installed_origin

    root = repo_root()
    scaffold = Scaffold(root)
    scaffold.dry_run = args.dry_run
    origin = installed_origin()
    url = args.hook_repo or hook_repo_url()
    rev = args.rev or origin.commit
    if not rev:
        raise ConfigError('command line', 0, 'the commit this oracle-guard was installed from '
                          'is not known; pass --rev COMMIT (a commit id of the oracle-guard '
                          'repository, `git rev-parse HEAD` in a clone of it)')
    files = tracked_files(root)
    found = Layout(root, files)
    layout, said = found.detect()
    if args.tests:
        layout['tests'] = list(args.tests)
    props, notes = found.properties([normalize_path(t, folder=not is_file_entry(t),
                                                    source='command line', line=0, key='tests')
                                     for t in layout['tests']])
    layout['properties'] = props
    if props:
        said.append(f'properties: {", ".join(props)} (they hold the Hypothesis tests; '
                    'named in place, nothing moved)')
    else:
        said.append('properties: none named: init found no module of Hypothesis tests it can '
                    'propose; the properties check waits, with a note on every run, until '
                    'you name the files whose answers a person owns (properties = [...])')
    said.extend(notes)
    roots = table_values(args.src, args.tests, layout)
    guard_data_folders(root, files, layout, roots, args.leave_out or (), said)
    reach = found.src_test_imports(roots['src'], roots['tests'])
    if reach:
        layout['src-test-imports'] = reach
        said.append(f'src-test-imports: {", ".join(reach)} (code under src uses Hypothesis '
                    'already; its own discarded examples are not a cheat)')
    # Every input is read and judged before the first write: bad input writes nothing.
    plans: dict[str, tuple[str | None, str | None]] = {}
    for name, plan in (
            (PRE_COMMIT_CONFIG, lambda: scaffold.plan_pre_commit(url, rev)),
            (PYPROJECT, lambda: scaffold.plan_pyproject(table_values(args.src, args.tests,
                                                                     layout))),
    ):
        try:
            plans[name] = plan()
        except CannotEdit as exc:
            scaffold.problems.append(str(exc))
    for line in said:
        print(f'found {line}')
    if PYPROJECT in plans:
        scaffold.pyproject(*plans[PYPROJECT])
    if args.dry_run and PYPROJECT in plans and plans[PYPROJECT][1] is not None:
        cfg = config_from_table(root, read_table(plans[PYPROJECT][1]), plans[PYPROJECT][1])
    else:
        cfg = load_config(root)  # the table as it now stands: an existing one wins
    force = args.force
    scaffold.create(cfg.ledger, EMPTY_LEDGER, 'empty freeze ledger, budget 0', force)
    scaffold.create(cfg.traces, EMPTY_TRACES, 'empty trace store', force)
    manifest_new = scaffold.create(cfg.manifest, '{\n  "fixtures": {},\n  "version": 1\n}\n',
                                   'empty fixture manifest', force)
    lock_new = scaffold.create(cfg.domain_lock, '{\n  "properties": {},\n  "version": 1\n}\n',
                               'empty domain lock', force)
    if PRE_COMMIT_CONFIG in plans:
        scaffold.pre_commit(*plans[PRE_COMMIT_CONFIG])
    fixtures = [f for f in files if cfg.is_fixture(f)]
    said_after = unguarded_data_folders(root, files, cfg, args.leave_out or ())
    baseline_exists = os.path.lexists(os.path.join(root, cfg.baseline))
    for line in scaffold.wrote + scaffold.kept:
        print(line)
    followed = []
    if fixtures and manifest_new:
        holding = [f.rstrip('/') for f in cfg.fixtures if any(p.startswith(f) for p in fixtures)]
        followed.append(('fixtures', ['add', *holding, '--source', 'human',
                                      '--purpose', PREDATES]))
    if lock_new:
        followed.append(('lock', (['--dry-run'] if args.dry_run else []) +
                         (['--rates'] if args.rates else [])))
    if force or not baseline_exists:
        followed.append(('baseline', ['--dry-run'] if args.dry_run else []))
    if force and automated_run(os.environ):
        # init was told to run unattended: so are the commands it runs for it.
        followed = [(command, [*argv, '--force']) for command, argv in followed]
    for command, argv in followed:
        if args.dry_run and command == 'fixtures':
            print(f'would add manifest rows for {len(fixtures)} fixture(s) under '
                  f'{cfg.fixtures_label()} (source human, predating the guard)')
            continue
        status = _run_command(command, argv, root, quiet=command == 'fixtures')
        if command == 'fixtures' and not status:
            print(f'added {len(fixtures)} manifest row(s) to {cfg.manifest} for the fixtures '
                  f'under {cfg.fixtures_label()} (source human, predating the guard)')
        if status:
            scaffold.problems.append(f'`oracle-guard {command} {" ".join(argv)}` exited '
                                     f'{status}\n')
    for line in said_after:
        print(f'note: {line}')
    if args.codeowners:
        codeowners(scaffold, cfg, args.codeowners)
    for problem in scaffold.problems:
        sys.stderr.write(f'oracle-guard init: {problem}')
    if args.dry_run:
        print('dry run: nothing was written')
    elif scaffold.wrote or followed:
        print(next_steps(cfg, root, files))
    elif not scaffold.problems:
        print('nothing to do: oracle-guard is already set up here')
    return 1 if scaffold.problems else 0


PREDATES = ('predates oracle-guard: recorded as it was when the guard was adopted (init); '
            'a person has not yet said what it asserts')


def _run_command(command: str, argv: list[str], root: str, quiet: bool = False) -> int:
    """Run another command in the repository; ``quiet``: its output is shown only when it
    fails (a row per fixture is thousands of lines on a real suite)."""
    import contextlib
    import importlib
    import io

    from oracle_guard.commands import COMMANDS

    module = importlib.import_module(COMMANDS[command])
    cwd = os.getcwd()
    os.chdir(root)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out) if quiet else contextlib.nullcontext():
            status = int(module.main(argv))
    finally:
        os.chdir(cwd)
    if status and quiet:
        sys.stdout.write(out.getvalue())
    return status


def codeowners(scaffold: Scaffold, cfg: Any, owner: str) -> None:
    path = '.github/CODEOWNERS' if os.path.isdir(scaffold.full('.github')) else 'CODEOWNERS'
    for candidate in ('CODEOWNERS', '.github/CODEOWNERS', 'docs/CODEOWNERS'):
        if os.path.isfile(scaffold.full(candidate)):
            path = candidate
            break
    text = scaffold.read(path) or ''
    missing = [line for line in codeowners_lines(cfg, owner) if line not in text.splitlines()]
    if not missing:
        print(f'kept  {path}: it already names {owner} for the oracle files')
        return
    lead = '' if not text or text.endswith('\n') else '\n'
    block = '# oracle files: a person reviews every change to them (oracle-guard)\n'
    scaffold.write(path, text + lead + block + '\n'.join(missing) + '\n',
                   f'{owner} owns the oracle files')
    print(scaffold.wrote[-1])


def next_steps(cfg: Any, root: str, files: Sequence[str]) -> str:
    has_properties = any(cfg.is_property(f) for f in files)
    steps = ['next steps:']
    if not has_properties:
        steps.append('  - name the property tests (the files whose answers a person owns) in '
                     '`properties` of [tool.oracle-guard], in a commit of their own, then run '
                     '`oracle-guard lock`')
    steps += [
        '  - review what was written; commit it on its own, with no test or src/ edits:',
        '      git add -A && git commit -m "Adopt oracle-guard"',
        '  - block bad commits from now on:  pre-commit install',
        '  - check the whole repository:     pre-commit run --all-files',
    ]
    return '\n'.join(steps)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='oracle-guard init',
        description='Adopt oracle-guard in this repository; existing files are kept.',
    )
    parser.add_argument('--src', action='append', metavar='DIR',
                        help='production code folder (repeatable; default: detected)')
    parser.add_argument('--tests', action='append', metavar='DIR',
                        help='test code folder (repeatable; default: detected)')
    parser.add_argument('--hook-repo', metavar='URL',
                        help='the oracle-guard git URL or path for .pre-commit-config.yaml '
                             '(default: where this oracle-guard was installed from)')
    parser.add_argument('--rev', metavar='COMMIT',
                        help='the oracle-guard commit to pin (default: the commit this '
                             'oracle-guard was installed from)')
    parser.add_argument('--codeowners', metavar='OWNER',
                        help='add CODEOWNERS lines giving OWNER (@team) the oracle files')
    parser.add_argument('--leave-out', action='append', metavar='DIR',
                        help='a data folder under the tests roots not to guard as fixtures '
                             '(repeatable)')
    parser.add_argument('--dry-run', action='store_true', help='show what would be written')
    parser.add_argument('--rates', action='store_true',
                        help="lock each property's share of rejected draws too (runs the "
                             'properties: oracle-guard lock --rates)')
    parser.add_argument('--force', action='store_true',
                        help='rewrite the ledger, manifest, trace store, lock and baseline '
                             'even if they exist (and run under CI or inside oracle-guard ci)')
    parser.add_argument('--debug', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    refused = None if args.dry_run else refuse_unattended(
        'init', 'the configuration, ledger, manifest, lock and baseline', args.force)
    if refused is not None:
        return refused
    return guarded(lambda: run_init(args), 'text', args.debug)


if __name__ == '__main__':
    raise SystemExit(main())
