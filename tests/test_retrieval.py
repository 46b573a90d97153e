"""SJC Appendix F retrieval: chunks, passages and pooling."""

from __future__ import annotations


from workbench.retrieval import chunk_outputs, passages, retrieve


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
