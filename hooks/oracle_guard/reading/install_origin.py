"""Where this oracle-guard was installed from: the repository and the commit.

``oracle-guard --version`` prints the commit, and ``oracle-guard init`` pins it as the
``rev`` of the user's ``.pre-commit-config.yaml`` (a rev that exists, never an invented
tag). Asked in this order:

1. the PEP 610 record pip keeps for an install from a VCS URL
   (``pip install "oracle-guard @ git+URL@REV"``): ``direct_url.json``'s ``commit_id``;
2. an install from a local folder (``pip install .``, ``pip install -e .``, and how
   pre-commit installs a hook repository from its clone): that folder's ``git HEAD``;
3. the package's own folder, when it sits in a git checkout of oracle-guard.
"""
from __future__ import annotations

import json
import os
import re
import subprocess

_COMMIT = re.compile(r'^[0-9a-f]{40}$')


class Origin:
    __slots__ = ('url', 'commit')

    def __init__(self, url: str | None, commit: str | None) -> None:
        self.url = url  # a git URL or a local path, when known
        self.commit = commit  # 40 hex digits, when known


def _git_head(folder: str) -> str | None:
    """HEAD of the oracle-guard checkout at ``folder`` (it has our hook manifest)."""
    top = folder
    while not os.path.exists(os.path.join(top, '.git')):
        parent = os.path.dirname(top)
        if parent == top:
            return None
        top = parent
    if not os.path.isfile(os.path.join(top, '.pre-commit-hooks.yaml')):
        return None  # a checkout of some other project that vendors us
    try:
        out = subprocess.run(('git', 'rev-parse', 'HEAD'), cwd=top, capture_output=True,
                             text=True, stdin=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    head = out.stdout.strip()
    return head if out.returncode == 0 and _COMMIT.match(head) else None


def _direct_url() -> dict:  # type: ignore[type-arg]
    try:
        from importlib.metadata import distribution

        text = distribution('oracle-guard').read_text('direct_url.json')
    except Exception:  # noqa: BLE001 -- not installed, or installed without the record
        return {}
    try:
        data = json.loads(text or '{}')
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def installed_origin() -> Origin:
    data = _direct_url()
    url = data.get('url') if isinstance(data.get('url'), str) else None
    vcs = data.get('vcs_info')
    if isinstance(vcs, dict) and isinstance(vcs.get('commit_id'), str) and \
            _COMMIT.match(vcs['commit_id']):
        return Origin(url, vcs['commit_id'])
    if url and url.startswith('file://'):
        from urllib.parse import unquote
        from urllib.parse import urlparse

        folder = unquote(urlparse(url).path)
        head = _git_head(folder)
        if head:
            return Origin(folder, head)
    # the folder that holds the package (oracle_guard/reading/install_origin.py)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    head = _git_head(here)
    if head:
        top = here
        while not os.path.exists(os.path.join(top, '.git')):
            top = os.path.dirname(top)
        return Origin(top, head)
    return Origin(url, None)


def version_line() -> str:
    from oracle_guard import __version__

    origin = installed_origin()
    built = f' (commit {origin.commit})' if origin.commit else ''
    return f'oracle-guard {__version__}{built}'


def pinned_hook_revs(root: str) -> list[str]:
    """The ``rev`` of each ``.pre-commit-config.yaml`` entry that runs oracle-guard hooks."""
    path = os.path.join(root, '.pre-commit-config.yaml')
    if not os.path.isfile(path):
        return []
    try:
        import yaml

        with open(path, encoding='utf-8') as f:
            config = yaml.safe_load(f)
    except Exception:  # noqa: BLE001 -- the hooks report a broken config, not the plugin
        return []
    from oracle_guard.reading.precommit_config import HOOK_IDS

    revs = []
    repos = config.get('repos') if isinstance(config, dict) else None
    for repo in repos if isinstance(repos, list) else ():
        if not isinstance(repo, dict) or repo.get('repo') in ('local', 'meta'):
            continue
        hooks = repo.get('hooks') if isinstance(repo.get('hooks'), list) else []
        if any(isinstance(h, dict) and h.get('id') in HOOK_IDS for h in hooks) and \
                isinstance(repo.get('rev'), str):
            revs.append(repo['rev'])
    return revs


def version_mismatch(root: str) -> str | None:
    """A warning when the installed oracle-guard (the plugin, the CLI) is not the commit
    the repository's pre-commit hooks are pinned to; None when they agree or either side
    is unknown (a tag cannot be compared without the network)."""
    revs = [r for r in pinned_hook_revs(root) if re.fullmatch(r'[0-9a-f]{7,40}', r)]
    if not revs:
        return None
    commit = installed_origin().commit
    if not commit:
        return None
    if all(commit.startswith(rev) for rev in revs):
        return None
    return (f'the oracle-guard plugin here is commit {commit[:12]}, but '
            f'.pre-commit-config.yaml pins the hooks at {", ".join(r[:12] for r in revs)}: '
            'install the same revision (pip install "oracle-guard @ git+URL@REV")')
