"""Rule 23 through helper modules at commit time, with the import closure kept per tree
(reading/import_closure.py): a staged helper a property reaches, directly or through
other helpers, is still judged whatever the cache holds; a staged test file no property
reaches reads no property and greps nothing. The tree ids a commit will give the test
roots (repo/tree_ids.py) are the ones ``git commit`` writes."""
from __future__ import annotations

import glob
import json
import os
import subprocess

import pytest

from builders.repos import git_calls

from oracle_guard.commands import lock as lock_command
from oracle_guard.hooks.check_generator_lock import main
from oracle_guard.reading.import_closure import Closure
from oracle_guard.reading.import_closure import import_specs
from oracle_guard.repo.changeset import staged_change
from oracle_guard.repo.tree_ids import folders_to_read
from oracle_guard.repo.tree_ids import parse_tree
from oracle_guard.repo.tree_ids import predict

# Reads source as the interpreter parses it: .ci/run runs it on every Python.
pytestmark = pytest.mark.every_python

PROP = 'tests/properties/test_domain.py'
HELPER = '''\
from hypothesis import strategies as st

LETTERS = "abcdefghijklmnopqrstuvwxyz "
codes = st.lists(st.text(alphabet=LETTERS, max_size=20))
'''
NARROWED = HELPER.replace('max_size=20', 'max_size=1')
PROPERTY = '''\
from hypothesis import given
{imports}


@given(x={draw})
def test_domain(x):
    assert isinstance(x, list)
'''
# (files besides the property, its import line, what it draws, the helper that narrows)
SHAPES = {
    'direct': ({'tests/properties/strategies.py': HELPER}, 'from strategies import codes',
               'codes', 'tests/properties/strategies.py'),
    'module alias': ({'tests/properties/strategies.py': HELPER}, 'import strategies as s',
                     's.codes', 'tests/properties/strategies.py'),
    'package relative': ({'tests/__init__.py': '', 'tests/properties/__init__.py': '',
                          'tests/properties/strategies.py': HELPER},
                         'from . import strategies', 'strategies.codes',
                         'tests/properties/strategies.py'),
    'through a second helper': ({'tests/properties/mixes.py':
                                 'import shared\n\ncodes = shared.codes\n',
                                 'tests/shared.py': HELPER},
                                'from mixes import codes', 'codes', 'tests/shared.py'),
}
UNRELATED = 'tests/test_app.py'


def locked(guarded, shape: str):  # type: ignore[no-untyped-def]
    files, imports, draw, helper = SHAPES[shape]
    for path, text in files.items():
        guarded.write(path, text)
    guarded.write(PROP, PROPERTY.format(imports=imports, draw=draw))
    result = guarded.run(lock_command.main, '--upgrade')
    assert result.rc == 0, result.out + result.err
    assert 'x' in json.loads(guarded.read('tests/domain_lock.json'))['properties'][
        'test_domain']['strategies']
    guarded.commit('the property draws from a helper, locked')
    return helper


def closures(guarded) -> list[str]:  # type: ignore[no-untyped-def]
    found = []
    for path in glob.glob(os.path.join(os.environ['XDG_CACHE_HOME'], 'oracle-guard',
                                       'import-closures-*.txt')):
        with open(path) as f:
            found += f.read().splitlines()
    return found


def unrelated_edit(guarded, n: int) -> None:  # type: ignore[no-untyped-def]
    guarded.write(UNRELATED, f'def test_other_{n}():\n    assert {n}\n')
    guarded.add()


@pytest.mark.parametrize('cache', ['cold', 'warm', 'predicted', 'off', 'unreadable'])
@pytest.mark.parametrize('shape', list(SHAPES))
def test_a_staged_helper_a_property_reaches_is_judged(guarded, monkeypatch, shape, cache):
    helper = locked(guarded, shape)
    if cache == 'off':
        monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '0')
    if cache in ('warm', 'predicted', 'unreadable'):
        unrelated_edit(guarded, 1)
        assert guarded.run(main).rc == 0  # learns HEAD's closure (and the next tree's)
        if cache == 'predicted':
            guarded.commit('an unrelated test')  # the next commit finds the predicted tree
        else:
            guarded.git('reset', '-q')
    if cache == 'unreadable':
        for line_file in glob.glob(os.path.join(os.environ['XDG_CACHE_HOME'], 'oracle-guard',
                                                'import-closures-*.txt')):
            with open(line_file, 'r+') as f:
                text = f.read()
                f.seek(0)
                f.write(text.replace('\t', ' '))  # no line reads back: each is ignored
    closures_before = len(closures(guarded))
    guarded.write(helper, NARROWED)
    guarded.add()

    result = guarded.run(main)

    assert result.rc == 1, result.out
    assert result.codes == ['OG610'], result.out
    assert result.out.startswith(f'{PROP}:')
    assert 'args.x: lists(elements=text(max_size)): locked 20, live 1' in result.out
    if cache == 'predicted':
        assert len(closures(guarded)) == closures_before  # found, not built again
    if cache == 'off':
        assert closures(guarded) == []


