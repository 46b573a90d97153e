"""The labelled-summaries sentence splitter (``adapters.split_sentences``) against a plain regex split, on texts
that are mostly abbreviations (issue 57 item 14: "Dr. " repeated took 20 s at 64 KB, quadratic) and on ordinary
prose, in the same run. The reference, ``re.split(r"(?<=[.!?])\\s+", text)``, cuts at every end and reads the
text once: linear. Printed per size: both times and the ratio splitter / reference (a linear splitter keeps the
ratio flat as the text grows).

Run from the project root: .venv/bin/python benchmarks/bench_sentences.py [KB ...]
"""

from __future__ import annotations

import re
import sys
import time

from workbench.adapters import split_sentences

END = re.compile(r"(?<=[.!?])\s+")


def best_of(fn, text: str, repeat: int = 3) -> float:  # noqa: ANN001 - a callable of one text
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - started)
    return min(times)


def main(sizes_kb: list[int]) -> None:
    prose = ("The committee met on Tuesday. Dr. Smith, of the U.S. office, presented the figures! Were they right? "
             "Most agreed (e.g. the treasurer). ")
    print(f"{'text':<14} {'KB':>6} {'splitter':>10} {'re.split':>10} {'ratio':>7}")
    for kind, unit in (("abbreviations", "Dr. "), ("prose", prose)):
        for kb in sizes_kb:
            text = unit * (kb * 1024 // len(unit))
            mine, ref = best_of(split_sentences, text), best_of(END.split, text)
            print(f"{kind:<14} {kb:>6} {mine:>9.4f}s {ref:>9.4f}s {mine / ref:>6.1f}x", flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [8, 64, 512])
