"""``workbench explore``: a static HTML site of a directory's runs and compactions (:func:`workbench.explore.build_site`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.args import UsageError, at_least, existing_dir, verb


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "explore", "write a static site to look at runs, compactions, entries and their evidence")
    p.add_argument("data", help="a directory of tables (workbench import / simulate), or a log in any format")
    p.add_argument("--out", required=True, help="directory the site is written to: new, empty, or a site this "
                   "command wrote (replaced whole); anything else is refused")
    p.add_argument("--scores", help="a scores table (Parquet or JSONL) to colour entries by; default: DATA's own")
    p.add_argument("--labels", help="an annotation store (workbench label) whose gold labels mark entries; "
                   "default: DATA/annotations when an import put labels there, else DATA's labels table, if any")
    p.add_argument("--judge", help="whose scores to show when several judges scored (default: lexical, else the first)")
    p.add_argument("--tau", type=float, default=0.5, help="score below which an entry is pruned")
    p.add_argument("--runs", nargs="+", metavar="ID", help="only these runs")
    p.add_argument("--method", help="only runs of this method")
    p.add_argument("--budget", type=int, help="only runs at this budget")
    p.add_argument("--limit", type=int, help="at most this many runs (after the filters, in table order)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench._util.atomic import check_owned_dir
    from workbench.errors import SelectionError
    from workbench.datasets import derive_missing, load
    from workbench.explore import build_site
    from workbench.explore._site import MARKER

    at_least("--limit", args.limit, 1)
    if not 0.0 <= args.tau <= 1.0:
        raise UsageError("--tau", "a number in [0, 1]", repr(args.tau))
    inputs = [p for p in (args.data, args.scores, args.labels) if p]
    check_owned_dir(args.out, MARKER, inputs=inputs)  # before any work: a refused --out costs nothing
    # a directory's tables as scans: the site is written a batch of runs at a time (memory flat in the log's size);
    # what the data lacks (entries, scores and their evidence) is made a batch at a time too, for the runs shown only
    # (issue 82: deriving them for the whole log first held every method's entries and scores at once)
    tables = load(args.data, lazy=True)
    if args.scores:
        from workbench.tables._files import read_table

        tables["scores"] = read_table(args.scores, "scores", lazy=True)
    derive = [name for name in ("entries", "scores") if name not in tables]
    if derive:
        derive_missing(tables, wanted=())  # only the runs' token columns, from one streaming pass over the steps
    labels = None
    from workbench._util.project import label_files

    own_store = Path(args.data) / "annotations"
    if not args.labels and any(f.is_relative_to(own_store) for f in label_files(args.data)):
        # the labels an import put in the data's own store (issue 79: they were shown only with --labels)
        args.labels = str(own_store)
        print(f"labels: {own_store} (the data's own annotation store; --labels for another)")
    if args.labels:
        from workbench.annotate import AnnotationStore
        from workbench.tables._labels import gold_labels

        if not (existing_dir(args.labels, "annotation store") / "labels").is_dir():
            raise UsageError("--labels", "an annotation store (a directory holding labels/, as workbench label "
                             "writes it)", repr(args.labels))
        store = AnnotationStore(args.labels, read_only=True)  # looking at labels changes nothing of the store
        labels = gold_labels(store.labels())
    try:
        report = build_site(tables, args.out,
                            labels=labels, judge=args.judge, tau=args.tau, run_ids=args.runs, method=args.method,
                            budget=args.budget, limit=args.limit, title=Path(args.data).name,
                            inputs=inputs, derive=derive)
    except SelectionError as err:  # the library names what was asked; the option is the command line's
        raise UsageError(f"--{err.what}", err.expected, err.got) from None
    print(report)
    return 0


__all__ = ["add", "run"]
