"""check-named-freezes: every skip/xfail names a live ledger row for that very test."""
from __future__ import annotations

import os
import posixpath

from oracle_guard.repo.changeset import ALL_FILES
from oracle_guard.repo.changeset import NO_BASE
from oracle_guard.repo.changeset import RANGE
from oracle_guard.repo.changeset import range_env
from oracle_guard.findings import ConfigError
from oracle_guard.findings import Finding
from oracle_guard.reading.library_shadowing import root_shadowing_findings
from oracle_guard.reading.library_shadowing import shadowing_candidates
from oracle_guard.reading.library_shadowing import shadowing_findings
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.runner import run_hook

# Most commits stage test files without a silence: the scanner (and ast) is imported
# only for a file to scan, the ledger (and its YAML reader) only for a silence to judge.
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import datetime
    from collections.abc import Callable
    from collections.abc import Sequence

    from oracle_guard.config import Config
    from oracle_guard.oracle.ledger import FreezeLedger
    from oracle_guard.context import RunContext
    from oracle_guard.reading.scan_cache import FileScan
    from oracle_guard.reading.scanner import Silence


def same_test_file(path: str, nodeid: str, defines: Callable[[str, str], bool]) -> bool:
    """Whether a silence in ``path`` may use a row naming ``nodeid``: the row names this
    file, or its file no longer defines the test (it moved here). A test of the same name
    in another file is another test."""
    row_file, sep, identity = nodeid.partition('::')
    if not sep or not row_file.endswith('.py') or row_file == path:
        return True
    return not defines(row_file, identity)


def judge_silence(path: str, silence: Silence, ledger: FreezeLedger,
                  today: datetime.date,
                  defines: Callable[[str, str], bool] = lambda _f, _i: False,
                  ) -> list[Finding]:
    from oracle_guard.oracle.ledger import function_of
    from oracle_guard.oracle.ledger import NEVER_FREEZABLE

    def finding(code: str, message: str, hint: str) -> Finding:
        return Finding(path, silence.line, silence.col, code, message, hint)

    if not silence.freeze_ids:
        return [finding(
            'OG301', f'{silence.code} without a freeze id (FZ-<n>)',
            f'fix the test; or put its FZ id in the reason and add the row to {ledger.path} '
            'in a change without src/',
        )]
    findings = []
    if len(silence.targets) > 1:
        findings.append(finding(
            'OG306', f'{silence.code} at {silence.scope} level silences '
                     f'{len(silence.targets)} tests; a freeze names one test',
            'move the marker onto the one test the ledger row names',
        ))
    elif not silence.targets:
        # A base class or a module without tests of its own: what it silences is out of
        # sight (subclasses, other modules), so no row can be checked against it.
        findings.append(finding(
            'OG306', f'{silence.code} at {silence.scope} level silences no test this file '
                     'defines (a base class or shared module); a freeze names one test',
            'put the marker on the test itself',
        ))
    rows = ledger.by_id()
    for freeze_id in silence.freeze_ids:
        row = rows.get(freeze_id)
        if row is None:
            findings.append(finding(
                'OG302', f'{freeze_id} is not a row of {ledger.path}',
                f'add {freeze_id} to {ledger.path} (owner, class, evidence, expires) in a '
                'change without src/',
            ))
        elif not row.is_freezable():
            remedy = NEVER_FREEZABLE.get(row.freeze_class)
            findings.append(finding(
                'OG304', f'{freeze_id} has class {row.freeze_class!r}, which cannot be frozen',
                remedy or 'use order-dependent or time-dependent, or fix the test',
            ))
        elif row.expires is None or row.expires < today:
            expired = row.expires.isoformat() if row.expires else 'never (no valid date)'
            findings.append(finding(
                'OG303', f'{freeze_id} expired on {expired}',
                f'fix the test and delete the row, or have {row.owner or "its owner"} renew '
                'it in a change of its own',
            ))
        elif len(silence.targets) == 1 and (
                function_of(row.identity) != function_of(silence.targets[0])
                or not same_test_file(path, row.nodeid, defines)):
            findings.append(finding(
                'OG305', f'{freeze_id} belongs to {row.nodeid or "no test"}, '
                         f'not to {path}::{silence.targets[0]}',
                'an id names one test: give this test its own row',
            ))
    return findings


def _content_finding(line: int, col: int, code: str, message: str, hint: str) -> Finding:
    return Finding('', line, col, code, message, hint)


