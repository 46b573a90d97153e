"""OpenAI chat logs: messages become steps and compactions; errors name the line and the message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.adapters import read_log
from workbench.adapters import write_trajectories
from workbench.tables._vocabulary import TRAJECTORY_TABLES
from workbench.errors import SchemaError


def chat_run(**extra: object) -> dict[str, object]:
    return {
        "run_id": "c1", "task_id": "t9", "success": False,
        "messages": [
            {"role": "system", "content": "You are an invoicing agent."},
            {"role": "user", "content": "Settle group G7."},
            {"role": "assistant", "content": None, "usage": {"prompt_tokens": 120, "completion_tokens": 15},
             "tool_calls": [
                 {"id": "call_1", "type": "function", "function": {"name": "list_invoices", "arguments": '{"group": "G7"}'}},
                 {"id": "call_2", "type": "function", "function": {"name": "get_invoice", "arguments": "{bad json"}},
             ]},
            {"role": "tool", "tool_call_id": "call_2", "content": "INV-1: 10.00"},
            {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "INV-1, INV-2"}]},
            {"role": "user", "compaction": {"candidate_summary": "## Decisions\n- a\n- b\n", "retained_turn": "INV-1: 10.00"},
             "content": "## Decisions\n- a\n"},
            {"role": "assistant", "content": "Which account should I use?"},
            {"role": "user", "content": "Account 2."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_3", "type": "function", "function": {"name": "pay_invoice", "arguments": '{"invoice_id": "INV-1"}'}}]},
            {"role": "tool", "tool_call_id": "call_3", "content": "paid"},
        ],
        **extra,
    }


def write(tmp_path: Path, records: list[object]) -> Path:
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_chat_messages_become_steps_and_compactions(tmp_path: Path) -> None:
    tables = read_log(write(tmp_path, [chat_run()]))
    runs, steps, comps = tables["runs"], tables["steps"], tables["compactions"]
    assert runs["task"][0] == "Settle group G7." and runs["steps"][0] == 4 and runs["compactions"][0] == 1
    assert steps["tool"].to_list() == ["list_invoices", "get_invoice", None, "pay_invoice"]
    assert steps["args"].to_list()[:2] == ['{"group":"G7"}', '"{bad json"']
    assert steps["observation"].to_list() == ["INV-1, INV-2", "INV-1: 10.00", "Account 2.", "paid"]
    assert steps["observation_role"].to_list() == ["tool", "tool", "user", "tool"]
    assert steps["input_tokens"].to_list() == [120, None, None, None]
    c = comps.row(0, named=True)
    assert (c["boundary"], c["step"], c["span_start"], c["span_end"]) == (0, 2, 0, 1)
    assert c["candidate_summary"] == "## Decisions\n- a\n- b\n" and c["committed_summary"] == "## Decisions\n- a\n"
    assert c["retained_turn"] == "INV-1: 10.00" and c["previous_summary"] is None


def test_chat_round_trips_through_trajectory_jsonl(tmp_path: Path) -> None:
    tables = read_log(write(tmp_path, [chat_run()]))
    write_trajectories(tables, tmp_path / "t.jsonl")
    again = read_log(tmp_path / "t.jsonl")
    for name in TRAJECTORY_TABLES:
        assert tables[name].equals(again[name]), name


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda m: m[3].update(tool_call_id="call_9"), "field 'messages[3].tool_call_id': expected the id of an earlier assistant tool call"),
        (lambda m: m[2]["tool_calls"][0]["function"].pop("name"), "field 'messages[2].tool_calls[0].function.name'"),
        (lambda m: m[1].update(role="robot"), "field 'messages[1].role'"),
        (lambda m: m[5].update(content=None), "field 'messages[5].content': expected the committed summary text"),
    ],
)
def test_chat_errors_name_line_and_message(tmp_path: Path, mutate: object, fragment: str) -> None:
    bad = chat_run(run_id="c2")
    mutate(bad["messages"])  # type: ignore[operator]
    path = write(tmp_path, [chat_run(), bad])
    with pytest.raises(SchemaError) as info:
        read_log(path)
    assert str(info.value).startswith(f"{path}:2: ") and fragment in str(info.value)
