"""Adopt oracle-guard on real projects with the README's commands, then try three cheats.

Usage::

    pip download --no-deps --no-binary :all: attrs==26.1.0 click==8.5.1 packaging==26.4 \\
        psutil==7.2.2 python-dateutil==4.0.0 -d SDISTS      # sdists that ship their tests
    python benchmarks/adopt_real.py SDISTS/*.tar.gz [--markdown]

For each sdist (a .tar.gz, or an unpacked folder), in a temporary folder:

1. unpack it, ``git init``, commit every file as "the project before adoption";
2. run the numbered commands of the README's "Adopt it in an existing repository" block,
   as written, with three substitutions: the placeholder URL and ``REV`` become the
   oracle-guard checkout this script runs from and its commit; the ``pip install`` line is
   skipped (this interpreter has oracle-guard and pre-commit already; its scripts come
   first on PATH); step 4 (choose the human-owned property tests) is the project's
   choice: nothing when ``init`` found the folder of its Hypothesis tests, otherwise the
   README's ``git mv`` applied to the project's first test module;
3. record files, silences baselined, environment skips recognized (and why the other
   conditions are not), importorskips accepted, fixtures and properties found, whether
   ``pre-commit run --all-files`` passed untouched, and the time;
4. commit three cheats through the installed git hook, each of which must be refused:
   a bare ``@pytest.mark.skip`` on a test, one byte appended to a fixture (a fixture is
   added and manifested first when the project has none), and a ``src`` change together
   with an edit of a property test.

Exit status 1 when any adoption step or ``pre-commit run --all-files`` fails, or any
cheat gets through. Nothing is written outside the temporary folder; the sdists are never
committed.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLACEHOLDER_URL = 'https://example.invalid/oracle-guard'
IDENTITY = {'GIT_AUTHOR_NAME': 'Bench', 'GIT_AUTHOR_EMAIL': 'bench@example.invalid',
            'GIT_COMMITTER_NAME': 'Bench', 'GIT_COMMITTER_EMAIL': 'bench@example.invalid'}


def unpack(source: str, into: str) -> str:
    if os.path.isdir(source):
        target = os.path.join(into, os.path.basename(source.rstrip('/')))
        shutil.copytree(source, target, symlinks=True)
        return target
    with tarfile.open(source) as archive:
        try:
            archive.extractall(into, filter='data')  # type: ignore[call-arg]
        except TypeError:  # Python < 3.12 without extraction filters
            archive.extractall(into)
    (top,) = [p for p in os.listdir(into) if os.path.isdir(os.path.join(into, p))]
    return os.path.join(into, top)


def readme_steps() -> list[tuple[str, str]]:
    with open(os.path.join(HERE, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    section = readme.split('\n## Adopt it in an existing repository\n', 1)[1].split('\n## ', 1)[0]
    block = re.search(r'```sh\n(.*?)```', section, re.S)
    assert block, 'the README lost its adoption commands'
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    return list(zip(lines[::2], lines[1::2]))


class Shell:
    def __init__(self, cwd: str, env: dict[str, str]) -> None:
        self.cwd = cwd
        self.env = env

    def run(self, command: str | list[str]) -> tuple[int, str]:
        args = ['bash', '-ec', command] if isinstance(command, str) else command
        proc = subprocess.run(args, cwd=self.cwd, env=self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout

    def ok(self, command: str | list[str]) -> str:
        rc, out = self.run(command)
        if rc:
            raise RuntimeError(f'{command} exited {rc}:\n{out[-3000:]}')
        return out


def silence_census(root: str) -> dict[str, object]:
    """What check-named-freezes makes of every silence, judged with no baseline."""
    from oracle_guard.oracle.baseline import empty_baseline
    from oracle_guard.config import load_config
    from oracle_guard.reading.declared_dependencies import read_project_facts
    from oracle_guard.reading.env_conditions import ConditionReader
    from oracle_guard.repo.gitrepo import TreeView
    from oracle_guard.reading.scanner import might_silence
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import scan_silences
    from oracle_guard.reading.silence_acceptance import dotted_name
    from oracle_guard.reading.silence_acceptance import SilenceJudge
    from oracle_guard.reading.env_conditions import silence_conditions

    cfg = load_config(root)
    view = TreeView(root, None)
    judge = SilenceJudge(lambda: empty_baseline(cfg.baseline),
                         lambda: read_project_facts(view, cfg), lambda p: True)
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    for path in view.paths(list(cfg.tests)):
        if not cfg.is_test_code(path):
            continue
        source = view.read(path)
        if source is None or not might_silence(source):
            continue
        try:
            tree = parse_python(source, path)
            silences = scan_silences(tree, source.decode('utf-8', 'replace'))
        except ScanError:
            counts['unparsable files'] += 1
            continue
        reader = ConditionReader.of_tree(tree)
        for silence in silences:
            conditional = silence_conditions(dotted_name(silence), silence.call) is not None
            judgement = judge.judge(path, silence, lambda: reader)
            if conditional:
                counts['conditions'] += 1
            if silence.kind == 'importorskip':
                counts['importorskip'] += 1
            if judgement.accepted == 'environment':
                counts['environment skips'] += 1
            elif judgement.accepted == 'declared import':
                counts['importorskips accepted'] += 1
            elif judgement.finding is not None:
                counts[judgement.finding.code] += 1
            elif conditional:
                reasons[_reason(judgement.detail)] += 1
    return {'counts': dict(counts), 'reasons': dict(reasons)}


def _reason(detail: str) -> str:
    detail = detail.replace('not an environment condition: ', '')
    if 'not an environment fact of this file' in detail:
        return 'a name imported or defined elsewhere (HAS_X = try/except import, helpers)'
    if 'bound more than once' in detail:
        return 'a module-level name bound conditionally or more than once'
    if detail.startswith(('os.environ', 'os.getenv', '`os.environ', '`os.getenv')):
        return 'an environment variable'
    if detail.startswith('`') or 'not an environment fact' in detail:
        return 'a call or attribute outside the fact set (shutil.which, hasattr, os.geteuid, ...)'
    return detail[:60]


def adopt(sdist: str, work: str, hook_url: str, hook_rev: str, pre_commit_home: str
          ) -> dict[str, object]:
    from oracle_guard.config import load_config

    name = os.path.basename(sdist.rstrip('/')).replace('.tar.gz', '')
    root = unpack(sdist, os.path.join(work, name))
    # Adoption as a person runs it: init and fixtures refuse to write under CI.
    env = {k: v for k, v in os.environ.items() if not k.startswith(('GIT_', 'PRE_COMMIT'))
           and k not in ('CI', 'ORACLE_GUARD_GATE')}
    env.update(IDENTITY, PRE_COMMIT_HOME=pre_commit_home, PRE_COMMIT_COLOR='never',
               GIT_CONFIG_NOSYSTEM='1', GIT_CONFIG_GLOBAL=os.devnull)
    env['PATH'] = os.path.dirname(sys.executable) + os.pathsep + env.get('PATH', '')
    sh = Shell(root, env)
    sh.ok('git init -q -b main && git add -A && git commit -q -m "before adoption"')
    files = len(sh.ok('git ls-files').splitlines())
    result: dict[str, object] = {'project': name, 'files': files, 'steps': [], 'cheats': {}}
    if os.path.exists(os.path.join(root, '.pre-commit-config.yaml')):
        # Its own hooks are fetched from the network, which this benchmark does not use:
        # the project's configuration goes, and init writes one with oracle-guard only.
        sh.ok('git rm -q .pre-commit-config.yaml && git commit -q -m "offline: no remote hooks"')
        result['own pre-commit config'] = 'removed (its hooks need the network)'
    started = time.perf_counter()
    precommit_rc = None
    for title, command in readme_steps():
        if f'{PLACEHOLDER_URL}@REV' in command:
            result['steps'].append(f'{title} (skipped: installed here)')  # type: ignore[union-attr]
            continue
        command = command.replace(PLACEHOLDER_URL, hook_url)
        command = re.sub(r'\bREV\b', hook_rev, command)
        if 'git mv' in command:
            cfg = load_config(root)
            props = [p for p in sh.ok('git ls-files').splitlines()
                     if p.startswith(cfg.properties) and p.endswith('.py')]
            if props:
                result['steps'].append(f'{title} (init found {cfg.properties}: nothing to do)')  # type: ignore[union-attr]
                continue
            first = property_module(root, [p for p in sh.ok('git ls-files').splitlines()
                                           if p.startswith(cfg.tests[0]) and p.count('/') == 1
                                           and os.path.basename(p).startswith('test_')])
            command = (f'mkdir -p {cfg.properties} && git mv {first} '
                       f'{cfg.properties}{os.path.basename(first)}')
            result['step 4'] = f'moved {first}'
        rc, out = sh.run(command)
        result['steps'].append(f'{title} -> exit {rc}')  # type: ignore[union-attr]
        if command.strip() == 'pre-commit run --all-files':
            precommit_rc = rc
            result['pre-commit output'] = out[-4000:] if rc else ''
        elif rc:
            raise RuntimeError(f'{name}: {title}\n$ {command}\n{out[-3000:]}')
    result['seconds'] = round(time.perf_counter() - started, 1)
    result['pre-commit run --all-files'] = 'passed' if precommit_rc == 0 else f'exit {precommit_rc}'
    cfg = load_config(root)
    with open(os.path.join(root, cfg.baseline), encoding='utf-8') as f:
        baseline = json.load(f)
    with open(os.path.join(root, cfg.manifest), encoding='utf-8') as f:
        manifest = json.load(f)
    with open(os.path.join(root, cfg.domain_lock), encoding='utf-8') as f:
        lock = json.load(f)
    result.update({
        'src': list(cfg.src), 'tests': list(cfg.tests), 'properties': cfg.properties,
        'silences baselined': len(baseline['silences']),
        'excluded at adoption': len(baseline['excluded']),
        'fixtures': len(manifest['fixtures']), 'properties locked': len(lock['properties']),
        'census': silence_census(root),
    })
    result['cheats'] = cheats(sh, root, cfg)
    return result


def property_module(root: str, candidates: list[str]) -> str:
    """The project's choice in step 4: the test module with the most ``@given`` tests
    whose every test checks something (rule 31), else the first such module."""
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import scan_tests

    best: tuple[int, str] | None = None
    for path in sorted(candidates):
        with open(os.path.join(root, path), 'rb') as f:
            source = f.read()
        try:
            tests = scan_tests(parse_python(source, path))
        except ScanError:
            continue
        if not tests or not all(t.does_something for t in tests):
            continue
        given = sum(t.uses_given for t in tests)
        if best is None or given > best[0]:
            best = (given, path)
    if best is None:
        raise RuntimeError('no test module whose every test checks something')
    return best[1]


def _first_test(root: str, path: str) -> tuple[int, int, str] | None:
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import test_functions

    with open(os.path.join(root, path), 'rb') as f:
        tree = parse_python(f.read(), path)
    for identity, node in test_functions(tree):
        if not getattr(node, 'decorator_list', None):
            return node.lineno, node.col_offset, identity  # type: ignore[attr-defined]
    return None


def cheats(sh: Shell, root: str, cfg) -> dict[str, str]:  # type: ignore[no-untyped-def]
    tracked = sh.ok('git ls-files').splitlines()
    outcome: dict[str, str] = {}

    def attempt(name: str, code: str) -> None:
        rc, out = sh.run('git add -A && git commit -q -m cheat')
        blocked = rc != 0 and f' {code} ' in out
        outcome[name] = f'blocked ({code})' if blocked else f'NOT BLOCKED (exit {rc}): {out[-600:]}'
        sh.ok('git reset -q --hard HEAD && git clean -qfd')

    # 1. a bare skip on a test
    for path in sorted(p for p in tracked if cfg.is_test_code(p)
                       and os.path.basename(p).startswith('test_')):
        found = _first_test(root, path)
        if found:
            line, col, identity = found
            full = os.path.join(root, path)
            with open(full, encoding='utf-8') as f:
                lines = f.read().splitlines(keepends=True)
            lines.insert(line - 1, ' ' * col + '@__import__("pytest").mark.skip(reason="later")\n')
            with open(full, 'w', encoding='utf-8') as f:
                f.writelines(lines)
            attempt(f'bare skip on {path}::{identity}', 'OG301')
            break
    # 2. one byte appended to a fixture (manifested in a commit of its own first if none)
    fixtures = [p for p in tracked if cfg.is_fixture(p)]
    if not fixtures:
        path = f'{cfg.fixtures}oracle_guard_bench.bin'
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), 'wb') as f:
            f.write(b'expected answer\n')
        sh.ok(['oracle-guard', 'fixtures', 'add', path, '--source', 'human', '--purpose',
               'the benchmark\'s own fixture'])
        sh.ok('git add -A && git commit -q --no-verify -m "a fixture, manifested"')  # setup
        fixtures = [path]
    with open(os.path.join(root, fixtures[0]), 'ab') as f:
        f.write(b'\n')
    attempt(f'fixture byte edit of {fixtures[0]}', 'OG101')
    # 3. a src change together with a property edit
    src = next(p for p in sh.ok('git ls-files').splitlines()
               if cfg.is_src(p) and p.endswith('.py'))
    prop = next(p for p in sh.ok('git ls-files').splitlines()
                if p.startswith(cfg.properties) and p.endswith('.py'))
    for path, text in ((src, '\nCHEAT = 1\n'), (prop, '\n# the property now expects the new answer\n')):
        with open(os.path.join(root, path), 'a', encoding='utf-8') as f:
            f.write(text)
    attempt(f'src change ({src}) with a property edit ({prop})', 'OG201')
    return outcome


def markdown(results: list[dict[str, object]]) -> str:
    rows = [
        ('files', 'files'), ('src / tests', None), ('properties folder', 'properties'),
        ('silences baselined', 'silences baselined'),
        ('tests excluded by the pytest configuration', 'excluded at adoption'),
        ('fixtures found (manifest rows)', 'fixtures'), ('properties locked', 'properties locked'),
        ('`pre-commit run --all-files` untouched', 'pre-commit run --all-files'),
        ('adoption time (s)', 'seconds'),
    ]
    head = '| | ' + ' | '.join(str(r['project']) for r in results) + ' |'
    lines = [head, '|---' * (len(results) + 1) + '|']
    for label, key in rows:
        if key is None:
            cells = [f'{", ".join(r["src"])} / {", ".join(r["tests"])}' for r in results]  # type: ignore[arg-type]
        else:
            cells = [str(r[key]) for r in results]
        lines.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    for label, key in (('skipif/skipUnless/xfail conditions', 'conditions'),
                       ('... recognized as environment conditions', 'environment skips'),
                       ('... true everywhere (OG320)', 'OG320'),
                       ('importorskip calls', 'importorskip'),
                       ('... of declared dependencies (accepted)', 'importorskips accepted'),
                       ('... undeclared (OG321)', 'OG321')):
        cells = [str(r['census']['counts'].get(key, 0)) for r in results]  # type: ignore[index]
        lines.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    for cheat in range(3):
        label = ('cheat 1: bare skip', 'cheat 2: fixture byte edit',
                 'cheat 3: src + property edit')[cheat]
        cells = [list(r['cheats'].values())[cheat].split(':')[0] for r in results]  # type: ignore[union-attr]
        lines.append(f'| {label} | ' + ' | '.join(cells) + ' |')
    reasons: collections.Counter[str] = collections.Counter()
    for r in results:
        reasons.update(r['census']['reasons'])  # type: ignore[index]
    lines += ['', 'Conditions not recognized as environment conditions, by reason (all projects):',
              '']
    lines += [f'* {count} — {reason}' for reason, count in reasons.most_common()]
    return '\n'.join(lines) + '\n'


def main(argv: list[str] | None = None) -> int:
    from oracle_guard.install_origin import installed_origin

    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('sdists', nargs='+')
    parser.add_argument('--markdown', action='store_true', help='print the ADOPTION.md table')
    args = parser.parse_args(argv)
    origin = installed_origin()
    if not origin.commit or not origin.url or not os.path.isdir(origin.url):
        sys.stderr.write('run this from an oracle-guard checkout installed with pip -e\n')
        return 2
    failures = 0
    results = []
    with tempfile.TemporaryDirectory(prefix='oracle-guard-adopt-') as work:
        home = os.path.join(work, 'pre-commit-home')
        for sdist in args.sdists:
            try:
                result = adopt(sdist, work, origin.url, origin.commit, home)
            except Exception as exc:  # noqa: BLE001 -- reported, counted, next project
                print(f'{sdist}: FAILED: {exc}')
                failures += 1
                continue
            results.append(result)
            print(json.dumps(result, indent=2))
            if result['pre-commit run --all-files'] != 'passed':
                failures += 1
            failures += sum(not v.startswith('blocked') for v in result['cheats'].values())  # type: ignore[union-attr]
    if args.markdown and results:
        print(markdown(results))
    print(f'adopt_real: {len(results)} project(s) adopted, {failures} failure(s)')
    return 1 if failures else 0


if __name__ == '__main__':
    raise SystemExit(main())