def scan_file(path: str, source: bytes, judge=None,  # type: ignore[no-untyped-def]
              helpers=None, record: bool = False) -> FileScan:
    """``scan_one`` with the cyclic garbage collector paused. A syntax tree holds no
    reference cycle and is freed, a node at a time, when the scan returns; while it lives,
    every collection the scan's allocations trigger would walk all of its nodes again
    (about a seventh of a cold scan over many files). What the scan leaves in cycles is
    collected after it."""
    import gc

    collecting = gc.isenabled()
    gc.disable()
    try:
        return scan_one(path, source, judge, helpers, record)
    finally:
        if collecting:
            gc.enable()


def scan_one(path: str, source: bytes, judge=None,  # type: ignore[no-untyped-def]
             helpers=None, record: bool = False) -> FileScan:
    """Rules 35, 35b and 36, and every silence with the facts ``judge_scan`` needs: all
    that the bytes decide (the scan cache keeps it). ``judge``: a SilenceJudge (rules
    39-41), whose project facts give the Python versions conditions are judged on.
    ``helpers``: where names imported from helper modules under the tests roots are
    followed (rule 14); a file that imports such a name is marked ``uses_helpers``: its
    scan then depends on the helper's bytes too, and is not cached by its own.
    ``record``: keep the questions asked of the helpers and their answers in ``asked``
    (the scan cache asks them again before it uses the scan)."""
    from oracle_guard.reading.scan_cache import FileScan
    from oracle_guard.reading.silence_prefilter import foreign_encoding
    from oracle_guard.reading.silence_prefilter import might_silence
    from oracle_guard.reading.silence_prefilter import might_compute
    from oracle_guard.reading.silence_prefilter import might_tamper

    cookie = foreign_encoding(source)
    if cookie is not None:  # rule 36
        line, name = cookie
        return FileScan([_content_finding(
            line, 1, 'OG307', f'test file declares coding {name!r}: Python decodes it '
            'differently from UTF-8, so what is reviewed here is not what runs',
            'save the file as UTF-8 and delete the coding line')], [], [])
    silences_possible, tampering_possible = might_silence(source), might_tamper(source)
    computing_possible = might_compute(source)
    through_helpers = False
    if not silences_possible:
        # No silence word here; one may still come from a helper it imports (rule 14),
        # whatever else the file spells (a ``getattr`` does not make ``@XFAIL`` less one).
        reach = 0 if helpers is None else helpers.reaches_helpers(path, source)
        if reach == 2:  # helper_paths.SILENCING_HELPER
            silences_possible = through_helpers = True
        elif not (tampering_possible or computing_possible):
            scan = FileScan([], [], [])
            # The helpers decide, not only this file's bytes: a helper it imports may
            # gain a silence, or appear where none was found. Cached with the
            # prefilter's answer, which a later run asks again before it uses the scan
            # (``answer_holds``: no parse, and no worker process for the file).
            scan.uses_helpers = helpers is not None
            if record and helpers is not None:
                scan.asked = [[REACHES, reach]]
            return scan
    from oracle_guard.reading.runner_access import computed_access
    from oracle_guard.reading.import_aliases import ImportAliases
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import scan_silences
    from oracle_guard.reading.scanner import source_text
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.runner_access import tampering

    unparsable = ('make the file valid Python 3 (UTF-8): a test file nobody can parse '
                  'cannot be checked')
    try:
        tree = parse_python(source, path)
        text = source_text(source)
        # One collection of the file's imports and aliases serves rules 14-17 and 35.
        importing = None if helpers is None else \
            helpers.recorded_from(path) if record else helpers.seen_from(path)
        aliases = ImportAliases(tree, importing)
        silences = scan_silences(tree, text, aliases) if silences_possible else []
        # rule 35, walking only the lines that spell a word of a tampering site
        tampered = tampering(tree, aliases, text) if tampering_possible else []
        computed = computed_access(tree, text, aliases) if computing_possible else []  # rule 35b
    except ScanError as exc:
        return FileScan([_content_finding(exc.line, exc.col, 'OG307', f'test file {exc.message}',
                                          unparsable)], [], [])
    except RecursionError:
        return FileScan([_content_finding(1, 1, 'OG307', 'test file is nested too deeply to be '
                                          'scanned', unparsable)], [], [])
    findings = [_content_finding(line, col, 'OG308', f'test code {what}',
                                 'a test may not change pytest or swap a function\'s code: '
                                 'fix the code under test instead')
                for line, col, what in tampered]
    findings += [_content_finding(line, col, 'OG310', f'test code {what}: pytest\'s marks, '
                                  'outcomes or internals reached by a name nobody can read here',
                                  'spell the name out (pytest.mark.skip, import _pytest.python) '
                                  'so it is judged; a skip then needs its freeze')
                 for line, col, what in computed]
    if not silences:
        scan = FileScan(findings, [], [])
        scan.uses_helpers = aliases.uses_helpers or through_helpers
        return _with_answers(scan, importing, through_helpers)
    from oracle_guard.reading.silence_acceptance import SilenceFacts

    readers: list = []

    def reader():  # type: ignore[no-untyped-def]
        if not readers:
            from oracle_guard.reading.env_conditions import ConditionReader
            readers.append(ConditionReader.of_tree(tree, aliases))
        return readers[0]

    if judge is None:
        scan = FileScan(findings, [SilenceFacts.bare(s) for s in silences], silences)
    else:
        facts = [judge.facts_of(silence, reader) for silence in silences]
        minors = judge.minors() if any(f.condition is not None for f in facts) else None
        scan = FileScan(findings, facts, silences, minors)
    scan.uses_helpers = aliases.uses_helpers or through_helpers
    return _with_answers(scan, importing, through_helpers)


