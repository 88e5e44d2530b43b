"""Adopt oracle-guard on real projects with the README's commands, then try the cheats.

Usage::

    pip download --no-deps --no-binary :all: attrs==26.1.0 toolz==1.2.0 ... -d SDISTS
    python benchmarks/adopt_real.py SDISTS/*.tar.gz [--markdown]

For each sdist (a .tar.gz, or an unpacked folder), in a temporary folder:

1. unpack it, ``git init``, commit every file as "the project before adoption";
2. run the numbered commands of the README's "Adopt it in an existing repository" block,
   as written, with two substitutions: the placeholder URL and ``REV`` become the
   oracle-guard checkout this script runs from and its commit; the ``pip install`` line is
   skipped (this interpreter has oracle-guard and pre-commit already; its scripts come
   first on PATH). Nothing is edited by hand. A project's own
   ``.pre-commit-config.yaml`` is kept: init appends to it (or leaves it alone when
   pre-commit cannot load it); its other hooks come from the network, which this machine
   does not have, so ``pre-commit run --all-files`` runs with a copy holding only the
   oracle-guard entry (``-c``), and the real file is checked with ``pre-commit
   validate-config``;
3. run the project's own suite twice at the adoption commit: plain ``python -m pytest``
   and under ``oracle-guard ci --base HEAD``; record both exit codes, the findings and the
   overhead (``src/`` layouts run with ``PYTHONPATH=src``);
4. commit four cheats through the installed git hook, each of which must be refused: a
   bare ``@pytest.mark.skip``, an always-true ``skipif(True)``, a ``src`` change with an
   edit of a property test (when the project has properties), and a skip through a
   computed name (``getattr(pytest, "sk" + "ip")``), which ``oracle-guard ci`` must fail
   (OG706) whether or not the hooks refused it first (when they do, it is committed with
   ``--no-verify``, as an agent would push past them); plus one byte appended to a fixture.

``--no-suite`` (for a project whose suite cannot run here, or not in reasonable time:
django runs its own runner, sympy's suite takes hours) skips step 3 and the gate's half of
the computed-name cheat, which then only records whether the hooks refused it.

Exit status 1 when any adoption step or ``pre-commit run --all-files`` fails, the suite's
verdict differs between plain pytest and the gate or the gate has findings, or any cheat
gets through. Nothing is written outside the temporary folder; the sdists are never
committed.
"""
from __future__ import annotations

import argparse
import ast
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
    """What check-named-freezes makes of every silence, judged with no baseline: each file
    read by the hook's own scan (its prefilters, the helper modules it follows)."""
    from oracle_guard.oracle.baseline import empty_baseline
    from oracle_guard.config import load_config
    from oracle_guard.hooks.check_named_freezes import scan_file
    from oracle_guard.reading.declared_dependencies import read_project_facts
    from oracle_guard.repo.tree_view import TreeView
    from oracle_guard.reading.silence_acceptance import dotted_name
    from oracle_guard.reading.silence_acceptance import SilenceJudge
    from oracle_guard.reading.env_conditions import silence_conditions
    from oracle_guard.reading.helper_modules import HelperModules

    cfg = load_config(root)
    view = TreeView(root, None)
    helpers = HelperModules.of(cfg, view)
    judge = SilenceJudge(lambda: empty_baseline(cfg.baseline),
                         lambda: read_project_facts(view, cfg), lambda p: True)
    counts: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    for path in view.paths(list(cfg.test_roots())):
        if not cfg.is_test_code(path):
            continue
        source = view.read(path)
        if source is None:
            continue
        scan = scan_file(path, source, judge, helpers)
        if any(f.code == 'OG307' for f in scan.findings):
            counts['unparsable files'] += 1
            continue
        for facts, silence in zip(scan.facts, scan.silences):
            conditional = silence_conditions(dotted_name(silence), silence.call) is not None
            judgement = judge.judge_facts(path, facts)
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


NOT_RUN = {'suite': 'not run (--no-suite)', 'pytest exit': None,
           'ci exit (test command)': None, 'ci findings': None, 'ci codes': {},
           'ci output': '', 'pytest seconds': None, 'ci seconds': None, 'overhead': 'not run'}


