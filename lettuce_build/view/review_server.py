"""`lettuce-build review`: a page on loopback where a person gives verdicts on a build's samples.

The server answers only a request that carries the session's token (``?token=``, the
``X-Review-Token`` header or ``Authorization: Bearer``) and names this server in its ``Host``
header: a page elsewhere that rebinds a name of its own to 127.0.0.1 sends its own name, and is
refused (403). Every answer forbids the browser to load anything from anywhere
(Content-Security-Policy: the page's one script by its nonce, requests to this server only).
Sample text reaches the page as JSON and is put in as text, never as markup, so a context
holding ``<script>`` shows as those characters.

The API, for scripts as for the page (JSON; the token on every call):

- ``GET /api/samples``: ``{"reviewer", "categories", "colours", "samples": [...]}``, each sample
  its key, split, context, question, answer, labelled spans and the context's evidence
  (character ranges of the sentences the answer rests on), and this reviewer's last verdict;
- ``POST /api/verdicts``: one `Verdict` (view/reviews.py; ``reviewer``, ``split``, ``time`` and a
  span's ``start``/``end`` may be left out: the session's reviewer, the sample's split, now, the
  sample's spans in order), appended to ``OUT/reviews.jsonl``; answers ``{"ok": true}``
  or 400/404 with ``{"error": "..."}`` naming the field.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import ValidationError

from lettuce_build.core.schema import HallucinationSample
from lettuce_build.core.sentences import sentence_spans, split_sentences
from lettuce_build.core.shortcuts import SpellingBaseline
from lettuce_build.core.taxonomy import INJECTABLE_CATEGORIES
from lettuce_build.core.words import words
from lettuce_build.view.review_page import page
from lettuce_build.view.reviews import ReviewLog, Verdict
from lettuce_build.view.samples import CATEGORY_STYLES, OTHER_STYLE

LOOPBACK = ("127.0.0.1", "localhost")
#: the most a verdict's body may hold (a sample has a handful of spans)
MAX_BODY = 64_000


class ReviewServer:
    """The samples of one build (or one split of it), served to one reviewer."""

    def __init__(
        self,
        samples: Sequence[HallucinationSample],
        *,
        log: ReviewLog,
        reviewer: str,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.samples = [s for s in samples if s.metadata.get("key")]
        self.by_key = {str(s.metadata["key"]): s for s in self.samples}
        self.log = log
        self.reviewer = reviewer
        self.token = secrets.token_urlsafe(24)
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.port = self.httpd.server_address[1]
        #: the Host headers this server answers on loopback (a DNS-rebinding page sends its own
        #: name); served elsewhere (``--host``, with a warning), the names it is reached by are the
        #: network's, and the token alone guards it
        self.hosts = (
            {f"{name}:{self.port}" for name in ("127.0.0.1", "localhost")} if host in LOOPBACK else None
        )
        self.host = host
        self._shown: list[dict[str, Any]] | None = None
        #: the spelling baseline over the samples (core/shortcuts.py), shown above them
        self._shortcuts: list[str] = []

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in LOOPBACK else self.host
        return f"http://{host}:{self.port}/?token={self.token}"

    def start(self) -> None:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def samples_json(self) -> dict[str, Any]:
        """The samples with this reviewer's last verdicts (the samples' part is made once: a
        page load reads only the verdicts anew)."""
        if self._shown is None:
            baseline = SpellingBaseline()
            for sample in self.by_key.values():
                spans = [(s.start, s.end, s.subcategory or s.category) for s in sample.labels]
                baseline.add(sample.answer, sample.context, spans)
            self._shortcuts = baseline.report().lines()
            self._shown = [
                {
                    "key": key,
                    "split": sample.split,
                    "context": sample.context,
                    "question": sample.question,
                    "answer": sample.answer,
                    "labels": [
                        span.model_dump(include={"start", "end", "text", "category"})
                        for span in sample.labels
                    ],
                    "evidence": evidence(sample.context, sample.answer, sample.labels, sample.language),
                }
                for key, sample in self.by_key.items()
            ]
        latest = {key: v for (reviewer, key), v in self.log.latest().items() if reviewer == self.reviewer}
        return {
            "reviewer": self.reviewer,
            "shortcuts": self._shortcuts,
            "categories": sorted(INJECTABLE_CATEGORIES),
            "colours": {name: colour for name, (_, colour) in CATEGORY_STYLES.items()},
            "other_colour": OTHER_STYLE[1],
            "samples": [
                {**shown, "verdict": latest[shown["key"]].model_dump() if shown["key"] in latest else None}
                for shown in self._shown
            ],
        }

    def record(self, body: bytes) -> tuple[int, dict[str, Any]]:
        """A verdict from the page or a script: appended, or why not."""
        try:
            data = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            return 400, {"error": f"the body is not JSON: {err}"}
        if not isinstance(data, dict):
            return 400, {"error": "expected a JSON object: one verdict"}
        data.setdefault("reviewer", self.reviewer)
        sample = self.by_key.get(str(data.get("key")))
        if sample is None:
            return 404, {"error": f"key {data.get('key')!r}: no sample of this build has it"}
        data.setdefault("split", sample.split)
        spans = data.get("spans")
        if isinstance(spans, list) and spans and len(spans) != len(sample.labels):
            made = len(sample.labels)
            return 400, {"error": f"spans: the sample has {made} labelled span(s), got {len(spans)}"}
        if isinstance(spans, list):  # a script may give span verdicts in order, without offsets
            for said, span in zip(spans, sample.labels, strict=False):
                if isinstance(said, dict):
                    said.setdefault("start", span.start)
                    said.setdefault("end", span.end)
        try:
            verdict = Verdict.model_validate(data)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            return 400, {"error": f"{where}: {first['msg']}"}
        try:
            self.log.append(verdict)
        except OSError as err:  # the folder went read-only or full: the reviewer must know
            return 500, {"error": f"not saved: cannot write {self.log.path}: {err.strerror or err}"}
        return 200, {"ok": True}


def evidence(context: str, answer: str, labels: Sequence[Any], language: str = "en") -> list[tuple[int, int]]:
    """The context's sentences an answer rests on, as character ranges: each sentence of the
    answer (its labelled spans left out) found in the context as it is (whitespace aside), or
    else the context's sentence sharing most of its words (at least half)."""
    kept, at = [], 0
    for span in sorted(labels, key=lambda s: s.start):
        kept.append(answer[at : span.start])
        at = span.end
    kept.append(answer[at:])
    clean = " ".join(kept)
    sentences = sentence_spans(context, language)
    found: set[tuple[int, int]] = set()
    for text in split_sentences(clean, language):
        if len(text) < 12:
            continue
        # as it is, but for how the context breaks its lines
        if verbatim := re.search(r"\s+".join(map(re.escape, text.split())), context):
            found.add(verbatim.span())
            continue
        said = _words(text)
        if not said:
            continue
        best = max(sentences, key=lambda s: len(said & _words(context[s[0] : s[1]])), default=None)
        if best and len(said & _words(context[best[0] : best[1]])) * 2 >= len(said):
            found.add(best)
    return sorted(found)