def _with_answers(scan: FileScan, importing, through_helpers: bool) -> FileScan:  # type: ignore[no-untyped-def]
    """The scan with the helpers' answers it rests on, when they were recorded: any
    question counts, "no such helper" too (a helper added later changes that answer). A
    file parsed only because a helper it imports may pass a silence on
    (``through_helpers``) rests on that byte-level answer too, which is not recorded:
    never cached."""
    asked = getattr(importing, 'asked', None)
    if asked and not through_helpers:
        scan.asked = asked
    return scan


def judge_scan(path: str, scan: FileScan, cfg: Config, ledger_loader,
               today: datetime.date | Callable[[], datetime.date],
               defines: Callable[[str, str], bool] = lambda _f, _i: False,
               judge=None,  # a SilenceJudge: rules 39-41
               environment: list[Silence] | None = None,  # gets rule 40's accepted silences
               inherited: list[tuple[Silence, str]] | None = None,  # rule 39: moved entries
               ) -> list[Finding]:  # type: ignore[no-untyped-def]
    """Rules 14-17 and 39-41 for one scanned file: what the configuration, the ledger,
    the baseline, the declared dependencies and the date decide, read anew every run.
    ``today`` may be a function: asked only when a silence is judged (most commits stage
    none, and ``datetime`` is not free)."""
    findings = [f.replace(path=path) for f in scan.findings]
    for at, facts in enumerate(scan.facts):
        if facts.kind in cfg.allow_silences:
            continue
        if judge is not None:  # rules 39-41: baselined, environment, declared import
            judgement = judge.judge_facts(path, facts)
            if judgement.accepted == 'environment' and environment is not None and \
                    scan.silences:
                environment.append(scan.silences[at])  # rule 40b asks the base about it
            if judgement.accepted == 'baseline' and judgement.moved_from and \
                    inherited is not None and scan.silences:
                inherited.append((scan.silences[at], judgement.moved_from))  # rule 39 asks it
            if judgement.accepted:
                continue
            if judgement.finding is not None:
                findings.append(judgement.finding)
                continue
        findings.extend(judge_silence(path, facts, ledger_loader(),
                                      today() if callable(today) else today, defines))
    return findings


def check_file(path: str, source: bytes, cfg: Config, ledger_loader,
               today: datetime.date | Callable[[], datetime.date],
               defines: Callable[[str, str], bool] = lambda _f, _i: False,
               judge=None,  # a SilenceJudge: rules 39-41
               environment: list[Silence] | None = None,  # gets rule 40's accepted silences
               helpers=None,  # a HelperModules of the judged side (rule 14)
               inherited: list[tuple[Silence, str]] | None = None,  # rule 39: moved entries
               ) -> list[Finding]:  # type: ignore[no-untyped-def]
    """Rules 14-17, 35, 35b, 36 and 39-41 for one test file."""
    return judge_scan(path, scan_file(path, source, judge, helpers), cfg, ledger_loader,
                      today, defines, judge, environment, inherited)