def adopt(sdist: str, work: str, hook_url: str, hook_rev: str, pre_commit_home: str,
          suite_timeout: int, run_suite: bool = True) -> dict[str, object]:
    sh, root, cfg, result = adopt_with_readme(sdist, work, hook_url, hook_rev, pre_commit_home)
    result['census'] = silence_census(root)
    result.update(suite(sh, root, cfg, suite_timeout) if run_suite else NOT_RUN)
    result['cheats'] = cheats(sh, root, cfg, suite_timeout, gate=run_suite)
    return result


def adopt_with_readme(sdist: str, work: str, hook_url: str, hook_rev: str,
                      pre_commit_home: str):  # type: ignore[no-untyped-def]
    """Steps 1 and 2 of the module's docstring: unpack, commit, adopt with the README's
    commands. Returns the shell, the repository root, its configuration and what was
    found (files, layout, properties, baseline, manifest and lock sizes)."""
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
    own_config = os.path.exists(os.path.join(root, '.pre-commit-config.yaml'))
    result['own pre-commit config'] = 'kept' if own_config else 'none'
    started = time.perf_counter()
    precommit_rc = None
    for title, command in readme_steps():
        if f'{PLACEHOLDER_URL}@REV' in command:
            result['steps'].append(f'{title} (skipped: installed here)')  # type: ignore[union-attr]
            continue
        command = command.replace(PLACEHOLDER_URL, hook_url)
        command = re.sub(r'\bREV\b', hook_rev, command)
        if command.strip() == 'pre-commit run --all-files' and own_config:
            command = _oracle_guard_only(root, hook_url) + ' && ' + \
                'pre-commit validate-config .pre-commit-config.yaml'
        rc, out = sh.run(command)
        result['steps'].append(f'{title} -> exit {rc}')  # type: ignore[union-attr]
        if 'pre-commit run --all-files' in command:
            precommit_rc = rc
            result['pre-commit output'] = out[-4000:] if rc else ''
        elif rc:
            raise RuntimeError(f'{name}: {title}\n$ {command}\n{out[-3000:]}')
        if own_config and 'pre-commit install' in command:
            # The installed git hook would run the project's remote hooks too (network):
            # the cheats go through a hook that runs the oracle-guard entry only.
            sh.ok(_oracle_guard_only(root, hook_url).replace(
                'run --all-files -c', 'install -f -c'))
        if command.startswith('oracle-guard init'):
            result['init said'] = [line for line in out.splitlines()
                                   if line.startswith(('found ', 'oracle-guard init:'))][:12]
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
        'src': list(cfg.src), 'tests': list(cfg.tests),
        'properties': ', '.join(cfg.properties) or '(none named)',
        'property files': len(cfg.properties),
        'silences baselined': len(baseline['silences']),
        'excluded at adoption': len(baseline['excluded']),
        'excluded': [f'{e["nodeid"]} ({e["by"]})' for e in baseline['excluded'][:12]],
        'fixtures': len(manifest['fixtures']), 'properties locked': len(lock['properties']),
    })
    return sh, root, cfg, result


def _oracle_guard_only(root: str, hook_url: str) -> str:
    """``pre-commit run --all-files`` with a copy of the configuration that holds only the
    oracle-guard entry init wrote (the project's other hooks come from the network)."""
    import yaml

    with open(os.path.join(root, '.pre-commit-config.yaml'), encoding='utf-8') as f:
        config = yaml.safe_load(f)
    ours = [r for r in config.get('repos', []) if r.get('repo') == hook_url]
    path = os.path.join(os.path.dirname(root), 'oracle-guard-only.yaml')
    with open(path, 'w', encoding='utf-8') as f:
        yaml.safe_dump({'repos': ours}, f)
    return f'pre-commit run --all-files -c {path}'


def _test_env(root: str, cfg) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {'PYTHONPATH': os.path.join(root, 'src')} if 'src/' in cfg.src else {}


