"""Turning findings and errors into text: one function per output format."""
from __future__ import annotations

from oracle_guard.findings import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable
    from typing import TextIO

    from oracle_guard.findings import ConfigError

FORMATS = ('text', 'github')


def printable(text: str) -> str:
    """``text`` as any UTF-8 file or stream can hold it. A path that is not UTF-8 reaches
    us with each of its bytes kept as a surrogate escape (``os.fsdecode``): those bytes
    are written as ``\\xNN``, any other lone surrogate as ``\\uNNNN``."""
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return ''.join(
            f'\\x{ord(ch) - 0xDC00:02x}' if '\udc80' <= ch <= '\udcff' else
            f'\\u{ord(ch):04x}' if '\ud800' <= ch <= '\udfff' else ch
            for ch in text)
    return text


def format_text(finding: Finding) -> str:
    line = (
        f'{finding.path}:{finding.line}:{finding.col}: '
        f'{finding.code} {finding.message}'
    )
    if finding.hint:
        line += f'\n    To fix: {finding.hint}'
    return printable(line)


def _escape_github(value: str, *, property_value: bool = False) -> str:
    value = value.replace('%', '%25').replace('\r', '%0D').replace('\n', '%0A')
    if property_value:
        value = value.replace(':', '%3A').replace(',', '%2C')
    return value


def format_github(finding: Finding) -> str:
    message = finding.message
    if finding.hint:
        message += f'\nTo fix: {finding.hint}'
    return printable(
        f'::error file={_escape_github(finding.path, property_value=True)},'
        f'line={finding.line},col={finding.col},'
        f'title={_escape_github(finding.code, property_value=True)}'
        f'::{_escape_github(message)}'
    )


# GitHub shows a few annotations a step and drops the rest: past this many of one code,
# the others are printed as plain lines and summed up in one annotation.
GITHUB_PER_CODE = 10


def write_findings(findings: Iterable[Finding], fmt: str, out: TextIO) -> None:
    ordered = sorted(set(findings), key=Finding.sort_key)
    if fmt != 'github':
        for finding in ordered:
            out.write(format_text(finding) + '\n')
        return
    shown: dict[str, int] = {}
    folded: dict[str, list[Finding]] = {}
    for finding in ordered:
        shown[finding.code] = shown.get(finding.code, 0) + 1
        if shown[finding.code] <= GITHUB_PER_CODE:
            out.write(format_github(finding) + '\n')
        else:
            folded.setdefault(finding.code, []).append(finding)
    for code, rest in folded.items():
        for finding in rest:
            out.write(format_text(finding) + '\n')
        where = ', '.join(f'{f.path}:{f.line}' for f in rest[:20])
        more = f' and {len(rest) - 20} more' if len(rest) > 20 else ''
        out.write(format_github(Finding(
            rest[0].path, rest[0].line, 1, code,
            f'{len(rest)} more {code} finding(s), printed in the log above: {where}{more}',
            '')) + '\n')


def write_error(error: ConfigError, fmt: str, out: TextIO) -> None:
    if fmt == 'github':
        text = error.message + (f'\nTo fix: {error.hint}' if error.hint else '')
        out.write(printable(
            f'::error file={_escape_github(error.path, property_value=True)},'
            f'line={error.line or 1},title=oracle-guard configuration error'
            f'::{_escape_github(text)}\n',
        ))
        return
    out.write(printable(f'{error}\n'))
    if error.hint:
        out.write(printable(f'    To fix: {error.hint}\n'))
