"""How the workbench shows untrusted text (summary entries, tool outputs, ids) to a person: one rule for every view.

Control and format characters -- ANSI escape sequences, bidi overrides and isolates (U+202E shows
``INV-\u202e4301`` as ``INV-1034``), zero-width marks -- are made visible as ``\\xNN`` (``\\uNNNN`` above
0xff); newlines and tabs are kept. The terminal labeler prints this; the labeling widget and the explorer
HTML-escape it after.
"""

from __future__ import annotations


def visible(value: object) -> str:
    """``value`` as text with every non-printable character but newline and tab shown as its escape.

    Parameters
    ----------
    value : object
        The value.

    Returns
    -------
    str
        Its text, escaped.
    """
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


def data_block(payload: object) -> str:
    """``payload`` as the one way untrusted text enters a prompt: JSON inside ``<data>`` ... ``</data>``.

    ``json.dumps`` leaves ``<`` and ``>`` literal, so a log step or an entry holding ``</data>`` closed the block
    and what followed read as the prompt's own words. Here ``<``, ``>`` and ``&`` inside the JSON are written as
    their ``\\u003c``-style escapes (the same JSON value to any parser), so nothing in the data can close the block.
    Used by the judge's, the attributors' and the draft model's prompts."""
    import json

    text = json.dumps(payload, ensure_ascii=False, indent=1)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"<data>\n{text}\n</data>"


__all__ = ["data_block", "visible"]
