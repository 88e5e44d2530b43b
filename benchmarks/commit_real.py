"""The one-file commit on real repositories nobody here wrote, in CPU time.

    pip download --no-deps --no-binary :all: django==5.2.8 sympy==1.14.0 cattrs==25.1.1 -d SDISTS
    python benchmarks/commit_real.py --venv DIR [--source /work/main] [--runs 9]
                                     [--keep DIR] SDISTS/*.tar.gz

Every figure of ``bench.py``'s one-file commit comes from synthetic repositories. This
measures the same commit in real ones. For each sdist, in a temporary folder (or under
``--keep``, which is left in place):

1. it is unpacked, ``git init``-ed, committed and adopted with the README's commands
   (``real_projects.adopt_with_readme``: nothing edited by hand; this script must run from an
   oracle-guard checkout installed with ``pip install -e``, as real_projects.py), then
   ``git gc`` packs it, as a developer's repository is;
2. two one-file changes are staged, one after the other, each from a clean HEAD:
   **test** — one line added to the body of a test in the test module with the most
   baselined silences (not a property module), the test nearest to a silenced one that is
   not silenced itself; **src** — one line added at the end of the largest ``src`` module;
3. every hook's command of the clean virtual environment ``--venv`` (``bench.CleanVenv``;
   built with ``pip install SOURCE``, not editable, when the folder does not exist) runs
   the three ways ``bench.py`` runs it (the staged diff kept by an earlier hook, the first
   hook of a commit, every cache off), with no file names (the shipped manifest's
   ``pass_filenames: false``), interleaved with ``python -c pass`` of the same interpreter
   (``commit_ab.rounds``: one round that fills the caches, unkept, then ``--runs``);
   median CPU time (user + system, the git processes waited for included).

Prints per project the tracked files, test files, baseline entries, property modules and
locked properties, the change, then a table: each hook's exit code on that change, the git
processes it starts (kept / first / off) and its median CPU as a multiple of ``python -c
pass`` (ms in brackets). The load average is printed with every table. No target is
asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_projects  # noqa: E402  -- the same adoption, the README's commands
import bench  # noqa: E402  -- the same clean venv, variants and git counter
import commit_ab  # noqa: E402  -- the same commands and interleaved rounds

CHANGES = ('test', 'src')
ADDED_TEST_LINE = 'assert 1 + 1 == 2'
ADDED_SRC_LINE = 'ONE_LINE_CHANGE = 1'


class Project:
    def __init__(self, name: str, root: str, cfg, counts: dict[str, object]) -> None:  # type: ignore[no-untyped-def]
        self.name, self.root, self.cfg, self.counts = name, root, cfg, counts

    def git(self, *args: str) -> str:
        return bench.git(*args, cwd=self.root).decode('utf-8', 'replace')


def clean_venv(path: str, source: str | None) -> bench.CleanVenv:
    """bench.CleanVenv, built from ``source`` (a checkout, ``pip install`` not editable)
    when the folder does not exist yet."""
    venv = bench.CleanVenv(path)
    if source and not os.path.exists(venv.python):
        subprocess.run([sys.executable, '-m', 'venv', venv.path], check=True)
        subprocess.run([venv.python, '-m', 'pip', 'install', '-q', source], check=True,
                       env=venv.env)
    return bench.CleanVenv.ensure(path)


def prepare(sdist: str, work: str) -> Project:
    """Unpack, commit, adopt with the README's commands, pack."""
    from oracle_guard.reading.install_origin import installed_origin
    from oracle_guard.reading.scanner import is_test_module

    origin = installed_origin()
    if not origin.commit or not origin.url or not os.path.isdir(origin.url):
        raise SystemExit('run this from an oracle-guard checkout installed with pip -e')
    os.makedirs(work, exist_ok=True)
    # The repository is WORK/NAME/NAME (real_projects unpacks into WORK/NAME).
    _, root, cfg, result = real_projects.adopt_with_readme(
        sdist, work, origin.url, origin.commit, os.path.join(work, 'pre-commit-home'))
    bench.git('gc', '-q', cwd=root)
    tracked = bench.git('ls-files', '-z', cwd=root).decode().split('\0')[:-1]
    counts = {
        'tracked files': len(tracked),
        'test files': sum(1 for p in tracked if cfg.is_test_code(p) and is_test_module(p)),
        'baseline entries': f'{result["silences baselined"]} silences + '
                            f'{result["excluded at adoption"]} excluded tests',
        'property modules': sum(1 for p in tracked if cfg.is_property(p) and p.endswith('.py')),
        'properties locked': result['properties locked'],
        'src / tests / properties': f'{", ".join(cfg.src)} / {", ".join(cfg.tests)} / '
                                    f'{result["property files"]} entries',
        'adoption: pre-commit run --all-files': result['pre-commit run --all-files'],
    }
    return Project(str(result['project']), root, cfg, counts)


