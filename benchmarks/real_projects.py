"""Adopt oracle-guard on real projects exactly as the README says, then try an honest change and the cheats.

Usage::

    pip download --no-deps --no-binary :all: six==1.17.0 pytz==2025.1 ... -d SOURCES
    git clone https://github.com/hukkin/tomli SOURCES/hukkin+tomli   # projects taken from git
    python benchmarks/real_projects.py --sources SOURCES [--markdown] [NAME ...]

NAME is a key of ``PROJECTS`` (all of them when none is given). Each project is a sdist
``SOURCES/NAME-VERSION.tar.gz`` or a git clone ``SOURCES/owner+name`` (its commit
``VERSION``). For each, in a temporary folder:

1. the source is unpacked, ``git init``-ed and committed as "the project before adoption";
2. the numbered commands of README.md's "Adopt it in an existing repository" block run as
   written, one after the other in the project's root, in the virtual environment the first
   command makes there (``.venv``, activated as the README activates it). The only
   substitutions are the README's own: ``REV`` is the commit of this checkout and the URL
   is a clone of it, in the form the README gives for a clone on disk
   (``git+file://localhost/PATH@REV`` for pip, the plain path for the hook). Right after
   the ``pip install`` line, the project's own documented test-dependency install runs
   in the same venv (``PROJECTS[...]['deps']``, with where it is documented). A project's
   own ``.pre-commit-config.yaml`` is kept (init appends to it); where it names hooks
   pre-commit would fetch from the network, which this machine does not have, the README's
   offline command ``oracle-guard check --all-files`` replaces ``pre-commit run
   --all-files``, the file is checked with ``pre-commit validate-config`` and the git hook
   is installed from a copy holding only the oracle-guard entry;
3. the unchanged suite at the adoption commit: plain ``python -m pytest`` of the venv, then
   ``oracle-guard ci --base HEAD -- python -m pytest``: both exit codes, the findings, the
   times;
4. an honest change: a helper appended to a ``src`` module and a new unit test of it in an
   existing test module, committed through the installed git hook, then the gate
   (``--base HEAD~1``): it must pass the hooks, and the gate must have 0 findings and plain
   pytest's exit code;
5. five cheats, each from the adoption commit, each of which must be blocked: a bare
   ``@pytest.mark.skip``, ``skipif(True)``, a property module edited next to a ``src``
   change, one byte changed in a fixture init manifested, and a conftest that swallows
   failures by wrapping ``runtest``. A cheat the hooks let through is committed and must
   fail the gate; the conftest is also pushed past the hooks (``--no-verify``, as an agent
   would) to show the gate fails it on its own.

Exit status 1 when any of this does not hold for a project. Nothing is written outside the
temporary folder (``--keep`` keeps it); set ``PIP_CACHE_DIR`` to share downloads.
"""
from __future__ import annotations

import argparse
import json
import os
import posixpath
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

