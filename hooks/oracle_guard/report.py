"""Turning findings and errors into text: one function per output format."""
from __future__ import annotations

from oracle_guard.findings import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable
    from typing import TextIO

    from oracle_guard.findings import ConfigError

FORMATS = ('text', 'github')


def format_text(finding: Finding) -> str:
    line = (
        f'{finding.path}:{finding.line}:{finding.col}: '
        f'{finding.code} {finding.message}'
    )
    if finding.hint:
        line += f'\n    To fix: {finding.hint}'
    return line


def _escape_github(value: str, *, property_value: bool = False) -> str:
    value = value.replace('%', '%25').replace('\r', '%0D').replace('\n', '%0A')
    if property_value:
        value = value.replace(':', '%3A').replace(',', '%2C')
    return value


def format_github(finding: Finding) -> str:
    message = finding.message
    if finding.hint:
        message += f'\nTo fix: {finding.hint}'
    return (
        f'::error file={_escape_github(finding.path, property_value=True)},'
        f'line={finding.line},col={finding.col},'
        f'title={_escape_github(finding.code, property_value=True)}'
        f'::{_escape_github(message)}'
    )


def write_findings(findings: Iterable[Finding], fmt: str, out: TextIO) -> None:
    formatter = format_github if fmt == 'github' else format_text
    for finding in sorted(set(findings), key=Finding.sort_key):
        out.write(formatter(finding) + '\n')


def write_error(error: ConfigError, fmt: str, out: TextIO) -> None:
    if fmt == 'github':
        text = error.message + (f'\nTo fix: {error.hint}' if error.hint else '')
        out.write(
            f'::error file={_escape_github(error.path, property_value=True)},'
            f'line={error.line or 1},title=oracle-guard configuration error'
            f'::{_escape_github(text)}\n',
        )
        return
    out.write(f'{error}\n')
    if error.hint:
        out.write(f'    To fix: {error.hint}\n')
