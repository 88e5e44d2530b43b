"""The pytest plugin: the freeze ledger and the domain lock, enforced at run time.

Registered through the ``pytest11`` entry point. It stays inert (registers no hook
beyond its options) unless the repository has a ``[tool.oracle-guard]`` table or a
ledger at the configured path, so installing oracle-guard never changes an unrelated
project's test run. In a guarded repository, once collection is finished:

* a row freezes the test at its node id; only when that file no longer defines the
  test (it was moved) does the one collected test with the row's identity take it;
* a test with a live ledger row is skipped (``mode: run``: it runs as a non-strict
  xfail, so its result still reaches reports);
* a test whose row has expired becomes ``xfail(strict=True)``, and a failure under it
  is reported as a failure too: it fails whether it passes or fails;
* a ledger that does not parse, a row whose owner is not a person, a row whose test
  is missing from the files that were collected, a skip/skipif/xfail marker (or a
  ``unittest`` skip) without a live FZ id for that test, and a domain lock that cannot be
  read fail the session before any test runs;
* a Hypothesis test the lock check finds unlocked or drifted at collection fails at its
  call, before its body runs; the other tests run;
* at call time (after its fixtures ran, just before the body) each Hypothesis test is
  checked against the lock again, with the settings object and strategies Hypothesis is
  about to use: a drift fails that test. A property that ran but generated no example
  (every phase but "generate", a settings object swapped for one with no examples)
  fails too.

Options (group "oracle-guard"): ``--oracle-guard-today=YYYY-MM-DD`` (the date expiries
are compared with) and ``--oracle-guard-root=DIR`` (where pyproject.toml and the
ledger live, when that is not pytest's rootdir). ``-p no:oracle_guard`` turns it off.

Under ``oracle-guard ci`` it also writes the run record (``runtime/run_recorder.py``).
"""
from __future__ import annotations

import datetime
import os
from collections.abc import Generator
from collections.abc import Sequence
from typing import Any

import pytest

from oracle_guard.config import Config
from oracle_guard.config import find_root
from oracle_guard.config import load_config
from oracle_guard.findings import ConfigError
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.oracle.ledger import empty_ledger
from oracle_guard.oracle.ledger import FreezeLedger
from oracle_guard.oracle.ledger import FreezeRow
from oracle_guard.oracle.ledger import function_of
from oracle_guard.oracle.ledger import identity_of
from oracle_guard.oracle.ledger import read_ledger
from oracle_guard.reading.scanner import FREEZE_ID
from oracle_guard.runtime.canary_items import is_canary
from oracle_guard.runtime.exported_silences import reason_of_mark

PLUGIN_NAME = 'oracle-guard'
# Marker name -> the silence kind ``allow-silences`` calls it.
SILENCE_MARKERS = {'skip': 'skip', 'skipif': 'skipif', 'xfail': 'xfail'}
LOCK_RUNTIME = 'oracle_guard.runtime.lock_runtime'


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    _start_run_record(pluginmanager)
    group = parser.getgroup('oracle-guard', 'oracle-guard freeze ledger and domain lock')
    group.addoption('--oracle-guard-today', metavar='YYYY-MM-DD', default=None,
                    help='the date freeze expiries are compared with (default: today)')
    group.addoption('--oracle-guard-root', metavar='DIR', default=None,
                    help='folder holding pyproject.toml and the ledger (default: the nearest '
                         'pyproject.toml at or above pytest\'s rootdir)')
    group.addoption('--oracle-guard-write-forms', metavar='FILE', default=None,
                    help='write the live strategy forms of the collected Hypothesis tests '
                         'to FILE (used by `oracle-guard lock --collect`)')


