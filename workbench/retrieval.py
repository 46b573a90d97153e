"""Evidence for the source judge (SJC Appendix F).

The environment outputs of the compressed span and of the retained turn are cut into
chunks of at most 2,000 characters (at line breaks where possible) and each chunk into
300-character passages. BM25 (``bm25s``) ranks the passages for each entry; the top 3
with a positive score are each expanded to their enclosing chunk, and the chunks are
pooled and de-duplicated across the entries of one compaction, in order of first use.
Everything is deterministic: ties keep corpus order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import bm25s
import numpy as np

PASSAGE_CHARS = 300
CHUNK_CHARS = 2000
TOP_K = 3


@dataclass(frozen=True)
class Chunk:
    """A piece of one environment output of at most ``CHUNK_CHARS`` characters."""

    chunk_id: str
    output: int
    text: str


@dataclass(frozen=True)
class Passage:
    passage_id: str
    chunk_id: str
    text: str


@dataclass(frozen=True)
class Evidence:
    """Pooled evidence of one compaction and, per entry, the chunk ids retrieved for it."""

    chunks: tuple[Chunk, ...]
    per_entry: tuple[tuple[str, ...], ...]

    def texts(self) -> list[str]:
        return [c.text for c in self.chunks]



def _split(text: str, size: int, *, at_lines: bool) -> list[str]:
    if len(text) <= size:
        return [text] if text else []
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if at_lines and end < len(text):
            cut = text.rfind("\n", start + size // 2, end)
            if cut != -1:
                end = cut + 1
        pieces.append(text[start:end])
        start = end
    return pieces


def chunk_outputs(outputs: Sequence[str], *, chunk_chars: int = CHUNK_CHARS) -> list[Chunk]:
    """Cut each environment output into chunks of at most ``chunk_chars`` characters."""
    chunks = []
    for i, out in enumerate(outputs):
        for j, piece in enumerate(_split(out or "", chunk_chars, at_lines=True)):
            chunks.append(Chunk(f"o{i}c{j}", i, piece))
    return chunks


def passages(chunks: Sequence[Chunk], *, passage_chars: int = PASSAGE_CHARS) -> list[Passage]:
    """Cut each chunk into passages of at most ``passage_chars`` characters."""
    return [
        Passage(f"{c.chunk_id}p{k}", c.chunk_id, piece)
        for c in chunks
        for k, piece in enumerate(_split(c.text, passage_chars, at_lines=False))
    ]


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


def retrieve(
    entries: Sequence[str],
    outputs: Sequence[str],
    *,
    k: int = TOP_K,
    passage_chars: int = PASSAGE_CHARS,
    chunk_chars: int = CHUNK_CHARS,
) -> Evidence:
    """BM25 evidence for each entry from the environment outputs, pooled across entries."""
    chunks = chunk_outputs(outputs, chunk_chars=chunk_chars)
    psgs = passages(chunks, passage_chars=passage_chars)
    if not psgs or not entries:
        return Evidence((), tuple(() for _ in entries))
    corpus = bm25s.tokenize([p.text for p in psgs], stopwords="en", show_progress=False)
    if not corpus.vocab:
        return Evidence((), tuple(() for _ in entries))
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    vocab = set(retriever.vocab_dict)
    queries = [[t for t in q if t in vocab] for q in _tokenize(entries)]
    by_id = {c.chunk_id: c for c in chunks}
    pooled: dict[str, Chunk] = {}
    per_entry: list[tuple[str, ...]] = []
    n = len(psgs)
    for q in queries:
        if not q:
            per_entry.append(())
            continue
        scores = retriever.get_scores(q)
        order = np.lexsort((np.arange(n), -scores))  # by score, ties in corpus order
        ids: list[str] = []
        for idx in order[:k]:
            if scores[idx] <= 0:
                break
            cid = psgs[int(idx)].chunk_id
            if cid not in ids:
                ids.append(cid)
        for cid in ids:
            pooled.setdefault(cid, by_id[cid])
        per_entry.append(tuple(ids))
    return Evidence(tuple(pooled.values()), tuple(per_entry))
