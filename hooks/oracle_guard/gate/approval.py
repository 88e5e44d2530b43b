"""Approval of oracle changes (rule 47): the gate fails on an oracle change unless a person
approved it.

An agent whose task is a bug already on ``main`` never has to touch ``src/``: weakening a
property or freezing the failing tests is an oracle change alone, which the hooks let
through for a person to review. The gate's exit status is what branch protection reads, so
the gate asks for that person: the pull request carries the label named by
``approval-label`` (read from the **base** side's ``[tool.oracle-guard]``: a pull request
cannot rename the label to one it already carries), read from the GitHub event payload at
``$GITHUB_EVENT_PATH``, or the job passes ``--oracle-approved`` (GitLab: a protected
variable only maintainers set).

What counts as an oracle change is what the review report lists as needing approval
(``gate/review_report.py``); new tests, their new lock entries and new manifest rows do not.
The uses rule 54 lists that a change adds to code ``src/`` runs (an interpreter
capability, another distribution's module, a new source of the build) need the same
approval (OG741).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from collections.abc import Sequence
from typing import NamedTuple

from oracle_guard.config import Config
from oracle_guard.config import load_config
from oracle_guard.context import RunContext
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.gate.review_report import Item
from oracle_guard.gate.review_report import Section

EVENT_ENV = 'GITHUB_EVENT_PATH'
FLAG = '--oracle-approved'
CODE = 'OG740'
# What a finding's code says needs approval: an oracle change, or a use rule 54 lists that
# the change adds to code src runs (gate/capabilities.py; the finding names its kind).
WHAT = {CODE: 'oracle change', 'OG741': 'rule 54 use added to code src runs'}
ALLOW = ('; a use the project accepts for good is listed under src-capabilities, in a change '
         'of its own')


class Approval(NamedTuple):
    """The gate's decision about the pull request's oracle changes, for the report and for
    the reference run (which takes the approved oracle files from the pull request)."""
    approved: bool
    by: str | None  # 'label "oracle-approved"' or '--oracle-approved'; None: not approved
    label: str  # the label that approves, from the base side's configuration
    changes: tuple[Item, ...]  # the oracle changes that needed the approval
    # the label is on the pull request, but this run is not the one its application started
    stale: bool = False

    def describe(self) -> str:
        if self.approved:
            return f'**Oracle changes approved** by {self.by}.'
        return (f'**Oracle changes not approved**: a maintainer applies the label '
                f'`{self.label}` to the pull request (or the job passes `{FLAG}`).')

    def findings(self) -> list[Finding]:
        """One finding per oracle change while nobody approved it."""
        if self.approved:
            return []
        return [
            Finding(item.path, item.at, 1, item.code,
                    f'{WHAT.get(item.code, WHAT[CODE])} not approved (label "{self.label}"): '
                    f'{_plain(item.line)}',
                    (f'the label "{self.label}" was applied before the latest change of '
                     'the pull request: a person reviews this revision, removes the label '
                     'and applies it again' if self.stale else
                     f'a person reviews it and applies the label "{self.label}" to the pull '
                     f'request') + f' (or the job passes {FLAG}); or drop the change' +
                    (ALLOW if item.code != CODE else ''))
            for item in self.changes
        ]

    @property
    def oracle_changes(self) -> tuple[Item, ...]:
        """The approved changes to the oracle's files (the reference run takes them from
        the pull request), without the capabilities src uses (rule 54)."""
        return tuple(item for item in self.changes if item.code == CODE)


def _plain(line: str) -> str:
    """A report line as a finding's text: no list bullet, no table bars or backticks."""
    text = line.lstrip('- ').strip()
    if text.startswith('|'):
        cells = [c.strip() for c in text.strip('|').split(' | ')]
        text = f'freeze row {cells[0]} added for {cells[1]} ({", ".join(cells[2:5])})'
    return text.replace('`', '')


def approval_label(ctx: RunContext) -> str:
    """``approval-label`` as the base revision configures it (the default without one)."""
    view = ctx.changes.base_view
    if view is None:
        return Config(root=ctx.cfg.root).approval_label
    try:
        return load_config(ctx.cfg.root, view).approval_label
    except ConfigError:
        return Config(root=ctx.cfg.root).approval_label


def event_labels(path: str) -> list[str]:
    """The names of the pull request's labels in a GitHub event payload (none for an event
    that is not about a pull request). A payload that cannot be read is a ConfigError."""
    return read_event(path)[0]


def read_event(path: str) -> tuple[list[str], str | None]:
    """(the pull request's labels, the label this event applied: ``action`` "labeled")."""
    try:
        with open(path, 'rb') as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError(path, 0, f'${EVENT_ENV}: cannot read the event payload: '
                          f'{exc.strerror}') from None
    try:
        event = json.loads(raw.decode('utf-8'))
    except UnicodeDecodeError:
        raise ConfigError(path, 0, f'${EVENT_ENV}: the event payload is not UTF-8') from None
    except ValueError as exc:
        line = getattr(exc, 'lineno', 0)
        raise ConfigError(path, line, f'${EVENT_ENV}: the event payload is not JSON: '
                          f'{getattr(exc, "msg", exc)}') from None
    if not isinstance(event, dict):
        raise ConfigError(path, 1, f'${EVENT_ENV}: the event payload is not a JSON object')
    pull_request = event.get('pull_request')
    if pull_request is None:
        return [], None
    if not isinstance(pull_request, dict):
        raise ConfigError(path, 1, f'${EVENT_ENV}: "pull_request" is not an object')
    labels = pull_request.get('labels', [])
    if not isinstance(labels, list):
        raise ConfigError(path, 1, f'${EVENT_ENV}: "pull_request.labels" is not a list')
    names = []
    for label in labels:
        name = label.get('name') if isinstance(label, dict) else None
        if not isinstance(name, str):
            raise ConfigError(path, 1, f'${EVENT_ENV}: a label in "pull_request.labels" has '
                              'no "name" string')
        names.append(name)
    applied = event.get('label') if event.get('action') == 'labeled' else None
    name = applied.get('name') if isinstance(applied, dict) else None
    return names, name if isinstance(name, str) else None


def needing_approval(sections: Sequence[Section]) -> tuple[Item, ...]:
    return tuple(item for section in sections for item in section.items
                 if item.needs_approval)


def decide(ctx: RunContext, sections: Sequence[Section], flag: bool,
           environ: Mapping[str, str]) -> Approval:
    """Whether the pull request's oracle changes are approved, and by what.

    The event payload is read whenever ``$GITHUB_EVENT_PATH`` is set, so a malformed one
    stops the gate (exit 2) even on a pull request without oracle changes."""
    label = approval_label(ctx)
    changes = needing_approval(sections)
    event = environ.get(EVENT_ENV)
    labels, applied = read_event(event) if event else ([], None)
    if flag:
        return Approval(True, FLAG, label, changes)
    # The label approves the revision it was applied to: the run its "labeled" event
    # starts. A run of a later push (``synchronize``) still sees it on the pull request,
    # but nobody reviewed what that push added.
    if label in labels and applied == label:
        return Approval(True, f'label `{label}`', label, changes)
    return Approval(not changes, None, label, changes, stale=label in labels)
