"""``workbench simulate``: generate the invoice testbed (:func:`workbench.sim.build`)."""

from __future__ import annotations

import argparse
import sys

from workbench.cli.args import UsageError, at_least, executor_options, verb


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "simulate", "generate the invoice testbed dataset (with ground truth)")
    p.add_argument("--out", required=True, help="directory for the tables")
    p.add_argument("--tasks", type=int, default=120, help="invoice tasks")
    p.add_argument("--runs", type=int, default=4, help="replicates per task")
    p.add_argument("--budgets", default="24,48,96", help="comma-separated budgets in context units")
    p.add_argument("--policies", help="comma-separated policies (default: all)")
    p.add_argument("--seed", type=int, default=0, help="every random draw derives from it")
    p.add_argument("--workers", type=int, default=None, help="processes (default: the machine's cores)")
    executor_options(p, "blocks of tasks (episode seeds)")
    p.add_argument("--force", action="store_true", help="replace the tables already in --out")
    p.add_argument("--quiet", action="store_true", help="no progress on standard error")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench._util.progress import Progress
    from workbench.sim._dataset import DatasetConfig, build
    from workbench.sim._episode import POLICIES
    from workbench.tables._files import table_files

    at_least("--tasks", args.tasks, 1)
    at_least("--runs", args.runs, 1)
    at_least("--seed", args.seed, 0)
    if args.workers is not None:
        at_least("--workers", args.workers, 1)
    try:
        budgets = tuple(int(b) for b in args.budgets.split(","))
    except ValueError:
        raise UsageError("--budgets", "comma-separated positive integers", repr(args.budgets)) from None
    if not budgets or min(budgets) < 1:
        raise UsageError("--budgets", "comma-separated positive integers", repr(args.budgets))
    policies = tuple(args.policies.split(",")) if args.policies else POLICIES
    unknown = [p for p in policies if p not in POLICIES]
    if unknown:
        raise UsageError("--policies", f"names from {list(POLICIES)}", ", ".join(unknown))
    if table_files(args.out) and not args.force:
        raise UsageError("--out", "an empty or new directory (or --force to replace its tables)", repr(args.out))
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


__all__ = ["add", "run"]
