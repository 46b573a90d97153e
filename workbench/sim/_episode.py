"""One episode: the agent, the environment and the compaction loop under a policy.

The compaction loop is SJC Section 2 / TRACE Equation 1: before each agent step, when the
context (first prompt + committed summary + raw turns since) passes the budget, the first
prompt and the latest turn are kept verbatim and the rest is replaced. Budgets are in
*context units*, standing in for the TRACE article's "tokens": one per raw turn plus one
per invoice id or number in the prompt, an action, an observation or a summary entry
(an 8-invoice trajectory reaches about 85 units, a 12-invoice one about 130).
Token counts (o200k) of the rendered context are recorded as well, for Peak and
Dependency.

Policies: ``no_compression``; ``fifo`` (drop the oldest turns until the context fits);
``prompting`` (the compressor's summary); ``prompting_sjc`` (the summary pruned by the
lexical source judge at tau); ``verifier`` (TRACE: three candidates, pick the least
induced burden over K steps, Eq. 2-4); ``oracle`` (the first candidate with which the
task is finally solved).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from workbench import tokens
from workbench.sim._agent import MAX_STEPS, Context, ScriptedAgent, SimEntry, Turn
from workbench.sim._rule_compressor import Candidate, CompressorConfig, compress, in_text_order, render_entries
from workbench.sim._world import Action, EnvState, InvoiceEnv, Task, check

POLICIES = ("no_compression", "fifo", "prompting", "prompting_sjc", "verifier", "oracle")
_UNIT = re.compile(r"INV-\d+|\d+(?:\.\d+)?")


@lru_cache(maxsize=200_000)
def units(text: str) -> int:
    """Identifiers and numbers in a text (the article's context units, without the per-turn 1).

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    int
        Its identifiers and numbers.
    """
    return len(_UNIT.findall(text))


@lru_cache(maxsize=200_000)
def _tok(text: str) -> int:
    return tokens.count(text, "o200k_base")


@dataclass(frozen=True)
class SimConfig:
    seed: int = 0
    budget: int = 48
    tau: float = 0.5
    horizon: int = 5  # K of TRACE Eq. 2
    n_candidates: int = 3
    #: the verifier's continuations: "article" (TRACE: per candidate, three samples of a paired pair of
    #: continuations, one from the raw history and one from the candidate, on common random numbers) or
    #: "cheap" (one continuation from the raw history shared by all candidates, one per candidate)
    verifier: str = "article"
    verifier_samples: int = 3
    reread_rate: float = 0.05
    compressor: CompressorConfig = field(default_factory=CompressorConfig)


@dataclass
class Boundary:
    boundary: int
    step: int
    span: tuple[int, int]
    previous: list[SimEntry] | None
    retained: Turn
    candidates: list[Candidate]
    chosen: int
    committed: list[SimEntry]
    verifier_scores: list[float] = field(default_factory=list)
    oracle_success: list[bool] = field(default_factory=list)
    judge_scores: list[float] = field(default_factory=list)
    span_turns: tuple[Turn, ...] = ()


@dataclass
class StepRecord:
    step: int
    action: Action
    text: str
    blocked: bool
    repeated: bool
    input_tokens: int
    output_tokens: int
    boundary_before: bool
    input_units: int


@dataclass
class EpisodeResult:
    task: Task
    replicate: int
    policy: str
    budget: int
    steps: list[StepRecord]
    boundaries: list[Boundary]
    fifo_boundaries: int
    state: EnvState
    failed_check: str | None
    rollout_steps: int
    compressor_tokens: int
    judge_tokens: int
    committed_at: list[int]  # per step: index into boundaries of the summary in context, -1 none

    @property
    def success(self) -> bool:
        return self.failed_check is None


def _seq(*parts: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(p) for p in parts]))


def context_units(ctx: Context) -> int:
    n = units(ctx.prompt)
    if ctx.summary:
        n += sum(units(e.text) for e in ctx.summary)
    return n + sum(1 + units(action_text(t.action)) + units(t.observation.text) for t in ctx.turns)


def context_tokens(ctx: Context, summary_text: str | None) -> int:
    n = _tok(ctx.prompt)
    if summary_text:
        n += _tok(summary_text)
    return n + sum(_tok(t.render()) for t in ctx.turns)


def action_text(action: Action) -> str:
    return f"{action.tool}({', '.join(f'{k}={v}' for k, v in action.args)})"


class Episode:
    """Runs one (task, replicate) under a policy; deterministic given the config's seed."""

    def __init__(self, task: Task, task_index: int, replicate: int, policy: str, cfg: SimConfig) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy: expected one of {list(POLICIES)}, got {policy!r}")
        self.task, self.ti, self.rep, self.policy, self.cfg = task, task_index, replicate, policy, cfg
        keys = _seq(cfg.seed, task_index, replicate, 12).random(len(task.invoices))
        self.order = {inv.invoice_id: float(k) for inv, k in zip(task.invoices, keys, strict=True)}
        self.agent = ScriptedAgent(task, self.order, cfg.reread_rate)

    # -- candidates -------------------------------------------------------------

    def _candidates(self, previous: list[SimEntry] | None, span: Sequence[Turn], b: int, n: int) -> list[Candidate]:
        cfg = self.cfg
        return [compress(self.task, previous, span, b, _seq(cfg.seed, self.ti, self.rep, cfg.budget, b, c, 13),
                         cfg.compressor) for c in range(n)]

    # -- the loop -----------------------------------------------------------------

    def run(self, env: InvoiceEnv | None = None, ctx: Context | None = None, start_step: int = 0,
            policy: str | None = None, boundaries_done: int = 0, max_steps: int = MAX_STEPS,
            agent_rng: np.random.Generator | None = None) -> EpisodeResult:
        policy = policy or self.policy
        cfg = self.cfg
        env = env or InvoiceEnv(self.task)
        ctx = ctx or Context(self.task.instruction())
        rng = agent_rng or _seq(cfg.seed, self.ti, self.rep, 11)
        seen = set(env.state.calls)
        steps: list[StepRecord] = []
        boundaries: list[Boundary] = []
        committed_at: list[int] = []
        fifo = rollout_steps = comp_tokens = judge_tokens = 0
        summary_text: str | None = render_entries(in_text_order(ctx.summary)) if ctx.summary else None
        current = -1
        step = start_step
        while step < max_steps and not env.state.finished:
            compacted = False
            if policy != "no_compression" and len(ctx.turns) >= 2 and context_units(ctx) > cfg.budget:
                compacted = True
                if policy == "fifo":
                    fifo += 1
                    while len(ctx.turns) > 1 and context_units(ctx) > cfg.budget:
                        ctx.turns.pop(0)
                else:
                    bd, spent, ctoks, jtoks = self._compact(env, ctx, step, boundaries_done + len(boundaries), policy)
                    boundaries.append(bd)
                    rollout_steps += spent
                    comp_tokens += ctoks
                    judge_tokens += jtoks
                    ctx.summary = bd.committed
                    ctx.turns = [bd.retained]
                    summary_text = render_entries(in_text_order(bd.committed))
                    current = len(boundaries) - 1
            action = self.agent.act(ctx, rng)
            obs = env.step(action)
            repeated = action.signature in seen and action.tool != "finish"
            seen.add(action.signature)
            text = action_text(action)
            steps.append(StepRecord(step, action, obs.text, obs.blocked, repeated,
                                    context_tokens(ctx, summary_text), _tok(text), compacted, context_units(ctx)))
            committed_at.append(current)
            ctx.turns.append(Turn(step, action, obs))
            step += 1
        return EpisodeResult(self.task, self.rep, policy, cfg.budget, steps, boundaries, fifo, env.state,
                             check(self.task, env.state), rollout_steps, comp_tokens, judge_tokens, committed_at)

    def _compact(self, env: InvoiceEnv, ctx: Context, step: int, b: int, policy: str) -> tuple[Boundary, int, int, int]:
        cfg = self.cfg
        span = tuple(ctx.turns[:-1])
        retained = ctx.turns[-1]
        previous = list(ctx.summary) if ctx.summary else None
        n = cfg.n_candidates if policy in ("verifier", "oracle") else 1
        cands = self._candidates(previous, span, b, n)
        prev_text = render_entries(in_text_order(previous)) if previous else ""
        span_text = "\n".join(t.render() for t in span)
        ctoks = sum(_tok(prev_text) + _tok(span_text) + _tok(render_entries(in_text_order(c.entries))) for c in cands)
        bd = Boundary(b, step, (span[0].step, span[-1].step), previous, retained, cands, 0,
                      in_text_order(cands[0].entries), span_turns=span)
        spent = jtoks = 0
        if policy == "prompting_sjc":
            from workbench.sim._judging import judge_candidate

            kept, scores, jtoks = judge_candidate(self.task, previous, span, retained, bd.committed, cfg.tau)
            bd.judge_scores = scores
            bd.committed = kept
        elif policy == "verifier":
            pre_ctx = Context(ctx.prompt, previous, list(ctx.turns))
            if cfg.verifier == "cheap":
                pre, s0 = self._burden(env, pre_ctx, step, b, -1)
                spent += s0
                for c, cand in enumerate(cands):
                    post, s = self._burden(env, Context(ctx.prompt, in_text_order(cand.entries), [retained]), step, b, c)
                    spent += s
                    bd.verifier_scores.append(-(post - pre))  # Eq. 3-4: score = -(E[POST] - E[PRE])
            elif cfg.verifier == "article":
                for c, cand in enumerate(cands):
                    post_ctx = Context(ctx.prompt, in_text_order(cand.entries), [retained])
                    pres, posts = [], []
                    for k in range(cfg.verifier_samples):  # a pair shares its random numbers (paired continuation)
                        pre, s0 = self._burden(env, pre_ctx, step, b, c, sample=k)
                        post, s1 = self._burden(env, post_ctx, step, b, c, sample=k)
                        pres.append(pre)
                        posts.append(post)
                        spent += s0 + s1
                    bd.verifier_scores.append(-(float(np.mean(posts)) - float(np.mean(pres))))
            else:
                raise ValueError(f"verifier: expected 'article' or 'cheap', got {cfg.verifier!r}")
            bd.chosen = int(np.argmax(bd.verifier_scores))  # ties: the first
            bd.committed = in_text_order(cands[bd.chosen].entries)
        elif policy == "oracle":
            for c, cand in enumerate(cands):
                sub = Episode(self.task, self.ti, self.rep, "prompting", cfg)
                res = sub.run(InvoiceEnv(self.task, env.snapshot()),
                              Context(ctx.prompt, in_text_order(cand.entries), [retained]), step, "prompting",
                              boundaries_done=b + 1, agent_rng=_seq(cfg.seed, self.ti, self.rep, cfg.budget, b, c, 15))
                spent += len(res.steps)
                bd.oracle_success.append(res.success)
                if res.success:
                    break  # the first candidate that finishes the task is chosen; later ones are not rolled
            bd.chosen = next((c for c, ok in enumerate(bd.oracle_success) if ok), 0)
            bd.committed = in_text_order(cands[bd.chosen].entries)
        return bd, spent, ctoks, jtoks

    def _burden(self, env: InvoiceEnv, ctx: Context, step: int, b: int, c: int,
                sample: int | None = None) -> tuple[int, int]:
        """TRACE Eq. 2: blocked or repeated actions over K steps from the restored state (the union, once).

        ``sample`` numbers the paired samples of the article's verifier: the two continuations of
        a pair draw the same random numbers.
        """
        sim = InvoiceEnv(self.task, env.snapshot())
        seen = set(sim.state.calls)
        key = (14,) if sample is None else (14, 1000 + sample)
        rng = _seq(self.cfg.seed, self.ti, self.rep, self.cfg.budget, b, c + 1, *key)
        ctx = Context(ctx.prompt, ctx.summary, list(ctx.turns))
        burden = spent = 0
        for k in range(self.cfg.horizon):
            if sim.state.finished:
                break
            action = self.agent.act(ctx, rng)
            obs = sim.step(action)
            spent += 1
            if obs.blocked or (action.signature in seen and action.tool != "finish"):
                burden += 1
            seen.add(action.signature)
            ctx.turns.append(Turn(step + k, action, obs))
        return burden, spent


def verifier_score(task: Task, task_index: int, replicate: int, env_state: EnvState, prompt: str,
                   previous: list[SimEntry] | None, turns: list[Turn], candidate: Sequence[SimEntry],
                   cfg: SimConfig) -> float:
    """TRACE Eq. 4 for one candidate at a boundary: -(burden from the summary - burden from the raw history).

    Parameters
    ----------
    task : Task
        The task.
    task_index : int
        Its index (part of the continuation's seed).
    replicate : int
        The run's replicate (part of the seed).
    env_state : EnvState
        The environment at the boundary.
    prompt : str
        The task's prompt.
    previous : list of SimEntry or None
        The previous summary's entries.
    turns : list of Turn
        The raw turns the summary replaces.
    candidate : sequence of SimEntry
        The candidate summary's entries.
    cfg : SimConfig
        The simulation's settings.

    Returns
    -------
    float
        The score (0 is as good as the raw history; lower is worse).
    """
    ep = Episode(task, task_index, replicate, "verifier", cfg)
    env = InvoiceEnv(task, env_state)
    step = turns[-1].step + 1 if turns else 0
    pre, _ = ep._burden(env, Context(prompt, previous, list(turns)), step, 0, -1)
    post, _ = ep._burden(env, Context(prompt, list(candidate), turns[-1:]), step, 0, 0)
    return float(-(post - pre))


__all__ = ["Episode", "POLICIES", "SimConfig", "units", "verifier_score"]