def _start_run_record(pluginmanager: pytest.PytestPluginManager) -> None:
    """Under ``oracle-guard ci`` (``ORACLE_GUARD_RECORD`` set): record what the run does.

    Called when the plugin is registered, before any conftest is imported, so even a
    session that dies during start-up leaves a record.
    """
    from oracle_guard.runtime import draw_rates
    from oracle_guard.runtime import run_record
    from oracle_guard.runtime.run_recorder import RunRecorder

    folder = run_record.recording_folder()
    if folder and not pluginmanager.has_plugin(run_record.PLUGIN_NAME):
        pluginmanager.register(RunRecorder(folder), run_record.PLUGIN_NAME)
        draw_rates.register(pluginmanager)


def _comment_ids(holder: Any) -> list[str]:
    """FZ ids in the comment on the ``@expectedFailure`` line of a test or its class: it
    takes no reason, so the id lives there, as check-named-freezes reads it."""
    import inspect

    try:
        lines, _ = inspect.getsourcelines(holder)
    except (OSError, TypeError):
        return []
    ids: list[str] = []
    for line in lines:
        if 'expectedFailure' in line and '#' in line:
            ids.extend(FREEZE_ID.findall(line[line.index('#'):]))
        if line.lstrip().startswith(('def ', 'async def ', 'class ')):
            break  # decorators end at the def or the class
    return ids


def _today(value: str | None) -> datetime.date:
    if not value:
        return datetime.datetime.now(datetime.timezone.utc).date()  # as the hooks: UTC
    try:
        return datetime.date.fromisoformat(value)
    except ValueError:
        raise pytest.UsageError(f'--oracle-guard-today: not a date (YYYY-MM-DD): {value!r}'
                                ) from None


def pytest_configure(config: pytest.Config) -> None:
    today = _today(config.getoption('oracle_guard_today'))
    root = config.getoption('oracle_guard_root') or find_root(str(config.rootpath))
    try:
        cfg = load_config(root)
    except ConfigError as exc:
        # A broken table in a repository that asked to be guarded: fail, do not go inert.
        config.pluginmanager.register(FreezeGuard(None, today, [str(exc)]), PLUGIN_NAME)
        return
    if not cfg.has_table and not os.path.isfile(os.path.join(root, cfg.ledger)):
        return  # not a guarded repository: change nothing
    config.pluginmanager.register(FreezeGuard(cfg, today), PLUGIN_NAME)


def item_identity(item: pytest.Item) -> str:
    return identity_of(item.nodeid)


def row_matches(row: FreezeRow, identity: str) -> bool:
    """A row names one parametrized case (``test_x[a]``) or the whole function."""
    if '[' in row.identity:
        return row.identity == identity
    return function_of(identity) == row.identity


def marker_freeze_ids(mark: Any) -> list[str]:
    ids: list[str] = []
    for value in [*mark.args, *mark.kwargs.values()]:
        if isinstance(value, str):
            ids.extend(FREEZE_ID.findall(value))
    return ids


def _param_fixtures_here(item: pytest.Item) -> list[str]:
    """The fixtures of the item's parameters defined in the item's own file: their
    ``params`` may mark it (``@pytest.fixture(params=[pytest.param(..., marks=...)])``)."""
    callspec = getattr(item, 'callspec', None)
    info = getattr(item, '_fixtureinfo', None)
    if callspec is None or info is None:
        return []
    here = os.path.realpath(str(item.path))
    found = []
    for name in getattr(callspec, 'params', {}):
        defs = info.name2fixturedefs.get(name) or ()
        code = getattr(getattr(defs[-1], 'func', None), '__code__', None) if defs else None
        if code is not None and os.path.realpath(code.co_filename) == here:
            found.append(name)
    return found


