"""How the workbench shows untrusted text (summary entries, tool outputs, ids) to a person: one rule for every view.

Control and format characters -- ANSI escape sequences, bidi overrides and isolates (U+202E shows
``INV-\u202e4301`` as ``INV-1034``), zero-width marks -- are made visible as ``\\xNN`` (``\\uNNNN`` above
0xff); newlines and tabs are kept. The terminal labeler prints this; the labeling widget and the explorer
HTML-escape it after.
"""

from __future__ import annotations


def visible(value: object) -> str:
    """``value`` as text with every non-printable character but newline and tab shown as its escape."""
    text = "" if value is None else str(value)
    if text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable():  # (in C: most texts)
        return text
    out = []
    for ch in text:
        if ch in "\n\t" or ch.isprintable():
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
    return "".join(out)


__all__ = ["visible"]
