"""``workbench sample | label | agree | adjudicate``: validation samples, labels, agreement, the gold set."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.args import UsageError, at_least, existing_dir, existing_file, out_file, verb
from workbench.errors import SchemaError
from workbench.tables._vocabulary import ANNOTATOR_RULE


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "sample", "draw a balanced validation sample for labeling")
    p.add_argument("dir", help="a workbench directory")
    p.add_argument("--n", type=int, default=300, help="items to draw")
    p.add_argument("--strata", default="section,outcome", help="comma-separated columns to balance over")
    p.add_argument("--seed", type=int, default=0, help="the sample is the same for the same seed")
    p.add_argument("--method", help="only runs of this method (e.g. prompting)")
    p.add_argument("--budget", type=int, help="only runs at this budget")
    p.add_argument("--sections", help="comma-separated sections to draw from (default by summary schema: "
                   "OpenClaw's Decisions and Open TODOs, Claude Code's history and forward roles)")
    p.add_argument("--roles", help="comma-separated roles to draw from (history, forward, constraints, "
                   "identifiers, user_messages, other)")
    p.add_argument("--ids", help="draw exactly the items of this earlier sample (.jsonl with item_id), with "
                   "today's evidence; --n, --strata and --seed are then not used")
    p.add_argument("--evidence", help="the evidence table a judge run wrote beside its scores (workbench judge ... "
                   "--out S.parquet writes S.evidence.parquet); default: DIR's own evidence table, else the passages "
                   "are retrieved as the judge retrieves them")
    p.add_argument("--out", required=True, help="the sample (.jsonl)")
    p.set_defaults(func=run_sample)

    p = verb(sub, "label", "label a sample in the terminal")
    p.add_argument("sample", help="a sample written by `workbench sample`")
    p.add_argument("--annotator", required=True, help=f"your name: {ANNOTATOR_RULE}")
    p.add_argument("--round", type=int, default=1, help="labeling round (1, 2 ...)")
    p.add_argument("--field", default="support", choices=["support", "correct"], help="what to label")
    p.add_argument("--store", default="annotations", help="the annotation store")
    p.set_defaults(func=run_label)

    p = verb(sub, "agree", "agreement per field; writes the disagreements for adjudication")
    p.add_argument("store", nargs="?", default="annotations", help="the annotation store")
    p.add_argument("--by", default=None, choices=["round", "annotator"],
                   help="only one kind: each annotator's rounds (round) or annotators within a round (annotator)")
    p.add_argument("--sample", action="append",
                   help="sample file(s) whose scenario_id clusters the intervals (default: every .jsonl file in STORE/samples/)")
    p.add_argument("--n-boot", dest="n_boot", type=int, default=2000, help="bootstrap resamples per interval")
    p.add_argument("--out", help="the adjudication file (default: STORE/adjudication.jsonl)")
    p.set_defaults(func=run_agree)

    p = verb(sub, "adjudicate", "decide the disagreements (--decide) and add the decisions to the store (the gold set)")
    p.add_argument("file", help="the adjudication file `workbench agree` wrote")
    p.add_argument("--store", default="annotations", help="the annotation store")
    p.add_argument("--decide", action="store_true", help="decide the open disagreements first, one at a time in the "
                   "terminal (the labeler's pager and keys, with each annotator's value and note)")
    p.add_argument("--adjudicator", help=f"who decides (with --decide): {ANNOTATOR_RULE}")
    p.add_argument("--field", choices=["support", "correct"], help="only this field (default: every field with "
                   "open disagreements)")
    p.add_argument("--sample", action="append", help="sample file(s) whose items' evidence and task are shown "
                   "(default: every .jsonl file in STORE/samples/)")
    p.set_defaults(func=run_adjudicate)


def run_sample(args: argparse.Namespace) -> int:
    from workbench.annotate._sampling import sample_items
    from workbench.errors import SelectionError
    from workbench._util.atomic import write_jsonl
    from workbench.datasets import load

    at_least("--n", args.n, 1)
    at_least("--seed", args.seed, 0)
    out_file("--out", args.out, (".jsonl",))
    tables = load(existing_dir(args.dir), names=("runs", "steps", "compactions", "entries", "evidence"), lazy=True,
                  need=("runs", "compactions"))
    if args.evidence:
        from workbench.tables._files import read_table

        tables["evidence"] = read_table(existing_file(args.evidence, "evidence table"), "evidence", lazy=True)
    strata = tuple(s for s in args.strata.split(",") if s)
    allowed = ("section", "outcome", "scenario_id", "subset", "method", "boundary")
    bad = [s for s in strata if s not in allowed]
    if bad:
        raise UsageError("--strata", f"comma-separated names from {list(allowed)}", ", ".join(bad))
    roles = tuple(r for r in args.roles.split(",") if r) if args.roles else None
    from workbench.summaries._grammar import ROLES

    if roles is not None and (bad_roles := [r for r in roles if r not in ROLES]):
        raise UsageError("--roles", f"comma-separated roles from {list(ROLES)}", ", ".join(bad_roles))
    sections = tuple(x.strip() for x in args.sections.split(",") if x.strip()) if args.sections else "auto"
    only_ids = None
    if args.ids:
        from workbench.annotate._samples import load_sample

        only_ids = [item["item_id"] for item in load_sample(existing_file(args.ids, "earlier sample (.jsonl)"))]
    try:
        items, report = sample_items(tables, args.n, strata, args.seed, method=args.method, budget=args.budget,
                                     sections=sections, roles=roles, only_ids=only_ids)
    except SelectionError as err:  # the library says what was asked and what there is; the option is ours
        raise UsageError(f"--{err.what}", err.expected, err.got) from None
    if not items:
        from workbench.annotate._sampling import selection_help
        from workbench.summaries._entries import entries_table

        entries = tables.get("entries")
        if entries is None:
            entries = entries_table(tables["compactions"].lazy().collect())
        asked = (f"sections {list(sections)}" if sections != "auto" else "") + \
            (f"{' and ' if sections != 'auto' else ''}roles {list(roles)}" if roles else "")
        raise SchemaError(f"no entries to sample with {asked or 'the default selection of each summary schema'} "
                          f"in the selected runs; there are {selection_help(entries)}", file=args.dir)
    write_jsonl(items, Path(args.out))
    print(f"{args.out}: {report.message()}")
    if report.short:
        print("warning: some strata had fewer items than asked (listed above)", file=sys.stderr)
    return 0


def run_label(args: argparse.Namespace) -> int:
    from workbench.annotate import AnnotationStore, load_sample, terminal_label

    at_least("--round", args.round, 1)
    _name("--annotator", args.annotator)
    items = load_sample(existing_file(args.sample, "sample (.jsonl)"))
    store = AnnotationStore(args.store)
    store.keep_sample(args.sample)  # agree and adjudicate find the items' evidence without being told
    terminal_label(items, store, args.annotator, args.round, args.field)
    return 0


def run_agree(args: argparse.Namespace) -> int:
    from workbench.annotate._adjudication import prepare

    at_least("--n-boot", args.n_boot, 1)
    if args.out:
        out_file("--out", args.out, (".jsonl",))
    store = existing_dir(args.store, "annotation store")
    print(prepare(store, samples=[existing_file(p, "sample (.jsonl)") for p in args.sample or ()], by=args.by,
                  out=args.out, n_boot=args.n_boot))
    return 0


def _name(option: str, name: str) -> None:
    """A person's name given to ``option`` follows the store's rule, else a usage error naming the option."""
    from workbench.tables._vocabulary import check_annotator

    try:
        check_annotator(name)
    except SchemaError as err:
        raise UsageError(option, err.expected or "a name", err.got or repr(name)) from None


def run_adjudicate(args: argparse.Namespace) -> int:
    from workbench.annotate._adjudication import apply

    path = existing_file(args.file, "adjudication file (.jsonl)")
    if args.decide:
        _decide(path, args)
    elif args.adjudicator or args.field or args.sample:
        raise UsageError("--adjudicator/--field/--sample", "them only with --decide", "no --decide")
    print(apply(path, args.store))
    return 0


def _decide(path: Path, args: argparse.Namespace) -> None:
    """The terminal adjudication of every field with open disagreements (or ``--field``'s)."""
    from workbench.annotate._adjudication import read_adjudication
    from workbench.annotate._samples import sample_index
    from workbench.annotate._terminal import terminal_adjudicate

    if not args.adjudicator:
        raise UsageError("--adjudicator", f"a name with --decide ({ANNOTATOR_RULE})", "none")
    _name("--adjudicator", args.adjudicator)
    records = read_adjudication(path)
    fields = [args.field] if args.field else sorted({r["field"] for r in records if r.get("value") is None})
    if not records:
        print(f"{path}: no disagreements")
    elif not fields:
        print(f"{path}: every disagreement is decided")
    items = sample_index([existing_file(p, "sample (.jsonl)") for p in args.sample or ()], store=args.store)
    missing = sorted({r["item_id"] for r in records if r["field"] in fields} - set(items))
    if fields and missing:
        print(f"warning: {len(missing)} disagreement(s) have no sample item (first {missing[0]!r}): their task and "
              f"evidence cannot be shown; pass --sample SAMPLE.jsonl (looked in {args.store}/samples/ and the samples "
              f"{args.store} was labelled on)", file=sys.stderr)
    for field in fields:
        terminal_adjudicate(path, field, adjudicator=args.adjudicator, items=list(items.values()), stdin=sys.stdin,
                            stdout=sys.stdout)


__all__ = ["add", "run_adjudicate", "run_agree", "run_label", "run_sample"]