class FreezeGuard:
    """Everything the plugin does in a guarded repository; registered by pytest_configure."""

    def __init__(self, cfg: Config | None, today: datetime.date,
                 problems: Sequence[str] = ()) -> None:
        self.cfg = cfg
        self.today = today
        self.problems: list[str] = list(problems)
        self.active: list[str] = []  # one summary line per applied freeze
        self.expired: dict[str, str] = {}  # nodeid -> why a failure still fails
        self.deselected: set[str] = set()  # functions with a case deselected (-k, -m, hooks)
        self.case_selection = False  # a parametrized case named on the command line
        # Rules 39-41: silences the baseline, an environment condition or a declared
        # import accept, per file: function identity -> [AcceptedSilence].
        self._accepted: dict[str, dict[str, list[Any]]] = {}
        self._judge: Any = None
        self._helpers: Any = None  # the test helper modules, for names imported from them
        self._helper_silences: Any = None  # exported_silences.HelperSilences, when asked
        self._defined: dict[str, set[str]] = {}  # test file -> the identities it defines
        self.accepted_silences: dict[str, list[Any]] = {}  # nodeid -> what accepted it
        self.counts: dict[str, Any] = {}  # nodeid -> lock_runtime.ExampleCount
        # function identity -> what the lock check found at collection: fails that test
        self.lock_failures: dict[str, list[str]] = {}
        self.forms_file: str | None = None

    # -- reading -------------------------------------------------------------------------
    def _read_ledger(self) -> FreezeLedger | None:
        cfg = self.cfg
        if cfg is None:
            return None
        try:
            # The hooks' own loader, on the working tree the tests run from: a ledger
            # the hooks refuse (a symlink, no budget) is refused here too.
            return read_ledger(TreeView(cfg.root, None), cfg.ledger)
        except OSError as exc:
            self.problems.append(f'{cfg.ledger}: cannot read: {exc.strerror}')
            return None
        except ConfigError as exc:
            self.problems.append(str(exc))
            return None

    def _relpath(self, item: pytest.Item) -> str:
        assert self.cfg is not None
        return os.path.relpath(str(item.path), self.cfg.root).replace(os.sep, '/')

    # -- the checks ----------------------------------------------------------------------
    def _owner_problems(self, ledger: FreezeLedger) -> None:
        for row in ledger.rows:
            why = row.owner_problem()
            if why:
                self.problems.append(f'{ledger.path}:{row.line_of("owner")}: {row.id or "a row"} '
                                     f'{why}; a freeze needs a person who answers for it')

    def _accepted_in(self, path: str) -> dict[str, list[Any]]:
        """The silences of one test file that need no freeze, as check-named-freezes
        judges them (rules 39-41)."""
        if path not in self._accepted:
            assert self.cfg is not None
            from oracle_guard.reading.silence_acceptance import accepted_silences
            from oracle_guard.reading.silence_acceptance import SilenceJudge

            from oracle_guard.reading.helper_modules import HelperModules

            view = TreeView(self.cfg.root, None)
            if self._judge is None:
                self._judge = SilenceJudge.of_view(self.cfg, view)
                self._helpers = HelperModules.of(self.cfg, view)
            source = view.read(path)
            self._accepted[path] = {} if source is None else \
                accepted_silences(path, source, self._judge, self._helpers)
        return self._accepted[path]

    def _accepted_marker(self, item: pytest.Item, identity: str, kind: str,
                         reason: str | None = None) -> bool:
        """Whether a marker without an FZ id is a baselined silence, an environment
        condition or a declared import of this very test (rules 39-41), or one a helper
        module binds and holds accepted (``exported_silences``)."""
        from oracle_guard.reading.silence_acceptance import class_key

        here = self._accepted_in(self._relpath(item))
        function = function_of(identity)
        accepted = [a for a in here.get(function, []) if a.kind == kind]
        if not accepted and '::' in function:  # a class-level silence of its own class
            accepted = [a for a in here.get(class_key(function.rsplit('::', 1)[0]), [])
                        if a.kind == kind]
        if not accepted:  # a mark of a param of a fixture this file defines and it uses
            accepted = [a for name in _param_fixtures_here(item) for a in here.get(name, [])
                        if a.kind == kind]
        if not accepted:  # a class-level silence of a class it derives from
            accepted = [a for path, base in self._bases(item)
                        for a in self._accepted_in(path).get(class_key(base), [])
                        if a.kind == kind]
        inherited = None if accepted else self._inherited(item, identity)
        if inherited is not None:
            path, origin = inherited
            accepted = [a for a in self._accepted_in(path).get(origin, []) if a.kind == kind]
        if not accepted:
            accepted = self._exported(item, kind, reason)
        if accepted:
            self.accepted_silences.setdefault(item.nodeid, []).extend(accepted)
        return bool(accepted)

    def _exported(self, item: pytest.Item, kind: str, reason: str | None) -> list[Any]:
        """The accepted module-level silences of kind ``kind`` and of this very literal
        reason (a bare ``skip = unittest.skip`` there explains nothing) of the helper
        modules that bind a decorator the test's module binds."""
        assert self.cfg is not None
        from oracle_guard.runtime.exported_silences import HelperSilences

        if self._helper_silences is None:
            self._helper_silences = HelperSilences(self.cfg.root, self.cfg.is_test_code)
        return [a for path in self._helper_silences.helpers_of(getattr(item, 'module', None))
                for a in self._accepted_in(path).get('', [])
                if a.kind == kind and a.reason is not None and a.reason == reason]

    def _bases(self, item: pytest.Item) -> list[tuple[str, str]]:
        """(test file, class identity) of the classes the item's class derives from."""
        assert self.cfg is not None
        from oracle_guard.runtime.code_identity import base_classes

        found = []
        for filename, base in base_classes(getattr(item, 'cls', None)):
            path = os.path.relpath(filename, self.cfg.root).replace(os.sep, '/')
            if not path.startswith('../') and self.cfg.is_test_code(path):
                found.append((path, base))
        return found

    def _inherited(self, item: pytest.Item, identity: str) -> tuple[str, str] | None:
        """(file, function identity) of a test method the item's class inherits from a
        class of another test file, which defines it; its silences are that file's."""
        assert self.cfg is not None
        if getattr(item, 'cls', None) is None:
            return None
        from oracle_guard.runtime.code_identity import inherited_from

        found = inherited_from(getattr(item, 'obj', None), str(item.path), identity)
        if found is None:
            return None
        filename, _line, origin = found
        path = os.path.relpath(filename, self.cfg.root).replace(os.sep, '/')
        own = self._relpath(item)
        if path.startswith('../') or not self.cfg.is_test_code(path) or \
                origin.rsplit('::', 1)[-1] != function_of(identity).rsplit('::', 1)[-1]:
            return None
        for name in (own, path):
            if name not in self._defined:
                self._defined[name] = self._static_identities({name})
        if function_of(identity) in self._defined[own] or origin not in self._defined[path]:
            return None  # defined in its own file, or not where its code claims
        return path, origin

    def _silence_problems(self, item: pytest.Item, ledger: FreezeLedger) -> None:
        """The runtime twin of check-named-freezes: markers however they were applied."""
        assert self.cfg is not None
        allowed = self.cfg.allow_silences
        identity = item_identity(item)
        rows = ledger.by_id()
        spellings: list[tuple[str, list[str]]] = []
        for mark in item.iter_markers():
            kind = SILENCE_MARKERS.get(mark.name)
            if kind and kind not in allowed:
                ids = marker_freeze_ids(mark)
                if ids or not self._accepted_marker(item, identity, kind, reason_of_mark(mark)):
                    spellings.append((f'@pytest.mark.{mark.name}', ids))
        obj = getattr(item, 'obj', None)
        for holder in (obj, getattr(item, 'cls', None)):
            if getattr(holder, '__unittest_skip__', False) and 'unittest-skip' not in allowed:
                why = str(getattr(holder, '__unittest_skip_why__', ''))
                ids = FREEZE_ID.findall(why)
                if ids or not self._accepted_marker(item, identity, 'unittest-skip', why):
                    spellings.append(('@unittest.skip', ids))
        for holder in (obj, getattr(item, 'cls', None)):
            if getattr(holder, '__unittest_expecting_failure__', False) and \
                    'expectedFailure' not in allowed:
                ids = _comment_ids(holder)
                if ids or not self._accepted_marker(item, identity, 'expectedFailure'):
                    spellings.append(('@unittest.expectedFailure', ids))
        for spelling, ids in spellings:
            if not ids:
                self.problems.append(f'{item.nodeid}: {spelling} without a freeze id (FZ-<n>)')
            for freeze_id in ids:
                row = rows.get(freeze_id)
                if row is None:
                    why = f'is not a row of {ledger.path}'
                elif not row.is_live(self.today):
                    why = 'is not live (expired, undated or of a class that cannot be frozen)'
                elif not self._names_item(row, item, identity):
                    why = f'belongs to {row.nodeid or "no test"}'
                else:
                    continue
                self.problems.append(f'{item.nodeid}: {spelling} names {freeze_id}, which {why}')

    def _apply(self, item: pytest.Item, row: FreezeRow) -> None:
        owner = row.owner or 'nobody'
        expires = row.expires
        if not row.is_freezable():
            self.active.append(f'{row.id} {item.nodeid}: not applied, class '
                               f'{row.freeze_class!r} cannot be frozen (the test runs)')
            return
        if expires is None or expires < self.today:
            when = expires.isoformat() if expires else 'never (no valid date)'
            reason = (f'{row.id} expired on {when} (owner {owner}): fix the test, or delete '
                      'or renew the row')
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))
            self.expired[item.nodeid] = reason
            self.active.append(f'{row.id} {item.nodeid}: EXPIRED {when} (owner {owner})')
            return
        reason = f'{row.id} frozen until {expires.isoformat()} (owner {owner})'
        if row.mode == 'run':
            item.add_marker(pytest.mark.xfail(reason=reason, strict=False))
            self.active.append(f'{row.id} {item.nodeid}: runs as xfail until '
                               f'{expires.isoformat()} (owner {owner})')
        else:
            item.add_marker(pytest.mark.skip(reason=reason))
            self.active.append(f'{row.id} {item.nodeid}: skipped until '
                               f'{expires.isoformat()} (owner {owner})')

    def _unmatched_rows(self, ledger: FreezeLedger, items: Sequence[pytest.Item],
                        matched: set[int]) -> None:
        """Rows whose test is missing from the files collected: a subset run stays quiet."""
        assert self.cfg is not None
        files = {self._relpath(item) for item in items}
        cases = {item_identity(item) for item in items}
        collected = {function_of(identity) for identity in cases}
        known = set(collected)
        unparsed = True
        for index, row in enumerate(ledger.rows):
            old_file = row.nodeid.split('::', 1)[0]
            if index in matched or old_file not in files:
                continue
            if unparsed:  # selection (file::test, -k) hides tests that still exist
                known.update(self._static_identities(files))
                unparsed = False
            if function_of(row.identity) not in known:
                self.problems.append(
                    f'{ledger.path}:{row.line_of("nodeid")}: {row.id or "a row"} names '
                    f'{row.nodeid}, but no collected test has the identity {row.identity}',
                )
            elif '[' in row.identity and row.identity not in cases and \
                    function_of(row.identity) in collected and \
                    function_of(row.identity) not in self.deselected and \
                    not self.case_selection:
                # The function ran with all its cases, and the frozen one is not among
                # them: the case was removed (or its id changed), so the freeze is stale.
                self.problems.append(
                    f'{ledger.path}:{row.line_of("nodeid")}: {row.id or "a row"} names '
                    f'{row.nodeid}, but no collected case of {function_of(row.identity)} has '
                    f'the id {row.identity}',
                )

    def _static_identities(self, files: set[str]) -> set[str]:
        """The test identities the files on disk define, as check-freeze-ledger parses them."""
        assert self.cfg is not None
        from oracle_guard.reading.scanner import identities_of  # only when needed
        view = TreeView(self.cfg.root, None)
        found: set[str] = set()
        for path in sorted(files):
            try:
                found.update(identities_of(view, [path])[0])
            except OSError:
                continue  # unreadable: it defines nothing pytest could have collected
        return found

    def _names_item(self, row: FreezeRow, item: pytest.Item, identity: str) -> bool:
        """Whether a row names this very test: same identity, and in the file the row
        names unless that file no longer defines it (the test was moved)."""
        if not row_matches(row, identity):
            return False
        old_file = row.nodeid.split('::', 1)[0]
        return self._relpath(item) == old_file or \
            function_of(row.identity) not in self._static_identities({old_file})

    def _targets(self, ledger: FreezeLedger, row: FreezeRow,
                 items: Sequence[pytest.Item]) -> list[pytest.Item]:
        """The collected items a row freezes: its own node id first.

        Only when the file the row names no longer defines the test (it was moved) does
        the identity alone decide, and then only if exactly one collected test has it:
        a new test that happens to share the name in another file is not frozen.
        """
        old_file = row.nodeid.split('::', 1)[0]
        matching = [item for item in items if row_matches(row, item_identity(item))]
        exact = [item for item in matching if self._relpath(item) == old_file]
        if exact or function_of(row.identity) in self._static_identities({old_file}):
            return exact  # empty when that test was not selected: freeze nothing else
        tests = {(self._relpath(item), function_of(item_identity(item))) for item in matching}
        if len(tests) > 1:
            where = ', '.join(sorted(path for path, _ in tests))
            self.problems.append(
                f'{ledger.path}:{row.line_of("nodeid")}: '
                f'{row.id or "a row"} names {row.nodeid}, which no longer defines it, and '
                f'{len(tests)} collected tests have the identity {row.identity} ({where}); '
                'write the node id of the frozen one',
            )
            return []
        return matching

    def _lock_problems(self, items: list[pytest.Item]) -> None:
        assert self.cfg is not None
        try:
            from oracle_guard.runtime import lock_runtime
        except ModuleNotFoundError as exc:
            if exc.name != LOCK_RUNTIME:
                raise
            return  # an oracle-guard without the runtime lock check
        if self.forms_file:
            lock_runtime.write_forms(self.forms_file, items)
        if not hasattr(lock_runtime, 'problems_by_test'):  # one answer for the collection
            self.problems.extend(lock_runtime.check_collected(self.cfg, items))
            return
        try:
            self.lock_failures = lock_runtime.problems_by_test(self.cfg, items)
        except ConfigError as exc:
            self.problems.append(str(exc))  # no property can be judged: the session stops

    def lock_failures_of(self, item: pytest.Item) -> list[str]:
        """What the lock check found at collection for this test (the run record says it)."""
        return self.lock_failures.get(function_of(item_identity(item)), [])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        """The lock again at call time: fixtures have run, so a settings object or a
        strategy they swapped in is what is checked. A drift fails this test."""
        test = getattr(item, 'obj', None)
        if self.cfg is None or test is None or is_canary(item):
            return
        collected = self.lock_failures_of(item)
        if collected:
            # Found at collection (the settings the module built, before any fixture):
            # this test fails, the others run.
            unlocked = any(': unlocked property: ' in p or ': unlocked argument: ' in p
                           for p in collected)
            pytest.fail('oracle-guard: this property does not match its domain lock:\n' +
                        '\n'.join(collected) + '\n' + (
                            'a person locks a new property with `oracle-guard lock` and '
                            'commits the lock' if unlocked else
                            'restore the settings and strategies the lock records; a person '
                            'who means to shrink the domain re-locks in a change of its own'),
                        pytrace=False)
        from oracle_guard.runtime import lock_runtime

        check_call = getattr(lock_runtime, 'check_call', None)
        if check_call is None:
            return  # an oracle-guard whose runtime lock check predates call-time checks
        problems = check_call(self.cfg, item, test)
        if problems:
            pytest.fail('oracle-guard: at call time this property tests less than its '
                        'domain lock:\n' + '\n'.join(problems) +
                        '\nrestore the settings and strategies the lock records; a person '
                        'who means to shrink the domain re-locks in a change of its own',
                        pytrace=False)
        if getattr(test, 'is_hypothesis_test', False):
            count = lock_runtime.ExampleCount(test).install()
            if count.installed:
                self.counts[item.nodeid] = count
                item._oracle_guard_examples = count  # type: ignore[attr-defined]

    # -- pytest hooks --------------------------------------------------------------------
    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected.update(function_of(item_identity(item)) for item in items)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # After every pytest_collection_modifyitems: markers a conftest adds are seen,
        # and deselected tests are not judged.
        if self.cfg is None:
            return
        items = [item for item in session.items if not is_canary(item)]
        self.forms_file = session.config.getoption('oracle_guard_write_forms')
        self.case_selection = any('[' in str(arg) for arg in session.config.args)
        ledger = self._read_ledger()
        if ledger is None:  # unreadable (already a problem) or absent: nothing is frozen
            ledger = empty_ledger(self.cfg.ledger)
        self._owner_problems(ledger)
        for item in items:
            self._silence_problems(item, ledger)
        matched: set[int] = set()
        frozen: set[str] = set()  # an item takes the first row that freezes it
        for index, row in enumerate(ledger.rows):
            if not row.identity:
                continue
            for item in self._targets(ledger, row, items):
                matched.add(index)
                if item.nodeid not in frozen:
                    frozen.add(item.nodeid)
                    self._apply(item, row)
        self._unmatched_rows(ledger, items, matched)
        self._lock_problems(items)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        if self.problems:
            message = (f'oracle-guard: {len(self.problems)} problem(s) found at collection; '
                       'no test was run')
            if hasattr(session.config, 'workerinput'):
                # A pytest-xdist worker: its terminal summary is never shown, only this
                # message is, so it names each problem.
                message += ':\n' + '\n'.join(self.problems)
            from oracle_guard.runtime import run_record

            recorder = session.config.pluginmanager.get_plugin(run_record.PLUGIN_NAME)
            if recorder is not None and hasattr(recorder, 'guard_stopped'):
                recorder.guard_stopped(list(self.problems))
            session.shouldfail = message
            raise session.Failed(message)

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Generator[None]:
        outcome = yield
        count = self.counts.pop(item.nodeid, None) if call.when == 'call' else None
        if count is not None:
            count.remove()
            report = outcome.get_result()
            if report.passed and count.generated == 0:
                report.outcome = 'failed'
                report.longrepr = (
                    f'oracle-guard: {item.nodeid} passed but generated no example '
                    f'({count.ran} run, {count.explicit} explicit @example); a property '
                    'that draws nothing tests nothing. Check its settings (max_examples, '
                    'phases) and what it discards.')
        reason = self.expired.get(item.nodeid)
        if reason is None:
            return
        report = outcome.get_result()
        if report.skipped and hasattr(report, 'wasxfail'):
            # xfail(strict=True) only fails a pass; an expired freeze fails a failure too.
            del report.wasxfail
            report.outcome = 'failed'
            report.longrepr = f'{reason}\n\n{report.longrepr}'

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.cfg is not None:
            from oracle_guard.reading.install_origin import version_mismatch

            mismatch = version_mismatch(self.cfg.root)
            if mismatch:
                terminalreporter.line(f'oracle-guard: warning: {mismatch}')
        if self.problems:
            terminalreporter.section('oracle-guard: the session was failed', sep='=')
            for problem in self.problems:
                terminalreporter.line(problem)
            return  # no test ran: a list of freezes would suggest otherwise
        if self.active:
            terminalreporter.section('oracle-guard: active freezes', sep='-')
            for line in self.active:
                terminalreporter.line(line)
