"""A bound on the length of one token, as search engines bound it, so that no text costs more than linear time.

The identifier and word patterns of the lexical judge and of the identifier rules look ahead or back within a
run of characters; on one run of tens of thousands of characters (a base64 blob, a minified file, a line of
hyphen-joined words) that is quadratic: one 32 KB token of letters cost 22 s in the lexical judge, 128 KB over
300 s. Every text those patterns read first goes through :func:`bound_tokens`: a run of non-space characters
longer than :data:`MAX_TOKEN_CHARS` is read as its first :data:`MAX_TOKEN_CHARS` characters (Lucene's
``StandardTokenizer`` caps a token at 255 characters by default; this cap is looser, so that long URLs and
paths stay whole). Text whose runs are all shorter -- any ordinary text -- is returned unchanged, so its
scores and identifiers are exactly those of before; a truncated run is a prefix of itself, so a summary's
long token is still found in the tool output it was copied from.
"""

from __future__ import annotations

import re

#: the longest run of non-space characters the patterns read (the rest of a longer run is not read)
MAX_TOKEN_CHARS = 1024

_LONG = re.compile(r"(?<!\S)(\S{%d})\S+" % MAX_TOKEN_CHARS)  # starts only where a run starts: linear


def bound_tokens(text: str) -> str:
    """``text`` with each run of non-space characters cut to its first :data:`MAX_TOKEN_CHARS` characters."""
    if len(text) <= MAX_TOKEN_CHARS:
        return text
    return _LONG.sub(r"\1", text)


__all__ = ["MAX_TOKEN_CHARS", "bound_tokens"]