def suite(sh: Shell, root: str, cfg, timeout: int) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """The project's own suite at the adoption commit: plain pytest, then the gate."""
    command = [sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-p',
               'no:randomly', '-x' if False else '-q']
    extra = _test_env(root, cfg)
    sh_env = Shell(root, {**sh.env, **extra})
    started = time.perf_counter()
    plain_rc, plain_out = sh_env.run(['timeout', str(timeout), *command])
    plain = time.perf_counter() - started
    started = time.perf_counter()
    ci_rc, ci_out = sh_env.run(['timeout', str(timeout), 'oracle-guard', 'ci', '--base', 'HEAD',
                                '--', *command])
    gated = time.perf_counter() - started
    summary = next((line for line in reversed(ci_out.splitlines())
                    if line.startswith('oracle-guard ci:')), '')
    match = re.match(r'oracle-guard ci: (\d+) finding\(s\); test command exited (-?\d+)', summary)
    findings = int(match.group(1)) if match else None
    codes = collections.Counter(m.group(1) for m in re.finditer(r': (OG\d{3}) ', ci_out))
    tail = [line for line in plain_out.splitlines()
            if re.search(r'\d+ (passed|failed|errors?|skipped)\b', line)][-1:] or ['']
    return {
        'suite': tail[0][:120],
        'pytest exit': plain_rc, 'ci exit (test command)': int(match.group(2)) if match else None,
        'ci findings': findings, 'ci codes': dict(codes),
        'ci output': ci_out[-3000:] if findings else '',
        'pytest seconds': round(plain, 1), 'ci seconds': round(gated, 1),
        'overhead': f'{(gated - plain) / plain * 100:+.0f} %' if plain > 0 else '?',
    }


def property_module(root: str, candidates: list[str]) -> str:
    """A property module of the project: the first named one that is a Python file."""
    for path in sorted(candidates):
        if path.endswith('.py'):
            return path
    raise RuntimeError('no property module')


def _first_test(root: str, path: str, left_out: frozenset[str] = frozenset()
                ) -> tuple[int, int, str, int, int] | None:
    """(def line, def column, identity, first body line, its column) of a test to cheat
    on: the first undecorated one, else the first one; never one the project's own
    configuration leaves out (a skip inside a test that never runs cheats nothing)."""
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import test_functions

    with open(os.path.join(root, path), 'rb') as f:
        try:
            tree = parse_python(f.read(), path)
        except ScanError:
            return None
    tests = [t for t in test_functions(tree) if f'{path}::{t[0]}' not in left_out]
    tests = [t for t in tests if not getattr(t[1], 'decorator_list', None)] or tests
    for identity, node in tests:
        first = node.body[0]  # type: ignore[attr-defined]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
                len(node.body) > 1:  # type: ignore[attr-defined]
            first = node.body[1]  # type: ignore[attr-defined]
        return (node.lineno, node.col_offset, identity,  # type: ignore[attr-defined]
                first.lineno, first.col_offset)
    return None


def _decorate(root: str, path: str, line: int, col: int, text: str) -> None:
    full = os.path.join(root, path)
    with open(full, encoding='utf-8') as f:
        lines = f.read().splitlines(keepends=True)
    lines.insert(line - 1, ' ' * col + text + '\n')
    with open(full, 'w', encoding='utf-8') as f:
        f.writelines(lines)


