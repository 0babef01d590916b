"""A loopback proxy in front of a real OpenAI-compatible server that misbehaves as hosted
providers do, for chosen requests (tests only).

A request whose messages name a marker word at least `MARKED` times (its document names it in
every sentence) gets that marker's fault; every other request, one that names a marker once as
another document's name borrowed by an edit rule included, is forwarded as it is and answered
by the server behind. The faults:

- ``refuse``: 400 with a provider's error body (what a content filter answers);
- ``fail``: 500, every time (a provider that is down for this request);
- ``html``: 200 with an HTML page for a body;
- ``no_choices``: 200 with ``choices: []``;
- ``surrogate``, ``control``, ``bidi``, ``zero_width``: the server's real answer, with a lone
  surrogate, an ESC sequence, a right-to-left override or a zero-width space put into its first
  JSON string value (so the answer still parses: the stage must see the character);
- ``long``: 100,000 characters with ``finish_reason: stop`` (a server ignoring max_tokens).

The proxy records, per request body, how often it was asked and whether it was answered.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from .openai_server import serve_posts

#: how often a request names a marker word when it is about the marker's document
MARKED = 3
#: what each text fault puts into the answer
INSERTED = {
    "surrogate": "\ud800",
    "control": "\x1b[2J",
    "bidi": "\u202e",
    "zero_width": "\u200b",
}


def _corrupted(content: str, inserted: str) -> str:
    """``content`` (a JSON answer) with ``inserted`` at the start of its first string value,
    escaped as JSON (a lone surrogate can only travel escaped). An answer that is no JSON object
    with a string in it (one the model cut at max_tokens) is replaced by one that is: the fault
    under test is the character, whatever the model wrote."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not any(isinstance(v, str) for v in data.values()):
        return json.dumps({"note": inserted + "x"})
    key = next(k for k, v in data.items() if isinstance(v, str))
    data[key] = inserted + data[key]
    return json.dumps(data)  # ASCII escapes: "\ud800" survives as text


class FaultProxy:
    def __init__(self, upstream: str, faults: dict[str, str]) -> None:
        self.upstream = upstream.rstrip("/")
        self.faults = faults
        self.asked: Counter[str] = Counter()
        self.answered: set[str] = set()
        #: the answered calls that scored a continuation (a scoring request makes one per span side)
        self.scored: set[str] = set()
        self.faulted: Counter[str] = Counter()
        self.lock = threading.Lock()

    def fault_of(self, body: dict[str, Any]) -> str | None:
        text = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        return next((fault for marker, fault in self.faults.items() if text.count(marker) >= MARKED), None)

    def handle(self, raw: bytes) -> tuple[int, str, bytes]:
        body = json.loads(raw)
        digest = hashlib.sha256(raw).hexdigest()
        fault = self.fault_of(body)
        with self.lock:
            self.asked[digest] += 1
            if fault:
                self.faulted[fault] += 1
        if fault == "refuse":
            error = {
                "error": {"message": "The response was filtered due to the prompt.", "code": "content_filter"}
            }
            return 400, "application/json", json.dumps(error).encode()
        if fault == "fail":
            return 500, "application/json", b'{"error": {"message": "internal error"}}'
        if fault == "html":
            return 200, "text/html", b"<html><body><h1>502 Bad Gateway</h1></body></html>"
        if fault == "no_choices":
            return 200, "application/json", json.dumps({"id": "x", "choices": []}).encode()
        response = httpx.post(
            f"{self.upstream}/chat/completions",
            content=raw,
            timeout=600,
            headers={"Content-Type": "application/json"},
        )
        if response.status_code != 200:
            return response.status_code, "application/json", response.content
        payload = response.json()
        message = payload["choices"][0]["message"]
        if fault == "long":
            message["content"] = "x" * 100_000
            payload["choices"][0]["finish_reason"] = "stop"
        elif fault in INSERTED:
            message["content"] = _corrupted(message["content"] or "", INSERTED[fault])
            payload["choices"][0]["finish_reason"] = "stop"
        with self.lock:
            self.answered.add(digest)
            if body.get("prompt_logprobs") is not None:
                self.scored.add(digest)
        return 200, "application/json", json.dumps(payload).encode()


@contextmanager
def serve_faults(upstream: str, faults: dict[str, str]) -> Iterator[tuple[str, FaultProxy]]:
    """Yield the proxy's base URL on 127.0.0.1 and the proxy, in front of ``upstream``;
    ``faults``: marker word -> fault."""
    proxy = FaultProxy(upstream, faults)
    with serve_posts(proxy.handle) as url:
        yield url, proxy
