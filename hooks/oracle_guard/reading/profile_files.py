"""The configuration and CI files that can select a Hypothesis profile.

Kept apart from ``property_reader`` (which needs ``ast`` and ``dataclasses``) because
check-generator-lock asks, on every commit, whether the change touches one.
"""
from __future__ import annotations

CONFIG_FILES = ('pytest.ini', 'pyproject.toml', 'setup.cfg', 'tox.ini', '.gitlab-ci.yml',
                '.travis.yml', 'azure-pipelines.yml', 'bitbucket-pipelines.yml', 'Jenkinsfile',
                'Makefile', 'noxfile.py', '.pre-commit-config.yaml', '.circleci/config.yml')
CONFIG_DIRS = ('.github/workflows/',)


def is_config_file(path: str) -> bool:
    return path in CONFIG_FILES or path.startswith(CONFIG_DIRS)