def cheats(sh: Shell, root: str, cfg, timeout: int,  # type: ignore[no-untyped-def]
           gate: bool = True) -> dict[str, str]:
    from oracle_guard.reading.scanner import is_test_module

    tracked = sh.ok('git ls-files').splitlines()
    outcome: dict[str, str] = {}
    with open(os.path.join(root, cfg.baseline), encoding='utf-8') as f:
        left_out = frozenset(e['nodeid'] for e in json.load(f)['excluded'])

    def attempt(name: str, code: str) -> None:
        rc, out = sh.run('git add -A && git commit -q -m cheat')
        blocked = rc != 0 and f' {code} ' in out
        outcome[name] = f'blocked ({code})' if blocked else f'NOT BLOCKED (exit {rc}): {out[-600:]}'
        sh.ok('git reset -q --hard HEAD && git clean -qfd -e .venv')

    target = None
    for path in sorted(p for p in tracked if cfg.is_test_code(p) and not cfg.is_property(p)
                       and is_test_module(p)):
        found = _first_test(root, path, left_out)
        if found:
            target = (path, *found)
            break
    if target is None:
        raise RuntimeError('no undecorated test function to cheat on')
    path, line, col, identity, body_line, body_col = target
    # 1. a bare skip on a test
    _decorate(root, path, line, col, '@__import__("pytest").mark.skip(reason="later")')
    attempt(f'bare skip on {path}::{identity}', 'OG301')
    # 2. a condition true everywhere
    _decorate(root, path, line, col, '@__import__("pytest").mark.skipif(True, reason="later")')
    attempt(f'skipif(True) on {path}::{identity}', 'OG320')
    # 3. a src change together with a property edit
    src = next(p for p in tracked if cfg.is_src(p) and p.endswith('.py'))
    props = [p for p in tracked if cfg.is_property(p) and p.endswith('.py')]
    named = ''
    if not props:
        # What the README says when init named none: a person names the files whose
        # answers they own, in a commit of its own (it passes the hooks: oracle only).
        others = [p for p in tracked if cfg.is_test_code(p) and p != path and
                  is_test_module(p)]
        chosen = others[-1] if others else path
        with open(os.path.join(root, 'pyproject.toml'), encoding='utf-8') as f:
            text = f.read()
        with open(os.path.join(root, 'pyproject.toml'), 'w', encoding='utf-8') as f:
            f.write(text.replace('properties = []', f'properties = ["{chosen}"]', 1))
        rc, out = sh.run('git commit -qam "name the property tests"')
        if rc:
            raise RuntimeError(f'naming the property tests was refused:\n{out[-2000:]}')
        props, named = [chosen], ' (named in a commit of its own first)'
    if props:
        prop = property_module(root, props)
        for edit, text in ((src, '\nCHEAT = 1\n'),
                           (prop, '\n# the property now expects the new answer\n')):
            with open(os.path.join(root, edit), 'a', encoding='utf-8') as f:
                f.write(text)
        attempt(f'src change ({src}) with a property edit ({prop}){named}', 'OG201')
    # 4. a skip through a computed name: past the hooks, the gate must fail it
    full = os.path.join(root, path)
    with open(full, encoding='utf-8') as f:
        lines = f.read().splitlines(keepends=True)
    lines.insert(body_line - 1,
                 f'{" " * body_col}getattr(__import__("pytest"), "sk" + "ip")("later")\n')
    with open(full, 'w', encoding='utf-8') as f:
        f.writelines(lines)
    rc, out = sh.run('git add -A && git commit -q -m "computed skip"')
    hooks = ''
    if rc != 0:
        # Refused by the hooks; an agent can still push it past them (--no-verify), and then
        # the gate must fail the skip itself.
        hooks = 'blocked by the hooks (' + \
            ','.join(sorted(set(re.findall(r' (OG\d{3}) ', out)))) + ') and '
        sh.ok('git commit -q --no-verify -m "computed skip"')
    if not gate:
        outcome[f'computed-name skip in {path}::{identity}'] = \
            f'{hooks}gate not run (--no-suite)' if hooks else \
            f'NOT BLOCKED by the hooks (exit {rc}), gate not run: {out[-800:]}'
        sh.ok('git reset -q --hard HEAD~1 && git clean -qfd -e .venv')
        return _fixture_cheat(sh, root, cfg, tracked, outcome, attempt)
    sh_env = Shell(root, {**sh.env, **_test_env(root, cfg)})
    rc, out = sh_env.run(['timeout', str(timeout), 'oracle-guard', 'ci', '--base', 'HEAD~1',
                          '--', sys.executable, '-m', 'pytest', '-q', '-p',
                          'no:cacheprovider', '-p', 'no:randomly'])
    blocked = rc == 1 and ' OG706 ' in out
    outcome[f'computed-name skip in {path}::{identity}'] = \
        f'{hooks}blocked by the gate (OG706)' if blocked else \
        f'{hooks}NOT BLOCKED by the gate (exit {rc}): {out[-800:]}'
    sh.ok('git reset -q --hard HEAD~1 && git clean -qfd -e .venv')
    return _fixture_cheat(sh, root, cfg, tracked, outcome, attempt)


