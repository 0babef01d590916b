"""A loopback OpenAI-compatible chat server answering through a scripted responder (tests only)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lettuce_build.llm.protocol import ChatMessage, ChatRequest

#: what a loopback server's handler answers: status, content type, body and extra headers
Answer = tuple[int, str, bytes, dict[str, str]]
#: a handler: (method, path, request headers, body) -> its answer
Handle = Callable[[str, str, Mapping[str, str], bytes], Answer]
#: the status of an answer that is none: the connection is dropped without a word
DROP = 0


@contextmanager
def serve_http(handle: Handle) -> Iterator[str]:
    """Yield the base URL (``.../v1``) of a server on 127.0.0.1 that answers every GET and POST
    with ``handle``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # connections kept open between requests, as providers keep them

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            self._answer(b"")

        def do_POST(self) -> None:  # noqa: N802
            self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        def _answer(self, body: bytes) -> None:
            status, kind, payload, extra = handle(self.command, self.path.split("?")[0], self.headers, body)
            if status == DROP:
                self.close_connection = True
                self.connection.close()
                return
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True  # a handler still sleeping (a slow answer) does not hold the exit
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextmanager
def serve_posts(handle: Callable[[bytes], tuple[int, str, bytes]]) -> Iterator[str]:
    """Yield the base URL (``.../v1``) of a server on 127.0.0.1 that answers every POST body with
    ``handle(body)``: its status, content type and payload."""
    with serve_http(lambda method, path, headers, body: (*handle(body), {})) as url:
        yield url


def completion_body(raw: bytes, respond: Callable[[ChatRequest], str]) -> bytes:
    """The chat completion a scripted model (``respond``) makes of a request's JSON body."""
    body = json.loads(raw)
    request = ChatRequest(
        messages=tuple(ChatMessage(m["role"], m["content"]) for m in body["messages"]),
        temperature=body.get("temperature", 0.7),
        max_tokens=body.get("max_tokens", 400),
        seed=body.get("seed"),
        json_schema=(body.get("response_format") or {}).get("json_schema", {}).get("schema"),
    )
    # a scoring request (prompt_logprobs asked): this server, like most hosted ones, ignores
    # the field and continues the answer, so the build finds no scores in its reply
    text = "." if body.get("prompt_logprobs") is not None else respond(request)
    payload = {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": len(text.split())},
    }
    return json.dumps(payload).encode()


@contextmanager
def serve(respond: Callable[[ChatRequest], str]) -> Iterator[str]:
    """Yield the base URL of a server on 127.0.0.1 that answers chat completions with ``respond``."""

    def handle(raw: bytes) -> tuple[int, str, bytes]:
        return 200, "application/json", completion_body(raw, respond)

    with serve_posts(handle) as url:
        yield url
