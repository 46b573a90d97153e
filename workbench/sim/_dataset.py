"""Build the default testbed dataset: every policy x budget x task x replicate, as workbench tables.

Outputs (Parquet, schema of ``workbench.tables._schema``): ``runs``, ``steps``, ``compactions``,
``entries`` (with ground truth), ``candidates`` (every candidate at a verifier/oracle
boundary with its defects and scores), ``scores`` (the lexical judge through the real
retrieval + judge pipeline, on the ``prompting`` summaries) and the ``evidence`` its requests used, ``labels`` (two rounds of
simulated annotation of a validation sample), ``attributions`` (ground-truth failure
attribution of failed ``prompting`` runs), ``spans`` and ``rollouts`` (simulated FOCUS
draft rollouts at ``prompting`` boundaries). Deterministic given the seed, whatever
``PYTHONHASHSEED`` is: every random draw comes from a ``SeedSequence`` of integers.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from workbench.tables._files import rows_frame, write_tables
from workbench.stats._efficiency import dependency
from workbench.sim._agent import SimEntry
from workbench.sim._rule_compressor import CompressorConfig, in_text_order, render_entries
from workbench.sim._episode import POLICIES, Episode, EpisodeResult, SimConfig
from workbench.sim._world import make_tasks, world_json
from workbench.summaries._entries import entry_id

DEFAULT_BUDGETS = (24, 48, 96)


@dataclass(frozen=True)
class DatasetConfig:
    tasks: int = 120
    runs: int = 4
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    policies: tuple[str, ...] = POLICIES
    seed: int = 0
    tau: float = 0.5
    horizon: int = 5
    #: the verifier's cost model: "article" (three paired samples per candidate) or "cheap" (one shared PRE)
    verifier: str = "article"
    compressor: CompressorConfig = field(default_factory=CompressorConfig)
    annotator_error: float = 0.02
    sample_size: int = 300
    n_rollouts: int = 20
    rollout_budget: int = 48


def run_id(policy: str, budget: int, task_id: str, replicate: int) -> str:
    return f"{policy}/b{budget}/{task_id}/r{replicate}"


# ---------------------------------------------------------------------------
# one episode -> rows


def _episode_rows(res: EpisodeResult) -> dict[str, list[dict[str, object]]]:
    task = res.task
    rid = run_id(res.policy, res.budget, task.task_id, res.replicate)
    steps: list[dict[str, object]] = [{
        "run_id": rid, "step": s.step, "tool": s.action.tool,
        "args": json.dumps(dict(s.action.args), separators=(",", ":")), "text": None,
        "observation": s.text, "observation_role": "tool", "blocked": s.blocked, "repeated": s.repeated,
        "input_tokens": s.input_tokens, "output_tokens": s.output_tokens, "boundary_before": s.boundary_before,
        "input_units": s.input_units,
    } for s in res.steps]
    n_in = np.array([s.input_tokens for s in res.steps], dtype=np.float64)
    n_out = np.array([s.output_tokens for s in res.steps], dtype=np.float64)
    run = {
        "run_id": rid, "task_id": task.task_id, "scenario_id": task.scenario.scenario_id, "subset": task.subset,
        "method": res.policy, "model": "scripted", "budget": res.budget, "replicate": res.replicate,
        "task": task.instruction(), "success": res.success, "reward": float(res.success),
        "failed_check": res.failed_check, "steps": len(res.steps),
        "compactions": len(res.boundaries) + res.fifo_boundaries,
        "blocked_calls": sum(s.blocked for s in res.steps), "repeated_calls": sum(s.repeated for s in res.steps),
        "peak_tokens": int(n_in.max()) if len(n_in) else 0, "agent_tokens": int(n_in.sum() + n_out.sum()),
        "compressor_tokens": res.compressor_tokens, "judge_tokens": res.judge_tokens,
        "dependency": dependency(n_in, n_out), "rollout_steps": res.rollout_steps,
        "n_invoices": len(task.invoices), "gt_world": world_json(task),
    }
    comps, entries, cands = [], [], []
    for bd in res.boundaries:
        cand = in_text_order(bd.candidates[bd.chosen].entries)
        committed = bd.committed
        comps.append({
            "run_id": rid, "boundary": bd.boundary, "step": bd.step, "span_start": bd.span[0],
            "span_end": bd.span[1], "previous_summary": render_entries(in_text_order(bd.previous)) if bd.previous else None,
            "retained_turn": bd.retained.render(), "candidate_summary": render_entries(cand),
            "committed_summary": render_entries(committed),
            "gt_visible_defects": bd.candidates[bd.chosen].visible_defects,
            "gt_silent_defects": bd.candidates[bd.chosen].silent_defects,
        })
        kept = {id(e) for e in committed}
        for pos, e in enumerate(cand):
            entries.append({
                "entry_id": entry_id(rid, bd.boundary, pos), "run_id": rid, "boundary": bd.boundary,
                "section": e.section, "position": pos, "text": e.text, "carried_from": None,
                "gt_provenance": e.provenance, "gt_supported": e.supported, "gt_correct": e.correct,
                "gt_pattern": e.pattern, "gt_defect": e.defect, "gt_origin": e.origin, "gt_kind": e.kind,
                "gt_committed": id(e) in kept,
                "gt_judge_score": bd.judge_scores[pos] if bd.judge_scores else None,
            })
        for c, candidate in enumerate(bd.candidates):
            if len(bd.candidates) > 1:
                cands.append({
                    "run_id": rid, "boundary": bd.boundary, "candidate": c, "chosen": c == bd.chosen,
                    "visible_defects": candidate.visible_defects, "silent_defects": candidate.silent_defects,
                    "verifier_score": bd.verifier_scores[c] if bd.verifier_scores else None,
                    "oracle_success": bd.oracle_success[c] if c < len(bd.oracle_success) else None,
                })
    out: dict[str, list[dict[str, object]]] = {"runs": [run], "steps": steps, "compactions": comps,
                                               "entries": entries, "candidates": cands}
    if res.policy == "prompting" and not res.success:
        out["attributions"] = [attribute(res, rid)]
    return out


def attribute(res: EpisodeResult, rid: str) -> dict[str, object]:
    """Ground-truth failure attribution (SJC Appendix D) of a failed run.

    From the failed check back to the action that caused it, and from the action to the
    summary entry it carried out, if any: the entry in the committed summary in context at
    that step whose kind explains the action (a rewritten rule, an invented deliverable, a
    contradicted state, a damaged amount or a dropped id).

    Parameters
    ----------
    res : EpisodeResult
        The failed run's episode.
    rid : str
        Its run id.

    Returns
    -------
    dict of str to object
        The attribution row: the failing step, the check it failed, the entry it carried out and its pattern.
    """
    fc = res.failed_check
    steps = res.steps
    action_step: int | None = None
    want: tuple[str, ...] = ()
    if fc == "report":
        filed = [s for s in steps if s.action.tool == "file_report"]
        action_step = filed[0].step if filed else (steps[-1].step if steps else None)
        want = ("file", "rule", "cs_filed", "paid") if filed else ("rule", "cs_filed")
    elif fc in ("paid_all", "finished"):
        action_step = steps[-1].step if steps else None
        want = ("cs_paid", "rule")
    elif fc == "amounts":
        wrong = [s for s in steps if s.action.tool == "pay_invoice" and not s.blocked and abs(
            float(s.action.arg("amount")) - next(i.amount for i in res.task.invoices
                                                        if i.invoice_id == s.action.arg("invoice_id"))) > 0.005]
        action_step = wrong[0].step if wrong else None
        want = ("amount", "paid")
    elif fc == "forbidden_payment":
        bad = [s for s in steps if s.action.tool == "pay_invoice" and not s.blocked]
        action_step = bad[-1].step if bad else None
        want = ("rule",)
    entry: SimEntry | None = None
    eid: str | None = None
    if action_step is not None and res.boundaries:
        idx = res.committed_at[action_step - steps[0].step] if action_step - steps[0].step < len(res.committed_at) else -1
        if idx >= 0:
            bd = res.boundaries[idx]
            cand = in_text_order(bd.candidates[bd.chosen].entries)
            committed = {id(e) for e in bd.committed}
            for pos, e in enumerate(cand):
                if id(e) in committed and e.kind in want and (not e.correct):
                    entry, eid = e, entry_id(rid, bd.boundary, pos)
                    break
    if entry is None:
        pattern = "other" if res.boundaries else "unrelated"
        if not res.boundaries or fc == "finished":
            pattern = "unrelated"
        return {"run_id": rid, "failed_check": fc, "action_step": action_step, "entry_id": None,
                "pattern": pattern, "support": None, "gt_task_id": res.task.task_id,
                "gt_scenario_id": res.task.scenario.scenario_id}
    pattern = entry.pattern or "other"
    support = "contradicted" if pattern == "CS" else ("supported" if entry.supported else "unsupported")
    return {"run_id": rid, "failed_check": fc, "action_step": action_step, "entry_id": eid, "pattern": pattern,
            "support": support, "gt_task_id": res.task.task_id, "gt_scenario_id": res.task.scenario.scenario_id}


# ---------------------------------------------------------------------------
# simulated FOCUS drafts


def simulated_rollouts(res: EpisodeResult, rid: str, n_rollouts: int, seed: int) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Simulated plan-sketch citations at each boundary of a run (FOCUS Eq. 8 data).

    Spans are the raw action-observation steps in context just before the boundary. A
    span is truly needed when the remaining work uses a fact only it holds (an unpaid
    payable invoice's amount, a paid invoice the report still has to count, or the
    invoice list while invoices remain). Drafts cite needed spans almost always (0.95) and
    unneeded ones rarely (0.03), and under-cite the per-entity enumeration span (the
    invoice list, 0.35) when the remaining work is "for each invoice" (FOCUS A.10).

    Parameters
    ----------
    res : EpisodeResult
        The run's episode.
    rid : str
        Its run id.
    n_rollouts : int
        Drafts per boundary.
    seed : int
        The seed.

    Returns
    -------
    spans : list of dict
        One row per span at each boundary, with whether it is truly needed.
    rollouts : list of dict
        One row per draft and cited span.
    """
    task = res.task
    spans, cites = [], []
    by_id = {i.invoice_id: i for i in task.invoices}
    for bd in res.boundaries:
        event = f"{rid}/b{bd.boundary}"
        turns = [*bd.span_turns, bd.retained]
        paid_before = {str(t.action.arg("invoice_id")) for t in turns if t.action.tool == "pay_invoice"}
        filed = any(t.action.tool == "file_report" for t in turns)
        remaining = [i for i in task.to_pay if i.invoice_id not in paid_before]
        needed_ids = {i.invoice_id for i in remaining}
        if task.scenario.report_expected and not filed:
            needed_ids |= paid_before
        rng = np.random.default_rng(np.random.SeedSequence([seed, 31, *[ord(c) for c in event[-24:]], bd.boundary]))
        for t in turns:
            span_id = f"s_{t.step}"
            enumeration = t.action.tool == "list_invoices"
            iid = str(t.action.arg("invoice_id")) if t.action.arg("invoice_id") else None
            needed = (enumeration and bool(remaining)) or (
                iid is not None and iid in needed_ids and iid in by_id and not t.observation.blocked
                and t.action.tool in ("get_invoice", "pay_invoice"))
            rate = (0.35 if enumeration and len(remaining) > 1 else 0.95) if needed else 0.03
            spans.append({"event_id": event, "span_id": span_id, "step": t.step, "gt_needed": needed,
                          "gt_enumeration": enumeration, "gt_rate": rate})
            hits = np.flatnonzero(rng.random(n_rollouts) < rate)
            cites += [{"event_id": event, "rollout": int(k), "span_id": span_id, "gt_needed": needed} for k in hits]
    return spans, cites