def test_a_staged_test_file_no_property_reaches_greps_nothing(guarded, monkeypatch):
    locked(guarded, 'through a second helper')
    unrelated_edit(guarded, 1)
    assert guarded.run(main).rc == 0
    guarded.commit('an unrelated test')
    unrelated_edit(guarded, 2)
    calls = git_calls(monkeypatch)

    assert guarded.run(main).rc == 0
    # the staged diff; then HEAD, the configuration, the lock's place, the staged file
    # and HEAD's trees of the test roots, in one process
    assert calls == ['diff', 'cat-file']


def test_test_roots_of_its_own_are_read_with_one_more_process(guarded, monkeypatch):
    """The first process asks for the default roots' trees; a project whose tests live
    elsewhere has them read in one more ``git cat-file --batch``, not a grep."""
    guarded.write('pyproject.toml', '[tool.oracle-guard]\nsrc = ["src/"]\n'
                  'tests = ["checks/"]\nproperties = ["checks/properties/"]\n')
    guarded.git('mv', 'tests', 'checks')
    guarded.commit('the tests live in checks/')
    guarded.write('checks/properties/strategies.py', HELPER)
    guarded.write('checks/properties/test_domain.py', PROPERTY.format(
        imports='from strategies import codes', draw='codes'))
    assert guarded.run(lock_command.main, '--upgrade').rc == 0
    guarded.commit('locked')
    guarded.write('checks/test_app.py', 'def test_other():\n    assert 1\n')
    guarded.add()
    assert guarded.run(main).rc == 0  # learns the closure
    calls = git_calls(monkeypatch)

    assert guarded.run(main).rc == 0
    assert calls == ['diff', 'cat-file', 'cat-file']
    guarded.git('reset', '-q')
    guarded.write('checks/properties/strategies.py', NARROWED)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG610'], result.out


@pytest.mark.parametrize('cache', ['on', 'off'])
def test_a_file_naming_the_helper_only_in_text_is_no_link_to_a_property(guarded, monkeypatch,
                                                                        cache):
    """Rule 23 through helpers without the closure cache: the grep for the importers of
    strategies.py finds the property and a test that names the module in a string only
    (sympy's skip reasons) or imports it through ``import_module`` (which no reader
    follows); the property is still judged (OG610), and the other files' own importers
    are not grepped for."""
    helper = locked(guarded, 'direct')
    guarded.write('tests/test_notes.py', 'def test_notes():\n'
                                         '    assert "strategies" != "see strategies.py"\n')
    guarded.write('tests/test_dynamic.py', 'from importlib import import_module\n\n\n'
                                           'def test_dynamic():\n'
                                           '    assert import_module("strategies")\n')
    guarded.commit('tests naming the helper in a string, importing it by a computed name')
    if cache == 'off':
        monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '0')
    guarded.write(helper, NARROWED)
    guarded.add()
    calls = git_calls(monkeypatch)

    result = guarded.run(main)

    assert result.codes == ['OG610'], result.out
    assert calls.count('grep') == 2, calls  # the importers of strategies, the profiles


def test_without_the_cache_the_importers_are_grepped(guarded, monkeypatch):
    locked(guarded, 'direct')
    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '0')
    unrelated_edit(guarded, 1)
    calls = git_calls(monkeypatch)

    assert guarded.run(main).rc == 0
    assert 'grep' in calls


