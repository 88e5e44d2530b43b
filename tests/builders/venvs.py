"""Virtual environments for the gate's scenarios: a test environment built and filled
by the test itself.
"""

from __future__ import annotations

import base64
import hashlib
import os
import sysconfig


def record_hash(data: bytes) -> str:
    return 'sha256=' + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip('=')


def site_packages(prefix: str) -> str:
    return sysconfig.get_path('purelib', vars={'base': prefix, 'platbase': prefix})


def install(site: str, dist: str, files: dict[str, str], editable: bool = False) -> None:
    """Write ``files`` and a dist-info whose RECORD lists them with their hashes."""
    rows = []
    for rel, text in files.items():
        path = os.path.join(site, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        rows.append(f'{rel},{record_hash(text.encode())},{len(text.encode())}')
    meta = os.path.join(site, f'{dist}-1.0.dist-info')
    os.makedirs(meta)
    if editable:
        with open(os.path.join(meta, 'direct_url.json'), 'w', encoding='utf-8') as f:
            f.write('{"url": "file:///src", "dir_info": {"editable": true}}')
    rows.append(f'{dist}-1.0.dist-info/RECORD,,')
    with open(os.path.join(meta, 'RECORD'), 'w', encoding='utf-8') as f:
        f.write('\n'.join(rows) + '\n')