def scan_cache(ctx: RunContext):  # type: ignore[no-untyped-def]
    """The per-user cache of clean test-file contents (``reading/scan_cache``), for a run
    over the whole tree (``--all-files``, history mode) on a developer's machine; None
    otherwise: a commit or a range scans only the files it changes."""
    if not (ctx.all_files or ctx.changes.mode in (ALL_FILES, NO_BASE)):
        return None
    from oracle_guard.reading import scan_cache

    return scan_cache.ScanCache.for_this_scanner() if scan_cache.enabled() else None


def outer_conftests(cfg: Config) -> frozenset[str]:
    """The ``conftest.py`` paths in the folders above each tests root and in its own
    folder: pytest loads them for the tests below (a root ``conftest.py`` beside six's
    ``test_*.py`` root, or above ``tests/``), so they are test code too."""
    found = set()
    for root in cfg.test_roots():
        folder = root.rstrip('/') if root.endswith('/') else posixpath.dirname(root)
        while True:
            found.add(posixpath.join(folder, 'conftest.py'))
            if not folder:
                break
            folder = posixpath.dirname(folder)
    return frozenset(found)


def is_read_as_test_code(cfg: Config, path: str, outer: frozenset[str]) -> bool:
    return cfg.is_test_code(path) or path in outer


def test_files(ctx: RunContext) -> list[str]:
    cfg = ctx.cfg
    outer = outer_conftests(cfg)
    if ctx.filenames and not ctx.all_files:  # pre-commit passed them
        candidates = [p.replace(os.sep, '/') for p in ctx.filenames]
    elif ctx.all_files or ctx.changes.mode in (ALL_FILES, NO_BASE):
        candidates = ctx.changes.new.paths(list(cfg.test_roots()))
        candidates += [p for p in ctx.changes.new.paths(sorted(outer)) if p not in candidates]
    else:
        candidates = ctx.changes.added_or_modified()
    return [p for p in candidates if is_read_as_test_code(cfg, p, outer)]


def _read(root: str, path: str, real_root: str | None = None,
          folders: dict[str, str] | None = None) -> bytes | None:
    """The bytes of a file under ``root`` (``real_root``: its realpath, when known), None
    when it is missing or leaves the repository through a symlink. ``folders``: the
    realpath of each folder, kept by the caller (a file that is no symlink is where its
    folder really is)."""
    full = os.path.join(root, path)
    folder = os.path.dirname(full)
    if folders is None or os.path.islink(full):
        real = os.path.realpath(full)
    else:
        if folder not in folders:
            folders[folder] = os.path.realpath(folder)
        real = os.path.join(folders[folder], os.path.basename(full))
    if real_root is None:
        real_root = os.path.realpath(root)
    if os.path.commonpath([real, real_root]) != real_root:
        return None
    try:
        with open(full, 'rb') as f:
            return f.read()
    except OSError:
        return None


def pushed_view(ctx: RunContext) -> TreeView | None:
    """In range mode, the to-ref's tree: it need not be checked out (pre-push of a branch)."""
    if not (ctx.from_ref or range_env()):
        return None  # commit mode: no git work beyond the files pre-commit passed
    return ctx.changes.new if ctx.changes.mode == RANGE else None


