"""Coding-agent session figures (Claude Code, Codex): compactions over time, tokens before and after with the
prompt cache's share, entries by role with the judge's unsupported share, and what the agent did next. Each takes
the results of :mod:`workbench.analyses._coding_agents` or :mod:`workbench.analyses.sjc._composition` and an optional ``ax``; the per-compaction
tables may come as a scan (``LazyFrame``, :meth:`workbench.analyses.SessionAnalyses.table`), of which a figure
reads only the columns it draws."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter

from workbench.plots._style import _axes
from workbench.plots._names import display_name
from workbench.tables._frames import collected, height

#: compactions (or sessions) up to which a figure draws and labels each one; past it, a figure of a whole
#: directory of sessions draws their distribution (or their mean) in a frame of fixed size: a label per compaction
#: of a large directory took minutes to draw and could not be read
MANY = 40

Frame = pl.DataFrame | pl.LazyFrame


def _columns(frame: Frame, *columns: str | pl.Expr) -> pl.DataFrame:
    """Only these columns, read into memory."""
    return collected(frame.select(*columns), engine="streaming")


@FuncFormatter
def _tokens_label(value: float, _pos: int | None = None) -> str:
    """A log axis's tick as a plain number, at 1, 2 and 5 of each decade only (the others would collide)."""
    lead = f"{value:.0e}"[0]
    return f"{value:,.0f}" if lead in "125" and value >= 1 else ""


def _log_bins(*values: np.ndarray, n: int = 40) -> list[float]:
    """``n`` bins evenly spaced on a log scale over every value (at least 1)."""
    every = np.concatenate([v for v in values if v.size]) if any(v.size for v in values) else np.ones(1)
    lo, hi = max(float(every.min()), 1.0), max(float(every.max()), 1.0)
    return np.geomspace(lo, hi * 1.0001 if hi > lo else lo * 10, n + 1).tolist()


def compaction_tokens(overview: Frame, medians: dict[str, int] | None = None, ax: Axes | None = None) -> Axes:
    """Tokens before and after each compaction (log scale), from :func:`workbench.analyses.compaction_overview`.

    Before is the context size the log recorded (filled marker) or, without one, the tokens of
    the replaced history counted here (open marker); after is the summary's tokens. Up to :data:`MANY`
    compactions each is drawn and labelled with its schema and boundary; past it, the figure is the distribution
    of the three over all compactions (histograms on log-spaced bins; a summary of no tokens counts in the first),
    each labelled with its median from ``medians`` (:func:`workbench.analyses.token_medians`) when given.

    Parameters
    ----------
    overview : polars.DataFrame or polars.LazyFrame
        :func:`workbench.analyses.compaction_overview`.
    medians : dict of str to int, optional
        :func:`workbench.analyses.token_medians`, drawn past MANY compactions.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (6.0, 3.2))
    n = height(overview)
    if n > MANY:
        cols = _columns(overview, "tokens_before", "tokens_before_from", "tokens_after")
        logged = (cols.get_column("tokens_before_from") == "log").to_numpy()
        before = np.maximum(cols.get_column("tokens_before").fill_null(1).to_numpy(), 1)
        after = np.maximum(cols.get_column("tokens_after").fill_null(1).to_numpy(), 1)
        bins = _log_bins(before, after)
        for values, color, style, label, key in ((before[logged], "C3", "-", "before (recorded by the agent)", "logged"),
                                                 (before[~logged], "C3", "--",
                                                  "before (counted from the replaced history)", "counted"),
                                                 (after, "C0", "-", "after (the summary)", "after")):
            if values.size:
                median = f", median {(medians or {})[key]:,}" if medians and key in medians else ""
                ax.hist(values, bins, histtype="step", color=color, ls=style, lw=1.2, label=f"{label}{median}")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(_tokens_label)
        ax.xaxis.set_minor_formatter(_tokens_label)
        ax.set_xlabel("tokens (o200k)")
        ax.set_ylabel("compactions")
        ax.set_title(f"{n:,} compactions", fontsize=9)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.25)  # room for the legend above the peaks
        ax.legend(fontsize=7, loc="upper left")
        return ax
    ov = collected(overview).sort("run_id", "boundary")
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
    ax.set_xticks(x, [f"{display_name(s)}\n#{b}" for s, b in zip(ov["schema"], ov["boundary"], strict=True)], fontsize=7)
    ax.set_xlabel("compaction (summary schema, boundary)")
    ax.set_ylabel("tokens (o200k)")
    ax.legend(fontsize=7)
    return ax


def entries_by_role(by_role: pl.DataFrame, *, judge: str = "lexical", ax: Axes | None = None) -> Axes:
    """Summary entries per role and schema, the part the judge finds unsupported in red
    (:func:`workbench.analyses.sjc.entries_by_role` with a ``supported`` column).

    Parameters
    ----------
    by_role : polars.DataFrame
        :func:`workbench.analyses.sjc.entries_by_role` with a ``supported`` column.
    judge : str, default "lexical"
        The judge whose scores decided support, named in the legend.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (6.0, 3.4))
    rows = by_role.sort("schema", "role")
    labels = [f"{display_name(s)}: {display_name(r)}" for s, r in zip(rows["schema"], rows["role"], strict=True)]
    unsupported = rows["unsupported"].to_numpy() if "unsupported" in rows.columns else np.zeros(rows.height)
    supported = rows["entries"].to_numpy() - unsupported
    y = np.arange(rows.height)[::-1]
    ax.barh(y, supported, color="C0", label=f"supported ({judge} judge)")
    ax.barh(y, unsupported, left=supported, color="C3", label="unsupported")
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlabel("entries")
    ax.legend(fontsize=7)
    return ax


