"""A loopback server speaking OpenAI's Batch API (files and batches endpoints), in front of a real
OpenAI-compatible server that answers each line (tests only: no hosted Batch API can run here).

- ``POST /v1/files`` (multipart, purpose ``batch``) keeps the file; ``GET /v1/files/{id}/content``
  returns it (input, output and error files alike);
- ``POST /v1/batches`` makes a batch (``validating``); a worker thread takes it to
  ``in_progress`` and sends its lines one at a time to the server behind, then ``completed``
  with an output file (and an error file when a line failed);
- ``GET /v1/batches/{id}``, ``GET /v1/batches`` (newest first), ``POST /v1/batches/{id}/cancel``;
- ``POST /v1/chat/completions`` is forwarded as it is (a build's live calls).

Behaviours a test chooses: ``hold`` (an Event: while it is clear, batches stay ``in_progress``
without answering), ``expire_after`` (a batch answers that many lines, then ``expired``),
``refuse`` (a marker word: a line whose messages hold it is an error line, 400, as a content
filter answers). ``submitted`` counts every line ever uploaded by its ``custom_id``.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx

from .openai_server import Answer, serve_http

REFUSAL = {"error": {"message": "The prompt was filtered by the content policy.", "code": "content_filter"}}


class BatchServer:
    def __init__(self, upstream: str, refuse: str | None = None, expire_after: int | None = None) -> None:
        self.upstream = upstream.rstrip("/")
        self.refuse = refuse
        self.expire_after = expire_after
        self.hold = threading.Event()
        self.hold.set()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.submitted: Counter[str] = Counter()
        self.live_calls = 0
        self.lock = threading.Lock()
        self._ids = itertools.count(1)

    def await_running_batch(self, process: Any, seconds: float = 120) -> None:
        """Wait until ``process`` (a build) has a batch in progress here and has written its id
        down (it polls the batch); fail if the build ends or never sends one."""
        deadline = time.monotonic() + seconds
        while not any(b["status"] == "in_progress" for b in self.batches.values()):
            assert time.monotonic() < deadline and process.poll() is None, "the build never sent its batch"
            time.sleep(0.05)
        time.sleep(0.5)

    # the endpoints

    def upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + raw
        )
        parts = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        content = parts["file"].get_payload(decode=True)
        assert parts["purpose"].get_content().strip() == "batch"
        with self.lock:
            for line in content.splitlines():
                self.submitted[json.loads(line)["custom_id"]] += 1
        return self._file(content, parts["file"].get_filename() or "batch.jsonl")

    def create(self, body: dict[str, Any]) -> dict[str, Any]:
        assert body["endpoint"] == "/v1/chat/completions" and body["input_file_id"] in self.files
        lines = self.files[body["input_file_id"]].splitlines()
        batch = {
            "id": f"batch_{next(self._ids)}",
            "object": "batch",
            "endpoint": body["endpoint"],
            "input_file_id": body["input_file_id"],
            "completion_window": body["completion_window"],
            "created_at": int(time.time()),
            "status": "validating",
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "output_file_id": None,
            "error_file_id": None,
            "metadata": body.get("metadata"),
        }
        with self.lock:
            self.batches[batch["id"]] = batch
        threading.Thread(target=self._work, args=(batch, lines), daemon=True).start()
        return batch

    def cancel(self, batch_id: str) -> dict[str, Any]:
        with self.lock:
            batch = self.batches[batch_id]
            if batch["status"] in ("validating", "in_progress"):
                batch["status"] = "cancelling"
            return dict(batch)

    # the work a provider does

    def _work(self, batch: dict[str, Any], lines: list[bytes]) -> None:
        time.sleep(0.05)
        batch["status"] = "in_progress"
        output, errors = [], []
        for number, raw in enumerate(lines):
            while not self.hold.is_set() and batch["status"] == "in_progress":
                time.sleep(0.02)
            if batch["status"] == "cancelling":
                break
            if self.expire_after is not None and number >= self.expire_after:
                batch["status"] = "expiring"
                break
            line = json.loads(raw)
            text = json.dumps(line["body"]["messages"])
            if self.refuse and self.refuse in text:
                errors.append(_line(line["custom_id"], 400, REFUSAL))
                batch["request_counts"]["failed"] += 1
                continue
            try:
                answer = httpx.post(f"{self.upstream}/chat/completions", json=line["body"], timeout=600)
            except httpx.HTTPError as err:  # the server behind fell over: a 500 line, as a provider's
                answer = httpx.Response(500, text=f"{type(err).__name__}: {err}")
            if answer.status_code == 200:
                output.append(_line(line["custom_id"], 200, answer.json()))
                batch["request_counts"]["completed"] += 1
            else:
                body = {"error": {"message": answer.text[:300]}}
                errors.append(_line(line["custom_id"], answer.status_code, body))
                batch["request_counts"]["failed"] += 1
        with self.lock:
            if output:
                batch["output_file_id"] = self._file(b"".join(output), "output.jsonl")["id"]
            if errors:
                batch["error_file_id"] = self._file(b"".join(errors), "errors.jsonl")["id"]
            batch["status"] = {"cancelling": "cancelled", "expiring": "expired"}.get(
                batch["status"], "completed"
            )

    def _file(self, content: bytes, name: str) -> dict[str, Any]:
        file_id = f"file-{next(self._ids)}"
        self.files[file_id] = content
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": name,
            "purpose": "batch",
            "status": "processed",
        }

    def forward(self, raw: bytes) -> tuple[int, bytes]:
        with self.lock:
            self.live_calls += 1
        answer = httpx.post(
            f"{self.upstream}/chat/completions",
            content=raw,
            headers={"Content-Type": "application/json"},
            timeout=600,
        )
        return answer.status_code, answer.content

    def lines_asked(self) -> int:
        return sum(self.submitted.values())


def _line(custom_id: str, status: int, body: Any) -> bytes:
    row = {
        "id": f"req_{custom_id[:8]}",
        "custom_id": custom_id,
        "response": {"status_code": status, "request_id": "r", "body": body},
        "error": None,
    }
    return json.dumps(row).encode() + b"\n"


@contextmanager
def serve_batches(upstream: str, **behaviour: Any) -> Iterator[tuple[str, BatchServer]]:
    """Yield the server's base URL (``.../v1``) on 127.0.0.1 and the server, in front of ``upstream``."""
    server = BatchServer(upstream, **behaviour)

    def handle(method: str, path: str, headers: Mapping[str, str], raw: bytes) -> Answer:
        if method == "GET" and (m := re.fullmatch(r"/v1/files/([\w-]+)/content", path)):
            return 200, "application/jsonl", server.files[m[1]], {}
        if method == "GET" and (m := re.fullmatch(r"/v1/batches/([\w-]+)", path)):
            return _json(200, server.batches[m[1]])
        if method == "GET" and path == "/v1/batches":
            listed = sorted(server.batches.values(), key=lambda b: int(b["id"].split("_")[1]), reverse=True)
            return _json(200, {"object": "list", "data": listed, "has_more": False})
        if method == "POST" and path == "/v1/files":
            return _json(200, server.upload(headers["Content-Type"], raw))
        if method == "POST" and path == "/v1/batches":
            return _json(200, server.create(json.loads(raw)))
        if method == "POST" and (m := re.fullmatch(r"/v1/batches/([\w-]+)/cancel", path)):
            return _json(200, server.cancel(m[1]))
        if method == "POST" and path == "/v1/chat/completions":
            status, body = server.forward(raw)
            return status, "application/json", body, {}
        return _json(404, {"error": {"message": f"no route {method} {path}"}})

    try:
        with serve_http(handle) as url:
            yield url, server
    finally:
        server.hold.set()


def _json(status: int, body: Any) -> Answer:
    return status, "application/json", json.dumps(body).encode(), {}