def check(ctx: RunContext) -> list[Finding]:
    cfg = ctx.cfg
    cache: list[FreezeLedger] = []
    view = pushed_view(ctx)

    def ledger() -> FreezeLedger:
        if not cache:
            # The ledger on the judged side (the index during a commit, the to-ref of a
            # range), the one check-freeze-ledger judges: an untracked ledger names nothing.
            from oracle_guard.oracle.ledger import empty_ledger
            from oracle_guard.oracle.ledger import read_ledger

            ledger_view = ctx.judged or TreeView(cfg.root, None)
            cache.append(read_ledger(ledger_view, cfg.ledger) or empty_ledger(cfg.ledger))
        return cache[0]

    defined: dict[str, set[str]] = {}

    def defines(path: str, identity: str) -> bool:
        """Whether the test file a ledger row names still defines that test."""
        from oracle_guard.oracle.ledger import function_of
        from oracle_guard.reading.scanner import parse_python
        from oracle_guard.reading.scanner import ScanError
        from oracle_guard.reading.scanner import test_functions

        if path not in defined:
            raw = (view or ctx.judged or TreeView(cfg.root, None)).read(path)
            try:
                tree = parse_python(raw, path) if raw is not None else None
            except ScanError:
                tree = None
            defined[path] = {function_of(i) for i, _ in test_functions(tree)} if tree else set()
        return function_of(identity) in defined[path]

    judge = LazySilenceJudge(cfg, view or ctx.judged or TreeView(cfg.root, None))
    # in a commit (view None) the test files are read from the working tree
    helpers = LazyHelperModules(cfg, view or ctx.judged or TreeView(cfg.root, None),
                                view or TreeView(cfg.root, None))
    unreviewed, links = symlinked_tests(ctx)
    if unreviewed:  # upstream's links at adoption, to the same targets, are accepted
        from oracle_guard.reading.adoption_acceptance import accepted_link
        unreviewed = [k for k in unreviewed if not accepted_link(judge.baseline(), k)]
    findings = [Finding(link.path, 1, 1, 'OG307', 'test file is a symlink: pytest follows it, '
                        'but what it points at is not reviewed as test code here',
                        'commit the file itself') for link in unreviewed]
    files = [p for p in test_files(ctx) if p not in links]  # a link's text is no code
    scans = scan_cache(ctx)
    real_root = os.path.realpath(cfg.root)
    folders: dict[str, str] = {}
    sources = {p: _read(cfg.root, p, real_root, folders) if view is None else view.read(p)
               for p in files}
    fresh: dict[str, FileScan] = {}
    if ctx.all_files or ctx.changes.mode in (ALL_FILES, NO_BASE):  # the whole tree: every core
        from oracle_guard.reading.scan_pool import scan_misses
        fresh = scan_misses(sources, scans, lambda p, s: scan_file(p, s, judge, helpers,
                                                                   record=scans is not None))
    for path in files:
        source = sources.pop(path)
        if source is None:
            if os.path.islink(os.path.join(cfg.root, path)):
                findings.append(Finding(path, 1, 1, 'OG307', 'test file is a symlink leaving '
                                        'the repository', 'commit the file itself'))
            continue
        if scans is None and path not in fresh:
            environment: list[Silence] = []
            inherited: list[tuple[Silence, str]] = []
            findings.extend(unread_at_adoption(path, source, judge, check_file(
                path, source, cfg, ledger, lambda: ctx.today, defines, judge, environment,
                helpers, inherited)))
            findings.extend(added_environment_conditions(ctx, path, environment))
            findings.extend(inherited_baseline_silences(ctx, path, inherited))
            findings.extend(new_calls_of_baselined_silences(
                ctx, path, source, judge, helpers,
                lambda silence: judge_silence(path, silence, ledger(), ctx.today, defines)))
            continue
        # A run over the whole tree (no base: rule 40b has nothing to ask) re-judges what
        # an earlier run found in the same bytes, without parsing them again.
        scan = fresh.get(path)  # scanned by a worker (the whole tree, many files)
        key = scans.key(source) if scans is not None else ''
        if scan is None and scans is not None:
            scan = scans.get(key, judge.minors)
            if scan is not None and scan.asked is not None and (
                    helpers is None or not answer_holds(helpers, path, source, scan.asked)):
                scan = None  # rule 14: a helper it imports answers otherwise now
            if scan is None:
                scan = scan_file(path, source, judge, helpers, record=True)
                fresh[path] = scan
        # A helper's bytes are not in this file's key: kept only with its answers.
        if scans is not None and path in fresh and (
                scan.asked is not None or not scan.uses_helpers):
            scans.put(key, scan)
        findings.extend(unread_at_adoption(path, source, judge, judge_scan(
            path, scan, cfg, ledger, lambda: ctx.today, defines, judge)))
    if scans is not None:
        scans.save()
    findings.extend(untouched_users_of_removed_ids(ctx, set(files), ledger, defines))
    judged_view = view or ctx.judged or TreeView(cfg.root, None)
    findings.extend(shadowing_findings(cfg, shadowing_candidates(ctx, files, judged_view),
                                       judged_view))
    findings.extend(root_shadowing_findings(ctx, view or ctx.judged or TreeView(cfg.root, None)))
    if ctx.all_files or ctx.changes.mode in (ALL_FILES, NO_BASE):  # every file was seen
        stale = judge.stale_entries()
        if stale:
            ctx.notes.append(f'note: {len(stale)} entr{"y" if len(stale) == 1 else "ies"} of '
                             f'{cfg.baseline} match no silence any more (stale); '
                             '`oracle-guard baseline --prune` removes them')
    return findings


