"""``oracle-guard init``: scaffold the guard in a user repository (SPEC §5b).

Writes what is missing and nothing else: the ``[tool.oracle-guard]`` table
(appended to pyproject.toml), an empty ledger with budget 0, an empty fixture
manifest, an empty trace store, an empty domain lock and the
``.pre-commit-config.yaml`` entry. An existing file or table is never rewritten,
so running it twice writes nothing the second time.

Exit codes: 0 done (or nothing to do), 1 a file init cannot safely edit (the
snippet to paste is printed), 2 bad input.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from oracle_guard import __version__
from oracle_guard.cli import HOOKS
from oracle_guard.config import config_from_table
from oracle_guard.config import load_config
from oracle_guard.config import normalize_path
from oracle_guard.config import parse_toml
from oracle_guard.config import PYPROJECT
from oracle_guard.config import read_table
from oracle_guard.config import SCHEMA
from oracle_guard.config import TABLE
from oracle_guard.findings import ConfigError
from oracle_guard.gitrepo import repo_root
from oracle_guard.runner import guarded

PRE_COMMIT_CONFIG = '.pre-commit-config.yaml'
PLACEHOLDER_REPO = 'https://example.invalid/oracle-guard'
PATH_KEYS = ('src', 'tests', 'properties', 'fixtures', 'manifest', 'traces', 'ledger',
             'domain-lock')
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
    """Where this oracle-guard comes from, if its package metadata says; else a placeholder."""
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
    return '\n'.join(lines) + '\n'


def table_values(src: Sequence[str] | None, tests: Sequence[str] | None) -> dict[str, Any]:
    values = {key: SCHEMA[key][0] for key in PATH_KEYS}
    for key, given in (('src', src), ('tests', tests)):
        if given:
            values[key] = [normalize_path(v, folder=True, source='command line', line=0, key=key)
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


def add_pre_commit_entry(text: str, url: str, rev: str) -> str | None:
    """The config with our repo entry appended to ``repos:``; None if it already runs us.

    Edited as text, so the user's comments and layout survive; the result is parsed
    again before it is written.
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
        ok = runs_oracle_guard(yaml.safe_load(result))
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

    def write(self, path: str, text: str, what: str) -> None:
        target = self.full(path)
        os.makedirs(os.path.dirname(target) or '.', exist_ok=True)
        with open(target, 'w', encoding='utf-8', newline='') as f:
            f.write(text)
        self.wrote.append(f'wrote {path}: {what}')

    def create(self, path: str, text: str, what: str) -> None:
        if os.path.lexists(self.full(path)):
            self.kept.append(f'kept  {path}: it exists')
            return
        self.write(path, text, what)

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


def run_init(args: argparse.Namespace) -> int:
    root = repo_root()
    scaffold = Scaffold(root)
    url = args.hook_repo or hook_repo_url()
    # Every input is read and judged before the first write: bad input writes nothing.
    plans: dict[str, tuple[str | None, str | None]] = {}
    for name, plan in (
            (PRE_COMMIT_CONFIG, lambda: scaffold.plan_pre_commit(url, args.rev)),
            (PYPROJECT, lambda: scaffold.plan_pyproject(table_values(args.src, args.tests))),
    ):
        try:
            plans[name] = plan()
        except CannotEdit as exc:
            scaffold.problems.append(str(exc))
    if PYPROJECT in plans:
        scaffold.pyproject(*plans[PYPROJECT])
    cfg = load_config(root)  # the table as it now stands: an existing one wins
    scaffold.create(cfg.ledger, EMPTY_LEDGER, 'empty freeze ledger, budget 0')
    scaffold.create(cfg.manifest, '{\n  "fixtures": {},\n  "version": 1\n}\n',
                    'empty fixture manifest')
    scaffold.create(cfg.traces, EMPTY_TRACES, 'empty trace store')
    scaffold.create(cfg.domain_lock, '{\n  "properties": {},\n  "version": 1\n}\n',
                    'empty domain lock')
    if PRE_COMMIT_CONFIG in plans:
        scaffold.pre_commit(*plans[PRE_COMMIT_CONFIG])
    for line in scaffold.wrote + scaffold.kept:
        print(line)
    for problem in scaffold.problems:
        sys.stderr.write(f'oracle-guard init: {problem}')
    if scaffold.wrote:
        print('next: put at least one property test in '
              f'{cfg.properties}, run `oracle-guard lock`, commit these files on their own, '
              'then `pre-commit install`')
        if url == PLACEHOLDER_REPO and any(PRE_COMMIT_CONFIG in w for w in scaffold.wrote):
            print(f'note: {PRE_COMMIT_CONFIG} points at {PLACEHOLDER_REPO}; pass --hook-repo '
                  'URL (or edit "repo:") to where your oracle-guard lives')
    elif not scaffold.problems:
        print('nothing to do: oracle-guard is already set up here')
    return 1 if scaffold.problems else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='oracle-guard init',
        description='Scaffold oracle-guard in this repository; existing files are kept.',
    )
    parser.add_argument('--src', action='append', metavar='DIR',
                        help='production code folder (repeatable; default src/)')
    parser.add_argument('--tests', action='append', metavar='DIR',
                        help='test code folder (repeatable; default tests/)')
    parser.add_argument('--hook-repo', metavar='URL',
                        help='the oracle-guard git URL or path for .pre-commit-config.yaml')
    parser.add_argument('--rev', default=f'v{__version__}',
                        help='the oracle-guard tag to pin (default: %(default)s)')
    parser.add_argument('--debug', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    return guarded(lambda: run_init(args), 'text', args.debug)


if __name__ == '__main__':
    raise SystemExit(main())
