"""``oracle-guard lock``: write the domain lock from the current properties (human-run).

Reads every ``@given`` test under the test roots statically and locks what it can
verify: the settings the test sets (or the weakest profile that may govern it), its
seed, and the strategy bounds spelled out in the source. A version-2 lock (every new
lock, or a version-1 lock after ``--upgrade``) also records each argument's whole
strategy (``strategy_form``). It never lowers an existing entry unless given
``--allow-loosen``, never removes an entry, and prints the diff it wrote. Hooks never run
it; a person reviews the diff and commits the lock on its own.
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Sequence
from typing import Any

from oracle_guard.commands import refuse_unattended
from oracle_guard.config import add_config_arguments
from oracle_guard.config import apply_arguments
from oracle_guard.config import Config
from oracle_guard.config import load_config
from oracle_guard.findings import ConfigError
from oracle_guard.oracle.domain_lock import DomainLock
from oracle_guard.oracle.domain_lock import dump_lock
from oracle_guard.oracle.domain_lock import is_unverifiable
from oracle_guard.oracle.domain_lock import loosened
from oracle_guard.oracle.domain_lock import read_lock_bytes
from oracle_guard.oracle.domain_lock import render
from oracle_guard.oracle.domain_lock import skips_generation
from oracle_guard.oracle.strategy_form import compare
from oracle_guard.oracle.strategy_form import is_unresolved
from oracle_guard.oracle.strategy_form import unresolved_parts
from oracle_guard.reading.lock_judgement import ProfileCandidates
from oracle_guard.reading.property_prefilter import is_conftest
from oracle_guard.reading.property_reader import is_config_file
from oracle_guard.reading.property_reader import ProfileSources
from oracle_guard.reading.property_reader import PropertyTest
from oracle_guard.reading.property_reader import read_config_text
from oracle_guard.reading.property_reader import read_profiles
from oracle_guard.reading.property_reader import read_properties
from oracle_guard.reading.scanner import parse_python
from oracle_guard.reading.scanner import ScanError
from oracle_guard.repo.gitrepo import git
from oracle_guard.repo.gitrepo import repo_root
from oracle_guard.repo.gitrepo import split_z
from oracle_guard.runner import guarded

# Settings fields locked from the profile when the test does not set them itself.
_AMBIENT = ('max_examples', 'deadline_ms')


def _files(cfg: Config) -> list[str]:
    """Tracked and new (untracked, not ignored) files: a person locks what they just wrote."""
    out = git('ls-files', '-z', '--cached', '--others', '--exclude-standard', cwd=cfg.root)
    return sorted(set(split_z(out)))


def read_file(root: str, path: str) -> bytes | None:
    """A file of the working tree; None for a symlink (never followed) or an unreadable one."""
    full = os.path.join(root, path)
    if os.path.islink(full):
        return None
    try:
        with open(full, 'rb') as f:
            return f.read()
    except OSError:
        return None


def module_source(cfg: Config) -> Any:
    """Helper modules under the tests roots, read from disk (see strategy_reader)."""
    from oracle_guard.reading.strategy_reader import module_candidates

    parsed: dict[str, Any] = {}

    def find(importer: str, module: str, level: int) -> Any:
        for path in module_candidates(importer, module, level, list(cfg.test_roots())):
            if not cfg.is_test_code(path):
                continue
            if path not in parsed:
                raw = read_file(cfg.root, path)
                try:
                    parsed[path] = None if raw is None else parse_python(raw, path)
                except ScanError:
                    parsed[path] = None
            if parsed[path] is not None:
                return path, parsed[path]
        return None

    return find


def collect(cfg: Config) -> tuple[list[PropertyTest], ProfileSources]:
    props: list[PropertyTest] = []
    sources = ProfileSources()
    modules = module_source(cfg)
    for path in _files(cfg):
        python = cfg.is_test_code(path) or is_conftest(path)
        if not python and not is_config_file(path):
            continue
        raw = read_file(cfg.root, path)
        if raw is None:
            continue
        if not python:
            read_config_text(path, raw.decode('utf-8', 'replace'), sources)
            continue
        if b'given' not in raw and b'_profile' not in raw and b'StateMachine' not in raw:
            continue
        try:
            tree = parse_python(raw, path)
        except ScanError as exc:
            raise ConfigError(path, exc.line, f'cannot read properties: {exc.message}') from None
        read_profiles(path, tree, sources)
        if cfg.is_test_code(path):
            props.extend(read_properties(path, tree, modules))
    return props, sources


def _weakest(name: str, values: list[Any]) -> Any:
    weakest = values[0]
    for value in values[1:]:
        if is_unverifiable(value) or is_unverifiable(weakest):
            return value if is_unverifiable(value) else weakest
        if loosened(name, weakest, value):
            weakest = value
    return weakest


def transforms_drawn(prop: PropertyTest) -> int:
    """The .map()/.filter()/.flatmap() wrapping each argument's whole strategy, helper
    strategies followed (cattrs' ``simple_typed_classes()`` returns ``lists(...).flatmap(...)``
    from ``tests/typed.py``): what the pytest plugin counts on the live strategies at
    collection. The test module's own count may be lower; a lock below this one would stop
    the project's suite on unchanged code."""
    return sum(len(form.get('transforms', ())) for form in prop.forms.values()
               if isinstance(form, dict))