# The record of a scan that found nothing because the file's imports reach no helper that
# may pass a silence on: [[REACHES, the prefilter's answer]] (helper_paths.reaches_helpers).
REACHES = 'reaches'


def answer_holds(helpers, path: str, source: bytes, asked: list) -> bool:  # type: ignore[no-untyped-def]
    """Whether the helpers (a LazyHelperModules) answer a cached scan's questions as they
    did when it was made: the prefilter's one question, asked again of the same bytes,
    or the scanner's (``helper_modules.answers_hold``)."""
    if asked and isinstance(asked[0], list) and asked[0][:1] == [REACHES]:
        return len(asked) == 1 and len(asked[0]) == 2 and asked[0][1] in (0, 1) and \
            helpers.reaches_helpers(path, source) == asked[0][1]
    from oracle_guard.reading.helper_modules import answers_hold

    return answers_hold(helpers.seen_from(path), asked)


def unread_at_adoption(path: str, source: bytes, judge, findings: list[Finding]  # type: ignore[no-untyped-def]
                       ) -> list[Finding]:
    """A file's findings without those the baseline accepts as upstream content
    (``reading/adoption_acceptance``): a file adoption could not read (rule 39: cattrs'
    PEP 695 modules under Python 3.11), a line that patched pytest then. The baseline is
    read only for a file with such a finding."""
    if not any(f.code in ('OG307', 'OG308', 'OG310') for f in findings):
        return findings
    from oracle_guard.reading.adoption_acceptance import accepted_at_adoption

    return accepted_at_adoption(path, source, judge.baseline(), findings, judge.exists)


def untouched_users_of_removed_ids(ctx: RunContext, judged: set[str], ledger,
                                   defines: Callable[[str, str], bool]) -> list[Finding]:  # type: ignore[no-untyped-def]
    """Rule 29: a change that deletes or renumbers a ledger row leaves the test file that
    still names the old id untouched, so pre-commit never passes it. One ``git grep`` for
    the vanished ids over the test roots finds it; each use is judged where it is."""
    changes, cfg = ctx.changes, ctx.cfg
    if not changes.has_base:
        return []
    base_cfg = ctx.base_cfg
    touched = changes.touched()
    if cfg.ledger not in touched and base_cfg.ledger not in touched:
        return []
    raw = changes.read_base(base_cfg.ledger)
    if raw is None:
        return []
    from oracle_guard.oracle.ledger import parse_ledger
    from oracle_guard.oracle.ledger import removed_ids
    from oracle_guard.reading.scanner import silences_naming

    try:
        base = parse_ledger(raw, base_cfg.ledger)
    except ConfigError:
        return []
    gone = removed_ids(base, ledger())
    findings = []
    for path, silence, _id in silences_naming(changes.new, cfg.test_roots(), gone, cfg.is_test_code,
                                              LazyHelperModules(cfg, changes.new)):
        if path in judged or silence.kind in cfg.allow_silences:
            continue  # a file of the change is judged whole above
        findings.extend(f for f in judge_silence(path, silence, ledger(), ctx.today, defines)
                        if f.code == 'OG302')
    return sorted(set(findings), key=Finding.sort_key)


def added_environment_conditions(ctx: RunContext, path: str, accepted: list[Silence]
                                 ) -> list[Finding]:
    """Rule 40b, where there is a base to ask: a change, a range, one commit of history."""
    if not accepted or ctx.all_files or ctx.changes.mode in (ALL_FILES, NO_BASE) or \
            not ctx.changes.has_base:
        return []
    from oracle_guard.reading.silence_acceptance import added_environment_conditions as added

    old, base_helpers = _at_base(ctx, path)
    return added(path, accepted, ctx.changes.read_base(old), base_helpers)


# The base side's helper modules, for the last base view asked about: rules 39 and 40b
# ask them of every judged file of a run, and each helper is read once.
_BASE_HELPERS: list = [None, None]  # [the base view, its LazyHelperModules]


def _at_base(ctx: RunContext, path: str):  # type: ignore[no-untyped-def]
    """(``path`` at the base, the base's helper modules as that file imports them). A
    file renamed in the change is the same file: its tests ran under the old name."""
    old = next((c.old_path for c in ctx.changes.changes
                if c.path == path and c.status in ('R', 'C') and c.old_path), path)
    base = ctx.changes.base_view
    if base is None:
        return old, None
    if _BASE_HELPERS[0] is not base:
        _BASE_HELPERS[:] = [base, LazyHelperModules(ctx.base_cfg, base)]
    return old, _BASE_HELPERS[1].seen_from(old)


