"""The ``workbench`` command line: one verb per step, from a log to the exported figures.

Verbs: ``validate | import | export | entries | judge | simulate | sample | label | agree |
adjudicate | figures``.

One error path: every verb checks its arguments before it does any work, and every
problem is one line on standard error, ``workbench VERB: what is wrong, and what is
expected`` (a bad input file says ``FILE:LINE: field 'x': expected ..., got ...``), exit 2;
nothing is written then. An unexpected exception is a bug: one line with a hint to rerun
with ``--debug`` for the traceback, exit 1. Every output is written to a temporary path
and moved into place.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from workbench import adapters, schema
from workbench.adapters.claude_code import TranscriptWarning
from workbench.schema import SchemaError
from workbench.tables import TRAJECTORY_TABLES, PartWriter, read_table, read_tables, table_file, write_jsonl

if TYPE_CHECKING:
    import polars as pl

# ---------------------------------------------------------------------------
# argument checks, shared by the verbs


def _a(what: str) -> str:
    return f"{'an' if what[:1] in 'aeiou' else 'a'} {what}"


def _file(path: str | Path, what: str = "file") -> Path:
    p = Path(path)
    if p.is_dir():
        raise SchemaError(f"is a directory, expected {_a(what)}", file=str(path))
    if not p.exists():
        raise SchemaError(f"no such file, expected {_a(what)}", file=str(path))
    return p


def _dir(path: str | Path, what: str = "directory of tables") -> Path:
    p = Path(path)
    if not p.exists():
        raise SchemaError(f"no such directory, expected {_a(what)}", file=str(path))
    if not p.is_dir():
        raise SchemaError(f"is a file, expected {_a(what)}", file=str(path))
    return p


def _tables(path: str, names: tuple[str, ...] | None = None, *, need: tuple[str, ...] = ("runs",)) -> dict:
    """The tables of a workbench directory, with the ones a verb needs present."""
    tables = read_tables(_dir(path), names)
    for name in need:
        if name not in tables:
            raise SchemaError(f"no {name} table ({name}.parquet or {name}.jsonl); expected a directory written "
                              "by `workbench import` or `workbench simulate`", file=path)
    return tables


def _scan_tables(path: str, names: tuple[str, ...], *, need: tuple[str, ...]) -> dict[str, pl.DataFrame | pl.LazyFrame]:
    """The named tables of a workbench directory, Parquet ones opened lazily (``scan_parquet``: read when and as far
    as a query needs them), JSONL ones read and validated."""
    import polars as pl

    directory = _dir(path)
    out: dict[str, pl.DataFrame | pl.LazyFrame] = {}
    for name in names:
        file = table_file(directory, name)
        if file is not None:
            out[name] = pl.scan_parquet(file) if file.suffix == ".parquet" else read_table(file, name)
    for name in need:
        if name not in out:
            raise SchemaError(f"no {name} table ({name}.parquet or {name}.jsonl); expected a directory written "
                              "by `workbench import` or `workbench simulate`", file=path)
    return out


def _at_least(option: str, value: float | None, low: float, what: str = "an integer") -> None:
    if value is None:
        return
    if (isinstance(value, float) and not math.isfinite(value)) or value < low:
        raise SchemaError(field=option, expected=f"{what} >= {low:g}", got=repr(value))


def _suffix(option: str, path: str, suffixes: tuple[str, ...]) -> None:
    if Path(path).suffix not in suffixes:
        raise SchemaError(field=option, expected=f"a file name ending in {' or '.join(suffixes)}", got=repr(path))


def _out_file(option: str, path: str, suffixes: tuple[str, ...]) -> None:
    _suffix(option, path, suffixes)
    if Path(path).is_dir():
        raise SchemaError(field=option, expected="a file name", got=f"the directory {path!r}")


# ---------------------------------------------------------------------------
# the verbs


def _log_path(args: argparse.Namespace, what: str = "log file") -> Path:
    """The FILE argument: a directory of sessions for the formats that read one, else a file that exists."""
    if args.format in adapters.DIRECTORY_FORMATS and Path(args.file).is_dir():
        return Path(args.file)
    return _file(args.file, what)


def _cmd_validate(args: argparse.Namespace) -> int:
    path = _log_path(args, "table file" if args.table else "log file")
    if args.table:
        frame = read_table(path, args.table)
        print(f"{path}: ok ({frame.height} {args.table} rows)")
        return 0
    _starting("validating", path)
    counted = adapters.import_log(path, None, args.format)
    counts = ", ".join(f"{counted.get(t, 0)} {t}" for t in TRAJECTORY_TABLES)
    print(f"{path}: ok ({counts})")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    path = _log_path(args)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise SchemaError(field="--out", expected="a directory", got=f"the file {args.out!r}")
    existing = _table_files(out)
    if existing and not args.force:
        raise SchemaError(field="--out", expected="an empty or new directory (or --force to replace its tables)",
                          got=f"{args.out!r}, which holds {', '.join(p.name for p in existing)}")
    _starting("importing", path)
    counted = adapters.import_log(path, out, args.format, entries=args.entries, replace=True)
    counts = ", ".join(f"{n} {name}" for name, n in counted.items())
    print(f"{args.file} -> {out}/ ({counts})")
    return 0


#: inputs at least this large say what is being done before the work starts (smaller ones finish within a second)
ANNOUNCE_BYTES = 5_000_000


def _starting(doing: str, path: Path) -> None:
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size
    if size >= ANNOUNCE_BYTES:
        print(f"{doing} {path} ({size / 1e6:.0f} MB) ...", file=sys.stderr, flush=True)


def _table_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.stem in schema.TABLES and p.suffix in (".parquet", ".jsonl"))


def _cmd_export(args: argparse.Namespace) -> int:
    _out_file("--out", args.out, (".jsonl",))
    tables = _tables(args.dir, TRAJECTORY_TABLES)
    out = adapters.write_trajectories(tables, args.out)
    print(f"{args.dir} -> {out} ({tables['runs'].height} runs)")
    return 0


def _cmd_entries(args: argparse.Namespace) -> int:
    from workbench.summary import write_entries

    directory = _dir(args.dir, "workbench directory")
    if not any((directory / f"compactions.{ext}").exists() for ext in ("parquet", "jsonl")):
        raise SchemaError("no compactions table (compactions.parquet or .jsonl)", file=str(directory))
    n = write_entries(directory)  # in batches: memory bounded by a batch, not the log
    print(f"{args.dir}/entries.parquet: {n} entries")
    return 0


def _cmd_judge(args: argparse.Namespace) -> int:
    import re

    import polars as pl
    import time
    from collections import Counter

    from workbench.judges import make_judge
    from workbench.judges.requests import compaction_requests, score_requests
    from workbench.llm.client import MissingKey
    from workbench.progress import Progress

    _check_judge_args(args)
    tables = _scan_tables(args.dir, TRAJECTORY_TABLES, need=("runs", "compactions"))  # read a batch at a time
    judge = make_judge(args.judge, model=args.model, base_url=args.base_url, cache=args.cache,
                       max_concurrency=args.concurrency, context_tokens=args.context_tokens, timeout=args.timeout,
                       max_attempts=args.max_attempts, refresh=args.refresh, offline=args.offline)
    client = getattr(judge, "client", None)
    if client is not None:
        try:
            client.check_key()  # before anything is sent
        except MissingKey as err:
            print(f"workbench judge: no API key: set the environment variable {err.env} (a server on loopback "
                  "needs none; --offline uses only the cache)", file=sys.stderr)
            return 2
    if not args.quiet:  # said at once: building the requests (BM25 evidence) takes a while on a large log
        print(f"judge {judge.name}: {_height(tables['compactions'])} compactions from {args.dir}"
              f"{f', {args.repeats} repeats' if args.repeats > 1 else ''}; retrieving evidence ...",
              file=sys.stderr, flush=True)
    by_request = client is not None and args.executor == "local"  # a Ray worker's requests are not seen here
    if by_request and args.judge == "openai":  # one request per entry
        from workbench.summary import parse

        total = sum(len(parse(t or "")) for batch in tables["compactions"].lazy().select("candidate_summary")
                    .collect_batches(chunk_size=20_000) for t in batch.get_column("candidate_summary").to_list())
    else:
        total = _height(tables["compactions"])
    accounts = []
    kept = pruned = n_scores = n_null = 0
    with Progress(total * args.repeats, f"judge {judge.name}", "requests" if by_request else "compactions",
                  enabled=not args.quiet) as bar, PartWriter("scores", args.out) as writer:
        if client is not None:
            client.on_event = bar.event if by_request else None
            if args.deadline is not None:
                client.run_deadline = time.monotonic() + args.deadline
        for batch in _run_batches(tables, JUDGE_BATCH_RUNS):  # requests of a batch of runs at a time: bounded memory
            requests = compaction_requests(batch)
            part, account = score_requests(requests, judge, repeats=args.repeats, concurrency=args.concurrency,
                                           progress=None if by_request else bar.advance, executor=args.executor,
                                           address=args.address)
            writer.add(part)  # to disk a batch at a time: the scores of a large log are not held in memory
            n_scores += part.height
            n_null += part.get_column("score").null_count()
            accounts.append(account)
            if args.tau is not None:
                from workbench.sjc import prune_compactions

                _, book = prune_compactions(batch["compactions"], part.filter(part.get_column("repeat") == 0),
                                            args.tau, entries={(r.run_id, r.boundary): r.entries for r in requests})
                kept += int(book.get_column("kept").sum())
                pruned += int(book.get_column("pruned").sum())
        out = writer.finish()
    accounting = pl.concat(accounts)
    usages = client.usages if client is not None else []
    failed = Counter(re.sub(r" \(after \d+ attempts?\)$", "", u.error) for u in usages if u.error)
    n_requests = len(usages) if client is not None else int(accounting.get_column("requests").sum())
    cached = sum(1 for u in usages if u.cached)
    reasons = ", ".join(f"{reason}: {n}" for reason, n in failed.most_common())
    print(f"{out}: {n_scores} scores by {judge.name} ({n_null} without a usable answer); {n_requests} requests, "
          f"{sum(1 for u in usages if not u.cached and u.attempts)} sent, {cached} answered from cache, "
          f"{sum(failed.values())} failed" + (f" ({reasons})" if reasons else ""))
    if args.tau is not None:
        print(f"tau={args.tau}: {kept} entries kept, {pruned} pruned")
    if n_scores and n_null == n_scores:
        print("workbench judge: no request got a usable answer", file=sys.stderr)
        return 1
    if args.strict and n_null:
        print(f"workbench judge: {n_null} scores without a usable answer (--strict)", file=sys.stderr)
        return 1
    return 0


#: runs whose judge requests are built and scored together (the requests of a whole large log do not fit)
JUDGE_BATCH_RUNS = 1000


def _height(frame: pl.DataFrame | pl.LazyFrame) -> int:
    import polars as pl

    return frame.height if isinstance(frame, pl.DataFrame) else int(frame.select(pl.len()).collect().item())


def _run_batches(tables: dict[str, pl.DataFrame | pl.LazyFrame], size: int) -> Iterator[dict[str, pl.DataFrame]]:
    """The trajectory tables of ``size`` runs at a time, each batch validated: memory holds a batch, not the log.

    Runs come in the order they first appear in the compactions table. Each table is read once for its
    ``run_id`` column, to learn the rows each run spans; a batch then reads only the rows between its runs'
    first and last (a slice, which a Parquet scan reads as a few row groups). When the tables keep each run's
    rows together and in the same run order (as ``import``, ``entries`` and ``simulate`` write them), the
    batches together read every table once, so judging grows linearly with the log; any other order is still
    read correctly, at the cost of wider slices.
    """
    import polars as pl

    spans = {name: (frame.lazy().select("run_id").with_row_index("_row").group_by("run_id")
                    .agg(pl.col("_row").min().alias("lo"), (pl.col("_row").max() + 1).alias("hi"))
                    .collect(engine="streaming"))
             for name, frame in tables.items() if name in TRAJECTORY_TABLES}
    order = spans["compactions"].sort("lo").get_column("run_id")
    for start in range(0, max(1, len(order)), size):
        ids = order.slice(start, size)
        batch = {}
        for name, rows in spans.items():
            frame = tables[name].lazy()
            where = rows.filter(pl.col("run_id").is_in(ids.implode()))
            if where.height:
                lo, hi = int(where.get_column("lo").min()), int(where.get_column("hi").max())  # type: ignore[arg-type]
                frame = frame.slice(lo, hi - lo).filter(pl.col("run_id").is_in(ids.implode()))
            else:
                frame = frame.head(0)
            batch[name] = schema.validate(name, frame.collect())
        yield batch


def _check_judge_args(args: argparse.Namespace) -> None:
    """Every judge option checked before anything is read or sent."""
    import math

    if Path(args.out).suffix not in (".parquet", ".jsonl", ".ndjson"):
        raise SchemaError(field="--out", expected="a .parquet or .jsonl file name", got=repr(args.out))
    if args.tau is not None and not (math.isfinite(args.tau) and 0.0 <= args.tau <= 1.0):
        raise SchemaError(field="--tau", expected="a threshold in [0, 1]", got=repr(args.tau))
    for name in ("concurrency", "max_attempts", "repeats"):
        if getattr(args, name) < 1:
            raise SchemaError(field=f"--{name.replace('_', '-')}", expected="an integer >= 1", got=repr(getattr(args, name)))
    for name in ("timeout", "deadline"):
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise SchemaError(field=f"--{name}", expected="a number of seconds > 0", got=repr(value))
    if args.offline and args.refresh:
        raise SchemaError(field="--offline", expected="not together with --refresh", got="both")


def _cmd_simulate(args: argparse.Namespace) -> int:
    from workbench.progress import Progress
    from workbench.sim.dataset import DatasetConfig, build
    from workbench.sim.episode import POLICIES

    _at_least("--tasks", args.tasks, 1)
    _at_least("--runs", args.runs, 1)
    _at_least("--seed", args.seed, 0)
    if args.workers is not None:
        _at_least("--workers", args.workers, 1)
    try:
        budgets = tuple(int(b) for b in args.budgets.split(","))
    except ValueError:
        raise SchemaError(field="--budgets", expected="comma-separated positive integers", got=repr(args.budgets)) from None
    if not budgets or min(budgets) < 1:
        raise SchemaError(field="--budgets", expected="comma-separated positive integers", got=repr(args.budgets))
    policies = tuple(args.policies.split(",")) if args.policies else POLICIES
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        raise SchemaError(field="--policies", expected=f"names from {list(POLICIES)}", got=", ".join(unknown))
    if _table_files(Path(args.out)) and not args.force:
        raise SchemaError(field="--out", expected="an empty or new directory (or --force to replace its tables)",
                          got=repr(args.out))
    cfg = DatasetConfig(tasks=args.tasks, runs=args.runs, budgets=budgets, policies=policies, seed=args.seed)
    total = cfg.tasks * cfg.runs * len(budgets) * len(policies)
    print(f"simulating {total} episodes ({cfg.tasks} tasks x {cfg.runs} runs x {len(budgets)} budgets x "
          f"{len(policies)} policies) into {args.out} ...", file=sys.stderr, flush=True)
    with Progress(total, "simulate", "episodes", enabled=not args.quiet) as bar:
        tables = build(args.out, cfg, workers=args.workers, progress=bar.advance, executor=args.executor,
                       address=args.address)
    counts = ", ".join(f"{frame.height} {name}" for name, frame in tables.items())
    print(f"{args.out}/: {counts}")
    return 0


def _cmd_sample(args: argparse.Namespace) -> int:
    from workbench.annotate.sampling import sample_items

    _at_least("--n", args.n, 1)
    _at_least("--seed", args.seed, 0)
    _out_file("--out", args.out, (".jsonl",))
    tables = _scan_tables(args.dir, ("runs", "steps", "compactions", "entries"), need=("runs", "compactions"))
    runs = tables["runs"].lazy().collect()
    tables["runs"] = runs
    if args.method is not None and not (runs.get_column("method") == args.method).any():
        present = sorted(m for m in runs.get_column("method").unique().to_list() if m is not None)
        raise SchemaError(field="--method", expected=f"a method the runs have: {present}", got=repr(args.method))
    if args.budget is not None and not (runs.get_column("budget") == args.budget).any():
        present = sorted(b for b in runs.get_column("budget").unique().to_list() if b is not None)
        raise SchemaError(field="--budget", expected=f"a budget the runs have: {present or 'none'}",
                          got=repr(args.budget))
    strata = tuple(s for s in args.strata.split(",") if s)
    allowed = ("section", "outcome", "scenario_id", "subset", "method", "boundary")
    bad = [s for s in strata if s not in allowed]
    if bad:
        raise SchemaError(field="--strata", expected=f"comma-separated names from {list(allowed)}", got=", ".join(bad))
    items, report = sample_items(tables, args.n, strata, args.seed, method=args.method, budget=args.budget)
    if not items:
        raise SchemaError("no entries to sample (no reasoning entries in the selected runs)", file=args.dir)
    write_jsonl(items, Path(args.out))
    print(f"{args.out}: {report.message()}")
    if report.short:
        print("warning: some strata had fewer items than asked (listed above)", file=sys.stderr)
    return 0


def _cmd_label(args: argparse.Namespace) -> int:
    from workbench.annotate import AnnotationStore, load_sample, terminal_label

    _at_least("--round", args.round, 1)
    _check_annotator(args.annotator)
    items = load_sample(_file(args.sample, "sample (.jsonl)"))
    terminal_label(items, AnnotationStore(args.store), args.annotator, args.round, args.field)
    return 0


def _check_annotator(name: str) -> None:
    from workbench.annotate.store import check_annotator

    try:
        check_annotator(name)
    except SchemaError as err:
        raise SchemaError(field="--annotator", expected=err.expected, got=err.got) from None


def _cmd_agree(args: argparse.Namespace) -> int:
    import polars as pl

    from workbench.annotate import AnnotationStore
    from workbench.annotate.adjudication import adjudication_requests
    from workbench.metrics.agreement import agreement_pairs, disagreements

    _at_least("--n-boot", args.n_boot, 1)
    if args.out:
        _out_file("--out", args.out, (".jsonl",))
    store = _dir(args.store, "annotation store")
    labels = AnnotationStore(store).labels()
    labels = labels.filter(pl.col("annotator") != "adjudicated")
    if not labels.height:
        raise SchemaError("no labels in the store", file=str(Path(args.store) / "labels"))
    clusters = _sample_scenarios([Path(p) for p in args.sample] if args.sample
                                 else sorted((store / "samples").glob("*.jsonl")))
    table, skipped = agreement_pairs(labels, clusters or None, n_boot=args.n_boot)
    if args.by is not None:
        keep = "within annotator" if args.by == "round" else "between annotators"
        table, skipped = table.filter(pl.col("comparison") == keep), skipped.filter(pl.col("comparison") == keep)
    print("intervals resample " + ("scenarios (from the sample's scenario_id)" if clusters else
                                   "items (no sample with scenario_id found; pass --sample)"))
    for (field, comparison, group, a, b), pair in table.group_by("field", "comparison", "group", "a", "b",
                                                                 maintain_order=True):
        stat = {r["statistic"]: r for r in pair.iter_rows(named=True)}
        ag, ka = stat["agreement"], stat["kappa"]
        what = f"{group}: round {a} vs round {b}" if comparison == "within annotator" else f"{group}: {a} vs {b}"
        print(f"{field:<10} {comparison:<18} {what}: n={ag['n']} kappa={ka['estimate']:.3f} "
              f"[{ka['ci_low']:.3f}, {ka['ci_high']:.3f}] agreement={ag['estimate']:.3f} "
              f"[{ag['ci_low']:.3f}, {ag['ci_high']:.3f}] disagreements={ag['disagreements']}")
    for row in skipped.iter_rows(named=True):
        print(f"{row['field']:<10} {row['comparison']:<18} {row['group']}: not compared ({row['reason']})")
    dis = disagreements(labels, by=args.by or "round")
    out = Path(args.out) if args.out else Path(args.store) / "adjudication.jsonl"
    write_jsonl(adjudication_requests(dis), out)
    print(f"{out}: {dis.height} disagreement(s) to adjudicate (fill 'value', then `workbench adjudicate`)")
    return 0


def _sample_scenarios(paths: list[Path]) -> dict[str, str]:
    """item_id -> scenario_id from sample files (the clusters of agreement intervals)."""
    from workbench.annotate.ui import load_sample

    out: dict[str, str] = {}
    for path in paths:
        for item in load_sample(_file(path, "sample (.jsonl)")):
            if item.get("scenario_id") is not None:
                out[item["item_id"]] = str(item["scenario_id"])
    return out


def _cmd_adjudicate(args: argparse.Namespace) -> int:
    from workbench.annotate import AnnotationStore
    from workbench.annotate.adjudication import adjudicated_labels

    records = adjudicated_labels(_file(args.file, "adjudication file (.jsonl)"))
    n = AnnotationStore(args.store).add_many(records)
    print(f"{n} adjudicated label(s) added")
    return 0


def _cmd_figures(args: argparse.Namespace) -> int:
    from workbench.datasets import ensure_testbed
    from workbench.notebooks import parse_param, run_all

    _at_least("--timeout", args.timeout, 1)
    notebooks = _dir(args.notebooks, "directory of notebooks")
    try:
        parameters = dict(parse_param(p) for p in args.param)
    except ValueError as err:
        raise SchemaError(field="--param", expected="NAME=VALUE", got=str(err).split("got ")[-1]) from None
    if args.only:
        missing = [n for n in args.only if not (notebooks / f"{n}.ipynb").exists()]
        if missing:
            raise SchemaError(field="--only", expected=f"notebooks in {notebooks}/", got=", ".join(missing))
    ensure_testbed(args.data)
    return run_all(notebooks, Path(args.build), timeout=args.timeout, parameters=parameters or None,
                   names=args.only)


# ---------------------------------------------------------------------------
# the parser: one function per verb


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``workbench VERB: what is wrong`` and exit 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)


def _verb(sub: argparse._SubParsersAction, name: str, summary: str) -> argparse.ArgumentParser:
    """A verb's parser: its one-line summary in ``workbench --help``, every default shown in its own help."""
    return sub.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                          formatter_class=argparse.ArgumentDefaultsHelpFormatter)


