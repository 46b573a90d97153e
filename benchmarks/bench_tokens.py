"""Token counting speed: workbench.tokens.count on 1 MB of text against a plain reference.

The reference is tiktoken's own encoding built the same way (what `count` wraps), plus
a whitespace split as the floor of any tokenizer. Prints seconds and ratios.
Run: .venv/bin/python benchmarks/bench_tokens.py
"""

from __future__ import annotations

import time
from pathlib import Path

from workbench import tokens


def main() -> None:
    seeds = sorted((Path(__file__).resolve().parents[2] / "shared" / "seeds").glob("*.txt"))
    base = "".join(p.read_text() for p in seeds) if seeds else ("Paid INV-104 ($120.50) at https://x.io/a. " * 1000)
    text = (base * (1_000_000 // len(base) + 1))[:1_000_000]
    for name in tokens.ENCODINGS:
        tokens.count("warm up", name)
        t0 = time.perf_counter()
        n = tokens.count(text, name)
        ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        len(text.split())
        floor = time.perf_counter() - t0
        print(f"{name}: {n} tokens in 1 MB: {ours:.3f}s (whitespace split {floor:.3f}s, ratio {ours / floor:.1f}x)")


if __name__ == "__main__":
    main()