def inherited_baseline_silences(ctx: RunContext, path: str,
                                inherited: list[tuple[Silence, str]]) -> list[Finding]:
    """Rule 39, where there is a base to ask: a baseline entry of a file that is gone
    matched here on a test that existed at the base without it (OG323)."""
    if not inherited or ctx.all_files or ctx.changes.mode in (ALL_FILES, NO_BASE) or \
            not ctx.changes.has_base:
        return []
    from oracle_guard.reading.silence_acceptance import inherited_baseline_silences as found

    old, base_helpers = _at_base(ctx, path)
    return found(path, inherited, ctx.changes.read_base(old), base_helpers)


def new_calls_of_baselined_silences(ctx: RunContext, path: str, source: bytes, judge,  # type: ignore[no-untyped-def]
                                    helpers, judged: Callable[[Silence], list[Finding]],
                                    ) -> list[Finding]:
    """Rule 39, where there is a base to ask: a call of a helper function whose silence the
    baseline holds (``need("x")`` after ``def need(m): pytest.skip(...)`` was baselined),
    made by a test, fixture or helper that did not make it at the base, is a new silence
    (``reading/helper_calls.py``); ``judged`` judges it like any (OG301 without a freeze)."""
    if ctx.all_files or ctx.changes.mode in (ALL_FILES, NO_BASE) or \
            not ctx.changes.has_base:
        return []
    from oracle_guard.reading.silence_prefilter import might_silence

    if not might_silence(source) and helpers.reaches_helpers(path, source) != 2:
        return []  # it can call no function holding a silence
    wanted = judge.baselined_functions()
    from oracle_guard.reading.helper_calls import may_call

    if not wanted or not may_call(path, source, wanted):
        return []  # sympy's test files: their own baselined tests, called by nobody
    from oracle_guard.reading.helper_calls import new_calls
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import source_text

    try:
        tree = parse_python(source, path)
    except ScanError:
        return []  # reported as OG307 by the scan
    old, base_helpers = _at_base(ctx, path)
    raw, base_tree = ctx.changes.read_base(old), None
    if raw is not None:
        try:
            base_tree = parse_python(raw, old)
        except ScanError:
            base_tree = None
    findings: list[Finding] = []
    for silence in new_calls(path, tree, source_text(source), helpers.seen_from(path),
                             base_tree, old, base_helpers, wanted):
        if silence.kind not in ctx.cfg.allow_silences:
            findings.extend(judged(silence))
    return findings


class LazyHelperModules:
    """The helper modules under the tests roots on one side (rule 14), built when a file
    is scanned: a commit whose test files hold no silence word imports nothing more.

    ``reaches_helpers`` is the prefilter's question about such a file, answered without
    the scanner from ``prefilter_view``: in a commit the working tree, which the test
    files themselves are read from (the index's files under pre-commit, which stashes
    what is not staged), so no git process lists the index."""

    def __init__(self, cfg: Config, view: TreeView,
                 prefilter_view: TreeView | None = None) -> None:
        self.cfg = cfg
        self.view = view
        self.prefilter_view = view if prefilter_view is None else prefilter_view
        self._modules = None
        self._paths = None

    def reaches_helpers(self, path: str, source: bytes) -> int:
        if self._paths is None:
            from oracle_guard.reading.helper_paths import HelperPaths

            self._paths = HelperPaths.of(self.cfg, self.prefilter_view)
            self._paths.by_stat = True
            self._reach: dict[tuple[str, bytes], int] = {}
        key = (path, source)
        if key not in self._reach:  # asked again by rule 39's call check
            self._reach[key] = self._paths.reaches_helpers(path, source)
        return self._reach[key]

    def _helpers(self):  # type: ignore[no-untyped-def]
        if self._modules is None:
            from oracle_guard.reading.helper_modules import HelperModules

            self._modules = HelperModules.of(self.cfg, self.view)
        return self._modules

    def seen_from(self, path: str):  # type: ignore[no-untyped-def]
        return self._helpers().seen_from(path)

    def recorded_from(self, path: str):  # type: ignore[no-untyped-def]
        return self._helpers().recorded_from(path)