def _add_validate(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "validate", "check a trajectory log (or a table file) and report the first error")
    p.add_argument("file", help="the log (JSONL, tau-bench JSON) or, with --table, one table file")
    p.add_argument("--format", default="auto", choices=["auto", *adapters.FORMATS], help="log format")
    p.add_argument("--table", choices=sorted(schema.TABLES), help="validate a single table file instead of a log")
    p.set_defaults(func=_cmd_validate)


def _add_import(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "import", "load a trajectory log into Parquet tables")
    p.add_argument("file", help="the log to import")
    p.add_argument("--out", required=True, help="directory for runs/steps/compactions.parquet")
    p.add_argument("--format", default="auto", choices=["auto", *adapters.FORMATS], help="log format")
    p.add_argument("--entries", action="store_true", help="also split candidate summaries into entries.parquet")
    p.add_argument("--force", action="store_true", help="replace the tables already in --out (the whole set: "
                   "tables the new log does not have are removed, never mixed with another log's)")
    p.set_defaults(func=_cmd_import)


def _add_export(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "export", "write a directory of tables back as trajectory JSONL")
    p.add_argument("dir", help="a workbench directory")
    p.add_argument("--format", default="jsonl", choices=["jsonl"], help="the trajectory JSONL format")
    p.add_argument("--out", required=True, help="the .jsonl file to write")
    p.set_defaults(func=_cmd_export)