# name: source (sdist NAME-VERSION or git owner+name@commit), the class it covers, the
# project's documented test-dependency install (run in the activated venv), where it is
# documented, and the arguments its documented test command gives pytest.
PROJECTS: dict[str, dict[str, str]] = {
    'six': {'sdist': 'six-1.17.0', 'class': 'a single root test file (test_six.py)',
            'deps': 'python -m pip install pytest', 'doc': 'tox.ini deps (repository)'},
    'pytz': {'sdist': 'pytz-2025.1', 'class': 'tests inside the package; unittest-style',
             'deps': 'python -m pip install pytest', 'doc': 'none; tests are unittest'},
    'colorama': {'sdist': 'colorama-0.4.6',
                 'class': 'tests inside the package (`*_test.py`); unittest-style',
                 'deps': 'python -m pip install -e . pytest',
                 'doc': 'requirements-dev.txt (repository)'},
    'isodate': {'sdist': 'isodate-0.6.1', 'class': '`src/` with tests inside; unittest-style',
                'deps': 'python -m pip install -e . pytest', 'doc': 'tox.ini (repository)'},
    'idna': {'sdist': 'idna-3.10',
             'class': 'unittest-style; the IDNA test vectors as data (tests/IdnaTestV2.txt)',
             'deps': 'python -m pip install -e . pytest', 'doc': 'tox/CI: pytest'},
    'jmespath': {'git': 'jmespath+jmespath.py',
                 'class': 'a vendored JSON compliance suite (tests/compliance/*.json) its '
                          'loader walks tests/ for',
                 'deps': 'python -m pip install -e . pytest pytest-cov hypothesis',
                 'doc': 'requirements.txt (its pins stop at Python 3.9: unpinned here); CI runs '
                        'py.test in tests/', 'args': 'tests/'},
    'tomli': {'git': 'hukkin+tomli', 'class': '`src/`; the vendored toml-test data suite '
              '(tests/data, ~970 files); own pre-commit config; unittest-style',
              'deps': 'python -m pip install -e . pytest',
              'doc': '.github/workflows/tests.yaml (`pip install .`, editable here so the '
                     'tests import src/)'},
    'markdown-it-py': {'git': 'executablebooks+markdown-it-py',
                       'class': 'many fixture files (tests/test_port/fixtures); own '
                                'pre-commit config',
                       'deps': 'python -m pip install -e ".[testing,linkify]"',
                       'doc': '.github/workflows/tests.yml', 'args': 'tests/'},
    'pytest-mock': {'sdist': 'pytest-mock-3.14.0',
                    'class': "a pytest plugin's own suite (pytester); `src/`; own pre-commit config",
                    'deps': 'python -m pip install -e . pytest coverage mock pytest-asyncio',
                    'doc': 'tox.ini [testenv] deps'},
    'pluggy': {'sdist': 'pluggy-1.5.0',
               'class': '`src/` with a `testing/` folder; own pre-commit config',
               'deps': 'SETUPTOOLS_SCM_PRETEND_VERSION=1.5.0 python -m pip install -e ".[testing]"',
               'doc': 'tox.ini extras=testing (the sdist\'s version pinned: a git repository without tags reads as 0.1.dev1, and pip then picks a pytest 2)'},
    'natsort': {'sdist': 'natsort-8.4.0', 'class': 'Hypothesis functions (`@given`)',
                'deps': 'python -m pip install -e . coverage pytest pytest-cov pytest-mock '
                        'hypothesis', 'doc': 'tox.ini [testenv] deps'},
    'bidict': {'git': 'jab+bidict', 'rev': '20fee2f',  # its last pre-commit config (then prek)
               'class': 'a Hypothesis state machine and `@given` functions; own pre-commit '
                        'config',
               'deps': 'python -m pip install -U pip && python -m pip install -e . --group test',
               'doc': 'pyproject.toml [dependency-groups] test (CONTRIBUTING.rst)'},
    'exceptiongroup': {'sdist': 'exceptiongroup-1.2.2', 'class': '`src/`; tests/',
                       'deps': 'python -m pip install -e ".[test]"',
                       'doc': 'pyproject.toml [project.optional-dependencies] test'},
    'humanize': {'sdist': 'humanize-4.11.0', 'class': '`src/`; own pre-commit config',
                 'deps': 'python -m pip install -e ".[tests]"', 'doc': 'tox.ini extras=tests'},
    'wcwidth': {'sdist': 'wcwidth-0.2.13', 'class': 'flat; unicode data files beside the tests',
                'deps': 'python -m pip install -e . -r requirements-tests39.txt',
                'doc': 'tox.ini (requirements-tests39.txt)'},
    'parse': {'sdist': 'parse-1.20.2', 'class': 'a root module (parse.py); tests/',
              'deps': 'python -m pip install pytest && python -m pip install -e .',
              'doc': 'README.rst (its tests/requirements.txt, pytest, is not in the sdist)'},
}


def unpack(source: str, into: str, rev: str = 'HEAD') -> str:
    os.makedirs(into, exist_ok=True)
    if os.path.isdir(os.path.join(source, '.git')) or os.path.isfile(os.path.join(source, 'HEAD')):
        target = os.path.join(into, os.path.basename(source.rstrip('/')).split('+')[-1])
        os.makedirs(target)
        git_dir = source if os.path.isfile(os.path.join(source, 'HEAD')) else \
            os.path.join(source, '.git')
        archive = subprocess.run(['git', '--git-dir', git_dir, 'archive', rev],
                                 check=True, stdout=subprocess.PIPE).stdout
        subprocess.run(['tar', 'x'], input=archive, cwd=target, check=True)
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