def history_check(ctx: RunContext) -> list[Finding]:
    """One commit of history mode: rule 40b for the test files it added or edited (the
    whole tree at HEAD is judged once, by ``check``, where no base can be asked)."""
    cfg = ctx.cfg
    view = ctx.changes.new
    judge = LazySilenceJudge(cfg, view)
    helpers = LazyHelperModules(cfg, view)
    findings: list[Finding] = []
    outer = outer_conftests(cfg)
    for path in ctx.changes.added_or_modified():
        if not is_read_as_test_code(cfg, path, outer):
            continue
        source = view.read(path)
        if source is None:
            continue
        environment: list[Silence] = []
        inherited: list[tuple[Silence, str]] = []
        check_file(path, source, cfg, lambda: _no_ledger(cfg), lambda: ctx.today, judge=judge,
                   environment=environment, helpers=helpers, inherited=inherited)
        findings.extend(added_environment_conditions(ctx, path, environment))
        findings.extend(inherited_baseline_silences(ctx, path, inherited))
        # The ledger of each commit is not judged here: a call without a freeze id is.
        findings.extend(new_calls_of_baselined_silences(
            ctx, path, source, judge, helpers,
            lambda silence: [] if silence.freeze_ids else judge_silence(
                path, silence, _no_ledger(cfg), ctx.today)))
    return findings


def _no_ledger(cfg: Config) -> FreezeLedger:
    from oracle_guard.oracle.ledger import empty_ledger

    return empty_ledger(cfg.ledger)


class LazySilenceJudge:
    """What accepts a silence without a freeze (rules 39-41), read from the judged side like
    the ledger (an untracked baseline accepts nothing). Built on first use: most commits
    hold no silence, and the models it needs cost imports the hot path does without."""

    def __init__(self, cfg: Config, view: TreeView) -> None:
        self.cfg = cfg
        self.view = view
        self._judge = None

    def _get(self):  # type: ignore[no-untyped-def]
        if self._judge is None:
            from oracle_guard.reading.silence_acceptance import SilenceJudge
            self._judge = SilenceJudge.of_view(self.cfg, self.view)
        return self._judge

    def judge(self, path, silence, reader):  # type: ignore[no-untyped-def]
        return self._get().judge(path, silence, reader)

    def facts_of(self, silence, reader):  # type: ignore[no-untyped-def]
        return self._get().facts_of(silence, reader)

    def judge_facts(self, path, facts):  # type: ignore[no-untyped-def]
        return self._get().judge_facts(path, facts)

    def minors(self):  # type: ignore[no-untyped-def]
        return self._get().minors()

    def stale_entries(self):  # type: ignore[no-untyped-def]
        return self._get().stale_entries()

    def baseline(self):  # type: ignore[no-untyped-def]
        return self._get()._baseline()

    def exists(self, path: str) -> bool:
        return self._get().exists(path)

    def baselined_functions(self):  # type: ignore[no-untyped-def]
        """path -> function -> entry, of the helper functions the baseline holds a
        silence of (``reading/helper_calls``), read once."""
        if not hasattr(self, '_functions'):
            from oracle_guard.reading.helper_calls import baselined_functions

            self._functions = baselined_functions(self._get()._baseline())
        return self._functions


def symlinked_tests(ctx: RunContext):  # type: ignore[no-untyped-def]
    """(test files that are symlinks to something not reviewed here, with their targets;
    every symlinked test file). pre-commit never passes a symlink to a hook."""
    cfg, changes = ctx.cfg, ctx.changes
    if ctx.all_files or changes.mode in (ALL_FILES, NO_BASE):
        roots = list(cfg.test_roots())
        entries = changes.new.entries(roots) if roots else []
    else:
        paths = [p for p in changes.added_or_modified() if cfg.is_test_code(p)]
        entries = changes.new.entries(paths) if paths else []
    links = [e for e in entries if e.is_symlink]
    if not links:  # the common case: nothing of the baseline's machinery is imported
        return [], set()
    from oracle_guard.reading.adoption_acceptance import unreviewed_links

    return unreviewed_links(changes.new, cfg, links)


def main(argv: Sequence[str] | None = None) -> int:
    return run_hook(check, argv, 'Every skip/xfail carries an FZ id naming a live ledger row.',
                    filenames=True, history=history_check)


if __name__ == '__main__':
    raise SystemExit(main())
