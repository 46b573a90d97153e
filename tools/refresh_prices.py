"""Write the price table ``workbench usage`` reads (``workbench/analyses/prices.json``) from LiteLLM's model price
list, the list ccusage prices from.

LiteLLM is not a dependency: the list is read from an installed ``litellm`` package, from a downloaded wheel, or
from the JSON itself, and only its Anthropic and OpenAI part is kept, in USD per million tokens::

    pip download litellm==1.100.0 --no-deps -d /tmp/ll && pip download litellm==1.80.0 --no-deps -d /tmp/ll
    .venv/bin/python tools/refresh_prices.py --wheel /tmp/ll/litellm-1.100.0-*.whl \
        --wheel /tmp/ll/litellm-1.80.0-py3-none-any.whl --as-of 2026-12-06   # the committed snapshot

The committed snapshot takes LiteLLM 1.100.0 (the list of ccusage 20.0.24's time: it prices what that ccusage
prices, and Claude Opus 5.5, which it does not, is not in it) and, for the older models 1.100.0 dropped and ccusage
still prices (``claude-3-5-sonnet-20241022``), LiteLLM 1.80.0's entries.

Kept for each model: its own entry where LiteLLM's provider is ``anthropic`` or ``openai``; a Claude model that
LiteLLM lists only under Bedrock (``anthropic.claude-3-sonnet-20240229-v1:0``) or Vertex
(``vertex_ai/claude-3-sonnet@20240229``) under its Anthropic name, as ccusage finds it. The numbers are LiteLLM's,
unchanged; the rules ccusage applies to them (cache prices it derives from the input price where an entry has
none, fast mode's multiplier, the 200k-token tier) are in ``workbench/analyses/_pricing.py``. The file's
``fast_overrides`` are ccusage's own fast-mode multipliers for models LiteLLM gives none (measured against
ccusage 20.0.24 with ``tools/ccusage_compare.py --probe``), kept as they are unless ``--fast-overrides`` is given.
"""

from __future__ import annotations

import argparse
import json
import re
import zipfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "workbench" / "analyses" / "prices.json"
LIST = "litellm/model_prices_and_context_window_backup.json"

#: LiteLLM's fields -> the table's (USD a token -> USD per million tokens)
FIELDS = {
    "input_cost_per_token": "input",
    "output_cost_per_token": "output",
    "cache_read_input_token_cost": "cache_read",
    "cache_creation_input_token_cost": "cache_write_5m",
    "cache_creation_input_token_cost_above_1hr": "cache_write_1h",
    "input_cost_per_token_above_200k_tokens": "input_above_200k",
    "output_cost_per_token_above_200k_tokens": "output_above_200k",
    "cache_read_input_token_cost_above_200k_tokens": "cache_read_above_200k",
    "cache_creation_input_token_cost_above_200k_tokens": "cache_write_5m_above_200k",
}
_BEDROCK = re.compile(r"anthropic\.(claude-[a-z0-9.-]+?)-v\d+:\d+")
_VERTEX = re.compile(r"vertex_ai/(claude-[a-z0-9.-]+)@(\d{8})")


def entry(raw: dict) -> dict[str, float] | None:
    """A LiteLLM entry's prices per million tokens, or None without an input and an output price."""
    out = {name: round(float(raw[key]) * 1e6, 9) for key, name in FIELDS.items()
           if isinstance(raw.get(key), (int, float))}
    fast = (raw.get("provider_specific_entry") or {}).get("fast")
    if isinstance(fast, (int, float)):
        out["fast"] = float(fast)
    return out if "input" in out and "output" in out else None


def table(listings: list[dict[str, dict]]) -> dict[str, dict[str, float]]:
    """The Anthropic and OpenAI models of LiteLLM lists (the first list's entry of a model wins; a later, older
    list adds the models the first dropped), then the Claude models they list only under Bedrock or Vertex."""
    models: dict[str, dict[str, float]] = {}
    for listing in listings:
        for key, raw in listing.items():
            if isinstance(raw, dict) and raw.get("litellm_provider") in ("anthropic", "openai"):
                name = key.split("/", 1)[1] if key.startswith(("anthropic/", "openai/")) else key
                if name not in models and (prices := entry(raw)) is not None:
                    models[name] = prices
    for listing in listings:
        for key, raw in sorted(listing.items()):
            m = _BEDROCK.fullmatch(key) or _VERTEX.fullmatch(key)
            if m is None or not isinstance(raw, dict):
                continue
            name = "-".join(g for g in m.groups())
            if name not in models and (prices := entry(raw)) is not None:
                models[name] = prices
    return dict(sorted(models.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--wheel", type=Path, action="append",
                        help="a downloaded litellm wheel; again for an older one whose models the first dropped")
    source.add_argument("--json", type=Path, help="LiteLLM's model_prices_and_context_window JSON")
    source.add_argument("--installed", action="store_true", help="the litellm package installed here")
    parser.add_argument("--as-of", default=date.today().isoformat(), help="the snapshot's date")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.wheel:
        listings = []
        for wheel in args.wheel:
            with zipfile.ZipFile(wheel) as whl:
                listings.append(json.loads(whl.read(LIST)))
        version = " (then ".join(w.name.split("-")[1] for w in args.wheel) + ")" * (len(args.wheel) - 1)
    elif args.json:
        listings, version = [json.loads(args.json.read_text(encoding="utf-8"))], "unknown"
    else:
        import importlib.metadata
        import importlib.resources

        listings = [json.loads(importlib.resources.files("litellm").joinpath(LIST.split("/", 1)[1]).read_text())]
        version = importlib.metadata.version("litellm")
    old = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    models = table(listings)
    document = {
        "as_of": args.as_of,
        "source": f"LiteLLM {version}, {LIST.split('/', 1)[1]}: its Anthropic and OpenAI models (USD per million "
                  "tokens), and the Claude models it lists only under Bedrock or Vertex",
        "fast_overrides": old.get("fast_overrides", {}),
        "fast_overrides_source": old.get("fast_overrides_source", ""),
        "models": models,
    }
    args.out.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(models)} models from LiteLLM {version}, as of {args.as_of}")


if __name__ == "__main__":
    main()
