"""tau-bench ``historical_trajectories`` files (a JSON list of runs), read through the chat adapter."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl

from workbench.adapters._openai_chat import chat_to_run, message_tokens
from workbench.adapters._staging import RunTables
from workbench._util.jsonl import json_error, parse_json
from workbench.errors import describe_value
from workbench.errors import SchemaError


def is_success(reward: float) -> bool:
    """tau-bench's success: a reward within 1e-6 of 1 (its ``1 - 1e-6 <= reward <= 1 + 1e-6``).

    A reward of 0.9999999 counts; 1.5 (a harness that sums rewards) does not, unlike ``reward >= 1``.
    """
    return abs(reward - 1.0) <= 1e-6


def read_tau_bench(path: str | os.PathLike[str], *, domain: str | None = None) -> dict[str, pl.DataFrame]:
    """Load a tau-bench ``historical_trajectories`` file (a JSON list of runs) through the chat adapter.

    ``task_id`` and ``trial`` (as ``replicate``) identify a run, success is tau-bench's own rule
    (``is_success``: ``|reward - 1| <= 1e-6``),
    the user simulator's turns are kept as user messages (observations with role ``user``).
    Steps get token counts computed offline from the messages: ``input_tokens`` /
    ``output_tokens`` in o200k (system prompt excluded) and ``input_tokens_cl100k`` /
    ``output_tokens_cl100k`` in cl100k, which FOCUS reports with.

    Parameters
    ----------
    path : str or os.PathLike
        A tau-bench ``historical_trajectories`` JSON file.
    domain : str, optional
        The domain (``airline``, ``retail``): the run ids' and ``subset``'s prefix; the file's stem when None.

    Returns
    -------
    dict of str to polars.DataFrame
        The runs and steps.
    """
    path = Path(path)
    if path.is_dir():
        raise SchemaError("is a directory, expected a tau-bench JSON file", file=str(path))
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        data = parse_json(raw.decode("utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError as exc:
        raise SchemaError(file=str(path), line=raw[:exc.start].count(b"\n") + 1, expected="UTF-8 text",
                          got=f"byte 0x{raw[exc.start]:02x}") from None
    except (ValueError, RecursionError) as exc:
        expected, got = json_error(exc, "")
        line = exc.lineno if isinstance(exc, json.JSONDecodeError) else 1
        raise SchemaError(file=str(path), line=line, expected=f"a tau-bench JSON list ({expected})", got=got) from None
    if not isinstance(data, list) or not data:
        raise SchemaError(file=str(path), line=1, expected="a non-empty JSON list of runs", got=describe_value(data))
    domain = domain or path.stem
    builder = RunTables(path)
    for k, rec in enumerate(data):
        where = f"[{k}]"
        try:
            if not isinstance(rec, dict):
                raise SchemaError(field=where, expected="a run object", got=describe_value(rec))
            for field_name, ok in (("task_id", lambda v: isinstance(v, int) and not isinstance(v, bool)),
                                   ("trial", lambda v: isinstance(v, int) and not isinstance(v, bool)),
                                   ("reward", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)),
                                   ("traj", lambda v: isinstance(v, list))):
                if not ok(rec.get(field_name)):
                    raise SchemaError(field=f"{where}.{field_name}", expected="a number" if field_name != "traj"
                                      else "a list of chat messages", got=describe_value(rec.get(field_name)))
            traj = rec["traj"]
            record = {"run_id": f"{domain}/t{rec['task_id']}/r{rec['trial']}", "task_id": str(rec["task_id"]),
                      "scenario_id": str(rec["task_id"]), "subset": domain, "method": "no_compression",
                      "model": rec.get("model") or domain.split("-")[0], "replicate": int(rec["trial"]),
                      "reward": float(rec["reward"]), "success": is_success(float(rec["reward"])), "messages": traj}
            run, steps, comps = chat_to_run(record)  # task = the first user message: what the agent saw
            info_task = (rec.get("info") or {}).get("task") or {}
            instruction = info_task.get("instruction") if isinstance(info_task, dict) else None
            run["user_instruction"] = instruction if isinstance(instruction, str) else None  # the simulator's brief
            for key in ("actions", "outputs"):  # tau-bench's evaluation: the ground-truth actions and outputs
                value = info_task.get(key) if isinstance(info_task, dict) else None
                run[f"gt_{key}"] = json.dumps(value, ensure_ascii=False) if value else None
            for enc, suffix in (("o200k_base", ""), ("cl100k_base", "_cl100k")):
                before, own = message_tokens(traj, enc)
                seen: set[int] = set()
                for st in steps:
                    mi = st.get("message_index")
                    if mi is None or traj[mi].get("role") != "assistant":
                        continue
                    first = mi not in seen
                    seen.add(mi)
                    st[f"input_tokens{suffix}"] = before[mi] if first else 0
                    st[f"output_tokens{suffix}"] = own[mi] if first else 0
        except SchemaError as err:
            field_name = f"{where}.{err.field}" if err.field and not err.field.startswith("[") else (err.field or where)
            raise SchemaError(err.detail, file=str(path), line=1, field=field_name, expected=err.expected,
                              got=err.got) from None
        builder.add_run(k + 1, run, steps, comps)
    return builder.finish()


__all__ = ["read_tau_bench"]
