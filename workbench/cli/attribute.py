"""``workbench attribute``: which agent's step decided each failed run of a directory, by an attributor
(:mod:`workbench.judges._attributors` offline, :mod:`workbench.judges._llm_attributors` through a server); the
predictions table (``run_id, attributor, with_reference, agent, step, reason``) is what the failure-attribution
notebook takes as ``PREDICTIONS``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.args import UsageError, existing_dir, verb
from workbench.judges._registry import ATTRIBUTOR_REGISTRY


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "attribute", "say which agent's step decided each failed run of DIR (failure attribution)")
    p.add_argument("dir", help="a workbench directory with runs and steps (workbench import ... --format who-and-when)")
    p.add_argument("--attributor", default="all-at-once", choices=list(ATTRIBUTOR_REGISTRY),
                   help="; ".join(f"{a.name}: {a.summary}" for a in ATTRIBUTOR_REGISTRY.values())
                   + " (the LLM protocols through --base-url)")
    p.add_argument("--model", help="model name sent to the server (default gpt-4o)")
    p.add_argument("--base-url", dest="base_url", help="server root, e.g. http://127.0.0.1:8000/v1 for a local "
                   "OpenAI-compatible server (no key needed on loopback)")
    p.add_argument("--with-reference", dest="with_reference", action="store_true",
                   help="give the model each question's reference answer (the paper's 'with ground truth' setting)")
    p.add_argument("--cache", default=".cache/llm", help="response cache directory (re-runs send nothing)")
    p.add_argument("--offline", action="store_true", help="send nothing: answer from the cache only")
    p.add_argument("--concurrency", type=int, default=4, help="runs attributed at once")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds one attempt may take, body included")
    p.add_argument("--max-attempts", dest="max_attempts", type=int, default=5,
                   help="attempts per request (429, 5xx, timeouts and empty answers are retried)")
    p.add_argument("--context-tokens", dest="context_tokens", type=int,
                   help="the context rule's limit: above it every step's text is cut to the same length")
    p.add_argument("--out", required=True, help="predictions table (.parquet or .jsonl)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.cli.judge import check_base_url
    from workbench.datasets import load
    from workbench.judges._llm_attributors import (PROTOCOLS, attribute_directory, check_predictions_path,
                                                   make_attributor)
    from workbench.llm._client import MissingKey

    if Path(args.out).suffix not in (".parquet", ".jsonl", ".ndjson"):
        raise UsageError("--out", "a .parquet or .jsonl file name", repr(args.out))
    for name in ("concurrency", "max_attempts"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')}", "an integer >= 1", repr(getattr(args, name)))
    if args.base_url is not None:
        check_base_url(args.base_url)
    check_predictions_path(existing_dir(args.dir), args.out)  # before any work: nothing it did not write is replaced
    if args.with_reference and args.attributor not in PROTOCOLS:
        raise UsageError("--with-reference", f"with an LLM protocol ({', '.join(PROTOCOLS)}): the offline "
                         "attributors read no reference answer", f"--attributor {args.attributor}")
    if args.context_tokens is not None and args.context_tokens < 4_000:
        raise UsageError("--context-tokens", "an integer >= 4000 (2,000 go to the question and the prompt)",
                         repr(args.context_tokens))
    attributor = make_attributor(args.attributor, model=args.model, base_url=args.base_url, cache=args.cache,
                                 max_concurrency=args.concurrency, timeout=args.timeout,
                                 max_attempts=args.max_attempts, with_reference=args.with_reference,
                                 context_tokens=args.context_tokens, offline=args.offline)
    tables = load(existing_dir(args.dir), names=("steps",), need=("runs", "steps"))
    client = getattr(attributor, "client", None)
    if client is not None:
        try:
            client.check_key()
        except MissingKey as err:
            print(f"workbench attribute: no API key: set the environment variable {err.env} (a server on loopback "
                  "needs none; --offline uses only the cache)", file=sys.stderr)
            return 2
    try:
        print(attribute_directory(tables, attributor, args.out, with_reference=args.with_reference))
    finally:
        if client is not None:
            client.close()
    return 0


__all__ = ["add", "run"]
