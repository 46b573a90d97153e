"""``workbench labelstudio export | import``: a sample as a Label Studio project (tasks and labeling config) and a
Label Studio JSON export back into the annotation store (:mod:`workbench.annotate._labelstudio`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from workbench.cli.args import DefaultsHelp, UsageError, at_least, existing_file, out_file, verb
from workbench.errors import SchemaError


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "labelstudio", "label a sample in Label Studio: export its tasks and config, import its labels")
    steps = p.add_subparsers(dest="step", required=True, metavar="STEP",
                             help="export (a sample to Label Studio) or import (its export into the store)")
    e = steps.add_parser("export", help="the sample as Label Studio tasks (JSON) and its labeling config (XML)",
                         formatter_class=DefaultsHelp)
    e.add_argument("sample", help="a sample (workbench sample ... --out SAMPLE.jsonl)")
    e.add_argument("--field", default="support", choices=["support", "correct"],
                   help="what to label (one field per Label Studio project)")
    e.add_argument("--out", required=True, help="the tasks file (.json) to import into Label Studio")
    e.add_argument("--config", help="where the labeling config goes (default: OUT with .xml)")
    e.add_argument("--predictions", metavar="SCORES", help="a judge's scores (workbench judge ... --out "
                   "SCORES.parquet) shown as Label Studio predictions, pre-selected, and said in each task (support "
                   "only; not for blind labeling: by default a task holds no score and no ground truth)")
    e.add_argument("--judge", help="with --predictions: which judge of SCORES (default: its only one)")
    e.add_argument("--tau", type=float, default=0.5, help="with --predictions: the score from which the judge's "
                   "choice is 'supported'")
    e.set_defaults(func=run_export)
    i = steps.add_parser("import", help="a Label Studio JSON export into the annotation store",
                         formatter_class=DefaultsHelp)
    i.add_argument("export", help="Label Studio's JSON export of the project")
    i.add_argument("--store", default="annotations", help="the annotation store")
    i.add_argument("--round", type=int, default=1, help="labeling round the labels belong to")
    i.add_argument("--annotator-from", dest="annotator_from", default="email", choices=["email", "name"],
                   help="name each label's annotator by Label Studio's e-mail or first and last names")
    i.add_argument("--annotators", metavar="USERS", help="Label Studio's users (GET /api/users saved as JSON), "
                   "to name annotators when the export gives bare user ids (its plain JSON export does)")
    i.add_argument("--sample", help="the sample the project was made from: labels of other items are refused, and "
                   "the store keeps the sample's path for agree and adjudicate")
    i.set_defaults(func=run_import)


def run_export(args: argparse.Namespace) -> int:
    from workbench.annotate._labelstudio import check_export_paths, labeling_config, to_labelstudio
    from workbench.annotate._samples import load_sample
    from workbench._util.atomic import atomic_write

    out_file("--out", args.out, (".json",))
    config = Path(args.config) if args.config else Path(args.out).with_suffix(".xml")
    if config.suffix != ".xml":
        raise UsageError("--config", "an .xml file name", repr(args.config))
    check_export_paths(args.out, config, [args.sample])
    if args.predictions is None and (args.judge is not None or args.tau != 0.5):
        raise UsageError("--judge/--tau", "them only with --predictions", "no --predictions")
    if args.predictions is not None and args.field != "support":
        raise UsageError("--predictions", "--field support (a judge scores support)", f"--field {args.field}")
    if not 0 <= args.tau <= 1:
        raise UsageError("--tau", "a threshold in [0, 1]", repr(args.tau))
    items = load_sample(existing_file(args.sample, "sample (.jsonl)"))
    scores, judge = None, "judge"
    if args.predictions is not None:
        from workbench.annotate._labelstudio import judge_scores
        from workbench.errors import SelectionError

        try:
            scores, judge = judge_scores(existing_file(args.predictions, "scores table (.parquet)"), args.judge)
        except SelectionError as err:
            raise UsageError(f"--{err.what}", err.expected, err.got) from None
    tasks = to_labelstudio(items, scores, judge=judge, field=args.field, tau=args.tau)
    text = json.dumps(tasks, ensure_ascii=False, indent=1)
    atomic_write(Path(args.out), lambda tmp: tmp.write_text(text, encoding="utf-8"))
    from workbench.annotate._item_views import has_own_question

    own = [has_own_question(item, args.field) for item in items]
    if any(own) and not all(own):
        raise UsageError("sample", "items that all ask the same question (a sample of one data set)",
                         f"{sum(own)} of {len(own)} items with their data set's own question")
    xml = labeling_config(args.field, predictions=scores is not None, own_question=all(own) and bool(own))
    atomic_write(config, lambda tmp: tmp.write_text(xml, encoding="utf-8"))
    shown = (f"; {sum('predictions' in t for t in tasks)} with {judge}'s score as a prediction (not blind)"
             if scores is not None else " (blind: no score, no ground truth)")
    print(f"{args.out}: {len(tasks)} tasks{shown}; {config}: the labeling interface for '{args.field}' (Settings "
          "> Labeling Interface > Code)")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from workbench.annotate import AnnotationStore
    from workbench.annotate._labelstudio import read_labelstudio, read_users
    from workbench.annotate._samples import load_sample

    at_least("--round", args.round, 1)
    path = existing_file(args.export, "Label Studio export (.json)")
    try:
        export = json.loads(path.read_text(encoding="utf-8-sig"))  # a BOM (Windows tools) is not content
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise SchemaError(f"not JSON ({err})", file=str(path)) from None
    except RecursionError:
        raise SchemaError("JSON nested deeper than its reader allows (Label Studio's export is a list of tasks, "
                          "a few levels deep)", file=str(path)) from None
    if not isinstance(export, list):
        raise SchemaError(field="(top level)", expected="Label Studio's JSON export: a list of tasks",
                          got=type(export).__name__, file=str(path))
    users = None
    if args.annotators:
        users_path = existing_file(args.annotators, "Label Studio users file (.json, from GET /api/users)")
        try:
            users = read_users(json.loads(users_path.read_text(encoding="utf-8-sig")), "(top level)")
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise SchemaError(f"not JSON ({err})", file=str(users_path)) from None
        except SchemaError as err:
            raise SchemaError(field=err.field, expected=err.expected, got=err.got, file=str(users_path)) from None
    try:
        found = read_labelstudio(export, round=args.round, annotator_from=args.annotator_from, users=users)
    except SchemaError as err:
        raise SchemaError(field=err.field, expected=err.expected, got=err.got, file=str(path)) from None
    records = found.records
    if args.sample:
        known = {item["item_id"] for item in load_sample(existing_file(args.sample, "sample (.jsonl)"))}
        stray = sorted({r["item_id"] for r in records} - known)
        if stray:
            raise SchemaError(field="data.item_id", expected=f"items of the sample {args.sample}",
                              got=f"{len(stray)} other(s), first {stray[0]!r}", file=str(path))
    store = AnnotationStore(args.store)
    fresh, already = store.not_held(records)
    n = store.add_many(fresh) if fresh else 0
    if args.sample:
        store.keep_sample(args.sample)
    people = sorted({r["annotator"] for r in records})
    named = ", ".join(people[:5]) + (f" and {len(people) - 5} more" if len(people) > 5 else "")
    print(f"{n} label(s) from {len(people)} annotator(s) ({named or 'none'}) added to {args.store}, round {args.round} "
          f"(one batch: all of them, or none had it been stopped); {already} already in the store as they are; "
          f"{found.notes} with a note; {found.cancelled} skipped annotation(s) (not labels); {found.unlabeled} "
          f"task(s) without an annotation; {found.not_taken_text()}")
    if found.replaced:
        print(f"warning: {found.replaced} note(s) held a lone UTF-16 surrogate (text cut inside a character), "
              "replaced by U+FFFD", file=sys.stderr)
    if found.bare_ids:
        ids = ", ".join(map(str, found.bare_ids[:5])) + (" ..." if len(found.bare_ids) > 5 else "")
        print(f"warning: --annotator-from {args.annotator_from}: the export names {len(found.bare_ids)} annotator(s) "
              f"by user id only ({ids}), stored as ls-user-ID; pass --annotators USERS.json (Label Studio's GET "
              "/api/users) or export a snapshot with users expanded (README, Label Studio)", file=sys.stderr)
    if found.without_field:
        other = "e-mail" if args.annotator_from == "name" else "first and last names"
        print(f"warning: --annotator-from {args.annotator_from}: {len(found.without_field)} user(s) have none "
              f"(ids {', '.join(map(str, found.without_field[:5]))}); named by {other}", file=sys.stderr)
    return 0


__all__ = ["add", "run_export", "run_import"]