def proposed_entry(prop: PropertyTest, candidates: ProfileCandidates,
                   notes: list[str], version: int = 1) -> dict[str, Any]:
    """The lock entry that matches what the test runs today (only verifiable values)."""
    entry: dict[str, Any] = {}

    def put(target: dict[str, Any], name: str, value: Any, label: str) -> None:
        if is_unverifiable(value):
            notes.append(f'{prop.path}:{prop.line}: {prop.identity}: {label} not locked: '
                         f'{value.why}')
        else:
            target[name] = value

    phases = prop.settings['phases'].value if 'phases' in prop.settings else None
    for name, located in prop.settings.items():
        if name == 'seed' and located.value is None:
            continue
        if name == 'max_examples' and skips_generation(phases):
            # No example is generated, whatever max_examples says: locking it would
            # promise examples the test never draws (the hook judges it as 0).
            notes.append(f'{prop.path}:{prop.line}: {prop.identity}: max_examples not '
                         f'locked: phases {render(phases)} leave out "generate"')
            continue
        if name == 'derandomize' and located.value is False:
            continue
        if name == 'database':
            continue  # locking "a database" is a person's call; see the README
        put(entry, name, located.value, name)
    for name in _AMBIENT:
        if name in entry or name in prop.settings or \
                (name == 'max_examples' and skips_generation(phases)):
            continue
        if prop.parent is not None:
            parent = prop.parent
            value = parent if is_unverifiable(parent) else \
                candidates.values(parent).get(name)  # type: ignore[arg-type]
        else:
            value = _weakest(name, [candidates.values(n)[name] for n in candidates.names])
        put(entry, name, value, name)
    per_arg: dict[str, dict[str, Any]] = {}
    for arg, fields in prop.strategies.items():
        values: dict[str, Any] = {}
        for name in prop.written.get(arg, ()):
            put(values, name, fields[name], f'{arg}.{name}')
        if values:
            per_arg[arg] = values
    if len(prop.strategies) == 1:
        entry.update(next(iter(per_arg.values()), {}))
    elif per_arg:
        entry['args'] = per_arg
    filters = max(prop.filters, transforms_drawn(prop))
    if filters:
        entry['filters'] = filters
    if version >= 2:
        entry['strategies'] = dict(prop.forms)
        for arg, form in sorted(prop.forms.items()):
            parts = unresolved_parts(form)
            if not parts:
                continue
            where, part = parts[0]
            more = f' (+{len(parts) - 1} more parts)' if len(parts) > 1 else ''
            notes.append(f'{prop.path}:{prop.strategy_lines.get(arg, prop.line)}: '
                         f'{prop.identity}: args.{arg}: {where}: checked at run time '
                         f'({part["unresolved"]}: {part.get("why", "not readable")}){more}')
    return entry