def test_without_the_cache_an_unrelated_test_file_needs_no_lock(guarded, monkeypatch):
    """Rule 23 through helpers with every cache off (CI): a staged test file no property
    imports is decided by the grep of HEAD's tree alone; the lock is never parsed (HEAD's
    is unreadable here, and nothing says so)."""
    locked(guarded, 'through a second helper')
    guarded.write('tests/domain_lock.json', '{"version": 1, "properties": {')
    guarded.commit('a lock nobody can read')
    monkeypatch.setenv('ORACLE_GUARD_SCAN_CACHE', '0')
    unrelated_edit(guarded, 1)

    result = guarded.run(main)

    assert result.rc == 0, result.out + result.err
    guarded.git('reset', '-q')
    guarded.write('tests/shared.py', NARROWED)
    guarded.add()
    assert guarded.run(main).rc == 2  # a helper a property reaches: the lock is read


def test_a_commits_grep_reads_heads_tree_and_the_staged_files(guarded, monkeypatch):
    """``TreeView.grep(kept=...)`` on the index: git greps HEAD's tree (not the index)
    and the staged files are judged by their staged bytes: an added file that says the
    word is in the answer, a file that says it only at HEAD (deleted, renamed away, the
    word edited out) is not; of the paths kept, what a grep of the index answers."""
    from oracle_guard.repo.tree_view import TreeView

    guarded.write('tests/uses.py', 'import shared\n')
    guarded.write('tests/gone.py', 'import shared\n')
    guarded.write('tests/moved.py', 'import shared\n')
    guarded.write('tests/edited.py', 'import shared\n')
    guarded.write('tests/notes.txt', 'shared\n')
    guarded.commit('importers')
    guarded.rm('tests/gone.py')
    guarded.git('mv', 'tests/moved.py', 'tests/renamed.py')
    guarded.write('tests/edited.py', 'import other\n')
    guarded.write('tests/added.py', 'from shared import codes\n')
    guarded.write('tests/added.txt', 'shared\n')
    guarded.add()
    head, staged = staged_change(guarded.path)
    specs = [':(glob)tests/**/*.py']

    def index() -> TreeView:
        return TreeView(guarded.path, '').unstaged_from(head, staged)

    from oracle_guard.repo import gitrepo

    asked: list[tuple[str, ...]] = []
    real = gitrepo.run_git

    def recorded(args, *rest, **options):  # type: ignore[no-untyped-def]
        asked.append(tuple(args))
        return real(args, *rest, **options)

    monkeypatch.setattr(gitrepo, 'run_git', recorded)
    cheap = index().grep(['shared'], specs, magic=True, kept=lambda p: p.endswith('.py'))
    greps = [a for a in asked if 'grep' in a]
    assert len(greps) == 1 and head in greps[0] and '--cached' not in greps[0]
    assert [a for a in asked if 'grep' not in a] == [('cat-file', '--batch', '--buffer')]
    assert sorted(cheap) == ['tests/added.py', 'tests/renamed.py', 'tests/uses.py']
    assert sorted(cheap) == sorted(index().grep(['shared'], specs, magic=True))


def test_a_helper_the_last_commit_made_reachable_is_judged(guarded):
    """The committed change added an import to a helper in the closure: the tree after it
    has another closure, so none was kept for it and the next commit builds it."""
    locked(guarded, 'direct')
    guarded.write('tests/later.py', HELPER)
    guarded.commit('a module nothing imports yet')
    guarded.write('tests/properties/strategies.py', 'import later\n\ncodes = later.codes\n')
    guarded.add()
    assert guarded.run(main).rc == 0  # the same strategy, from another module
    guarded.commit('the helper takes it from later.py')
    guarded.write('tests/later.py', NARROWED)
    guarded.add()

    result = guarded.run(main)

    assert result.codes == ['OG610'], result.out
    assert 'locked 20, live 1' in result.out


def test_a_helper_a_newly_committed_property_imports_is_judged(guarded):
    locked(guarded, 'direct')
    guarded.write('tests/other.py', HELPER)
    guarded.commit('a helper nothing imports yet')
    guarded.write('tests/properties/test_more.py', PROPERTY.format(
        imports='from other import codes', draw='codes').replace('test_domain', 'test_more'))
    assert guarded.run(lock_command.main).rc == 0
    guarded.add()
    assert guarded.run(main).rc == 0
    guarded.commit('a new property, locked')
    guarded.write('tests/other.py', NARROWED)
    guarded.add()

    result = guarded.run(main)

    assert result.codes == ['OG610'], result.out
    assert result.out.startswith('tests/properties/test_more.py:')


