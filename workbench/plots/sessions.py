"""Coding-agent session figures (Claude Code, Codex): compactions over time, tokens before and after with the
prompt cache's share, entries by role with the judge's unsupported share, and what the agent did next. Each takes
the results of :mod:`workbench.sessions` or :mod:`workbench.composition` and an optional ``ax``."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from workbench.plots import _axes


def compaction_tokens(overview: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Tokens before and after each compaction (log scale), from :func:`workbench.sessions.compaction_overview`.

    Before is the context size the log recorded (filled marker) or, without one, the tokens of
    the replaced history counted here (open marker); after is the summary's tokens.
    """
    fig, ax = _axes(ax, (6.0, 3.2))
    ov = overview.sort("run_id", "boundary")
    x = np.arange(ov.height)
    logged = (ov["tokens_before_from"] == "log").to_numpy()
    before = ov["tokens_before"].to_numpy()
    after = ov["tokens_after"].to_numpy()
    ax.vlines(x, after, before, color="0.7", lw=1)
    ax.scatter(x[logged], before[logged], color="C3", zorder=3, label="before (recorded by the agent)")
    ax.scatter(x[~logged], before[~logged], facecolors="none", edgecolors="C3", zorder=3,
               label="before (counted from the replaced history)")
    ax.scatter(x, after, color="C0", marker="s", zorder=3, label="after (the summary)")
    ax.set_yscale("log")
    ax.set_xticks(x, [f"{s}\n#{b}" for s, b in zip(ov["schema"], ov["boundary"], strict=True)], fontsize=7)
    ax.set_xlabel("compaction (summary schema, boundary)")
    ax.set_ylabel("tokens (o200k)")
    ax.legend(fontsize=7)
    return ax


def entries_by_role(by_role: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Summary entries per role and schema, the lexically unsupported part in red
    (:func:`workbench.composition.entries_by_role` with a ``supported`` column)."""
    fig, ax = _axes(ax, (6.0, 3.4))
    rows = by_role.sort("schema", "role")
    labels = [f"{s}: {r}" for s, r in zip(rows["schema"], rows["role"], strict=True)]
    unsupported = rows["unsupported"].to_numpy() if "unsupported" in rows.columns else np.zeros(rows.height)
    supported = rows["entries"].to_numpy() - unsupported
    y = np.arange(rows.height)[::-1]
    ax.barh(y, supported, color="C0", label="supported (lexical judge)")
    ax.barh(y, unsupported, left=supported, color="C3", label="unsupported")
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlabel("entries")
    ax.legend(fontsize=7)
    return ax


def burden_before_after(after: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Repeated and failed calls per call in the steps before and after each compaction, summed over
    compactions (:func:`workbench.sessions.after_compaction`)."""
    fig, ax = _axes(ax, (5.0, 3.2))
    tot = after.group_by("window").agg(pl.col("calls", "repeated", "errors").sum())
    order = [w for w in ("before", "after") if w in tot["window"].to_list()]
    tot = tot.with_columns(pl.col("window").replace_strict({w: i for i, w in enumerate(order)}).alias("_o")).sort("_o")
    calls = np.maximum(tot["calls"].to_numpy(), 1)
    x = np.arange(tot.height)
    ax.bar(x - 0.18, tot["repeated"].to_numpy() / calls, 0.36, color="C2", label="repeated an earlier call")
    ax.bar(x + 0.18, tot["errors"].to_numpy() / calls, 0.36, color="C3", label="returned an error")
    ax.set_xticks(x, [f"{w} ({int(c)} calls)" for w, c in zip(order, tot["calls"], strict=True)])
    ax.set_ylabel("share of calls")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    return ax