def _add_entries(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "entries", "split the candidate summaries of DIR into entries.parquet")
    p.add_argument("dir", help="a workbench directory with a compactions table")
    p.set_defaults(func=_cmd_entries)


def _add_judge(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "judge", "score every summary entry of DIR with a source judge")
    p.add_argument("dir", help="a workbench directory (runs, steps, compactions)")
    p.add_argument("--judge", default="lexical", choices=["lexical", "jev", "openai"],
                   help="lexical is offline; jev and openai call a server through the cached client")
    p.add_argument("--model", help="model name sent to the server (judge default when not given)")
    p.add_argument("--base-url", dest="base_url", help="server root, e.g. http://127.0.0.1:8000/v1 for a local "
                   "OpenAI-compatible server (no key needed on loopback)")
    p.add_argument("--cache", default=".cache/llm", help="response cache directory (re-runs send nothing)")
    p.add_argument("--refresh", action="store_true", help="ignore cached answers (new answers are still cached)")
    p.add_argument("--offline", action="store_true", help="send nothing: answer from the cache only; a request "
                   "not in the cache gets a null score with reason 'not in cache'")
    p.add_argument("--tau", type=float, help="also report what SJC pruning keeps at this threshold")
    p.add_argument("--concurrency", type=int, default=4, help="requests in flight at once")
    _executor_options(p, "compactions")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds one attempt may take, body included")
    p.add_argument("--max-attempts", dest="max_attempts", type=int, default=5,
                   help="attempts per request (429, 5xx, timeouts and unusable answers are retried)")
    p.add_argument("--deadline", type=float, help="seconds the whole run may take; requests left then get a "
                   "null score with reason 'deadline' and what was answered is written")
    p.add_argument("--repeats", type=int, default=1, help="score every request N times (SJC Section 5.4); "
                   "one scores row per repeat")
    p.add_argument("--strict", action="store_true", help="exit 1 when any score has no usable answer")
    p.add_argument("--context-tokens", dest="context_tokens", type=int, help="split requests above this size")
    p.add_argument("--quiet", action="store_true", help="no progress on standard error")
    p.add_argument("--out", required=True, help="scores table (.parquet or .jsonl)")
    p.set_defaults(func=_cmd_judge)


