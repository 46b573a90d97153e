"""SJC Appendix F retrieval: chunks, passages and pooling."""

from __future__ import annotations


from pathlib import Path

from workbench.summaries import passages, retrieve
from workbench.summaries._retrieval import chunk_outputs

ROOT = Path(__file__).resolve().parents[2]


def test_retrieval_chunks_passages_and_pooling() -> None:
    long = "\n".join(f"line {i} INV-{i} amount {i}.00" for i in range(200))
    chunks = chunk_outputs([long, "short"])
    assert all(len(c.text) <= 2000 for c in chunks) and "".join(c.text for c in chunks[:-1]) == long
    assert all(len(p.text) <= 300 for p in passages(chunks))
    ev = retrieve(["- Paid INV-17 (17.00)", "- nothing matches zzz"], [long, "INV-17 was paid"])
    assert ev.per_entry[1] == () and 1 <= len(ev.per_entry[0]) <= 3
    assert any("INV-17" in c.text for c in ev.chunks)


def test_bm25_ranking_equals_a_hand_computation() -> None:
    """Lucene BM25 (bm25s's default: k1 = 1.5, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5))) computed here
    by hand on six one-passage outputs; the top three retrieved for the entry follow that ranking."""
    import math

    outputs = ["invoice paid invoice amount", "invoice paid", "refund issued customer",
               "invoice amount amount amount overdue account ledger", "paid", "customer ledger overdue"]
    query = ["invoice", "amount", "overdue"]
    docs = [o.split() for o in outputs]
    n, avgdl = len(docs), sum(len(d) for d in docs) / len(docs)

    def score(doc: list[str]) -> float:
        total = 0.0
        for term in query:
            df = sum(term in d for d in docs)
            tf = doc.count(term)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            total += idf * tf * 2.5 / (tf + 1.5 * (1 - 0.75 + 0.75 * len(doc) / avgdl))
        return total

    hand = sorted(range(n), key=lambda i: (-score(docs[i]), i))
    expected = tuple(f"o{i}c0" for i in hand[:3] if score(docs[i]) > 0)
    assert retrieve(["- invoice amount overdue"], outputs).per_entry[0] == expected
    assert expected[0] == "o3c0"  # the long output with three matches of 'amount' and one 'overdue' wins


def _random_compactions(seed: int, n: int) -> list[tuple[list[str], list[str]]]:
    """Compactions of every awkward shape: repeated words (ties), passages of stop words only, outputs longer than
    a chunk, empty outputs, non-ASCII words, entries with no word in common with the outputs, no entries."""
    import random

    rng = random.Random(seed)
    words = ["invoice", "paid", "amount", "overdue", "ledger", "refund", "customer", "INV-1034", "120.50", "статус",
             "café", "the", "and", "of", "it", "a", "x", "ß", "naïve"]
    batch = []
    for _ in range(n):
        outputs = []
        for _ in range(rng.randint(0, 6)):
            length = rng.choice([0, 3, 40, 400, 2600])
            text = " ".join(rng.choice(words) for _ in range(length))
            outputs.append(text.replace(" x ", "\n") if rng.random() < 0.3 else text)
        if rng.random() < 0.1:
            outputs = ["the and of it a " * 20]  # stop words only: no vocabulary
        entries = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(0, 6))]
        batch.append((entries, outputs))
    return batch


def test_batched_bm25_equals_bm25s_index_per_compaction() -> None:
    """The batched scorer against bm25s itself: every entry's float32 score of every passage bit for bit, and the
    evidence (passages, pooling, order) equal, over 300 random compactions scored as one batch."""
    import bm25s
    import numpy as np

    from workbench.summaries import passages, retrieve_many

    from tests.oracles import bm25_scores, retrieve_bm25s

    batch = _random_compactions(7, 300)
    assert retrieve_many(batch) == [retrieve_bm25s(e, o) for e, o in batch]
    compared = 0
    for entries, outputs in batch:
        psgs = passages(chunk_outputs(outputs))
        mine = bm25_scores(entries, outputs)
        if not psgs:
            continue
        corpus = bm25s.tokenize([p.text for p in psgs], stopwords="en", show_progress=False)
        if not corpus.vocab:
            assert all(m is None for m in mine)
            continue
        index = bm25s.BM25()
        index.index(corpus, show_progress=False)
        for entry, m in zip(entries, mine, strict=True):
            query = [t for t in bm25s.tokenize([entry], stopwords="en", return_ids=False, show_progress=False)[0]
                     if t in index.vocab_dict]
            if not query:
                assert m is None
                continue
            ref = index.get_scores(query)
            assert m is not None and m.dtype == ref.dtype and np.array_equal(m, ref), (entry, m, ref)
            compared += 1
    assert compared > 300


def test_batched_retrieval_on_the_example_log_equals_bm25s() -> None:
    """Every compaction of the example log: the requests built in batches hold bm25s's evidence."""
    import polars as pl

    from workbench.adapters import read_log
    from workbench.summaries import compaction_requests, span_outputs
    from tests.oracles import retrieve_bm25s

    tables = read_log(ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl")
    requests = compaction_requests(tables)
    assert len(requests) == 8  # the example log's compactions
    for cr in requests:
        c = tables["compactions"].filter((pl.col("run_id") == cr.run_id) & (pl.col("boundary") == cr.boundary)).row(
            0, named=True)
        outputs = span_outputs(tables["steps"], cr.run_id, c["span_start"], c["span_end"])
        outputs += [c["retained_turn"]] if c.get("retained_turn") else []
        ref = retrieve_bm25s(list(cr.request.entries), outputs)
        assert cr.request.evidence == tuple(ref.texts())
        assert cr.request.evidence_ids == tuple(c.chunk_id for c in ref.chunks)