def _words(text: str) -> set[str]:
    """The words that tell sentences apart: three letters or more in a spaced script; every
    word of Chinese (most are two characters), cut by the segmenter."""
    return {word for word in words(text) if len(word) >= 3 or not word.isascii()}


def _handler(server: ReviewServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _allowed(self) -> bool:
            parts = urlsplit(self.path)
            bearer = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
            token = (
                self.headers.get("X-Review-Token")
                or bearer
                or (parse_qs(parts.query).get("token") or [""])[0]
            )
            if server.hosts is not None and self.headers.get("Host") not in server.hosts:
                self._send(403, b"403: this server answers only requests addressed to itself\n", "text/plain")
                return False
            if not secrets.compare_digest(token, server.token):
                self._send(403, b"403: the session's token is missing or wrong\n", "text/plain")
                return False
            return True

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            if not self._allowed():
                return
            path = urlsplit(self.path).path
            if path == "/":
                nonce = secrets.token_urlsafe(16)
                self._send(200, page(nonce).encode(), "text/html; charset=utf-8", nonce)
            elif path == "/api/samples":
                self._json(200, server.samples_json())
            else:
                self._json(404, {"error": f"no page {path}"})

        def do_POST(self) -> None:  # noqa: N802
            if not self._allowed():
                return
            if urlsplit(self.path).path != "/api/verdicts":
                self._json(404, {"error": "POST goes to /api/verdicts"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._json(413, {"error": f"a verdict is at most {MAX_BODY} bytes"})
                return
            self._json(*server.record(self.rfile.read(length)))

        def _json(self, status: int, body: Any) -> None:
            self._send(status, json.dumps(body, ensure_ascii=False).encode(), "application/json")

        def _send(self, status: int, payload: bytes, kind: str, nonce: str | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            script = f"'nonce-{nonce}'" if nonce else "'none'"
            self.send_header(
                "Content-Security-Policy",
                f"default-src 'none'; script-src {script}; style-src 'unsafe-inline'; connect-src 'self'; "
                "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            )
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:  # the terminal shows the URL, not requests
            pass

    return Handler
