"""The README's set-up: the test environment is a virtual environment inside the checkout
(``.venv``, which git leaves out), and oracle-guard is installed in it from a git URL
(``git+file://localhost/PATH@REV``). Installed code is not the project's code (OG738): the
honest unchanged suite gets no finding and the gate exits as plain pytest does."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import sysconfig
import venv

import pytest

import oracle_guard
from builders.ci_repo import build_template
from builders.ci_repo import copy_template
from builders.ci_repo import PYTEST

# An honest change here must pass the whole gate, its reference run included.
pytestmark = pytest.mark.reference_run

VENV_PYTHON = os.path.join('.venv', 'bin', 'python')


def _install(site: str, dist: str, files: dict[str, str]) -> None:
    """Write ``files`` into ``site`` with a dist-info whose RECORD lists them, as pip does."""
    rows = []
    for rel, text in files.items():
        path = os.path.join(site, *rel.split('/'))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest())
        rows.append(f'{rel},sha256={digest.decode().rstrip("=")},{len(text.encode())}')
    rows.append(f'{dist}-1.0.dist-info/RECORD,,')
    os.makedirs(os.path.join(site, f'{dist}-1.0.dist-info'), exist_ok=True)
    with open(os.path.join(site, f'{dist}-1.0.dist-info', 'RECORD'), 'w',
              encoding='utf-8') as f:
        f.write('\n'.join(rows) + '\n')


def _metadata(dist: str, name: str, entry_points: str, **extra: str) -> dict[str, str]:
    meta = f'{dist}-1.0.dist-info'
    return {f'{meta}/METADATA': f'Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n',
            f'{meta}/entry_points.txt': entry_points,
            **{f'{meta}/{file}': text for file, text in extra.items()}}


def make_venv_in(checkout: str) -> None:
    """``python3 -m venv .venv && echo "*" > .venv/.gitignore``, then what pip would
    install there: a pytest plugin (pytest-tidy), and oracle-guard from
    ``git+file://localhost/...`` (its metadata here, its code and this suite's pytest
    reached through a path line of a distribution's ``.pth``)."""
    prefix = os.path.join(checkout, '.venv')
    venv.EnvBuilder(with_pip=False, symlinks=True).create(prefix)
    with open(os.path.join(prefix, '.gitignore'), 'w', encoding='utf-8') as f:
        f.write('*\n')
    site = sysconfig.get_path('purelib', vars={'base': prefix, 'platbase': prefix})
    here = [os.path.dirname(os.path.dirname(os.path.abspath(pytest.__file__))),
            os.path.dirname(os.path.dirname(os.path.abspath(oracle_guard.__file__)))]
    _install(site, 'aa_suite', {'aa_suite.pth': ''.join(f'{p}\n' for p in dict.fromkeys(here))})
    _install(site, 'pytest_tidy', {'pytest_tidy.py': '"""A pytest plugin that does nothing."""\n',
                                   **_metadata('pytest_tidy', 'pytest-tidy',
                                               '[pytest11]\ntidy = pytest_tidy\n')})
    # pip's record of ``git+file://localhost/<a clone of oracle-guard>@REV``
    clone = os.path.join(os.path.dirname(checkout), 'oracle-guard')
    url = {'url': f'file://localhost{clone}',
           'vcs_info': {'vcs': 'git', 'commit_id': '0' * 40}}
    _install(site, 'oracle_guard', _metadata(
        'oracle_guard', 'oracle-guard',
        '[pytest11]\noracle_guard = oracle_guard.runtime.pytest_plugin\n',
        **{'direct_url.json': json.dumps(url)}))


@pytest.fixture(scope='module')
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = build_template(str(tmp_path_factory.mktemp('venv-in-checkout') / 'repo'))
    make_venv_in(path)
    return path


def test_unchanged_suite_in_a_venv_inside_the_checkout_has_no_finding(
        template: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = copy_template(template, str(tmp_path / 'repo'))
    test_command = [VENV_PYTHON, *PYTEST[1:]]
    plain, ci = repo.both(test_command, '--base', 'HEAD', '--test-python', VENV_PYTHON)
    assert 'OG738' not in ci.out, ci.out
    assert ci.summary == f'oracle-guard ci: 0 finding(s); test command exited {plain.rc}', ci.out
    assert ci.rc == plain.rc == 0, plain.out