def collected_forms(cfg: Config, notes: list[str]) -> dict[str, Any]:
    """identity -> argument -> live form, from ``pytest --collect-only`` with the plugin's
    ``--oracle-guard-write-forms`` (imports the tests: only on --collect)."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        target = os.path.join(scratch, 'forms.json')
        command = [sys.executable, '-m', 'pytest', '--collect-only', '-q',
                   '-p', 'no:cacheprovider', '-p', 'oracle_guard',
                   f'--oracle-guard-root={cfg.root}', f'--oracle-guard-write-forms={target}']
        proc = subprocess.run(command, cwd=cfg.root, capture_output=True, text=True)
        try:
            with open(target, encoding='utf-8') as f:
                forms = json.load(f)
        except (OSError, ValueError):
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            notes.append('--collect: pytest wrote no strategy forms (exit code '
                          f'{proc.returncode}): {" | ".join(tail)}')
            return {}
    return forms if isinstance(forms, dict) else {}


def measured_rates(cfg: Config, notes: list[str]) -> dict[str, list[int]]:
    """identity -> [test cases drawn, rejected] of each Hypothesis test under the properties,
    from a run of them against the working tree's src (rule 55; only on --rates). The run
    has the draw counter alone as oracle-guard's plugin: a property the lock does not hold
    yet still draws."""
    import json
    import subprocess
    import tempfile

    from oracle_guard.runtime.draw_rates import RATES_ENV

    paths = [p.rstrip('/') or '.' for p in cfg.properties
             if os.path.exists(os.path.join(cfg.root, p))]
    if not paths:
        notes.append(f'--rates: no {cfg.properties_label()} to run')
        return {}
    with tempfile.TemporaryDirectory() as scratch:
        target = os.path.join(scratch, 'rates.json')
        command = [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                   '-p', 'no:oracle_guard', '-p', 'oracle_guard.runtime.draw_rates', *paths]
        proc = subprocess.run(command, cwd=cfg.root, capture_output=True, text=True,
                              env={**os.environ, RATES_ENV: target})
        rates: dict[str, list[int]] = {}
        # The session's file, and one per pytest-xdist worker beside it.
        for name in sorted(os.listdir(scratch)):
            try:
                with open(os.path.join(scratch, name), encoding='utf-8') as f:
                    part = json.load(f)
            except (OSError, ValueError):
                continue
            for identity, counts in (part.items() if isinstance(part, dict) else ()):
                if isinstance(counts, list) and len(counts) == 2:
                    total = rates.setdefault(identity, [0, 0])
                    total[0] += int(counts[0])
                    total[1] += int(counts[1])
        if not os.path.exists(target):
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
            notes.append('--rates: pytest wrote no rates (exit code '
                         f'{proc.returncode}): {" | ".join(tail)}')
            return {}
    if proc.returncode:
        notes.append(f'--rates: the properties did not all pass (exit code {proc.returncode});'
                     ' the shares are those of the draws they made')
    return rates


def apply_rates(data: dict[str, Any], rates: dict[str, Any], only: Sequence[str],
                allow_loosen: bool, notes: list[str]) -> None:
    """Each locked property's ``rejected_share`` from ``rates`` (rule 55): a higher share
    than the one locked is a loosening, kept out unless allowed."""
    from oracle_guard.oracle.rejected_share import MIN_DRAWS
    from oracle_guard.oracle.rejected_share import share

    for identity, counts in sorted(rates.items()):
        entry = data['properties'].get(identity)
        if entry is None or (only and identity not in only) or \
                not (isinstance(counts, list) and len(counts) == 2):
            continue
        value = share(int(counts[0]), int(counts[1]))
        if value is None:
            notes.append(f'{identity}: rejected_share not recorded: {counts[0]} test cases '
                         f'drawn, fewer than {MIN_DRAWS}')
            continue
        old = entry.get('rejected_share')
        if old is not None and loosened('rejected_share', old, value) and not allow_loosen:
            notes.append(f'{identity}: rejected_share kept at {render(old)}; measured '
                         f'{render(value)} (pass --allow-loosen to raise it)')
            continue
        entry['rejected_share'] = value


def fill_from_run(static: Any, live: Any) -> Any:
    """The static form with every part it could not read taken from the live form."""
    if is_unresolved(static):
        return live if live is not None and not is_unresolved(live) else static
    if isinstance(static, dict) and isinstance(live, dict):
        return {k: fill_from_run(v, live.get(k)) for k, v in static.items()}
    if isinstance(static, list) and isinstance(live, list) and len(static) == len(live):
        return [fill_from_run(a, b) for a, b in zip(static, live)]
    return static


def merge_forms(identity: str, old: dict[str, Any], new: dict[str, Any], allow_loosen: bool,
                notes: list[str]) -> dict[str, Any]:
    """Per argument: an equal or provably wider form replaces the locked one; a narrower
    (or less readable) one needs --allow-loosen. Arguments are never dropped."""
    merged = dict(old)
    for arg, form in new.items():
        if arg not in old:
            merged[arg] = form
            continue
        differences = [d for d in compare(old[arg], form) if not is_unresolved(d.locked)]
        if not differences:
            merged[arg] = form
        elif allow_loosen:
            merged[arg] = form
            notes.append(f'{identity}: strategies.{arg} loosened: '
                         f'{differences[0].describe()} (--allow-loosen)')
        else:
            notes.append(f'{identity}: strategies.{arg} kept: '
                         f'{"; ".join(d.describe() for d in differences)} '
                         '(pass --allow-loosen to lower the lock)')
    return merged


def merge_entry(identity: str, old: dict[str, Any], new: dict[str, Any], allow_loosen: bool,
                notes: list[str]) -> dict[str, Any]:
    """Tighten freely; keep a looser proposal out unless allowed. Never drop a field."""
    merged = dict(old)
    for name, value in new.items():
        if name == 'strategies':
            merged[name] = merge_forms(identity, old.get(name, {}), value, allow_loosen, notes)
            continue
        if name == 'args':
            args = {k: dict(v) for k, v in old.get('args', {}).items()}
            for arg, fields in value.items():
                args[arg] = merge_entry(f'{identity} args.{arg}', args.get(arg, {}), fields,
                                        allow_loosen, notes)
            merged['args'] = args
            continue
        if name not in old or old[name] == value:
            merged[name] = value
        elif loosened(name, old[name], value):
            if allow_loosen:
                notes.append(f'{identity}: {name} loosened {render(old[name])} -> '
                             f'{render(value)} (--allow-loosen)')
                merged[name] = value
            else:
                notes.append(f'{identity}: {name} kept at {render(old[name])}; the test now '
                             f'has {render(value)} (pass --allow-loosen to lower the lock)')
        else:
            merged[name] = value
    return merged


def common_entry(identity: str, first: dict[str, Any], other: dict[str, Any],
                 ) -> tuple[dict[str, Any], list[str]]:
    """The entry two tests of one identity share (cattrs has three ``test_nested_roundtrip``
    in three modules): check-generator-lock judges each of them against it, so it holds
    only the fields both spell, at the weaker value, and the whole strategies both draw
    alike. Returns it with the labels left out."""
    entry: dict[str, Any] = {}
    dropped: list[str] = []
    for name in sorted(set(first) | set(other)):
        if name == 'filters':  # none in an entry allows none: the most any of them has
            entry[name] = max(first.get(name, 0), other.get(name, 0))
        elif name not in first or name not in other:
            dropped.append(name)
        elif name == 'args':
            args = {}
            for arg in sorted(set(first['args']) | set(other['args'])):
                if arg in first['args'] and arg in other['args']:
                    fields, lost = common_entry(identity, first['args'][arg], other['args'][arg])
                    dropped.extend(f'args.{arg}.{label}' for label in lost)
                    if fields:
                        args[arg] = fields
                else:
                    dropped.append(f'args.{arg}')
            if args:
                entry['args'] = args
        elif name == 'strategies':
            forms = {arg: form for arg, form in first['strategies'].items()
                     if other['strategies'].get(arg) == form}
            dropped.extend(f'strategies.{arg}' for arg in sorted(
                set(first['strategies']) | set(other['strategies'])) if arg not in forms)
            entry['strategies'] = forms
        else:
            entry[name] = _weakest(name, [first[name], other[name]])
    return entry, dropped


def update_lock(lock: DomainLock, props: Sequence[PropertyTest], sources: ProfileSources,
                only: Sequence[str], allow_loosen: bool, notes: list[str],
                upgrade: bool = False, live: dict[str, Any] | None = None
                ) -> dict[str, Any]:
    """The new lock. A new lock is version 2; a version-1 lock stays version 1 (written
    exactly as before) unless ``upgrade``, which adds the whole strategies to every entry
    and keeps every version-1 field, so nothing is loosened. ``live`` (from --collect)
    fills what the source does not show with the live forms."""
    candidates = ProfileCandidates(sources)
    data = lock.as_json()
    version = 2 if upgrade or not lock.present else lock.version
    data['version'] = version
    properties = data['properties']
    proposals: dict[str, tuple[dict[str, Any], str]] = {}
    for prop in props:
        if only and prop.identity not in only and not (upgrade and lock.version < 2):
            continue
        if live is not None and version >= 2:
            forms = live.get(prop.identity, {})
            for arg, form in list(prop.forms.items()):
                filled = fill_from_run(form, forms.get(arg))
                if filled != form:
                    before, after = len(unresolved_parts(form)), len(unresolved_parts(filled))
                    notes.append(f'{prop.path}:{prop.line}: {prop.identity}: args.{arg}: '
                                 f'{before - after} part(s) locked from the collection run')
                    prop.forms[arg] = filled
        proposal = proposed_entry(prop, candidates, notes, version)
        if prop.identity in proposals:
            # One identity, several modules: check-generator-lock judges every one of
            # them against the one entry, so it locks what all of them run.
            proposal, dropped = common_entry(prop.identity, proposals[prop.identity][0],
                                             proposal)
            if dropped:
                notes.append(f'{prop.path}:{prop.line}: {prop.identity}: '
                             f'{", ".join(dropped)} not locked: '
                             f'{proposals[prop.identity][1]} has a test of this identity '
                             'too, and the entry holds what every one of them runs')
        first = proposals[prop.identity][1] if prop.identity in proposals else \
            f'{prop.path}:{prop.line}'
        proposals[prop.identity] = (proposal, first)
    for identity, (proposal, _where) in proposals.items():
        old = properties.get(identity)
        properties[identity] = proposal if old is None else \
            merge_entry(identity, old, proposal, allow_loosen, notes)
    live = {p.identity for p in props}
    for identity in sorted(set(properties) - live):
        notes.append(f'{identity}: no @given test has this identity any more; entry kept '
                     '(delete it by hand in a change of its own)')
    data['properties'] = dict(sorted(properties.items()))
    return data


def commit_advice(before: bytes | None, data: dict[str, Any]) -> str:
    """How to commit what was written: entries only added may come with their new tests
    (row 51); an existing entry changed is a change of its own."""
    import json

    try:
        old = json.loads(before.decode('utf-8-sig')) if before is not None else {}
        old_entries = old.get('properties', {}) if isinstance(old, dict) else None
    except ValueError:
        old_entries = None
    new_entries = data.get('properties', {})
    if isinstance(old_entries, dict) and \
            all(new_entries.get(key) == value for key, value in old_entries.items()) and \
            {k: v for k, v in data.items() if k != 'properties'} == \
            {k: v for k, v in old.items() if k != 'properties'}:
        return ('review it: it only adds entries, and the tests that are new in your change '
                'may bring theirs in the same change (src/ included)')
    return 'review it and commit it on its own: it changes entries that were there'


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog='oracle-guard lock',
        description='Write or update the domain lock from the current Hypothesis properties.',
    )
    parser.add_argument('identities', nargs='*', metavar='IDENTITY',
                        help='lock only these tests (function or Class::function)')
    parser.add_argument('--allow-loosen', action='store_true',
                        help='let the lock go down to what the tests run today')
    parser.add_argument('--dry-run', action='store_true',
                        help='print the diff without writing the lock')
    parser.add_argument('--collect', action='store_true',
                        help='lock what the source does not show from a `pytest '
                             '--collect-only` run (imports the tests)')
    parser.add_argument('--rates', action='store_true',
                        help="record each property's share of draws its filters, assume and "
                             'preconditions reject (runs the properties; rule 55)')
    parser.add_argument('--upgrade', action='store_true',
                        help='rewrite a version-1 lock as version 2 (whole strategies), '
                             'keeping every locked field')
    parser.add_argument('--force', action='store_true',
                        help='write the lock even under CI or inside oracle-guard ci')
    parser.add_argument('--debug', action='store_true', help=argparse.SUPPRESS)
    add_config_arguments(parser)
    args = parser.parse_args(argv)
    refused = None if args.dry_run else refuse_unattended('lock', 'the domain lock',
                                                           args.force)
    if refused is not None:
        return refused

    def run() -> int:
        cfg = apply_arguments(load_config(repo_root()), args)
        path = os.path.join(cfg.root, cfg.domain_lock)
        before = read_file(cfg.root, cfg.domain_lock)
        if before is None and os.path.lexists(path):
            raise ConfigError(cfg.domain_lock, 0, 'is a symlink or cannot be read; '
                              'refusing to write through it')
        lock = read_lock_bytes(before, cfg.domain_lock)
        props, sources = collect(cfg)
        notes: list[str] = []
        live = collected_forms(cfg, notes) if args.collect else None
        data = update_lock(lock, props, sources, args.identities, args.allow_loosen, notes,
                           upgrade=args.upgrade, live=live)
        if args.rates:
            apply_rates(data, measured_rates(cfg, notes), args.identities, args.allow_loosen,
                        notes)
        after = dump_lock(data)
        old_text = before.decode('utf-8-sig') if before is not None else ''
        diff = list(difflib.unified_diff(
            old_text.splitlines(keepends=True), after.splitlines(keepends=True),
            f'a/{cfg.domain_lock}', f'b/{cfg.domain_lock}'))
        for note in notes:
            sys.stdout.write(f'note: {note}\n')
        if not diff:
            sys.stdout.write(f'{cfg.domain_lock}: up to date\n')
            return 0
        sys.stdout.write(''.join(diff))
        if args.dry_run:
            return 0
        os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
        with open(path, 'w', encoding='utf-8', newline='\n') as f:
            f.write(after)
        sys.stdout.write(f'wrote {cfg.domain_lock}; {commit_advice(before, data)}\n')
        return 0

    return guarded(run, 'text', args.debug)


if __name__ == '__main__':
    raise SystemExit(main())
