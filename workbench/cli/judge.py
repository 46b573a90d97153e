"""``workbench judge``: score every summary entry of a directory (:func:`workbench.judges.judge_directory`)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.cli.args import UsageError, executor_options, existing_dir, verb
from workbench.judges._prompts import check_prompt, DEFAULT_PROMPT, PROMPT_JUDGES, PROMPTS
from workbench.judges._registry import JUDGE_REGISTRY

if TYPE_CHECKING:
    from workbench.judges._base import SourceJudge


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "judge", "score every summary entry of DIR with a source judge")
    p.add_argument("dir", help="a workbench directory (runs, steps, compactions)")
    p.add_argument("--judge", default=next(iter(JUDGE_REGISTRY)), choices=list(JUDGE_REGISTRY),
                   help="; ".join(f"{j.name}: {j.summary}" for j in JUDGE_REGISTRY.values())
                   + " (the model judges through the cached client)")
    p.add_argument("--prompt", default=DEFAULT_PROMPT, choices=list(PROMPTS),
                   help="what a model judge asks: " + "; ".join(f"{n}: {p.summary}" for n, p in PROMPTS.items())
                   + " (only --judge openai sends a prompt other than the first)")
    p.add_argument("--model", help="model name sent to the server (judge default when not given)")
    p.add_argument("--base-url", dest="base_url", help="server root, e.g. http://127.0.0.1:8000/v1 for a local "
                   "OpenAI-compatible server (no key needed on loopback)")
    p.add_argument("--cache", default=".cache/llm", help="response cache directory (re-runs send nothing)")
    p.add_argument("--refresh", action="store_true", help="ignore cached answers (new answers are still cached)")
    p.add_argument("--offline", action="store_true", help="send nothing: answer from the cache only; a request "
                   "not in the cache gets a null score with reason 'not in cache'")
    p.add_argument("--tau", type=float, help="also report what SJC pruning keeps at this threshold")
    p.add_argument("--concurrency", type=int, default=4, help="requests in flight at once")
    executor_options(p, "compactions")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds one attempt may take, body included")
    p.add_argument("--max-attempts", dest="max_attempts", type=int, default=5,
                   help="attempts per request (429, 5xx, timeouts and unusable answers are retried)")
    p.add_argument("--deadline", type=float, help="seconds the whole run may take; requests left then get a "
                   "null score with reason 'deadline' and what was answered is written")
    p.add_argument("--repeats", type=int, default=1, help="score every request N times (SJC Section 5.4); "
                   "one scores row per repeat")
    p.add_argument("--strict", action="store_true", help="exit 1 when any score has no usable answer")
    p.add_argument("--no-fail-fast", dest="fail_fast", action="store_false",
                   help="keep asking a server that has answered nothing usable 20 times in a row (by default the "
                        "run stops sending then)")
    p.add_argument("--context-tokens", dest="context_tokens", type=int, help="split requests above this size")
    p.add_argument("--quiet", action="store_true", help="no progress on standard error")
    p.add_argument("--out", required=True, help="scores table (.parquet or .jsonl)")
    p.add_argument("--force", action="store_true", help="replace an --out file that is not a scores table")
    p.set_defaults(func=run)


def check(args: argparse.Namespace) -> None:
    """Every judge option checked before anything is read or sent."""
    if Path(args.out).suffix not in (".parquet", ".jsonl", ".ndjson"):
        raise UsageError("--out", "a .parquet or .jsonl file name", repr(args.out))
    if args.tau is not None and not (math.isfinite(args.tau) and 0.0 <= args.tau <= 1.0):
        raise UsageError("--tau", "a threshold in [0, 1]", repr(args.tau))
    for name in ("concurrency", "max_attempts", "repeats"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')}", "an integer >= 1", repr(getattr(args, name)))
    for name in ("timeout", "deadline"):
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise UsageError(f"--{name}", "a number of seconds > 0", repr(value))
    if args.offline and args.refresh:
        raise UsageError("--offline", "not together with --refresh", "both")
    if args.base_url is not None:
        check_base_url(args.base_url)
    if JUDGE_REGISTRY[args.judge].kind == "model" and args.cache:
        cache = Path(args.cache)
        for path in (cache, *cache.parents):  # a file where the cache or one of its parents should be
            if path.exists():
                if not path.is_dir():
                    raise UsageError("--cache", "a directory (made when missing)", f"{args.cache!r}, where {path} "
                                     "is a file")
                break


def check_base_url(url: str) -> None:
    """An http(s) URL with a host (``http://127.0.0.1:8000/v1``, ``http://[::1]:8000/v1``); else UsageError."""
    from urllib.parse import urlsplit

    from workbench.llm._client import redact_url

    expected = "an http(s) URL with a host, such as http://127.0.0.1:8000/v1 or http://[::1]:8000/v1"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError as err:
        raise UsageError("--base-url", expected, f"{redact_url(url)!r} ({err})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError("--base-url", expected, repr(redact_url(url)))


def run(args: argparse.Namespace) -> int:
    import time

    started = time.monotonic()  # --deadline is the whole run's: reading the directory counts too
    from workbench.judges import make_judge
    from workbench.llm._client import MissingKey
    from workbench.datasets import load
    from workbench.judges._run import JUDGE_TABLES, check_scores_path

    check(args)
    check_scores_path(args.dir, args.out, force=args.force)  # before any work: the scores never replace another table
    tables = load(existing_dir(args.dir), names=JUDGE_TABLES, lazy=True, need=("runs", "compactions"))  # by batch
    try:
        check_prompt(args.prompt, args.judge)
    except ValueError:
        raise UsageError("--prompt", f"{DEFAULT_PROMPT} with --judge {args.judge} (only "
                         f"{', '.join(f'--judge {j}' for j in PROMPT_JUDGES)} sends another prompt)",
                         args.prompt) from None
    judge = make_judge(args.judge, model=args.model, base_url=args.base_url, cache=args.cache,
                       max_concurrency=args.concurrency, context_tokens=args.context_tokens, timeout=args.timeout,
                       max_attempts=args.max_attempts, refresh=args.refresh, offline=args.offline,
                       prompt=args.prompt)
    client = getattr(judge, "client", None)
    if client is not None:
        try:
            client.check_key()  # before anything is sent
        except MissingKey as err:
            print(f"workbench judge: no API key: set the environment variable {err.env} (a server on loopback "
                  "needs none; --offline uses only the cache)", file=sys.stderr)
            return 2
    if args.deadline is not None:
        args.deadline = max(0.001, args.deadline - (time.monotonic() - started))
    try:
        return _judge(args, tables, judge)
    finally:
        if client is not None:
            client.close()  # the pooled connections: no socket left for the interpreter to warn about


def _judge(args: argparse.Namespace, tables: dict[str, Any], judge: SourceJudge) -> int:
    from workbench.judges._run import judge_directory
    from workbench.llm._account import FAIL_FAST_AFTER
    from workbench.tables._frames import height

    if not args.quiet:  # said at once: building the requests (BM25 evidence) takes a while on a large log
        print(f"judge {judge.name}: {height(tables['compactions'])} compactions from {args.dir}"
              f"{f', {args.repeats} repeats' if args.repeats > 1 else ''}; retrieving evidence ...",
              file=sys.stderr, flush=True)
    report = judge_directory(tables, judge, args.out, repeats=args.repeats, tau=args.tau, deadline=args.deadline,
                             concurrency=args.concurrency, executor=args.executor, address=args.address,
                             progress=not args.quiet, fail_fast_after=FAIL_FAST_AFTER if args.fail_fast else 0)
    print(report)
    if report.nothing_usable:
        print("workbench judge: no request got a usable answer", file=sys.stderr)
        return 1
    if args.strict and report.null_scores:
        print(f"workbench judge: {report.null_scores} scores without a usable answer (--strict)", file=sys.stderr)
        return 1
    return 0


__all__ = ["add", "check", "run"]