def _add_simulate(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "simulate", "generate the invoice testbed dataset (with ground truth)")
    p.add_argument("--out", required=True, help="directory for the tables")
    p.add_argument("--tasks", type=int, default=120, help="invoice tasks")
    p.add_argument("--runs", type=int, default=4, help="replicates per task")
    p.add_argument("--budgets", default="24,48,96", help="comma-separated budgets in context units")
    p.add_argument("--policies", help="comma-separated policies (default: all)")
    p.add_argument("--seed", type=int, default=0, help="every random draw derives from it")
    p.add_argument("--workers", type=int, default=None, help="processes (default: the machine's cores)")
    _executor_options(p, "blocks of tasks (episode seeds)")
    p.add_argument("--force", action="store_true", help="replace the tables already in --out")
    p.add_argument("--quiet", action="store_true", help="no progress on standard error")
    p.set_defaults(func=_cmd_simulate)


def _add_sample(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "sample", "draw a balanced validation sample for labeling")
    p.add_argument("dir", help="a workbench directory")
    p.add_argument("--n", type=int, default=300, help="items to draw")
    p.add_argument("--strata", default="section,outcome", help="comma-separated columns to balance over")
    p.add_argument("--seed", type=int, default=0, help="the sample is the same for the same seed")
    p.add_argument("--method", help="only runs of this method (e.g. prompting)")
    p.add_argument("--budget", type=int, help="only runs at this budget")
    p.add_argument("--out", required=True, help="the sample (.jsonl)")
    p.set_defaults(func=_cmd_sample)