def burden_before_after(totals: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Repeated and failed calls per call in the steps before and after each compaction, summed over
    compactions (:func:`workbench.analyses.burden_totals` of :func:`workbench.analyses.after_compaction`).

    Parameters
    ----------
    totals : polars.DataFrame
        :func:`workbench.analyses.burden_totals`.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (5.0, 3.2))
    tot = totals.filter(pl.col("window").is_in(["before", "after"]))
    order = tot["window"].to_list()
    calls = np.maximum(tot["calls"].to_numpy(), 1)
    x = np.arange(tot.height)
    ax.bar(x - 0.18, tot["repeated"].to_numpy() / calls, 0.36, color="C2", label="repeated an earlier call")
    ax.bar(x + 0.18, tot["errors"].to_numpy() / calls, 0.36, color="C3", label="returned an error")
    ax.set_xticks(x, [f"{w} ({int(c):,} calls)" for w, c in zip(order, tot["calls"], strict=True)])
    ax.set_ylabel("share of calls")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    return ax


def compaction_timeline(timeline: Frame, ax: Axes | None = None) -> Axes:
    """When each session compacted (:func:`workbench.analyses.compaction_timeline`): one line per session from
    its start to its end, a marker per compaction (filled: automatic, open: asked for by the user, a cross: the
    log does not say). Past :data:`MANY` sessions, the distribution instead: compactions by the minute of their
    session they came at, stacked by trigger, in a frame of fixed height.

    Parameters
    ----------
    timeline : polars.DataFrame or polars.LazyFrame
        :func:`workbench.analyses.compaction_timeline`.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    n = _columns(timeline, pl.col("run_id").n_unique()).item() if height(timeline) else 0
    if n > MANY:
        _, ax = _axes(ax, (6.0, 3.2))
        cols = _columns(timeline, "minutes", pl.col("trigger").fill_null("?"))
        minutes = cols.get_column("minutes").to_numpy()
        lo = min(0.0, float(minutes.min()))  # (a clock set back can put a compaction before its session's start)
        bins = np.linspace(lo, max(float(minutes.max()), lo + 1e-9), 41).tolist()
        parts = [(minutes[(cols.get_column("trigger") == t).to_numpy()], c, label)
                 for t, c, label in (("auto", "C3", "automatic"), ("manual", "C1", "asked for (/compact)"),
                                     ("?", "0.6", "trigger not recorded"))]
        parts = [p for p in parts if p[0].size]
        ax.hist([p[0] for p in parts], bins, stacked=True, color=[p[1] for p in parts],
                label=[f"compaction, {p[2]} ({p[0].size:,})" for p in parts])
        ax.set_xlabel("minutes since the session started")
        ax.set_ylabel("compactions")
        ax.set_title(f"{len(minutes):,} compactions in {n:,} sessions", fontsize=9)
        ax.set_ylim(0, ax.get_ylim()[1] * 1.25)
        ax.legend(fontsize=7, loc="upper right")
        return ax
    timeline = collected(timeline)
    _, ax = _axes(ax, (6.0, 0.9 + 0.35 * max(n, 1)))
    sessions = timeline.select("run_id", "session_minutes").unique("run_id", keep="first", maintain_order=True) \
        .sort("run_id")  # each session's line, once
    y = {r: i for i, r in enumerate(sessions.get_column("run_id").to_list()[::-1])}
    for run_id, length in sessions.iter_rows():
        ax.hlines(y[run_id], 0, length, color="0.7", lw=1)
    for trigger, marker, face, label in (("auto", "o", "C3", "automatic"), ("manual", "o", "none", "asked for (/compact)"),
                                         ("?", "x", "C3", "trigger not recorded")):
        rows = timeline.filter(pl.col("trigger").fill_null("?") == trigger)
        if rows.height:
            ax.scatter(rows.get_column("minutes"), [y[r] for r in rows.get_column("run_id")], marker=marker,
                       facecolors=face, edgecolors="C3" if marker == "o" else None, zorder=3,
                       label=f"compaction, {label}")
    if not timeline.height:
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no session recorded when it compacted", transform=ax.transAxes, ha="center", va="center")
    else:
        ax.set_yticks(list(y.values()), [r[:8] + ("/" + r.rsplit("/", 1)[1][:8] if "/" in r else "") for r in y],
                      fontsize=7)
    ax.set_xlabel("minutes since the session started")
    if timeline.height:
        ax.legend(fontsize=7, loc="lower right")
    return ax


def prompt_cache(cache: Frame, means: pl.DataFrame | None = None, ax: Axes | None = None) -> Axes:
    """The prompt of the last call before and the first call after each compaction
    (:func:`workbench.analyses.prompt_cache`), stacked: read from the prompt cache, written to it, sent fresh.
    Past :data:`MANY` compactions, two bars: the mean call before and the mean call after a compaction, from
    ``means`` (:func:`workbench.analyses.prompt_cache_means`), which that case needs.

    Parameters
    ----------
    cache : polars.DataFrame or polars.LazyFrame
        :func:`workbench.analyses.prompt_cache`.
    means : polars.DataFrame, optional
        :func:`workbench.analyses.prompt_cache_means`, drawn past MANY compactions.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    _, ax = _axes(ax, (6.0, 3.2))
    parts = (("cache_read_tokens", "C0", "read from the cache"), ("cache_creation_tokens", "C1", "written to the cache"),
             ("fresh_tokens", "C2", "fresh input"))
    n = _columns(cache, pl.struct("run_id", "boundary").n_unique()).item() if height(cache) else 0
    if n > MANY:
        if means is None:
            raise ValueError(f"prompt_cache: past {MANY} compactions the figure draws their means: pass "
                             "means=workbench.analyses._coding_agents.prompt_cache_means(cache)")
        by = {w: means.filter(pl.col("window") == w) for w in ("before", "after")}
        calls = {w: int(f.get_column("calls").item()) if f.height else 0 for w, f in by.items()}
        bottom = np.zeros(2)
        for column, color, label in parts:
            values = np.array([float(by[w].get_column(column).item()) if calls[w] else 0.0 for w in ("before", "after")])
            ax.bar([0, 1], values, 0.6, bottom=bottom, color=color, label=label)
            bottom = bottom + values
        ax.set_xticks([0, 1], [f"last call before ({calls['before']:,})", f"first call after ({calls['after']:,})"])
        ax.set_ylim(0, max(float(bottom.max()), 1.0) * 1.45)  # room for the legend above the bars
        ax.set_ylabel("mean prompt tokens of the call")
        ax.set_title(f"{n:,} compactions", fontsize=9)
        ax.legend(fontsize=7)
        return ax
    rows = collected(cache)  # in compaction order, before then after
    keys = list(zip(rows.get_column("run_id"), rows.get_column("boundary"), strict=True))
    group = {k: i for i, k in enumerate(dict.fromkeys(keys))}
    x = np.array([group[k] * 2.6 + (w == "after") for k, w in zip(keys, rows.get_column("window"), strict=True)],
                 dtype=float)
    bottom = np.zeros(rows.height)
    for column, color, label in parts:
        values = rows.get_column(column).to_numpy()
        ax.bar(x, values, 0.8, bottom=bottom, color=color, label=label)
        bottom = bottom + values
    ax.set_xticks(x, [f"#{b} {w}" for b, w in zip(rows.get_column("boundary"), rows.get_column("window"), strict=True)],
                  fontsize=7)
    ax.set_ylabel("prompt tokens of the call")
    ax.legend(fontsize=7)
    return ax