def test_what_an_import_lets_the_reader_follow():
    import ast

    tree = ast.parse('from a.b import c\nimport d.e\nimport f.g as h\nfrom . import i\n'
                     'from ..j import *\nif True:\n    import nested\n')
    assert import_specs(tree) == [('e', 'a.b', 0), ('p', 'a.b.c', 0), ('p', 'd', 0),
                                  ('p', 'f.g', 0), ('p', 'i', 1), ('e', 'j', 2)]
    closure = Closure(reached={'tests/p.py'}, exact={'tests/a/b'}, prefix={'tests/a/b/c'})
    assert closure.matters('tests/p.py')
    assert closure.matters('tests/a/b.py') and closure.matters('tests/a/b/__init__.py')
    assert closure.matters('tests/a/b/c.py') and closure.matters('tests/a/b/c/deep/x.py')
    assert not closure.matters('tests/a/b/other.py')
    assert not closure.matters('tests/a.py') and not closure.matters('tests/a/bc.py')


def head_trees(repo, root: str, changes) -> dict:  # type: ignore[no-untyped-def]
    width = len(repo.git('rev-parse', 'HEAD').strip()) // 2
    trees = {}
    for folder in folders_to_read(root, changes):
        name = f'HEAD:{folder}' if folder else 'HEAD^{tree}'
        kind = repo.git('cat-file', '-t', name, check=False).strip()
        if kind == 'tree':
            raw = subprocess.run(('git', 'cat-file', 'tree', name), cwd=repo.path,
                                 capture_output=True, check=True).stdout
            trees[folder] = parse_tree(raw, width)
        else:
            trees[folder] = None
    return trees


@pytest.mark.parametrize('object_format', ['sha1', 'sha256'])
def test_the_predicted_tree_is_the_one_git_commit_writes(repo, object_format):
    if object_format == 'sha256':
        subprocess.run(('rm', '-rf', os.path.join(repo.path, '.git')), check=True)
        subprocess.run(('git', 'init', '-q', '--object-format=sha256', repo.path), check=True)
    for path in ('tests/a/test_one.py', 'tests/a/b/helper.py', 'tests/gone/only.py',
                 'tests/moved.py', 'tests/run.sh', 'src/x.py'):
        repo.write(path, f'# {path}\n')
    repo.commit('base')
    repo.write('tests/a/test_one.py', '# edited\n')
    repo.write('tests/new/deeper/test_new.py', 'x = 1\n')  # folders HEAD does not have
    repo.rm('tests/gone/only.py')  # a folder left empty
    repo.git('mv', 'tests/moved.py', 'tests/a/b/moved_here.py')
    os.chmod(os.path.join(repo.path, 'tests/run.sh'), 0o755)
    os.symlink('a/test_one.py', os.path.join(repo.path, 'tests/link.py'))
    repo.write('src/x.py', '# src changes too\n')
    repo.write(os.fsdecode(b'tests/a/caf\xe9.py'), 'x = 2\n')  # a name that is no UTF-8
    repo.add()
    head, changes = staged_change(repo.path)
    assert {c.status for c in changes} >= {'A', 'M', 'D', 'R'}
    width = len(head) // 2
    guessed = {root: predict(root, changes, head_trees(repo, root, changes), width)
               for root in ('tests/', '', 'tests/a/')}

    repo.git('commit', '-q', '--no-verify', '-m', 'change')

    assert guessed['tests/'].hex() == repo.git('rev-parse', 'HEAD:tests').strip()
    assert guessed[''].hex() == repo.git('rev-parse', 'HEAD^{tree}').strip()
    assert guessed['tests/a/'].hex() == repo.git('rev-parse', 'HEAD:tests/a').strip()


def test_a_staged_file_whose_name_is_no_utf8_is_judged(guarded):
    helper = locked(guarded, 'direct')
    name = os.fsdecode(b'tests/caf\xe9.py')
    guarded.write(name, 'def test_other():\n    assert 1\n')
    guarded.add()

    assert guarded.run(main).rc == 0  # the closure is built; nothing of it is staged
    guarded.commit('a test file with a latin-1 name')
    guarded.write(name, 'def test_other():\n    assert 2\n')
    guarded.write(helper, NARROWED)
    guarded.add()
    result = guarded.run(main)
    assert result.codes == ['OG610'], result.out + result.err