def _add_label(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "label", "label a sample in the terminal")
    p.add_argument("sample", help="a sample written by `workbench sample`")
    p.add_argument("--annotator", required=True, help="your name (letters, digits, _ . -)")
    p.add_argument("--round", type=int, default=1, help="labeling round (1, 2 ...)")
    p.add_argument("--field", default="support", choices=["support", "correct"], help="what to label")
    p.add_argument("--store", default="annotations", help="the annotation store")
    p.set_defaults(func=_cmd_label)


def _add_agree(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "agree", "agreement per field; writes the disagreements for adjudication")
    p.add_argument("store", nargs="?", default="annotations", help="the annotation store")
    p.add_argument("--by", default=None, choices=["round", "annotator"],
                   help="only one kind: each annotator's rounds (round) or annotators within a round (annotator)")
    p.add_argument("--sample", action="append",
                   help="sample file(s) whose scenario_id clusters the intervals (default: STORE/samples/*.jsonl)")
    p.add_argument("--n-boot", dest="n_boot", type=int, default=2000, help="bootstrap resamples per interval")
    p.add_argument("--out", help="the adjudication file (default: STORE/adjudication.jsonl)")
    p.set_defaults(func=_cmd_agree)


def _add_adjudicate(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "adjudicate", "add the filled-in adjudication file to the store (the gold set)")
    p.add_argument("file", help="the adjudication file with 'value' filled in")
    p.add_argument("--store", default="annotations", help="the annotation store")
    p.set_defaults(func=_cmd_adjudicate)