def _score_rows(res: EpisodeResult) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Lexical judge scores of a run's candidate entries, through retrieval + judge (as ``workbench judge``), and
    the evidence rows its requests used (as ``workbench judge`` writes them beside its scores)."""
    from dataclasses import replace

    from workbench.summaries._entries import evidence_id, request_id
    from workbench.summaries._evidence import CompactionRequest, evidence_rows
    from workbench.judges._lexical import LexicalJudge
    from workbench.sim._judging import judge_request

    judge = LexicalJudge()
    rid = run_id(res.policy, res.budget, res.task.task_id, res.replicate)
    rows: list[dict[str, object]] = []
    requests = []
    for bd in res.boundaries:
        cand = in_text_order(bd.candidates[bd.chosen].entries)
        request = replace(judge_request(res.task, bd.previous, bd.span_turns, bd.retained, cand),
                          request_id=request_id(rid, bd.boundary))
        result = judge.score(request)
        ids = tuple(entry_id(rid, bd.boundary, pos) for pos in range(len(cand)))
        for pos, score in enumerate(result.scores):
            passages = [evidence_id(request.request_id, request.evidence_ids[j])
                        for j in request.entry_evidence[pos]] if request.entry_evidence else []
            rows.append({"entry_id": ids[pos], "judge": judge.name, "repeat": 0, "score": score,
                         "request_id": request.request_id, "evidence_ids": passages, "reason": None})
        # the request's outputs are the span's observations, then the retained turn (sim.judging.judge_request)
        requests.append(CompactionRequest(rid, bd.boundary, ids, request, tuple(t.step for t in bd.span_turns),
                                          tuple(t.action.tool for t in bd.span_turns)))
    return rows, evidence_rows(requests)  # in a forked worker: no polars (evidence_rows)


# ---------------------------------------------------------------------------
# the whole dataset


def _job(args: tuple[DatasetConfig, list[tuple[str, int]], list[int]]) -> dict[str, list[dict[str, object]]]:
    cfg, pairs, task_indices = args
    tasks = make_tasks(cfg.tasks, cfg.seed)
    rows: dict[str, list[dict[str, object]]] = {}
    for policy, budget in pairs:
        sim = SimConfig(seed=cfg.seed, budget=budget, tau=cfg.tau, horizon=cfg.horizon, compressor=cfg.compressor,
                        verifier=cfg.verifier)
        for ti in task_indices:
            for rep in range(cfg.runs):
                res = Episode(tasks[ti], ti, rep, policy, sim).run()
                for name, part in _episode_rows(res).items():
                    rows.setdefault(name, []).extend(part)
                if policy == "prompting":
                    scored, used = _score_rows(res)
                    rows.setdefault("scores", []).extend(scored)
                    rows.setdefault("evidence", []).extend(used)
                if policy == "prompting" and budget == cfg.rollout_budget:
                    rid = run_id(policy, budget, tasks[ti].task_id, rep)
                    spans, cites = simulated_rollouts(res, rid, cfg.n_rollouts, cfg.seed)
                    rows.setdefault("spans", []).extend(spans)
                    rows.setdefault("rollouts", []).extend(cites)
    return rows


def simulate(cfg: DatasetConfig = DatasetConfig(), *, workers: int | None = None,
             progress: Callable[[int], None] | None = None, executor: str = "local",
             address: str | None = None) -> dict[str, pl.DataFrame]:
    """Run every episode and return the tables (episodes split over ``workers`` processes, or over a Ray
    cluster with ``executor="ray"``: the same blocks of tasks, the same tables).

    Parameters
    ----------
    cfg : DatasetConfig, default DatasetConfig()
        The testbed's size and rates.
    workers : int, optional
        Worker processes (two, or one on a one-core machine, when None).
    progress : callable, optional
        Called with each finished task's count.
    executor : {"local", "ray"}, default "local"
        Where the tasks run.
    address : str, optional
        The Ray cluster's address.

    Returns
    -------
    dict of str to polars.DataFrame
        The testbed's tables.
    """
    for p in cfg.policies:
        if p not in POLICIES:
            raise ValueError(f"policy: expected some of {list(POLICIES)}, got {p!r}")
    workers = workers or min(2, os.cpu_count() or 1)
    pairs = [(p, b) for b in cfg.budgets for p in cfg.policies]
    # split by task blocks so each job carries a mix of cheap and expensive policies
    n_jobs = max(1, min(cfg.tasks, 4 * workers))
    blocks = [list(range(k, cfg.tasks, n_jobs)) for k in range(n_jobs)]
    jobs = [(cfg, pairs, block) for block in blocks if block]
    parts: list[dict[str, list[dict[str, object]]]] = []
    if executor == "ray":
        from workbench._util.executors import ray_map

        n_jobs = max(1, min(cfg.tasks, 64))  # more shards than local workers: a cluster has more cores
        blocks = [list(range(k, cfg.tasks, n_jobs)) for k in range(n_jobs)]
        jobs = [(cfg, pairs, block) for block in blocks if block]
        parts = ray_map(_job, jobs, address=address,
                        progress=(lambda i: progress(len(jobs[i][2]) * len(pairs) * cfg.runs)) if progress else None)
    elif executor != "local":
        raise ValueError(f"executor: expected 'local' or 'ray', got {executor!r}")
    elif workers <= 1:
        for j in jobs:
            parts.append(_job(j))
            if progress:
                progress(len(j[2]) * len(pairs) * cfg.runs)
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for j, part in zip(jobs, pool.map(_job, jobs), strict=True):
                parts.append(part)
                if progress:
                    progress(len(j[2]) * len(pairs) * cfg.runs)
    merged: dict[str, list[dict[str, object]]] = {}
    for part in parts:
        for name, rows in part.items():
            merged.setdefault(name, []).extend(rows)
    tables: dict[str, pl.DataFrame] = {}
    for name, rows in merged.items():
        tables[name] = rows_frame(name, rows)
    order = {"runs": ["run_id"], "steps": ["run_id", "step"], "compactions": ["run_id", "boundary"],
             "entries": ["run_id", "boundary", "position"], "candidates": ["run_id", "boundary", "candidate"],
             "attributions": ["run_id"], "spans": ["event_id", "step"], "rollouts": ["event_id", "rollout", "span_id"],
             "scores": ["entry_id", "judge", "repeat"], "evidence": ["evidence_id"]}  # every table in key order: the same whatever the sharding
    for name, keys in order.items():
        if name in tables:
            tables[name] = tables[name].sort(keys)
    from workbench.summaries._entries import entries_table

    if "entries" in tables:  # carried_from by exact text, as for a real log
        carried = entries_table(tables["compactions"]).select("entry_id", "carried_from")
        tables["entries"] = tables["entries"].drop("carried_from").join(carried, on="entry_id", how="left")
    return tables


def write_dataset(tables: dict[str, pl.DataFrame], out: str | Path) -> Path:
    """Validate and write every table as ``out/NAME.parquet``.

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        The tables.
    out : str or pathlib.Path
        The directory.

    Returns
    -------
    pathlib.Path
        The directory.
    """
    return write_tables(tables, out)


def build(out: str | Path, cfg: DatasetConfig = DatasetConfig(), *, workers: int | None = None,
          progress: Callable[[int], None] | None = None, executor: str = "local",
          address: str | None = None) -> dict[str, pl.DataFrame]:
    """Simulate, score, sample and annotate; write everything to ``out``.

    Parameters
    ----------
    out : str or pathlib.Path
        The directory written.
    cfg : DatasetConfig
        The testbed's size, policies, budgets, seed and compressor.
    workers : int, optional
        Local processes (default: the usable cores).
    progress : callable, optional
        Called with the episodes done.
    executor : {"local", "ray"}, default "local"
        Where episodes run.
    address : str, optional
        The Ray cluster's address.

    Returns
    -------
    dict of str to polars.DataFrame
        Every table written.
    """
    from workbench.sim._annotators import simulate_annotation

    tables = simulate(cfg, workers=workers, progress=progress, executor=executor, address=address)
    if "prompting" in cfg.policies:
        tables["labels"] = simulate_annotation(tables, n=cfg.sample_size, error=cfg.annotator_error, seed=cfg.seed,
                                               budget=48 if 48 in cfg.budgets else cfg.budgets[0])
    write_dataset(tables, out)
    return tables


__all__ = ["attribute", "build", "DatasetConfig", "simulated_rollouts", "simulate", "write_dataset"]
