"""What a coding-agent session cost, as ccusage computes it in its default mode, offline.

A reply that logged its own cost (Claude Code's ``costUSD``) costs that; any other reply costs its tokens times
its model's price. Prices come from a dated snapshot of LiteLLM's model price list, the list ccusage prices from
(``prices.json`` beside this module: its Anthropic and OpenAI models, written by ``tools/refresh_prices.py``;
:data:`PRICES_AS_OF`, :data:`PRICES_SOURCE`). The rules ccusage applies to that list, measured against ccusage
20.0.24 (``tools/ccusage_compare.py --probe``), are written here:

* a model's dated name (``claude-sonnet-4-5-20250929``) takes its own entry, else its family's (the name
  without the date); a provider prefix (``anthropic/``) is dropped;
* a cache read the entry does not price costs a tenth of the input price, a 5-minute cache write 1.25 times
  it; a 1-hour cache write costs twice the input price whatever the entry says (Anthropic's multipliers; LiteLLM
  1.80.0 gives ``claude-3-5-haiku-20241022`` 6.00 a million, ccusage charges 1.60);
* tokens of one kind beyond 200,000 in one reply cost the entry's
  long-context price where it has one (LiteLLM's ``*_above_200k_tokens``);
* a fast-mode reply (``"speed": "fast"``, read as the model name with ``-fast`` appended) costs its model's price
  times the fast multiplier: LiteLLM's where it gives one, else ccusage's own (the file's ``fast_overrides``),
  else 1.

A model the snapshot does not know has no price: its replies are counted as unpriced, never as costing 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens: the base prices, the long-context prices (tokens of a kind beyond 200,000 in one
    reply; None where the model has none, and the base price applies), and the fast-mode multiplier."""

    input: float
    output: float
    cache_read: float
    cache_write_5m: float = 0.0
    cache_write_1h: float = 0.0
    input_above: float | None = None
    output_above: float | None = None
    cache_read_above: float | None = None
    cache_write_5m_above: float | None = None
    cache_write_1h_above: float | None = None
    fast: float = 1.0

    @classmethod
    def from_entry(cls, entry: Mapping[str, float], fast: float | None = None) -> ModelPrice:
        """A snapshot entry (``prices.json``) with ccusage's rules for what it leaves out."""
        fresh = float(entry["input"])
        above = entry.get("input_above_200k")
        return cls(input=fresh, output=float(entry["output"]),
                   cache_read=float(entry.get("cache_read", 0.1 * fresh)),
                   cache_write_5m=float(entry.get("cache_write_5m", 1.25 * fresh)),
                   cache_write_1h=2.0 * fresh,  # ccusage's rule, whatever the entry says
                   input_above=above, output_above=entry.get("output_above_200k"),
                   cache_read_above=entry.get("cache_read_above_200k"),
                   cache_write_5m_above=entry.get("cache_write_5m_above_200k"),
                   cache_write_1h_above=None if above is None else 2.0 * float(above),
                   fast=float(entry.get("fast", fast or 1.0)))


def _load() -> tuple[dict[str, ModelPrice], str, str]:
    """``prices.json``'s models as :class:`ModelPrice`, ccusage's fast-mode multipliers (``fast_overrides``, by
    family name) given to the models of those families that LiteLLM gives none, a family listed only with its
    date also under its own name; with the snapshot's date and source."""
    document = json.loads((Path(__file__).with_name("prices.json")).read_text(encoding="utf-8"))
    overrides = document.get("fast_overrides", {})
    prices = {name: ModelPrice.from_entry(entry, overrides.get(_SNAPSHOT.sub("", name)))
              for name, entry in document["models"].items()}
    for family in overrides:
        dated = sorted(m for m in prices if _SNAPSHOT.sub("", m) == family)
        if family not in prices and dated:
            prices[family] = prices[dated[-1]]
    return prices, document["as_of"], document["source"]


