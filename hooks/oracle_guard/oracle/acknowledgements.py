"""Acknowledged commits: past commits that broke a change rule and were accepted anyway.

History mode judges every commit since adoption, so a commit merged with admin rights
before the guard was strict would fail every later run. A person lists it here, with
an owner and a reason, and history mode skips it. The file is human-owned and an oracle
file: adding to it is a change of its own, like loosening the ledger (rule 11).

```yaml
acknowledged:
  - commit: 0123456789abcdef0123456789abcdef01234567   # the full id
    owner: alice
    reason: merged with admin rights before the guard was strict (PR #12)
```
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from oracle_guard.oracle.documents import LinedDict
from oracle_guard.oracle.documents import load_yaml
from oracle_guard.findings import ConfigError
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.oracle.ledger import FreezeRow

TOP_FIELDS = ('acknowledged',)
ROW_FIELDS = ('commit', 'owner', 'reason')
# A full object id (SHA-1 or SHA-256): an abbreviation may name another commit tomorrow.
COMMIT_ID = re.compile(r'^(?:[0-9a-f]{40}|[0-9a-f]{64})$')


@dataclass(frozen=True)
class Acknowledgement:
    commit: str
    owner: str
    reason: str
    line: int


def row_template(path: str, commit: str) -> str:
    """The hint a history finding gives: how a person accepts the commit."""
    return (f'or, if a person accepts it as it is, add to {path} under "acknowledged:" '
            f'a row {{commit: {commit}, owner: <who answers for it>, reason: <why>}}, '
            'in a change of its own')


def parse_acknowledgements(raw: bytes, path: str) -> dict[str, Acknowledgement]:
    """commit id -> acknowledgement. Anything unexpected is a ConfigError (exit 2)."""
    data = load_yaml(raw, path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(path, 1, 'must be a mapping with an "acknowledged" list')
    for name in data:
        if name not in TOP_FIELDS:
            raise ConfigError(path, data.line_of(name), f'unknown top-level key {name!r}',
                              'the file holds only "acknowledged"')
    rows = data.get('acknowledged') or []
    if not isinstance(rows, list):
        raise ConfigError(path, data.line_of('acknowledged'),
                          '"acknowledged" must be a list of rows')
    found: dict[str, Acknowledgement] = {}
    for row in rows:
        if not isinstance(row, LinedDict):
            raise ConfigError(path, data.line_of('acknowledged'),
                              'every acknowledgement must be a mapping: commit, owner, reason')
        found_row = _row(row, path)
        if found_row.commit in found:
            raise ConfigError(path, row.line_of('commit'),
                              f'commit {found_row.commit} is acknowledged twice (first on '
                              f'line {found[found_row.commit].line})', 'keep one row')
        found[found_row.commit] = found_row
    return found


def _row(row: LinedDict, path: str) -> Acknowledgement:
    for key in row:
        if key not in ROW_FIELDS:
            raise ConfigError(path, row.line_of(key), f'unknown key {key!r}',
                              f'a row holds only: {", ".join(ROW_FIELDS)}')
    commit = row.get('commit')
    if not isinstance(commit, str) or not COMMIT_ID.match(commit):
        raise ConfigError(path, row.line_of('commit'),
                          f'commit {commit!r} is not a full commit id (40 lowercase hex digits)',
                          'copy the full id the finding printed (git rev-parse SHORT_ID)')
    owner = FreezeRow(row, row.line).owner_problem()  # the ledger's rule for a person
    if owner:
        raise ConfigError(path, row.line_of('owner'), f'acknowledgement of {commit[:12]} {owner}',
                          'name the person who accepted the commit')
    reason = row.get('reason')
    if not isinstance(reason, str) or not reason.strip():
        raise ConfigError(path, row.line_of('reason'),
                          f'acknowledgement of {commit[:12]} has no reason',
                          'say why the commit was accepted (the pull request, the decision)')
    return Acknowledgement(commit, row['owner'].strip(), reason.strip(), row.line)


def read_acknowledgements(view: TreeView, path: str) -> dict[str, Acknowledgement]:
    """The acknowledged commits on the judged side; none when the file does not exist."""
    raw = view.read_document(path)
    return {} if raw is None else parse_acknowledgements(raw, path)