def _body_line(node) -> tuple[int, int] | None:  # type: ignore[no-untyped-def]
    """(line, column) of the first statement of a test's body, a docstring passed over;
    None when the body starts on the ``def`` line."""
    import ast

    body = node.body
    first = body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(body) > 1:
        first = body[1]
    if first.lineno <= node.lineno:
        return None
    return first.lineno, first.col_offset


def test_change(project: Project) -> tuple[str, str]:
    """(path, what) of the test change: see the module's docstring, step 2."""
    from oracle_guard.reading.scanner import is_test_module
    from oracle_guard.reading.scanner import parse_python
    from oracle_guard.reading.scanner import ScanError
    from oracle_guard.reading.scanner import test_functions

    cfg, root = project.cfg, project.root
    with open(os.path.join(root, cfg.baseline), encoding='utf-8') as f:
        entries = json.load(f)['silences']
    by_path: dict[str, list[dict]] = {}
    for entry in entries:
        path = entry['path']
        if cfg.is_test_code(path) and not cfg.is_property(path) and is_test_module(path) \
                and os.path.exists(os.path.join(root, path)):
            by_path.setdefault(path, []).append(entry)
    for path in sorted(by_path, key=lambda p: (-len(by_path[p]), p)):
        with open(os.path.join(root, path), 'rb') as f:
            source = f.read()
        try:
            tests = test_functions(parse_python(source, path))
        except ScanError:
            continue
        silenced = {t for e in by_path[path] for t in e['tests']}
        marks = [node.lineno for name, node in tests if name in silenced]  # type: ignore[attr-defined]
        free = [(name, node) for name, node in tests
                if name not in silenced and _body_line(node) is not None]
        if not free:
            continue
        near = marks or [1]
        name, node = min(free, key=lambda t: (min(abs(t[1].lineno - m) for m in near),  # type: ignore[attr-defined]
                                              t[1].lineno))  # type: ignore[attr-defined]
        line, col = _body_line(node)  # type: ignore[misc]
        lines = source.decode('utf-8').splitlines(keepends=True)
        lines.insert(line - 1, ' ' * col + ADDED_TEST_LINE + '\n')
        edited = ''.join(lines)
        compile(edited, path, 'exec', dont_inherit=True)  # still Python
        with open(os.path.join(root, path), 'w', encoding='utf-8') as f:
            f.write(edited)
        what = (f'{path}: one line added at line {line}, in the body of {name} '
                f'({len(by_path[path])} baselined silences in the file)')
        return path, what
    raise RuntimeError(f'{project.name}: no test module with a baselined silence and a '
                       'test that is not silenced')


def src_change(project: Project) -> tuple[str, str]:
    from oracle_guard.reading.scanner import is_test_module

    tracked = project.git('ls-files', '-z').split('\0')[:-1]
    mods = [p for p in tracked if project.cfg.is_src(p) and p.endswith('.py')
            and not is_test_module(p) and os.path.basename(p) != '__init__.py']
    path = max(mods, key=lambda p: (os.path.getsize(os.path.join(project.root, p)), p))
    full = os.path.join(project.root, path)
    with open(full, 'rb') as f:
        data = f.read()
    with open(full, 'ab') as f:
        f.write((b'' if data.endswith(b'\n') else b'\n') + ADDED_SRC_LINE.encode() + b'\n')
    return path, f'{path}: one line added at its end (the largest src module, ' \
                 f'{len(data) // 1024} KiB)'


def stage(project: Project, kind: str) -> tuple[str, str]:
    """A clean HEAD, then the one-file change of ``kind`` staged."""
    project.git('reset', '-q', '--hard', 'HEAD')
    path, what = (test_change if kind == 'test' else src_change)(project)
    project.git('add', path)
    return path, what


def no_file_names(hook: str, changed: str) -> list[str]:
    return []  # every hook of the shipped manifest has pass_filenames: false