_SNAPSHOT = re.compile(r"-(\d{8}|latest)$")
_FAST = "-fast"

#: the price table: LiteLLM's Anthropic and OpenAI models, with ccusage's rules applied (:class:`ModelPrice`)
PRICES: dict[str, ModelPrice]
#: the day the snapshot was taken, and what it was taken from
PRICES_AS_OF: str
PRICES_SOURCE: str
PRICES, PRICES_AS_OF, PRICES_SOURCE = _load()


def price_of(model: str, prices: Mapping[str, ModelPrice] = PRICES) -> ModelPrice | None:
    """The price of ``model`` as ccusage finds it: its own entry, else its family's (the name without a date
    suffix), a provider prefix dropped; a fast-mode name (``...-fast``) its model's price times its multiplier.

    Parameters
    ----------
    model : str
        A model name as a log gives it (``-fast`` appended for a fast-mode reply).
    prices : mapping of str to ModelPrice, default PRICES
        The table.

    Returns
    -------
    ModelPrice or None
        Its price, or None when the table does not know it.
    """
    name = model.strip().lower()
    fast = name.endswith(_FAST) and name not in prices
    if fast:
        name = name[: -len(_FAST)]
    price = None
    for candidate in (name, name.rsplit("/", 1)[-1]):
        price = prices.get(candidate) or prices.get(_SNAPSHOT.sub("", candidate))
        if price is not None:
            break
    if price is None or not fast or price.fast == 1.0:
        return price
    k = price.fast
    return ModelPrice(**{f: v * k if isinstance(v, float) and f != "fast" else v for f, v in price.__dict__.items()})


#: each kind of token a part counts, with its price field and its tokens beyond the long-context tier
_KINDS = (("input", "input", "input_over_tier"), ("output", "output", "output_over_tier"),
          ("cache_read", "cache_read", "cache_read_over_tier"),
          ("cache_creation_5m", "cache_write_5m", "cache_creation_5m_over_tier"),
          ("cache_creation_1h", "cache_write_1h", "cache_creation_1h_over_tier"))


def part_cost(model: str | None, counts: Mapping[str, Any], prices: Mapping[str, ModelPrice] = PRICES, *,
              memo: dict[str, ModelPrice | None] | None = None) -> float | None:
    """USD for a part's replies (``counts``: ``input``, ``output``, ``cache_read``, ``cache_creation_5m``,
    ``cache_creation_1h``, and each one's ``*_over_tier`` tokens beyond 200,000 in a reply) of ``model``: their
    logged cost where they logged one (``cost_logged``), else their tokens priced; None when the table has no price
    for the model (never 0: a sum must not undercount without saying so), except that no tokens cost nothing
    whatever the model (Claude Code's ``<synthetic>`` replies). ``memo``: a dict kept by the caller across calls
    with the same ``prices``, each model's price looked up in it once."""
    logged = counts.get("cost_logged")
    if logged is not None:
        return float(logged)
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


