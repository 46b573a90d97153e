"""Test oracles: the references the library's fast paths are held against, kept out of the library.

``retrieve_bm25s`` retrieves SJC Appendix F evidence with a ``bm25s`` index per compaction and ``get_scores`` per
entry (what :func:`workbench.summaries._retrieval.retrieve_many` must equal); ``bm25_scores`` gives every passage's float32
score as the batched scorer computes it, to hold against ``bm25s`` bit for bit. ``benchmarks/bench_judge.py``
measures against ``retrieve_bm25s`` too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.summaries._retrieval import (B, CHUNK_CHARS, K1, PASSAGE_CHARS, TOP_K, Evidence, _add_passages, _pooled, _query,
                                 _scores, _stop_words, _tokenize, chunk_outputs, passages)

def retrieve_bm25s(
    entries: Sequence[str],
    outputs: Sequence[str],
    *,
    k: int = TOP_K,
    passage_chars: int = PASSAGE_CHARS,
    chunk_chars: int = CHUNK_CHARS,
) -> Evidence:
    """The reference: a ``bm25s`` index per compaction and ``get_scores`` per entry (``retrieve`` gives the same
    evidence)."""
    import bm25s

    chunks = chunk_outputs(outputs, chunk_chars=chunk_chars)
    psgs = passages(chunks, passage_chars=passage_chars)
    if not psgs or not entries:
        return Evidence((), tuple(() for _ in entries))
    corpus = bm25s.tokenize([p.text for p in psgs], stopwords="en", show_progress=False)
    if not corpus.vocab:
        return Evidence((), tuple(() for _ in entries))
    retriever = bm25s.BM25(k1=K1, b=B)
    retriever.index(corpus, show_progress=False)
    vocab = set(retriever.vocab_dict)
    queries = [[t for t in q if t in vocab] for q in _tokenize(entries)]
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
        per_entry.append(tuple(ids))
    return _pooled(chunks, per_entry)


def bm25_scores(entries: Sequence[str], outputs: Sequence[str], *, passage_chars: int = PASSAGE_CHARS,
                chunk_chars: int = CHUNK_CHARS) -> list[np.ndarray | None]:
    """Each entry's float32 BM25 score of every passage of one compaction, as the batched scorer computes them
    (None for an entry with no word in the passages' vocabulary), held against ``bm25s``."""
    stop = _stop_words()
    psgs = passages(chunk_outputs(outputs, chunk_chars=chunk_chars), passage_chars=passage_chars)
    vocab: dict[str, int] = {}
    doc_tokens: list[int] = []
    lengths: list[int] = []
    seen = _add_passages(psgs, vocab, doc_tokens, lengths, stop)
    queries = [(0, i, q) for i, e in enumerate(entries) if (q := _query(e, vocab, seen, stop))]
    out: list[np.ndarray | None] = [None] * len(entries)
    if queries:
        scores, start, n = _scores(queries, [(0, len(psgs))], doc_tokens, lengths, len(vocab))
        for j, (_, i, _) in enumerate(queries):
            out[i] = scores[start[j]:start[j] + n[j]]
    return out

