"""What a coding-agent session cost: its per-model usage (``runs.usage_by_model``, written by the Claude Code and
Codex importers) priced from a table shipped with the project, offline, as ccusage prices it.

:data:`PRICES` is dated (:data:`PRICES_AS_OF`) and quotes USD per million tokens for fresh input, output, cache
reads, and cache writes of the 5-minute and 1-hour tiers (Anthropic's prompt caching; OpenAI's cached input is a
cache read and has no write). A model's dated snapshot name (``claude-sonnet-4-5-20250929``) takes the price of
its family name; a model the table does not know is priced at nothing and said (``price_known`` false, ``reason``).
Checked against ccusage 20.0.24's offline costs (``tools/ccusage_compare.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

#: the day the table was last checked
PRICES_AS_OF = "2026-12-02"


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write_5m: float = 0.0
    cache_write_1h: float = 0.0


#: the providers' list prices (Anthropic's and OpenAI's pricing pages, the prices ccusage's offline table holds);
#: long-context surcharges are not applied
PRICES: dict[str, ModelPrice] = {
    "claude-opus-4-5": ModelPrice(5.0, 25.0, 0.50, 6.25, 10.0),
    "claude-opus-4-1": ModelPrice(15.0, 75.0, 1.50, 18.75, 30.0),
    "claude-opus-4": ModelPrice(15.0, 75.0, 1.50, 18.75, 30.0),
    "claude-sonnet-4-5": ModelPrice(3.0, 15.0, 0.30, 3.75, 6.0),
    "claude-sonnet-4": ModelPrice(3.0, 15.0, 0.30, 3.75, 6.0),
    "claude-3-7-sonnet": ModelPrice(3.0, 15.0, 0.30, 3.75, 6.0),
    "claude-haiku-4-5": ModelPrice(1.0, 5.0, 0.10, 1.25, 2.0),
    "claude-3-5-haiku": ModelPrice(0.80, 4.0, 0.08, 1.0, 1.6),
    "gpt-5": ModelPrice(1.25, 10.0, 0.125),
    "gpt-5-codex": ModelPrice(1.25, 10.0, 0.125),
    "gpt-5-mini": ModelPrice(0.25, 2.0, 0.025),
}

_SNAPSHOT = re.compile(r"-(\d{8}|latest)$")


def price_of(model: str, prices: Mapping[str, ModelPrice] = PRICES) -> ModelPrice | None:
    """The price of ``model``: its own entry, else its family's (the name without a date suffix), else None.

    Parameters
    ----------
    model : str
        A model name as a log gives it.
    prices : mapping of str to ModelPrice, default PRICES
        The table.

    Returns
    -------
    ModelPrice or None
        Its price, or None when the table does not know it.
    """
    name = model.strip().lower()
    if name in prices:
        return prices[name]
    base = _SNAPSHOT.sub("", name)
    return prices.get(base)


def part_cost(model: str | None, counts: Mapping[str, int], prices: Mapping[str, ModelPrice] = PRICES, *,
              memo: dict[str, ModelPrice | None] | None = None) -> float | None:
    """USD for ``counts`` (``input``, ``output``, ``cache_read``, ``cache_creation_5m``, ``cache_creation_1h``) of
    ``model``; None when the table has no price for it (never 0: a sum must not undercount without saying so),
    except that no tokens cost nothing whatever the model (Claude Code's ``<synthetic>`` replies). ``memo``: a
    dict kept by the caller across calls with the same ``prices``, each model's price looked up in it once (a
    view of the 1 GB home's 47,353 sessions: 0.20 -> 0.18 s)."""
    get = counts.get
    if not (get("input", 0) or get("output", 0) or get("cache_read", 0) or get("cache_creation_5m", 0)
            or get("cache_creation_1h", 0)):
        return 0.0
    if not model:
        return None
    if memo is None:
        price = price_of(model, prices)
    elif model in memo:
        price = memo[model]
    else:
        price = memo[model] = price_of(model, prices)
    return None if price is None else _priced(price, counts)


def _priced(price: ModelPrice, counts: Mapping[str, int]) -> float:
    """USD for ``counts`` at ``price`` (per million tokens of each kind)."""
    return (counts.get("input", 0) * price.input + counts.get("output", 0) * price.output
            + counts.get("cache_read", 0) * price.cache_read + counts.get("cache_creation_5m", 0) * price.cache_write_5m
            + counts.get("cache_creation_1h", 0) * price.cache_write_1h) / 1e6


def session_costs(runs: pl.DataFrame, prices: Mapping[str, ModelPrice] = PRICES) -> pl.DataFrame:
    """The cost of every run per model, from its ``usage_by_model``.

    Parameters
    ----------
    runs : polars.DataFrame
        Runs with ``run_id`` and ``usage_by_model`` (the Claude Code and Codex importers write it).
    prices : mapping of str to ModelPrice, default PRICES
        The table (USD per million tokens).

    Returns
    -------
    polars.DataFrame
        One row per (``run_id``, ``model``): the token counts, ``cost_usd`` (0 when the price is unknown),
        ``price_known`` and ``reason`` (which model has no price); a run without usage has no rows.
    """
    import polars as pl

    rows = []
    if "usage_by_model" not in runs.columns:
        raise ValueError("session_costs: the runs have no usage_by_model column (import Claude Code or Codex "
                         "sessions with this version)")
    for run_id, raw in runs.select("run_id", "usage_by_model").iter_rows():
        if not raw:
            continue
        for model, u in sorted(json.loads(raw).items()):
            price = price_of(model, prices)
            counts = {k: int(u.get(k, 0)) for k in ("input", "output", "cache_read", "cache_creation_5m",
                                                     "cache_creation_1h", "reasoning")}
            cost = 0.0 if price is None else _priced(price, counts)
            rows.append({"run_id": run_id, "model": model, **counts, "cost_usd": cost,
                         "price_known": price is not None,
                         "reason": None if price is not None else f"no price for {model!r} in the table of "
                                                                   f"{PRICES_AS_OF}"})
    schema = {"run_id": pl.Utf8, "model": pl.Utf8, "input": pl.Int64, "output": pl.Int64, "cache_read": pl.Int64,
              "cache_creation_5m": pl.Int64, "cache_creation_1h": pl.Int64, "reasoning": pl.Int64,
              "cost_usd": pl.Float64, "price_known": pl.Boolean, "reason": pl.Utf8}
    return pl.DataFrame(rows, schema=schema)


#: the token columns of a usage view (:func:`usage_view`), with their headers
USAGE_TOKENS = (("input", "input"), ("output", "output"), ("cache_read", "cache read"), ("cache_write", "cache write"))


def usage_view(rows: list[dict[str, Any]], by: str = "session") -> list[dict[str, Any]]:
    """The usage rows per session, UTC day, model or project: what ``workbench usage`` shows.

    Parameters
    ----------
    rows : list of dict
        :func:`workbench.adapters.usage_rows`: one per session, with its ``parts`` (day and model).
    by : {"session", "day", "model", "project"}
        The grouping.

    Returns
    -------
    list of dict
        One per group: its key, the tokens (``cache_write``: both cache-write tiers), ``replies``, ``cost_usd`` from
        the project's price table (None when a model in it has no price: unknown, never 0) and ``unpriced`` (those
        models).
    """
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    known: dict[str, Any] = {}  # each model's price, looked up once

    for r in rows:
        if by == "session" and not r.get("parts"):  # a session that spent nothing is still a session
            groups[(r["client"], r["session_id"])] = {
                "client": r["client"], "session_id": r["session_id"], "project_dir": r["project_dir"], "day": None,
                "models": list(r.get("models") or []), **{k: 0 for k, _ in USAGE_TOKENS}, "replies": 0, "cost_usd": 0.0,
                "unpriced": []}
        for part in r.get("parts", []):
            if by == "session":
                key: tuple[Any, ...] = (r["client"], r["session_id"])
            elif by == "day":
                key = (part["day"],)
            elif by == "model":
                key = (part["model"],)
            else:
                key = (r["project_dir"] or f"({r['client']})",)
            g = groups.get(key)
            if g is None:  # (made once a group, not once a part)
                if by == "session":
                    head = {"client": r["client"], "session_id": r["session_id"], "project_dir": r["project_dir"],
                            "day": None, "models": []}
                else:
                    head = {{"day": "day", "model": "model"}.get(by, "project_dir"): key[0]}
                g = groups[key] = {**head, **{k: 0 for k, _ in USAGE_TOKENS}, "replies": 0, "cost_usd": 0.0,
                                   "unpriced": []}
            g["input"] += part["input"]
            g["output"] += part["output"]
            g["cache_read"] += part["cache_read"]
            g["cache_write"] += part["cache_creation_5m"] + part["cache_creation_1h"]
            g["replies"] += part["replies"]
            if by == "session":
                if part["day"] and (g["day"] is None or part["day"] < g["day"]):
                    g["day"] = part["day"]  # the session's first day
                if part["model"] and part["model"] != "<synthetic>" and part["model"] not in g["models"]:
                    g["models"].append(part["model"])
            cost = part_cost(part["model"], part, memo=known)
            if cost is None:
                if part["model"] not in g["unpriced"]:
                    g["unpriced"].append(part["model"])
            elif g["cost_usd"] is not None:
                g["cost_usd"] += cost
            if g["unpriced"]:
                g["cost_usd"] = None
    out = list(groups.values())
    return sorted(out, key=lambda g: str(g.get("day") or g.get("model") or g.get("project_dir") or "")) \
        if by != "session" else out


def usage_view_frame(view: list[dict[str, Any]]) -> pl.DataFrame:
    """A grouped :func:`usage_view` (by day, model or project) as a table: one row per group, the unpriced models
    joined by spaces.

    Parameters
    ----------
    view : list of dict
        :func:`usage_view`'s rows.

    Returns
    -------
    polars.DataFrame
        What ``workbench usage --by ... --out`` writes.
    """
    import polars as pl

    return pl.DataFrame([{k: v for k, v in g.items() if k not in ("models", "unpriced")}
                         | {"unpriced": " ".join(m for m in g["unpriced"] if m)} for g in view])


__all__ = ["ModelPrice", "part_cost", "PRICES", "PRICES_AS_OF", "price_of", "session_costs", "USAGE_TOKENS",
           "usage_view", "usage_view_frame"]