def _priced(price: ModelPrice, counts: Mapping[str, Any]) -> float:
    """USD for ``counts`` at ``price``: every token at its kind's price, and the tokens beyond the tier at the
    difference between the long-context price and that. Counts with no tokens beyond the tier (most parts) are
    summed in one expression, in the loop's order (the same float)."""
    get = counts.get
    if not (get("input_over_tier") or get("output_over_tier") or get("cache_read_over_tier")
            or get("cache_creation_5m_over_tier") or get("cache_creation_1h_over_tier")):
        return (get("input", 0) * price.input + get("output", 0) * price.output
                + get("cache_read", 0) * price.cache_read + get("cache_creation_5m", 0) * price.cache_write_5m
                + get("cache_creation_1h", 0) * price.cache_write_1h) / 1e6
    total = 0.0
    for kind, field, over in _KINDS:
        base = getattr(price, field)
        total += counts.get(kind, 0) * base
        above = getattr(price, field + "_above")
        if above is not None and counts.get(over, 0):
            total += counts[over] * (above - base)
    return total / 1e6


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
        :func:`workbench.adapters.usage_rows`: one per session, with its ``parts`` (day, model, logged cost).
    by : {"session", "day", "model", "project"}
        The grouping.

    Returns
    -------
    list of dict
        One per group: its key, the tokens (``cache_write``: both cache-write tiers), ``replies``, ``cost_usd`` (the
        cost of its priced replies, as ccusage computes it: ``part_cost``; None only when none of its replies is
        priced and some are not), ``unpriced_replies`` (replies of a model the price table does not know) and
        ``unpriced`` (those models). Each part is priced once whatever the grouping, so the costs of any grouping
        add up to the same total.
    """
    view = UsageView(by)
    view.add(rows)
    return view.result()


class UsageView:
    """:func:`usage_view` made a batch of rows at a time, while the rows are still being counted: ``add`` each
    batch in the rows' order, then take ``result``. The groups are those of :func:`usage_view` on all the rows
    added, with the same sums in the same order (a cost is a float: added in another order it could differ in
    its last digit). ``clear`` forgets every row added (a pass that starts over).

    Parameters
    ----------
    by : {"session", "day", "model", "project"}
        The grouping.
    """

    def __init__(self, by: str = "session") -> None:
        if by not in ("session", "day", "model", "project"):
            raise ValueError(f"usage_view: by must be session, day, model or project, got {by!r}")
        self.by = by
        self.clear()

    def clear(self) -> None:
        """Forget every row added."""
        self._groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        self._known: dict[str, Any] = {}  # each model's price, looked up once
        self._taken = False

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Add rows of :func:`workbench.adapters.usage_rows`, in their order, after those added before."""
        if self._taken:
            raise RuntimeError("UsageView.add: the result was taken (make a new view, or clear this one)")
        by, groups, known = self.by, self._groups, self._known

        def empty(head: dict[str, Any]) -> dict[str, Any]:
            return {**head, **{k: 0 for k, _ in USAGE_TOKENS}, "replies": 0, "cost_usd": 0.0,
                    "unpriced_replies": 0, "unpriced": []}

        for r in rows:
            if by == "session" and not r.get("parts"):  # a session that spent nothing is still a session
                groups[(r["client"], r["session_id"])] = empty({
                    "client": r["client"], "session_id": r["session_id"], "project_dir": r["project_dir"],
                    "day": None, "models": list(r.get("models") or [])})
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
                        head = {"client": r["client"], "session_id": r["session_id"],
                                "project_dir": r["project_dir"], "day": None, "models": []}
                    else:
                        head = {{"day": "day", "model": "model"}.get(by, "project_dir"): key[0]}
                    g = groups[key] = empty(head)
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
                    g["unpriced_replies"] += part["replies"]
                    if part["model"] not in g["unpriced"]:
                        g["unpriced"].append(part["model"])
                else:
                    g["cost_usd"] += cost

    def result(self) -> list[dict[str, Any]]:
        """The groups of every row added (:func:`usage_view`'s return), sessions in the order each first came,
        other groupings sorted by their key. Taken once: the view takes no rows after it."""
        if self._taken:
            raise RuntimeError("UsageView.result: already taken (make a new view, or clear this one)")
        self._taken = True
        out = list(self._groups.values())
        for g in out:
            if g["unpriced"] and not g["cost_usd"] and g["replies"] == g["unpriced_replies"]:
                g["cost_usd"] = None  # nothing in it is priced: its cost is unknown, not 0
        return sorted(out, key=lambda g: str(g.get("day") or g.get("model") or g.get("project_dir") or "")) \
            if self.by != "session" else out


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


__all__ = ["ModelPrice", "PRICES", "PRICES_AS_OF", "PRICES_SOURCE", "price_of", "session_costs", "UsageView",
           "usage_view", "usage_view_frame"]