def exit_codes(venv: bench.CleanVenv, hooks: list[str], root: str, cache: str
               ) -> dict[str, tuple[int, str]]:
    """Each hook's exit code on the staged change and its first line of output."""
    found = {}
    env = {**venv.env, 'XDG_CACHE_HOME': cache}
    for hook in hooks:
        proc = subprocess.run(venv.script(hook), cwd=root, env=env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
        out = (proc.stdout + proc.stderr).strip().splitlines()
        found[hook] = (proc.returncode, out[0][:160] if out else '')
    return found


def measure(venv: bench.CleanVenv, project: Project, kind: str, runs: int, tmp: str
            ) -> list[str]:
    changed, what = stage(project, kind)
    cache = os.path.join(tmp, f'cache-{project.name}-{kind}')
    shutil.rmtree(cache, ignore_errors=True)
    hooks = venv.hooks()
    codes = exit_codes(venv, hooks, project.root, cache)
    plan = commit_ab.commands(venv, hooks, changed, cache, hook_args=no_file_names)
    counts = {}
    for name, (argv, env, before) in plan.items():
        if name == 'python -c pass':
            continue
        if before is not None:
            before(project.root)  # type: ignore[operator]
        counts[name] = bench.git_processes(argv, project.root, venv, tmp, env)
    medians = commit_ab.rounds(project.root, {'it': plan}, runs)['it']
    base = medians['python -c pass']
    lines = [f'### {project.name}, {kind} change: {what}', '',
             f'median of {runs} interleaved rounds; `python -c pass` {base:.1f} ms CPU; '
             f'load average at the end {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs', '',
             '| hook | exit | git processes: kept, first, off | kept | first of a commit | '
             'caches off |', '|---|---|---|---|---|---|']
    for hook in hooks:
        label = 'oracle-guard (all six, one process)' if hook == bench.EVERY_HOOK else hook
        cells = [f'{medians[hook + v] / base:.2f} ({medians[hook + v]:.1f} ms)'
                 for v in bench.VARIANTS]
        git = ', '.join(str(counts[hook + v]) for v in bench.VARIANTS)
        lines.append(f'| {label} | {codes[hook][0]} | {git} | ' + ' | '.join(cells) + ' |')
    six = sum(medians[h] for h in bench.HOOKS if h in medians) / base
    lines.append(f'\nThe six hooks one after the other (kept): {six:.2f}×.')
    failing = [f'{h}: {line}' for h, (rc, line) in codes.items() if rc]
    if failing:
        lines += ['', 'Hooks that failed on this change (first line of output):', '',
                  *(f'* {f}' for f in failing)]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('sdists', nargs='+')
    parser.add_argument('--venv', required=True, help='the clean virtual environment')
    parser.add_argument('--source', help='what to pip install into --venv when it is built '
                                         '(default: this checkout)')
    parser.add_argument('--runs', type=int, default=9)
    parser.add_argument('--keep', help='adopt the projects here and leave them')
    parser.add_argument('--changes', nargs='+', choices=CHANGES, default=list(CHANGES))
    args = parser.parse_args(argv)
    venv = clean_venv(args.venv, args.source or bench.REPO)
    work = args.keep or tempfile.mkdtemp(prefix='og-commit-real-')
    tmp = tempfile.mkdtemp(prefix='og-commit-real-tmp-')
    print(f'clean venv {venv.path}: {venv.packages()}')
    print(f'{sys.version.split()[0]}, {bench.git("--version", cwd=tmp).decode().strip()}, '
          f'load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n', flush=True)
    try:
        for sdist in args.sdists:
            project = adopted(sdist, work)
            print(f'## {project.name}\n')
            for key, value in project.counts.items():
                print(f'* {key}: {value}')
            print(flush=True)
            for kind in args.changes:
                print('\n'.join(measure(venv, project, kind, args.runs, tmp)) + '\n',
                      flush=True)
            project.git('reset', '-q', '--hard', 'HEAD')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def adopted(sdist: str, work: str) -> Project:
    """The project adopted under ``work`` by an earlier run, else adopted now."""
    name = os.path.basename(sdist.rstrip('/')).replace('.tar.gz', '')
    existing = os.path.join(work, name, name)  # as prepare() leaves it
    if not os.path.isdir(os.path.join(existing, '.git')):
        return prepare(sdist, work)
    from oracle_guard.config import load_config

    project = Project(name, existing, load_config(existing), {'reused': existing})
    project.counts.update(counts_of(project))
    return project


def counts_of(project: Project) -> dict[str, object]:
    """The counts of a project adopted by an earlier run (``--keep``)."""
    from oracle_guard.reading.scanner import is_test_module

    cfg = project.cfg
    tracked = project.git('ls-files', '-z').split('\0')[:-1]
    with open(os.path.join(project.root, cfg.baseline), encoding='utf-8') as f:
        baseline = json.load(f)
    with open(os.path.join(project.root, cfg.domain_lock), encoding='utf-8') as f:
        lock = json.load(f)
    return {
        'tracked files': len(tracked),
        'test files': sum(1 for p in tracked if cfg.is_test_code(p) and is_test_module(p)),
        'baseline entries': f'{len(baseline["silences"])} silences + '
                            f'{len(baseline["excluded"])} excluded tests',
        'property modules': sum(1 for p in tracked if cfg.is_property(p) and p.endswith('.py')),
        'properties locked': len(lock['properties']),
    }


if __name__ == '__main__':
    raise SystemExit(main())