def _executor_options(p: argparse.ArgumentParser, unit: str) -> None:
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help=f"where the work runs: here, or sharded by {unit} over Ray (the scale extra)")
    p.add_argument("--address", default=None,
                   help="with --executor ray: the cluster ('auto', or ray://HEAD:10001); default a local Ray")


def _add_figures(sub: argparse._SubParsersAction) -> None:
    p = _verb(sub, "figures", "execute every notebook and export figures/ (the main job)")
    p.add_argument("--notebooks", default="notebooks", help="directory of .ipynb notebooks")
    p.add_argument("--build", default="build/notebooks", help="where executed copies go")
    p.add_argument("--timeout", type=int, default=1200, help="seconds per cell")
    p.add_argument("--data", default="data/testbed", help="the default testbed, generated here if missing")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="set a notebook parameter in every notebook (repeatable; VALUE is read as a Python "
                        "literal when it is one, else as text), as papermill -p does")
    p.add_argument("--only", action="append", default=None, metavar="NAME",
                   help="run only this notebook (repeatable; the name without .ipynb)")
    p.set_defaults(func=_cmd_figures)


VERBS = (_add_validate, _add_import, _add_export, _add_entries, _add_judge, _add_simulate, _add_sample,
         _add_label, _add_agree, _add_adjudicate, _add_figures)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="workbench", description="Compaction Workbench: one verb per step, from an agent log "
                     "to the exported figures.")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="VERB",
                                title="verbs (workbench VERB --help for each)")
    for add in VERBS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    verb = f"workbench {args.command}"
    previous = _on_sigterm(_terminate)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", TranscriptWarning)
            warnings.showwarning = lambda message, *_: print(f"{verb}: warning: {message}", file=sys.stderr)
            return int(args.func(args))
    except SchemaError as err:
        print(f"{verb}: {err}", file=sys.stderr)  # FILE:LINE: field 'x': expected ..., got ...
        return 2
    except OSError as err:
        print(f"{verb}: {err.strerror or err}{f': {err.filename}' if err.filename else ''}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{verb}: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print(f"{verb}: terminated (SIGTERM); nothing half-written left behind", file=sys.stderr)
        return 143
    except Exception as err:  # noqa: BLE001 - a bug: one line, the traceback on request
        if args.debug:
            raise
        text = " ".join(str(err).split())[:200]
        print(f"{verb}: internal error ({type(err).__name__}: {text}); this is a bug -- rerun with --debug "
              "for the traceback", file=sys.stderr)
        return 1
    finally:
        _on_sigterm(previous)


class Terminated(BaseException):
    """SIGTERM (``kill``, a batch system's time limit) raised as an exception: the verb unwinds like Ctrl-C, so
    its staging directories and temporary files are removed instead of left beside the output."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def _on_sigterm(handler: object) -> object:
    """Install ``handler`` for SIGTERM (from the main thread only; elsewhere nothing changes); the previous one."""
    import signal
    import threading

    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)  # type: ignore[arg-type]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
