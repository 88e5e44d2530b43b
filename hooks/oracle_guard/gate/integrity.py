"""Integrity of the test machinery (rule 46), before and after the test run.

The gate runs ``gate/integrity_probe.py`` in the test environment's interpreter
(``-I -S``: nothing of the environment runs while it is looked at) and turns what it saw
into findings:

OG726 an installed file of pytest, pluggy, Hypothesis or oracle-guard (or any ``.pth``
      a distribution installed) differs from its distribution's ``RECORD``, or is gone
OG727 a ``.pth``, ``sitecustomize`` or ``usercustomize`` that no distribution's ``RECORD``
      lists: code that runs at every interpreter start
OG728 a compiled ``__pycache__`` file of that machinery that Python would load, whose code
      is not the code of its source (a ``.pyc`` next to an unchanged source still runs)

An editable install (oracle-guard's own development set-up) has its source outside
site-packages: what ``RECORD`` lists is judged, the source is not, and a note says so.
An environment that cannot be inspected is bad input (exit 2).
"""
from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'integrity_probe.py')


@dataclass
class Environment:
    """What the probe saw of one test environment at one moment."""

    python: str
    prefix: str
    folders: list[str]
    present: list[str]
    changed: list[list[str]] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)
    compiled: list[list[str]] = field(default_factory=list)
    editable: list[list[str]] = field(default_factory=list)
    # path -> what the probe found it right as, with its file_key: a later look at the same
    # environment reads again only the files whose key changed since
    checked: dict[str, Any] = field(default_factory=dict)


def inspect_environment(python: str, probe_source: str | None = None,
                        since: Environment | None = None) -> Environment:
    """Run the probe in ``python`` (from the source read before any pull-request code
    ran, when given); ConfigError when it cannot be run or says nothing. ``since``: an
    earlier look at the same environment, whose unchanged files are not read again."""
    return Probe(python, probe_source, since).result()


class Probe:
    """The probe started now and read later (``result``): the gate looks at the test
    environment before any pull-request code runs while it reads the revisions."""

    def __init__(self, python: str, probe_source: str | None = None,
                 since: Environment | None = None) -> None:
        self.python = python
        if probe_source is None:
            with open(PROBE, encoding='utf-8') as f:
                probe_source = f.read()
        self.error: OSError | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        # The earlier look's files, sent on stdin (their paths could be longer than a
        # command line may be).
        self.known = json.dumps(since.checked).encode() if since is not None else None
        try:
            self.proc = subprocess.Popen(
                [python, '-I', '-S', '-c', probe_source,
                 *(['--known'] if self.known is not None else [])],
                stdin=subprocess.DEVNULL if self.known is None else subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except OSError as exc:
            self.error = exc

    def result(self) -> Environment:
        """What the probe saw; ConfigError when it cannot be run or says nothing."""
        python = self.python
        where = ('--test-python', 0)
        problem: Exception | None = self.error
        stdout = stderr = b''
        if self.proc is not None:
            try:
                stdout, stderr = self.proc.communicate(self.known, timeout=300)
            except subprocess.TimeoutExpired as exc:
                self.proc.kill()
                self.proc.communicate()
                problem = exc
        if problem is not None or self.proc is None:
            raise ConfigError(*where, f'cannot inspect the test environment of {python!r}: '
                              f'{problem}', 'name the interpreter of the test environment, '
                              'e.g. --test-python .venv/bin/python') from None
        try:
            facts: dict[str, Any] = json.loads(stdout)
        except ValueError:
            facts = {}
        if self.proc.returncode or not isinstance(facts, dict) or 'folders' not in facts:
            tail = stderr.decode(errors='replace').strip().splitlines()[-1:] or ['no output']
            raise ConfigError(*where, f'cannot inspect the test environment of {python!r}: '
                              f'{tail[0]}', 'the test environment must be a Python 3.9+ '
                              'interpreter whose site-packages can be read')
        return Environment(python=python, prefix=str(facts.get('prefix')),
                           folders=list(facts['folders']),
                           present=list(facts.get('present', ())),
                           changed=list(facts.get('changed', ())),
                           stray=list(facts.get('stray', ())),
                           compiled=list(facts.get('compiled', ())),
                           editable=list(facts.get('editable', ())),
                           checked=dict(facts.get('checked') or {}))


def integrity_findings(*moments: tuple[str, Environment]) -> list[Finding]:
    """Findings of the environment at each (label, moment); one per problem, naming the
    first moment it was seen."""
    findings: list[Finding] = []
    seen: set[tuple[str, str]] = set()

    def add(code: str, path: str, message: str, hint: str, label: str) -> None:
        if (code, path) in seen:
            return
        seen.add((code, path))
        findings.append(Finding(path, 1, 1, code, f'{message} ({label})', hint))

    for label, env in moments:
        for dist, path, why in env.changed:
            add('OG726', path, f'the test machinery was changed: {path} of the installed '
                f'{dist} {why}', 'reinstall the test environment; a pull request must not '
                'change pytest, its plugins or oracle-guard', label)
        for path in env.stray:
            add('OG727', path, f'the test machinery was changed: {path} runs at every '
                'interpreter start and no installed distribution\'s RECORD lists it',
                'remove it; code that runs before the tests belongs to no pull request', label)
        for dist, path, why in env.compiled:
            add('OG728', path, f'the test machinery was changed: {path} of {dist} {why}',
                'delete the file (Python recompiles it from the source); a pull request must '
                'not plant compiled code', label)
    return findings


def integrity_notes(env: Environment) -> list[str]:
    return [f'oracle-guard ci: note: {dist} is an editable install ({meta}): the files its '
            'RECORD lists are checked, its source outside site-packages is not'
            for dist, meta in env.editable]