def _fixture_cheat(sh: Shell, root: str, cfg, tracked: list[str],  # type: ignore[no-untyped-def]
                   outcome: dict[str, str], attempt) -> dict[str, str]:
    # 5. one byte appended to a fixture (manifested in a commit of its own first if none)
    fixtures = [p for p in tracked if cfg.is_fixture(p)]
    if not fixtures:
        fixture = f'{cfg.fixtures[0]}oracle_guard_bench.bin'
        os.makedirs(os.path.dirname(os.path.join(root, fixture)), exist_ok=True)
        with open(os.path.join(root, fixture), 'wb') as f:
            f.write(b'expected answer\n')
        sh.ok(['oracle-guard', 'fixtures', 'add', fixture, '--source', 'human', '--purpose',
               'the benchmark\'s own fixture'])
        sh.ok('git add -A && git commit -q --no-verify -m "a fixture, manifested"')
        fixtures = [fixture]
    with open(os.path.join(root, fixtures[0]), 'ab') as f:
        f.write(b'\n')
    attempt(f'fixture byte edit of {fixtures[0]}', 'OG101')
    return outcome


def markdown(results: list[dict[str, object]]) -> str:
    """One row a project."""
    head = ['project', 'files', 'src / tests (detected)', 'properties (named in place)',
            'locked', 'baselined', 'excluded', 'adoption commit + `pre-commit run --all-files`',
            'suite: pytest exit / ci exit / ci findings', 'pytest s / ci s (overhead)',
            'bare skip', 'skipif(True)', 'property + src', 'computed-name skip', 'fixture byte']
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for r in results:
        cheats = list(r['cheats'].values())  # type: ignore[union-attr]

        def short(text: str) -> str:
            return text.split(':')[0] if 'NOT BLOCKED' not in text else 'NOT BLOCKED'

        props = str(r['properties'])
        if len(props) > 60:
            props = f'{r["property files"]} files'
        cells = [
            str(r['project']), str(r['files']),
            f'{", ".join(r["src"])} / {", ".join(r["tests"])}',  # type: ignore[arg-type]
            props, str(r['properties locked']), str(r['silences baselined']),
            str(r['excluded at adoption']), str(r['pre-commit run --all-files']),
            *(('not run (`--no-suite`)', 'not run') if r['suite'] == NOT_RUN['suite'] else (
                f'{r["pytest exit"]} / {r["ci exit (test command)"]} / {r["ci findings"]}',
                f'{r["pytest seconds"]} / {r["ci seconds"]} ({r["overhead"]})')),
            *(short(c) for c in cheats),
        ]
        lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines) + '\n'


def failed(result: dict[str, object]) -> list[str]:
    """What did not hold for one project."""
    why = []
    if result['pre-commit run --all-files'] != 'passed':
        why.append('pre-commit run --all-files')
    if result['suite'] == NOT_RUN['suite']:
        return why + [name for name, v in result['cheats'].items()  # type: ignore[union-attr]
                      if 'NOT BLOCKED' in v]
    if result['ci findings'] != 0:
        why.append(f'ci findings {result["ci codes"]}')
    if result['ci exit (test command)'] != result['pytest exit']:
        why.append('exit codes differ')
    why += [name for name, v in result['cheats'].items()  # type: ignore[union-attr]
            if 'NOT BLOCKED' in v]
    return why


def main(argv: list[str] | None = None) -> int:
    from oracle_guard.reading.install_origin import installed_origin

    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('sdists', nargs='+')
    parser.add_argument('--markdown', action='store_true', help='print the results as a Markdown table')
    parser.add_argument('--suite-timeout', type=int, default=900, metavar='S',
                        help='seconds one run of a project suite may take')
    parser.add_argument('--no-suite', action='store_true',
                        help='do not run the project suite, plain or under the gate')
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
                result = adopt(sdist, work, origin.url, origin.commit, home, args.suite_timeout,
                               not args.no_suite)
            except Exception as exc:  # noqa: BLE001 -- reported, counted, next project
                print(f'{sdist}: FAILED: {exc}')
                failures += 1
                continue
            results.append(result)
            result['failed'] = failed(result)
            print(json.dumps(result, indent=2), flush=True)
            failures += bool(result['failed'])
    if args.markdown and results:
        print(markdown(results))
    print(f'adopt_real: {len(results)} project(s) adopted, {failures} failure(s)')
    return 1 if failures else 0


if __name__ == '__main__':
    raise SystemExit(main())
