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
    assert retrieve(["- Paid INV-17 (17.00)"], [long, "INV-17 was paid"]) == retrieve(["- Paid INV-17 (17.00)"], [long, "INV-17 was paid"])
