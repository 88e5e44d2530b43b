"""``oracle-guard baseline [--prune]``: accept the silences that exist now, once (rule 39).

Human-run, like detect-secrets' ``scan --baseline``: it writes the ``baseline`` file (see
oracle_guard.oracle.baseline) for a person to review and commit in a change of its own (rule 42).
Every skip/xfail without an FZ id that check-named-freezes would fail becomes an entry;
environment conditions and declared imports need none (rules 40, 41). Without
``--prune`` existing entries are kept and new ones added; ``--prune`` only removes the
entries that match no silence any more, so its diff only ever shrinks the file. The tests
the pytest configuration already leaves out are recorded under ``excluded``.

Exit codes: 0 written (or already up to date), 2 bad input.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from oracle_guard.commands import refuse_unattended
from oracle_guard.oracle.baseline import Baseline
from oracle_guard.oracle.baseline import BaselineEntry
from oracle_guard.oracle.baseline import content_digest
from oracle_guard.oracle.baseline import empty_baseline
from oracle_guard.oracle.baseline import ExcludedTest
from oracle_guard.oracle.baseline import PytestPatch
from oracle_guard.oracle.baseline import LinkedTestFile
from oracle_guard.oracle.baseline import read_baseline
from oracle_guard.oracle.baseline import UnparsableFile
from oracle_guard.config import Config
from oracle_guard.config import load_config
from oracle_guard.repo.gitrepo import repo_root
from oracle_guard.repo.tree_view import TreeView
from oracle_guard.runner import guarded


def files_on_disk(root: str, roots: Sequence[str]) -> list[str]:
    """Tracked files and untracked ones git does not ignore: a test written a minute ago
    and not yet added is part of what the person is accepting."""
    from oracle_guard.repo.gitrepo import git
    from oracle_guard.repo.gitrepo import split_z

    from oracle_guard.repo.gitrepo import literal_pathspecs

    out = git('ls-files', '-z', '--cached', '--others', '--exclude-standard', '--',
              *literal_pathspecs(roots), cwd=root)
    return sorted(set(split_z(out)))


def current_entries(view: TreeView, cfg: Config, patches: list[PytestPatch] | None = None,
                    ) -> tuple[list[BaselineEntry], list[UnparsableFile]]:
    """(an entry per silence that needs one now, the files that cannot be read here).

    Each file is read by check-named-freezes' own scan (its prefilters, the helper modules
    it follows, the judgement of each silence): what the hook fails at adoption is what
    the baseline records, a file it cannot parse (OG307) by the digest of its bytes, and
    into ``patches`` each line that changes pytest (OG308, OG310)."""
    from oracle_guard.reading.adoption_acceptance import patches_in

    from oracle_guard.hooks.check_named_freezes import is_read_as_test_code
    from oracle_guard.hooks.check_named_freezes import outer_conftests
    from oracle_guard.hooks.check_named_freezes import scan_file
    from oracle_guard.reading.declared_dependencies import read_project_facts
    from oracle_guard.reading.silence_acceptance import SilenceJudge
    from oracle_guard.reading.helper_modules import HelperModules

    # Judged against an empty baseline: what would fail if nothing had been accepted yet.
    judge = SilenceJudge(lambda: empty_baseline(cfg.baseline),
                         lambda: read_project_facts(view, cfg), lambda p: True)
    helpers = HelperModules.of(cfg, view)  # names imported from test helpers (rule 14)
    entries, unparsable = [], []
    outer = outer_conftests(cfg)  # a root conftest.py is read as test code too
    for path in files_on_disk(view.root, [*cfg.test_roots(), *sorted(outer)]):
        if not is_read_as_test_code(cfg, path, outer):
            continue
        source = view.read(path)
        if source is None:
            continue
        scan = scan_file(path, source, judge, helpers)
        if patches is not None:
            patches.extend(patches_in(path, source, scan.findings))
        unread = [f for f in scan.findings if f.code == 'OG307']
        if unread:
            why = unread[0].message.replace('test file ', '', 1)
            unparsable.append(UnparsableFile(path, content_digest(source),
                                             f'line {unread[0].line}: {why}'))
            continue
        for facts, silence in zip(scan.facts, scan.silences):
            if silence.freeze_ids or silence.kind in cfg.allow_silences:
                continue  # named silences are the ledger's
            if judge.judge_facts(path, facts).accepted:
                continue
            entries.append(BaselineEntry.of(path, silence))
    return entries, unparsable


def current_links(view: TreeView, cfg: Config) -> list[LinkedTestFile]:
    """The test files shipped as symlinks to something not reviewed as test code, which
    check-named-freezes fails (OG307), with their targets."""
    from oracle_guard.reading.adoption_acceptance import unreviewed_links

    roots = list(cfg.test_roots())
    return unreviewed_links(view, cfg, view.entries(roots) if roots else [])[0]


def merged_patches(old: Sequence[PytestPatch], now: Sequence[PytestPatch], prune: bool
                   ) -> tuple[list[PytestPatch], list[str]]:
    """Patches of pytest: the old ones and those found now (``prune``: only the old ones
    still found), each line as often as the file has it; one line per change."""
    count: dict[tuple[str, str], int] = {}
    for patch in now:
        count[(patch.path, patch.digest)] = count.get((patch.path, patch.digest), 0) + 1
    kept, lines = [], []
    for patch in old:
        key = (patch.path, patch.digest)
        if count.get(key, 0):
            count[key] -= 1
            kept.append(patch)
        elif prune:
            lines.append(f'pruned  patch {patch.path}: {patch.source}')
        else:
            kept.append(patch)
    if not prune:
        for patch in now:
            key = (patch.path, patch.digest)
            if count.get(key, 0):
                count[key] -= 1
                kept.append(patch)
                lines.append(f'added   patch {patch.path}: {patch.what} ({patch.code})')
    return kept, lines


def merged_links(old: Sequence[LinkedTestFile], now: Sequence[LinkedTestFile], prune: bool
                 ) -> tuple[list[LinkedTestFile], list[str]]:
    found = {(k.path, k.target) for k in now}
    known = {(k.path, k.target) for k in old}
    if prune:
        return ([k for k in old if (k.path, k.target) in found],
                [f'pruned  symlink {k.path}' for k in old if (k.path, k.target) not in found])
    added = [k for k in now if (k.path, k.target) not in known]
    return list(old) + added, [f'added   symlink {k.path} -> {k.target}' for k in added]


def current_exclusions(view: TreeView, cfg: Config,
                       collect: Sequence[str] | None = ()) -> tuple[list[ExcludedTest], list[str]]:
    """(the inventory tests the configuration leaves out now, notes for the person).

    Read statically (``addopts`` ``--deselect``/``--ignore``, literal ``collect_ignore``),
    then, unless ``collect`` is None, from one ``pytest --collect-only`` run of the
    repository (rule 39b): what ``-m``/``-k`` in ``addopts``, a conftest's
    ``pytest_collection_modifyitems`` or ``pytest_ignore_collect`` leaves out."""
    from oracle_guard.reading.pytest_exclusions import excluded_tests

    found = dict(excluded_tests(view, cfg))
    notes: list[str] = []
    if collect is not None:
        probed, notes = collected_exclusions(view, cfg, list(collect))
        for nodeid, by in probed.items():
            found.setdefault(nodeid, by)
    return [ExcludedTest(nodeid, by) for nodeid, by in found.items()], notes


PROBE_BY = 'pytest --collect-only at adoption'


def collected_exclusions(view: TreeView, cfg: Config, command: list[str]
                         ) -> tuple[dict[str, str], list[str]]:
    """nodeid -> what left it out, from one collection of the repository's own suite with
    its own configuration (rule 39b), and notes for the person.

    A test function none of whose cases the session kept is recorded once, by its
    function identity (``tests/test_x.py::test_stress``: every parameter); one that kept
    some cases records each case it lost. Tests of a module that failed to import or was
    skipped at collection are not recorded: that is the environment, or a silence the
    baseline judges on its own. ``PYTEST_ADDOPTS`` and ``PYTEST_PLUGINS`` of the shell are
    not used: what is recorded is the repository's configuration, not this terminal's."""
    import json
    import subprocess
    import tempfile

    from oracle_guard.gate.inventory import static_inventory
    from oracle_guard.oracle.ledger import function_of
    from oracle_guard.oracle.ledger import identity_of

    inventory = static_inventory(view, cfg)
    if not inventory:
        return {}, []
    root = os.path.realpath(view.root)
    with tempfile.TemporaryDirectory(prefix='oracle-guard-collect-') as tmp:
        out = os.path.join(tmp, 'collected.json')
        env = {k: v for k, v in os.environ.items()
               if k not in ('PYTEST_ADDOPTS', 'PYTEST_PLUGINS')}
        env['ORACLE_GUARD_COLLECTION_PROBE'] = out
        # Collecting imports the suite: no compiled file of it is written into the
        # repository (`init --dry-run` writes nothing; the adoption commit holds no
        # __pycache__ where the project ignores none).
        env['PYTHONDONTWRITEBYTECODE'] = '1'
        argv = [*(command or [sys.executable, '-m', 'pytest']), '--collect-only', '-q',
                '--continue-on-collection-errors', '-p', 'no:oracle_guard',
                '-p', 'oracle_guard.runtime.collection_probe']
        if 'no:cacheprovider' not in argv:  # pytest's cache stays out of the repository
            argv += ['-o', f'cache_dir={os.path.join(tmp, "cache")}']
        try:
            proc = subprocess.run(argv, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=COLLECT_TIMEOUT)
            tail = proc.stdout.decode('utf-8', 'replace').strip().splitlines()[-3:]
        except (OSError, subprocess.TimeoutExpired) as exc:
            tail = [str(exc)]
        try:
            with open(out, encoding='utf-8') as f:
                data = json.load(f)
            # The suite's own code ran in that process and could have written the file:
            # only the shape the probe writes is read.
            if not (isinstance(data, dict) and isinstance(data.get('rootdir'), str) and all(
                    isinstance(data.get(k), list) for k in ('items', 'removed', 'problems'))
                    and all(isinstance(i, list) and len(i) == 2 and
                            all(isinstance(v, str) for v in i) for i in data['items'])
                    and all(isinstance(i, list) and len(i) == 3 and
                            all(isinstance(v, str) for v in i) for i in data['removed'])
                    and all(isinstance(p, dict) and all(
                        isinstance(p.get(k), str) for k in ('nodeid', 'outcome', 'path'))
                        for p in data['problems'])):
                raise ValueError('not what the collection probe writes')
        except (OSError, ValueError):
            return {}, [f'`{" ".join(argv[:3])} --collect-only` did not collect ('
                        f'{" / ".join(tail) or "no output"}): tests a conftest hook or `-m`/`-k` '
                        'in addopts leaves out are not recorded; run `oracle-guard baseline` '
                        'where the tests run']

    def rel(path: str) -> str:
        full = path if os.path.isabs(path) else os.path.join(data.get('rootdir') or root, path)
        return os.path.relpath(os.path.realpath(full), root).replace(os.sep, '/')

    kept: set[tuple[str, str]] = {(rel(path), function_of(identity_of(nodeid)))
                                  for nodeid, path in data['items']}
    lost: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for nodeid, path, cause in data['removed']:
        lost.setdefault((rel(path), function_of(identity_of(nodeid))), []).append(
            (identity_of(nodeid), cause))
    broken = [rel(p['path'] or p['nodeid'].split('::', 1)[0]) for p in data['problems']]
    failed = sorted({p for p, problem in zip(broken, data['problems'])
                     if problem['outcome'] == 'failed'})

    def under(path: str, folders: list[str]) -> bool:
        return any(path == b or path.startswith(b.rstrip('/') + '/') or b == '.'
                   for b in folders)

    found: dict[str, str] = {}
    for (path, identity) in sorted(inventory):
        if under(path, broken):
            continue
        cases = lost.get((path, identity), [])
        if (path, identity) not in kept:
            causes = sorted({cause for _, cause in cases}) or ['not collected']
            found[f'{path}::{identity}'] = f'{", ".join(causes)} ({PROBE_BY})'
        else:
            for case, cause in cases:
                found.setdefault(f'{path}::{case}', f'{cause} ({PROBE_BY})')
    notes = [f'{path}: could not be collected here; its tests are not recorded as left out'
             for path in failed]
    return found, notes


COLLECT_TIMEOUT = 1800


def updated(old: Baseline, entries: list[BaselineEntry], excluded: list[ExcludedTest],
            prune: bool, unparsable: Sequence[UnparsableFile] = (),
            patches: Sequence[PytestPatch] = (), links: Sequence[LinkedTestFile] = ()
            ) -> tuple[Baseline, list[str]]:
    """The new baseline and one line per change, for the person running the command."""
    new, lines = _updated(old, entries, excluded, prune, unparsable)
    new.patches, patch_lines = merged_patches(old.patches, patches, prune)
    new.links, link_lines = merged_links(old.links, links, prune)
    return new, lines + patch_lines + link_lines


def _updated(old: Baseline, entries: list[BaselineEntry], excluded: list[ExcludedTest],
             prune: bool, unparsable: Sequence[UnparsableFile]) -> tuple[Baseline, list[str]]:
    unread_now = {(u.path, u.digest) for u in unparsable}
    now = {(e.path, e.key()) for e in entries}
    before = {(e.path, e.key()) for e in old.entries}
    excluded_now = {e.nodeid for e in excluded}
    lines = []
    if prune:
        kept = [e for e in old.entries if (e.path, e.key()) in now]
        kept_excluded = [e for e in old.excluded if e.nodeid in excluded_now]
        for e in old.entries:
            if (e.path, e.key()) not in now:
                lines.append(f'pruned  {e.path}: {e.kind} on {", ".join(e.tests) or e.scope}')
        for x in old.excluded:
            if x.nodeid not in excluded_now:
                lines.append(f'pruned  excluded {x.nodeid}')
        kept_unread = [u for u in old.unparsable if (u.path, u.digest) in unread_now]
        lines.extend(f'pruned  unparsable {u.path}' for u in old.unparsable
                     if (u.path, u.digest) not in unread_now)
        return Baseline(old.path, kept, kept_excluded, kept_unread), lines
    merged = list(old.entries)
    for e in entries:
        if (e.path, e.key()) not in before:
            merged.append(e)
            lines.append(f'added   {e.path}: {e.kind} on {", ".join(e.tests) or e.scope}')
    old_excluded = {x.nodeid for x in old.excluded}
    merged_excluded = list(old.excluded)
    for x in excluded:
        if x.nodeid not in old_excluded:
            merged_excluded.append(x)
            lines.append(f'added   excluded {x.nodeid} ({x.by})')
    unread_before = {(u.path, u.digest) for u in old.unparsable}
    merged_unread = list(old.unparsable)
    for u in unparsable:
        if (u.path, u.digest) not in unread_before:
            merged_unread.append(u)
            lines.append(f'added   unparsable {u.path} ({u.why})')
    stale = len(before - now)
    if stale:
        lines.append(f'note: {stale} entr{"y" if stale == 1 else "ies"} match no silence any '
                     'more; `oracle-guard baseline --prune` removes them')
    return Baseline(old.path, merged, merged_excluded, merged_unread), lines


def run_baseline(args: argparse.Namespace) -> int:
    root = repo_root()
    cfg = load_config(root)
    view = TreeView(root, None)
    old = read_baseline(view, cfg.baseline) or empty_baseline(cfg.baseline)
    patches: list[PytestPatch] = []
    entries, unparsable = current_entries(view, cfg, patches)
    excluded, notes = current_exclusions(view, cfg, None if args.no_collect else args.command)
    new, lines = updated(old, entries, excluded, args.prune, unparsable, patches,
                         current_links(view, cfg))
    for note in notes:
        sys.stderr.write(f'note: {note}\n')
    for unread in unparsable:
        sys.stderr.write(
            f'note: {unread.path}: cannot be read by this Python ({sys.version.split()[0]}): '
            f'{unread.why}; these bytes are accepted as they are (check-named-freezes '
            'fails the file again once it changes) and its silences are not in the '
            'baseline: run `oracle-guard baseline` under a Python that parses it\n')
    text = new.dumps()
    full = os.path.join(root, cfg.baseline)
    try:
        with open(full, encoding='utf-8') as f:
            current = f.read()
    except FileNotFoundError:
        current = None
    for line in lines:
        print(line)
    held = f'{len(new.entries)} silence(s), {len(new.excluded)} excluded test(s)' + \
        (f', {len(new.patches)} line(s) patching pytest' if new.patches else '') + \
        (f', {len(new.links)} symlinked test file(s)' if new.links else '')
    if current == text:
        print(f'{cfg.baseline} is up to date: {held}')
        return 0
    if args.dry_run:
        print(f'would write {cfg.baseline}: {held}')
        return 0
    os.makedirs(os.path.dirname(full) or '.', exist_ok=True)
    with open(full, 'w', encoding='utf-8', newline='\n') as f:
        f.write(text)
    print(f'wrote {cfg.baseline}: {held}; review it and commit it alone, with no test or src/ '
          'edits')
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='oracle-guard baseline',
        description='Write the baseline of the silences that exist now (human-run).',
    )
    parser.add_argument('--prune', action='store_true',
                        help='only remove entries that match no silence any more')
    parser.add_argument('--dry-run', action='store_true', help='show what would change')
    parser.add_argument('--force', action='store_true',
                        help='write the baseline even under CI or inside oracle-guard ci')
    parser.add_argument('--no-collect', action='store_true',
                        help='do not run `pytest --collect-only`: record only what the pytest '
                             'configuration leaves out as written (addopts --deselect/--ignore, '
                             'collect_ignore)')
    parser.add_argument('--debug', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('command', nargs=argparse.REMAINDER, metavar='-- TEST COMMAND',
                        help='the test command to collect with (default: python -m pytest); '
                             'give the one oracle-guard ci runs')
    args = parser.parse_args(argv)
    if args.command[:1] == ['--']:
        args.command = args.command[1:]
    refused = None if args.dry_run else refuse_unattended('baseline', 'the baseline',
                                                           args.force)
    if refused is not None:
        return refused
    return guarded(lambda: run_baseline(args), 'text', args.debug)


if __name__ == '__main__':
    raise SystemExit(main())
