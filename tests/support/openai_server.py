"""A loopback OpenAI-compatible chat server answering through a scripted responder (tests only)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lettuce_build.llm.protocol import ChatMessage, ChatRequest


@contextmanager
def serve(respond: Callable[[ChatRequest], str]) -> Iterator[str]:
    """Yield the base URL of a server on 127.0.0.1 that answers chat completions with ``respond``."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            request = ChatRequest(
                messages=tuple(ChatMessage(m["role"], m["content"]) for m in body["messages"]),
                temperature=body.get("temperature", 0.7),
                max_tokens=body.get("max_tokens", 400),
                seed=body.get("seed"),
                json_schema=(body.get("response_format") or {}).get("json_schema", {}).get("schema"),
            )
            text = respond(request)
            payload = json.dumps(
                {
                    "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": len(text.split())},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
