"""A small HTTP server on loopback that speaks the System One and chat-completions protocols.

Tests queue behaviours (``ok``, ``429``, ``("retry_after", s)``, ``500``, ``stall``, ``slow_headers``, ``never``,
``reset``, ``("delay", s)``, ``echo_headers``, ``("huge", bytes)``, ``invalid_json``, ``html``,
``("redirect", status, location)``, ``("chunked", bytes)``, ``("raw", body)``, ``("reply", fn)`` (``fn(request)``'s
JSON), ``("model", name)``, ``dribble``,
``values`` ...); each request takes the next behaviour (``ok`` when the queue is empty) and is
recorded with its headers and body, so tests can check what travelled on the wire.
Nothing here mocks the SDK: the openai client and httpx talk real HTTP to it.
"""

from __future__ import annotations

import json
import math
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def default_probability(question: str) -> float:
    """Deterministic answer: entries quoting an invoice id are 'supported'."""
    return 0.9 if "INV-" in question else 0.2


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any
    peer: tuple[str, int] | None = None  # the client's address: one per connection it opened


@dataclass
class FakeLLMServer:
    behaviours: deque[Any] = field(default_factory=deque)
    requests: list[Recorded] = field(default_factory=list)
    stall_seconds: float = 3.0
    #: what to do when the queue of behaviours is empty
    default: Any = "ok"
    #: requests being handled now, and the most at once (to see a client's concurrency)
    active: int = 0
    max_active: int = 0
    #: seconds between the bytes of a ``dribble`` answer
    dribble_seconds: float = 0.2
    #: bytes of a ``chunked`` body written before the client stopped reading
    chunked_written: int = 0
    #: set when the server closes: a stalled body then ends at once, so no handler outlives a test
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError:
                    body = None
                with server.lock:
                    server.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                                    self.client_address[:2]))
                    behaviour = server.behaviours.popleft() if server.behaviours else server.default
                    server.active += 1
                    server.max_active = max(server.max_active, server.active)
                try:
                    server.respond(self, behaviour, body)
                finally:
                    with server.lock:
                        server.active -= 1

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:  # a client that hung up: expected
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        # shutdown() waits up to one poll interval (the default 0.5 s, paid at every test's teardown)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    # -- responses ----------------------------------------------------------------

    def respond(self, h: BaseHTTPRequestHandler, behaviour: Any, body: Any) -> None:
        if behaviour == "429":
            self._send(h, 429, b'{"error": "rate limited"}', {"Retry-After": "0.05"})
        elif isinstance(behaviour, tuple) and behaviour[0] == "retry_after":  # 429 asking for a long wait
            self._send(h, 429, b'{"error": "slow down"}', {"Retry-After": str(behaviour[1])})
        elif behaviour == "slow_headers":  # the status line and headers one byte every 0.25 s, never done
            self._drip(h, 10_000, lambda: self.released.wait(0.25))
        elif behaviour == "echo_headers":  # a usable answer that also echoes the request's headers
            payload = json.loads(self._payload(h.path, body, None))
            payload["echo"] = {k: v for k, v in h.headers.items()}
            self._send(h, 200, json.dumps(payload).encode())
        elif isinstance(behaviour, tuple) and behaviour[0] == "huge":  # valid JSON of the given size
            payload = json.loads(self._payload(h.path, body, None))
            payload["padding"] = "x" * int(behaviour[1])
            self._send(h, 200, json.dumps(payload).encode())
        elif behaviour == "never":  # accept, then never answer (until the server closes)
            self.released.wait(600)
        elif behaviour == "html":  # a web UI on the port (or a base URL without /v1): 200 with a page
            self._send(h, 200, b"<!doctype html><html><head><title>Open WebUI</title></head><body></body></html>",
                       content_type="text/html; charset=utf-8")
        elif isinstance(behaviour, tuple) and behaviour[0] == "redirect":  # 30x to another address
            self._send(h, behaviour[1], b"", {"Location": behaviour[2]}, content_type="text/plain")
        elif isinstance(behaviour, tuple) and behaviour[0] == "chunked":  # a usable answer padded to n bytes,
            # sent chunked (no Content-Length) 64 KiB at a time until the client stops reading
            text = self._payload(h.path, body, None)
            head, pad, tail = text[:-1] + b', "padding": "', b"x" * 65536, b'"}'
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            try:
                for piece in [head, *[pad] * (int(behaviour[1]) // len(pad)), tail]:
                    h.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    with self.lock:
                        self.chunked_written += len(piece)
                h.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass
        elif isinstance(behaviour, tuple) and behaviour[0] == "raw":  # these bytes as a 200 JSON answer
            self._send(h, 200, behaviour[1])
        elif isinstance(behaviour, tuple) and behaviour[0] == "reply":  # the answer a function makes of the request
            self._send(h, 200, json.dumps(behaviour[1](body)).encode())
        elif isinstance(behaviour, tuple) and behaviour[0] == "model":  # a usable answer naming this model
            payload = json.loads(self._payload(h.path, body, None))
            payload["model"] = behaviour[1]
            self._send(h, 200, json.dumps(payload).encode())
        elif behaviour == "dribble":  # the status line a byte every dribble_seconds, never done; ends at once when the
            # client hangs up
            import select

            def hung_up() -> bool:
                readable, _, _ = select.select([h.connection], [], [], self.dribble_seconds)
                return self.released.is_set() or bool(readable) and not h.connection.recv(1, 0x02)  # MSG_PEEK

            self._drip(h, 100_000, hung_up)
        elif behaviour == "500":
            self._send(h, 500, b'{"error": "boom"}')
        elif behaviour == "invalid_json":
            self._send(h, 200, b'{"answers": {"e0": {"noul": 0.5}')
        elif isinstance(behaviour, tuple) and behaviour[0] == "delay":  # answer after a pause
            self.released.wait(behaviour[1])
            self._send(h, 200, self._payload(h.path, body, None))
        elif behaviour == "reset":  # drop the connection without an answer (RST where the OS allows)
            import socket
            import struct

            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
            h.close_connection = True
        elif behaviour == "stall":
            payload = self._payload(h.path, body, None)
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload[:5])
            h.wfile.flush()
            self.released.wait(self.stall_seconds)
            try:
                h.wfile.write(payload[5:])
            except OSError:
                pass
        else:
            values = behaviour if isinstance(behaviour, dict) else None
            self._send(h, 200, self._payload(h.path, body, values))

    @staticmethod
    def _drip(h: BaseHTTPRequestHandler, pad: int, stop: Any) -> None:
        """A status line and headers padded to ``pad`` bytes, written a byte at a time, never finished: before each
        byte ``stop()`` waits and says whether to give up (the server closing, the client gone)."""
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Pad: " + b"a" * pad
        for i in range(len(head)):
            if stop():
                return
            try:
                h.wfile.write(head[i:i + 1])
                h.wfile.flush()
            except OSError:
                return

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, payload: bytes, headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> None:
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(payload)

    def _payload(self, path: str, body: Any, values: dict[str, Any] | None) -> bytes:
        if path.endswith("/systemone"):
            answers: dict[str, Any] = {}
            for name, q in body["questions"].items():
                if values is not None and name in values:
                    v = values[name]
                    if v == "MISSING":
                        continue
                    answers[name] = {"noul": v}
                else:
                    answers[name] = {"noul": default_probability(q["instructions"])}
            text = json.dumps({"answers": answers, "usage": {"input_tokens": 100 * len(body["questions"]),
                                                              "output_tokens": 0}})
            return text.replace('"NaN_"', "NaN").encode()
        # chat completions
        if values is not None and "content" in values:
            return json.dumps({
                "id": "chatcmpl-2", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                             "message": {"role": "assistant", "content": values["content"]}}],
                "usage": {"prompt_tokens": 400, "completion_tokens": 80, "total_tokens": 480},
            }).encode()
        user = body["messages"][-1]["content"]
        p = default_probability(user.split("<data>")[1].split("</data>")[0].split('"entry"')[1])
        top = [{"token": "Yes", "logprob": math.log(p), "bytes": None},
               {"token": "No", "logprob": math.log(1 - p), "bytes": None}]
        logprobs: Any = {"content": [{"token": "Yes" if p >= 0.5 else "No", "logprob": math.log(max(p, 1 - p)),
                                      "bytes": None, "top_logprobs": top}], "refusal": None}
        if values is not None and values.get("no_logprobs"):
            logprobs = None
        if values is not None and "top" in values:  # a test's own top log-probabilities (NaN, inf, > 0 ...)
            logprobs["content"][0]["top_logprobs"] = [{"token": t, "logprob": lp, "bytes": None}
                                                      for t, lp in values["top"]]
        return json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "length", "logprobs": logprobs,
                         "message": {"role": "assistant", "content": "Yes" if p >= 0.5 else "No"}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 1, "total_tokens": 51},
        }).encode()
