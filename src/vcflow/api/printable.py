"""Text that is safe to print on a terminal: what vcflow prints of what users wrote (names,
labels, messages, values in errors) has its control characters escaped, so a NUL, an ESC
sequence or an OSC title sequence in a manifest is shown, not obeyed. Used by FieldError and
by the CLI's tables and `describe`. Pure.
"""

from __future__ import annotations

import re

#: C0 and C1 controls, DEL, line and paragraph separators, bidirectional overrides and
#: isolates (text that reorders what follows it), lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(text: str, *, keep: str = "") -> str:
    """`text` with each unsafe character but those in `keep` written as an escape (`\\x1b`,
    `\\n`, `\\u202e`)."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: m.group() if m.group() in keep else _escape(m.group()), text)


def _escape(char: str) -> str:
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def has_surrogate(text: str) -> bool:
    """Does `text` hold a lone surrogate (what undecodable bytes become in `sys.argv`)?"""
    return _SURROGATE.search(text) is not None


_SURROGATE = re.compile("[\ud800-\udfff]")


def quoted(value: str) -> str:
    """`value` in double quotes, escaped, as the API server quotes a value in a message."""
    return '"' + escaped(value).replace('"', '\\"') + '"'