def readme_pip_url(clone: str, rev: str) -> str:
    """The pip URL of a clone on disk, in the form the README gives for it."""
    with open(os.path.join(HERE, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    form = re.search(r'`(git\+file://localhost)/path/to/oracle-guard@REV`', readme)
    assert form, 'the README lost the pip URL form of a clone on disk'
    return f'{form.group(1)}{clone}@{rev}'


class Shell:
    """A shell in the project's root; once ``.venv`` exists, every command runs with it
    activated (the README activates it in its first command)."""

    def __init__(self, cwd: str, env: dict[str, str]) -> None:
        self.cwd = cwd
        self.env = env
        self.args: list[str] = []  # what the project's documented test command adds

    def run(self, command: str | list[str], timeout: int | None = None) -> tuple[int, str]:
        if not isinstance(command, str):
            command = ' '.join(_quote(c) for c in command)
        if timeout:
            command = f'timeout {timeout} bash -ec {_quote(command)}'
        activate = os.path.join(self.cwd, '.venv', 'bin', 'activate')
        if os.path.exists(activate):
            command = f'. .venv/bin/activate && {command}'
        proc = subprocess.run(['bash', '-ec', command], cwd=self.cwd, env=self.env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout

    def ok(self, command: str | list[str]) -> str:
        rc, out = self.run(command)
        if rc:
            raise RuntimeError(f'{command} exited {rc}:\n{out[-3000:]}')
        return out


def _quote(text: str) -> str:
    import shlex
    return shlex.quote(text)


def clone_of_head(work: str) -> tuple[str, str]:
    """A clone of this checkout's HEAD (the README's "clone on disk") and its commit."""
    rev = subprocess.run(['git', '-C', HERE, 'rev-parse', 'HEAD'], check=True,
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    dirty = subprocess.run(['git', '-C', HERE, 'status', '--porcelain', '--untracked-files=no',
                            '--', 'hooks', 'pyproject.toml', 'setup.py', 'setup.cfg',
                            '.pre-commit-hooks.yaml'],
                           check=True, stdout=subprocess.PIPE, text=True).stdout
    if dirty.strip():
        sys.stderr.write('real_projects: uncommitted changes under hooks/ are not in the '
                         f'clone (HEAD {rev[:12]} is what gets installed)\n')
    clone = os.path.join(work, 'oracle-guard')
    subprocess.run(['git', 'clone', '-q', '--no-checkout', HERE, clone], check=True)
    subprocess.run(['git', '-C', clone, 'checkout', '-q', rev], check=True)
    return clone, rev


def source_of(name: str, sources: str) -> tuple[str, str]:
    """The path of a project's sdist or clone under SOURCES, and its version."""
    spec = PROJECTS[name]
    if 'sdist' in spec:
        path = os.path.join(sources, spec['sdist'] + '.tar.gz')
        return path, spec['sdist'].rsplit('-', 1)[1]
    path = os.path.join(sources, spec['git'])
    if not os.path.exists(path):
        raise RuntimeError(f'{path} missing: clone https://github.com/'
                           f'{spec["git"].replace("+", "/")} there')
    git_dir = path if os.path.isfile(os.path.join(path, 'HEAD')) else os.path.join(path, '.git')
    rev = subprocess.run(['git', '--git-dir', git_dir, 'rev-parse', '--short=10',
                          spec.get('rev', 'HEAD')],
                         check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    return path, f'git {rev}'


def adopt_with_readme(source: str, work: str, hook_url: str, hook_rev: str,
                      pre_commit_home: str, deps: str = 'python -m pip install pytest',
                      pip_url: str | None = None,
                      rev: str = 'HEAD'):  # type: ignore[no-untyped-def]
    """Steps 1 and 2 of the module's docstring. Returns the shell, the repository root, its
    configuration and what was found."""
    from oracle_guard.config import load_config

    name = os.path.basename(source.rstrip('/')).replace('.tar.gz', '')
    root = unpack(source, os.path.join(work, name), rev)
    # Adoption as a person runs it: an ordinary shell, no venv of ours, no CI variables.
    env = {k: v for k, v in os.environ.items() if not k.startswith(('GIT_', 'PRE_COMMIT'))
           and k not in ('CI', 'ORACLE_GUARD_GATE', 'VIRTUAL_ENV', 'PYTHONPATH', 'PYTHONHOME')}
    ours = os.path.dirname(sys.executable)
    env['PATH'] = os.pathsep.join(p for p in env.get('PATH', '').split(os.pathsep)
                                  if p and os.path.abspath(p) != os.path.abspath(ours))
    env.update(IDENTITY, PRE_COMMIT_HOME=pre_commit_home, PRE_COMMIT_COLOR='never',
               GIT_CONFIG_NOSYSTEM='1', GIT_CONFIG_GLOBAL=os.devnull,
               PIP_DISABLE_PIP_VERSION_CHECK='1')
    sh = Shell(root, env)
    # What the runs below leave in the tree stays out of the commits (git's own exclude
    # file: the project's files are not touched), and so does the build metadata a sdist
    # ships (``*.egg-info``) and a repository does not track: ``pip install -e .`` rewrites it.
    sh.ok('git init -q -b main')
    with open(os.path.join(root, '.git', 'info', 'exclude'), 'a', encoding='utf-8') as f:
        f.write('.hypothesis/\n__pycache__/\n*.egg-info/\n.pytest_cache/\nbuild/\n')
    sh.ok('git add -A && git commit -q -m "before adoption"')
    files = len(sh.ok('git ls-files').splitlines())
    result: dict[str, object] = {'project': name, 'files': files, 'steps': [], 'cheats': {}}
    own_config = os.path.exists(os.path.join(root, '.pre-commit-config.yaml'))
    result['own pre-commit config'] = 'kept' if own_config else 'none'
    pip_url = pip_url or f'git+file://localhost{hook_url}@{hook_rev}'
    started = time.perf_counter()
    precommit_rc = None
    for title, command in readme_steps():
        command = command.replace(f'git+{PLACEHOLDER_URL}@REV', pip_url)
        command = command.replace(PLACEHOLDER_URL, hook_url)
        command = re.sub(r'\bREV\b', hook_rev, command)
        if command.strip() == 'pre-commit run --all-files' and own_config and \
                _needs_network(root, hook_url):
            command = 'oracle-guard check --all-files && ' \
                      'pre-commit validate-config .pre-commit-config.yaml'
            result['all files by'] = '`oracle-guard check --all-files` (config needs the network)'
        elif command.strip() == 'pre-commit run --all-files':
            result['all files by'] = '`pre-commit run --all-files`'
        rc, out = sh.run(command)
        result['steps'].append(f'{title} -> exit {rc}')  # type: ignore[union-attr]
        if 'run --all-files' in command or 'check --all-files' in command:
            precommit_rc = rc
            result['pre-commit output'] = out[-4000:] if rc else ''
        elif rc:
            raise RuntimeError(f'{name}: {title}\n$ {command}\n{out[-3000:]}')
        if 'pip install' in command:
            rc, out = sh.run(deps)
            result['steps'].append(f'# the project\'s test dependencies: {deps} -> exit {rc}')  # type: ignore[union-attr]
            if rc:
                raise RuntimeError(f'{name}: test dependencies\n$ {deps}\n{out[-3000:]}')
            # A sdist ships what its build wrote (setuptools_scm's _version.py), which the
            # project's repository ignores; the install rewrites it: untrack it, as there.
            rewritten = sh.ok('git diff --name-only').split()
            if rewritten:
                with open(os.path.join(root, '.git', 'info', 'exclude'), 'a',
                          encoding='utf-8') as f:
                    f.write(''.join(f'/{p}\n' for p in rewritten))
                sh.ok(['git', 'rm', '-q', '--cached', '--', *rewritten])
                sh.ok('git commit -q -m "build output the repository does not track"')
                result['untracked build output'] = rewritten
        if own_config and 'pre-commit install' in command and _needs_network(root, hook_url):
            # The installed git hook would fetch the project's remote hooks (network): the
            # commits below go through a hook that runs the oracle-guard entry only.
            sh.ok(f'pre-commit install -f -c {_oracle_guard_only(root, hook_url)}')
        if command.startswith('oracle-guard init'):
            result['init said'] = [line for line in out.splitlines()
                                   if line.startswith(('found ', 'oracle-guard init:'))][:12]
    result['seconds'] = round(time.perf_counter() - started, 1)
    sh.ok('git tag -f adopted')
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


def _needs_network(root: str, hook_url: str) -> bool:
    import yaml

    with open(os.path.join(root, '.pre-commit-config.yaml'), encoding='utf-8') as f:
        config = yaml.safe_load(f) or {}
    return any(r.get('repo') not in (hook_url, 'local', 'meta') for r in config.get('repos', []))


def _oracle_guard_only(root: str, hook_url: str) -> str:
    """A copy of the configuration holding only the oracle-guard entry init wrote."""
    import yaml

    with open(os.path.join(root, '.pre-commit-config.yaml'), encoding='utf-8') as f:
        config = yaml.safe_load(f)
    ours = [r for r in config.get('repos', []) if r.get('repo') == hook_url]
    path = os.path.join(os.path.dirname(root), 'oracle-guard-only.yaml')
    with open(path, 'w', encoding='utf-8') as f:
        yaml.safe_dump({'repos': ours}, f)
    return path


PYTEST = ['python', '-m', 'pytest', '-q', '-p', 'no:cacheprovider']


def gate(sh: Shell, base: str, timeout: int, timings: bool = False
         ) -> tuple[int, int | None, int | None, str, float]:
    """``oracle-guard ci --base BASE -- python -m pytest``: its exit, the findings, the test
    command's exit, the output and the seconds. ``timings`` adds ``--timings`` (one line a
    step after the summary; nothing the gate decides changes)."""
    started = time.perf_counter()
    rc, out = sh.run(['oracle-guard', 'ci', '--base', base, *(['--timings'] if timings else []),
                      '--', *PYTEST, *sh.args], timeout=timeout)
    seconds = time.perf_counter() - started
    summary = r'oracle-guard ci: (\d+) finding\(s\); test command exited (-?\d+)'
    match = next((m for m in map(lambda line: re.match(summary, line),
                                 reversed(out.splitlines())) if m), None)
    return (rc, int(match.group(1)) if match else None, int(match.group(2)) if match else None,
            out, seconds)


REACH = re.compile(r'oracle-guard ci: oracle reach: (\d+) of (\d+) changed src lines run by the '
                   r'human-owned tests; mutants: (\d+) of (\d+) killed')


def reach(out: str, seconds: float) -> dict[str, object]:
    """The gate's oracle reach line and the wall seconds its two steps took (``--timings``)."""
    match = REACH.search(out)
    walls = dict(re.findall(r'oracle-guard ci: timing: (oracle reach|mutant runs): wall '
                            r'([\d.]+) s', out))
    return {
        'reach': [int(g) for g in match.groups()] if match else None,
        'reach seconds': round(float(walls.get('oracle reach', 0)), 1),
        'mutant seconds': round(float(walls.get('mutant runs', 0)), 1),
        'gate seconds': round(seconds, 1),
    }


def codes(out: str) -> str:
    return ','.join(sorted(set(re.findall(r'\b(OG\d{3})\b', out))))


def suite(sh: Shell, timeout: int) -> dict[str, object]:
    """The project's own suite at the adoption commit: plain pytest, then the gate."""
    started = time.perf_counter()
    plain_rc, plain_out = sh.run([*PYTEST, *sh.args], timeout=timeout)
    plain = time.perf_counter() - started
    _, findings, test_rc, ci_out, gated = gate(sh, 'HEAD', timeout)
    tail = [line for line in plain_out.splitlines()
            if re.search(r'\d+ (passed|failed|errors?|skipped)\b', line)][-1:] or ['']
    return {
        'suite': tail[0][:120],
        'pytest exit': plain_rc, 'ci exit (test command)': test_rc,
        'ci findings': findings, 'ci codes': codes(ci_out) if findings else '',
        'ci output': ci_out[-3000:] if findings or findings is None else '',
        'ci finding lines': [line for line in ci_out.splitlines()
                             if re.search(r': OG\d{3} ', line)][:40],
        'pytest seconds': round(plain, 1), 'ci seconds': round(gated, 1),
    }


def _first_test(root: str, path: str, left_out: frozenset[str] = frozenset()
                ) -> tuple[int, int, str] | None:
    """(def line, def column, identity) of a test to cheat on: the first undecorated one,
    else the first one; never one the project's own configuration leaves out."""
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
        return node.lineno, node.col_offset, identity  # type: ignore[attr-defined]
    return None


def property_module(root: str, candidates: list[str]) -> str:
    """A property module of the project: the first named one that is a Python file."""
    for path in sorted(candidates):
        if path.endswith('.py'):
            return path
    raise RuntimeError('no property module')


def _insert(root: str, path: str, line: int, col: int, text: str) -> None:
    full = os.path.join(root, path)
    with open(full, encoding='utf-8') as f:
        lines = f.read().splitlines(keepends=True)
    lines.insert(line - 1, ' ' * col + text + '\n')
    with open(full, 'w', encoding='utf-8') as f:
        f.writelines(lines)


def _append(root: str, path: str, text: str) -> None:
    with open(os.path.join(root, path), encoding='utf-8') as f:
        body = f.read()
    with open(os.path.join(root, path), 'w', encoding='utf-8') as f:
        f.write(body + ('' if body.endswith('\n') else '\n') + text)


def importable_src(sh: Shell, cfg, tracked: list[str]) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """A ``src`` module the venv imports: (path, dotted name), the shortest name first."""
    candidates = []
    for path in tracked:
        if not (cfg.is_src(path) and path.endswith('.py')) or cfg.is_test_code(path):
            continue
        dotted = path[len('src/'):] if path.startswith('src/') else path
        dotted = dotted[:-3].replace('/', '.')
        if dotted.endswith('.__init__'):
            dotted = dotted[:-len('.__init__')]
        if dotted in ('setup', 'conftest') or not dotted.replace('.', '').replace('_', 'a').isalnum():
            continue
        candidates.append((dotted.count('.'), len(dotted), path, dotted))
    for _, _, path, dotted in sorted(candidates):
        if sh.run(['python', '-c', f'import {dotted}'])[0] == 0:
            return path, dotted
    raise RuntimeError('no importable src module')


CONFTEST_CHEAT = '''
import _pytest.python
import _pytest.unittest


def _forgiving(runtest):
    def run(self):
        try:
            runtest(self)
        except Exception:
            pass
    return run


_pytest.python.Function.runtest = _forgiving(_pytest.python.Function.runtest)
_pytest.unittest.TestCaseFunction.runtest = _forgiving(_pytest.unittest.TestCaseFunction.runtest)
'''


def changes(sh: Shell, root: str, cfg, timeout: int,  # type: ignore[no-untyped-def]
            plain_rc: int | None, honest_reach: dict[str, object]) -> dict[str, str]:
    """Step 4 and step 5 of the module's docstring; the honest change's oracle reach line
    and the time its steps took go to ``honest_reach``."""
    from oracle_guard.reading.scanner import is_test_module

    tracked = sh.ok('git ls-files').splitlines()
    outcome: dict[str, str] = {}
    with open(os.path.join(root, cfg.baseline), encoding='utf-8') as f:
        left_out = frozenset(e['nodeid'] for e in json.load(f)['excluded'])

    def reset() -> None:
        sh.ok('git reset -q --hard adopted && git clean -qfd -e .venv')

    def attempt(name: str, expected: str) -> None:
        """Commit through the hooks; when they let it through, the gate must fail it."""
        rc, out = sh.run('git add -A && git commit -q -m cheat')
        if rc != 0 and f' {expected} ' in out:
            outcome[name] = f'blocked by the hooks ({expected})'
        elif rc != 0:
            outcome[name] = f'blocked by the hooks ({codes(out) or "exit " + str(rc)})'
        else:
            gate_rc, findings, _, out, _ = gate(sh, 'HEAD~1', timeout)
            outcome[name] = f'passed the hooks, blocked by the gate ({codes(out)})' \
                if gate_rc == 1 and findings else \
                f'NOT BLOCKED (hooks passed, gate exit {gate_rc}): {out[-800:]}'
        reset()

    target = None
    modules = sorted(p for p in tracked if cfg.is_test_code(p) and is_test_module(p))
    # A unit test module first; a project whose only test module holds its properties
    # (bidict) gets the skips there, and the honest test in a module of its own.
    for path in sorted(modules, key=cfg.is_property):
        found = _first_test(root, path, left_out)
        if found:
            target = (path, *found)
            break
    if target is None:
        raise RuntimeError('no test function to change')
    path, line, col, identity = target
    src, module = importable_src(sh, cfg, tracked)
    honest_module = path
    if cfg.is_property(path):
        honest_module = posixpath.join(posixpath.dirname(path), 'test_bench_helper.py')
        outcome['honest test module'] = f'{honest_module} (new: every test module is a property module)'

    # The human-owned tests first: where init named none, a person names them in a commit
    # of its own, as the README says (the honest change is then judged by an oracle, and
    # the gate's oracle reach line has tests to measure).
    props = [p for p in tracked if cfg.is_property(p) and p.endswith('.py')]
    named = ''
    if not props:
        # What the README says when init named none: a person names the files whose
        # answers they own, in a commit of its own (it passes the hooks: oracle only).
        others = [p for p in tracked if cfg.is_test_code(p) and p != path and is_test_module(p)]
        refused = []
        for chosen in [*reversed(others), path]:
            with open(os.path.join(root, 'pyproject.toml'), encoding='utf-8') as f:
                text = f.read()
            with open(os.path.join(root, 'pyproject.toml'), 'w', encoding='utf-8') as f:
                f.write(text.replace('properties = []', f'properties = ["{chosen}"]', 1))
            rc, out = sh.run('git commit -qam "name the property tests"')
            if not rc:
                break
            # The hooks refuse a module whose tests do not all assert (OG403): a person
            # names another one.
            refused.append(f'{chosen} ({codes(out)})')
            reset()
        else:
            raise RuntimeError(f'naming the property tests was refused: {refused}')
        sh.ok('git tag -f adopted')
        props, named = [chosen], ' (named in a commit of its own first' + (
            f'; refused first: {", ".join(refused)}' if refused else '') + ')'
        if chosen == path:
            honest_module = posixpath.join(posixpath.dirname(path), 'test_bench_helper.py')
            outcome['honest test module'] = f'{honest_module} (new: the one unit test ' \
                                            'module was named as properties)'
    # 4. an honest change: a src helper and a new unit test of it in an existing module
    _append(root, src, '\n\ndef _bench_double(value):\n    """Twice the value."""\n'
                       '    return value * 2\n')
    if not os.path.exists(os.path.join(root, honest_module)):
        open(os.path.join(root, honest_module), 'w', encoding='utf-8').close()
    _append(root, honest_module, f'\n\ndef test_bench_double():\n    from {module} import _bench_double\n'
                                 '    assert _bench_double(21) == 42\n')
    rc, out = sh.run('git add -A && git commit -q -m "a helper and its unit test"')
    if rc:
        outcome['honest change'] = f'REFUSED by the hooks ({codes(out)}): {out[-800:]}'
    else:
        gate_rc, findings, test_rc, out, seconds = gate(sh, 'HEAD~1', timeout, timings=True)
        honest_reach.update(reach(out, seconds))
        fine = findings == 0 and test_rc == plain_rc
        outcome['honest change'] = f'passed the hooks and the gate ({findings} findings, ' \
            f'exit {test_rc})' if fine else \
            f'REFUSED by the gate ({findings} findings {codes(out)}, exit {gate_rc}): ' + \
            '\n'.join([line for line in out.splitlines() if re.search(r': OG\d{3} ', line)][:20]
                      or [out[-1500:]])
    reset()

    # 5a. a bare skip; 5b. a condition true everywhere
    _insert(root, path, line, col, '@__import__("pytest").mark.skip(reason="later")')
    attempt(f'bare skip on {path}::{identity}', 'OG301')
    _insert(root, path, line, col, '@__import__("pytest").mark.skipif(True, reason="later")')
    attempt(f'skipif(True) on {path}::{identity}', 'OG320')

    # 5c. a src change together with a property edit
    prop = property_module(root, props)
    _append(root, src, 'CHEAT = 1\n')
    _append(root, prop, '# the property now expects the new answer\n')
    attempt(f'src change with a property edit ({prop}){named}', 'OG201')

    # 5d. one byte changed in a fixture (manifested in a commit of its own first if none)
    fixtures = [p for p in tracked if cfg.is_fixture(p) and p != cfg.manifest
                and p != cfg.traces and os.path.getsize(os.path.join(root, p))]
    added = ''
    if not fixtures:
        fixture = f'{cfg.fixtures[0]}oracle_guard_bench.bin'
        os.makedirs(os.path.dirname(os.path.join(root, fixture)), exist_ok=True)
        with open(os.path.join(root, fixture), 'wb') as f:
            f.write(b'expected answer\n')
        sh.ok(['oracle-guard', 'fixtures', 'add', fixture, '--source', 'human', '--purpose',
               "the benchmark's own fixture"])
        sh.ok('git add -A && git commit -q --no-verify -m "a fixture, manifested"')
        sh.ok('git tag -f adopted')
        fixtures, added = [fixture], ' (none in the project: one manifested first)'
    full = os.path.join(root, fixtures[0])
    with open(full, 'rb') as f:
        data = bytearray(f.read())
    data[0] = ord('#') if data[0] != ord('#') else ord('%')
    with open(full, 'wb') as f:
        f.write(bytes(data))
    attempt(f'byte changed in {fixtures[0]}{added}', 'OG101')

    # 5e. a conftest that swallows failures in runtest
    conftest = os.path.join(os.path.dirname(path), 'conftest.py')
    if not os.path.exists(os.path.join(root, conftest)):
        with open(os.path.join(root, conftest), 'w', encoding='utf-8') as f:
            f.write('')
    _append(root, conftest, CONFTEST_CHEAT)
    name = f'conftest swallowing failures ({conftest})'
    rc, out = sh.run('git add -A && git commit -q -m "a forgiving conftest"')
    hooks = f'blocked by the hooks ({codes(out) or "exit " + str(rc)})' if rc else 'passed the hooks'
    if rc:
        sh.ok('git add -A && git commit -q --no-verify -m "a forgiving conftest"')
    gate_rc, findings, _, out, _ = gate(sh, 'HEAD~1', timeout)
    outcome[name] = f'{hooks}; gate ({codes(out)})' if gate_rc == 1 and findings else \
        f'{"NOT BLOCKED" if not rc else hooks + "; NOT BLOCKED by the gate"} ' \
        f'(gate exit {gate_rc}): {out[-800:]}'
    reset()
    return outcome


def run_project(name: str, sources: str, work: str, clone: str, rev: str, home: str,
                timeout: int) -> dict[str, object]:
    source, version = source_of(name, sources)
    spec = PROJECTS[name]
    sh, root, cfg, result = adopt_with_readme(source, work, clone, rev, home, spec['deps'],
                                              readme_pip_url(clone, rev), spec.get('rev', 'HEAD'))
    sh.args = spec.get('args', '').split()
    result.update(project=name, version=version, covers=spec['class'],
                  deps=f'`{spec["deps"]}` ({spec["doc"]})')
    result.update(suite(sh, timeout))
    honest_reach: dict[str, object] = {}
    result['cheats'] = changes(sh, root, cfg, timeout, result['pytest exit'],  # type: ignore[arg-type]
                               honest_reach)
    result['honest reach'] = honest_reach
    return result


def short(text: str) -> str:
    if 'NOT BLOCKED' in text or 'REFUSED' in text:
        return '**' + text.split(':')[0] + '**'
    return text.replace('blocked by the hooks', 'hooks').replace('blocked by the gate', 'gate') \
        .replace('passed the hooks and the gate', 'passes hooks and gate')


def reach_cells(r: dict[str, object]) -> list[str]:
    """The honest change's ``oracle reach: R of C changed src lines ...; mutants: K of M
    killed`` as ``R/C lines; K/M``, and the gate's seconds with what the reach and mutant
    steps took of them (rows run before these were kept have neither)."""
    honest = r.get('honest reach')
    if not isinstance(honest, dict) or 'gate seconds' not in honest:
        return ['not measured', 'not measured']
    reach = honest.get('reach')
    line = f'{reach[0]}/{reach[1]} lines; {reach[2]}/{reach[3]}' if reach else 'no line'
    added = honest['reach seconds'] + honest['mutant seconds']  # type: ignore[operator]
    return [line, f'{honest["gate seconds"]} ({honest["reach seconds"]} + '
                  f'{honest["mutant seconds"]})' if added or reach else
            f'{honest["gate seconds"]} (not run)']


def markdown(results: list[dict[str, object]]) -> str:
    """One row a project."""
    head = ['project', 'version', 'layout / class covered', 'adoption commit',
            '--all-files', 'unchanged suite: findings / pytest exit / gate exit',
            'honest change', 'bare skip', 'skipif(True)', 'property + src', 'fixture byte',
            'conftest swallowing failures', 'honest change: oracle reach / mutants killed',
            'honest change: gate s (reach + mutants s)', 'plain pytest s', 'gate s',
            'oracle-guard']
    lines = ['| ' + ' | '.join(head) + ' |', '|' + '---|' * len(head)]
    for r in results:
        cheats = dict(r['cheats'])  # type: ignore[call-overload]
        honest = cheats.pop('honest change', '')
        new_module = cheats.pop('honest test module', '')
        if new_module:
            honest += f' (test in {new_module.split(" ")[0]}, new)'
        adoption = 'passed' if all(s.endswith('-> exit 0') for s in r['steps'][:-1]  # type: ignore[index]
                                   if 'all-files' not in s) else 'failed'
        for name in list(cheats):
            if 'none in the project' in name:
                cheats[name] += ' (fixture added first)'
            if 'named in a commit of its own first' in name:
                cheats[name] += ' (module named first)'
        cells = [str(r['project']), str(r['version']), str(r['covers']), adoption,
                 f'{r["pre-commit run --all-files"]}' + (
                     ' (`oracle-guard check`)' if 'check' in str(r.get('all files by')) else ''),
                 f'{r["ci findings"]}{" " + str(r["ci codes"]) if r["ci codes"] else ""} / '
                 f'{r["pytest exit"]} / {r["ci exit (test command)"]}',
                 short(honest), *(short(c) for c in cheats.values()), *reach_cells(r),
                 str(r['pytest seconds']), str(r['ci seconds']), str(r.get('oracle-guard', ''))[:7]]
        lines.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(lines) + '\n'


def failed(result: dict[str, object]) -> list[str]:
    """What did not hold for one project."""
    why = []
    if result['pre-commit run --all-files'] != 'passed':
        why.append('--all-files')
    if result['ci findings'] != 0:
        why.append(f'ci findings {result["ci codes"]}')
    if result['ci exit (test command)'] != result['pytest exit']:
        why.append('exit codes differ')
    why += [name for name, v in result['cheats'].items()  # type: ignore[union-attr]
            if 'NOT BLOCKED' in v or 'REFUSED' in v]
    return why


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n', 1)[0])
    parser.add_argument('names', nargs='*', metavar='NAME', help='projects (default: all)')
    parser.add_argument('--render', nargs='+', metavar='JSONL',
                        help='print the Markdown table of earlier --json results and exit')
    parser.add_argument('--sources', metavar='DIR',
                        help='the sdists (NAME-VERSION.tar.gz) and git clones (owner+name)')
    parser.add_argument('--markdown', action='store_true', help='print a Markdown table')
    parser.add_argument('--json', metavar='FILE', help='append each result to FILE (JSON lines)')
    parser.add_argument('--suite-timeout', type=int, default=900, metavar='S',
                        help='seconds one run of a project suite may take')
    parser.add_argument('--keep', action='store_true', help='keep the temporary folder')
    args = parser.parse_args(argv)
    if args.render:
        rows: dict[str, dict[str, object]] = {}
        for path in args.render:
            with open(path, encoding='utf-8') as f:
                for line in f:
                    if line.strip():
                        row = json.loads(line)
                        rows[str(row['project'])] = row  # the last run of a project wins
        print(markdown([rows[n] for n in PROJECTS if n in rows]), end='')
        return 0
    if not args.sources:
        parser.error('--sources is required')
    unknown = [n for n in args.names if n not in PROJECTS]
    if unknown:
        sys.stderr.write(f'real_projects: unknown project(s) {unknown}; known: {sorted(PROJECTS)}\n')
        return 2
    failures = 0
    results = []
    work = tempfile.mkdtemp(prefix='oracle-guard-real-')
    try:
        clone, rev = clone_of_head(work)
        home = os.path.join(work, 'pre-commit-home')
        for name in args.names or list(PROJECTS):
            try:
                result = run_project(name, args.sources, work, clone, rev, home,
                                     args.suite_timeout)
            except Exception as exc:  # noqa: BLE001 -- reported, counted, next project
                print(f'{name}: FAILED: {exc}', flush=True)
                failures += 1
                continue
            result['oracle-guard'] = rev
            result['failed'] = failed(result)
            results.append(result)
            print(json.dumps(result, indent=2), flush=True)
            if args.json:
                with open(args.json, 'a', encoding='utf-8') as f:
                    f.write(json.dumps(result) + '\n')
            failures += bool(result['failed'])
    finally:
        if args.keep:
            print(f'real_projects: kept {work}')
        else:
            shutil.rmtree(work, ignore_errors=True)
    if args.markdown and results:
        print(markdown(results))
    print(f'real_projects: {len(results)} project(s) adopted, {failures} failure(s)')
    return 1 if failures else 0


if __name__ == '__main__':
    raise SystemExit(main())