def unsupported_by_role(shares: pl.DataFrame, *, judge: str = "lexical", ax: Axes | None = None) -> Axes:
    """The unsupported share of each role's entries with its interval
    (:func:`workbench.analyses.sjc.unsupported_by_role`), one row per schema and role; a role whose entries come
    from one session is marked as having no interval.

    Parameters
    ----------
    shares : polars.DataFrame
        :func:`workbench.analyses.sjc.unsupported_by_role`.
    judge : str, default "lexical"
        The judge whose scores decided support, named on the axis.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    _, ax = _axes(ax, (5.5, 0.9 + 0.4 * shares.height))
    rows = shares.sort("schema", "role")
    y = np.arange(rows.height)[::-1]
    est = rows.get_column("estimate").to_numpy()
    low, high = rows.get_column("ci_low").to_numpy(), rows.get_column("ci_high").to_numpy()
    err = np.vstack([est - low, high - est])
    ax.errorbar(est, y, xerr=np.nan_to_num(err), fmt="o", color="C3", capsize=3)
    for yi, e, lo in zip(y, est, low, strict=True):
        if np.isnan(lo):  # entries of one session: no interval (resampling one session only repeats it)
            ax.annotate("one session: no interval", (e, yi), xytext=(6, 4), textcoords="offset points", fontsize=7,
                        color="0.4")
    ax.set_yticks(y, [f"{display_name(s)}: {display_name(r)} (n={n})" for s, r, n in zip(rows["schema"], rows["role"], rows["entries"], strict=True)],
                  fontsize=8)
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel(f"unsupported share ({judge} judge), 95% interval over sessions")
    return ax


__all__ = ["burden_before_after", "compaction_timeline", "compaction_tokens", "entries_by_role", "MANY",
           "prompt_cache", "unsupported_by_role"]
