"""`lettuce-build review`: a page on loopback where a person gives verdicts on a build's samples.

The server answers only a request that carries the session's token (``?token=``, the
``X-Review-Token`` header or ``Authorization: Bearer``) and names this server in its ``Host``
header: a page elsewhere that rebinds a name of its own to 127.0.0.1 sends its own name, and is
refused (403). Every answer forbids the browser to load anything from anywhere
(Content-Security-Policy: the page's one script by its nonce, requests to this server only).
Sample text reaches the page as JSON and is put in as text, never as markup, so a context
holding ``<script>`` shows as those characters.

The API, for scripts as for the page (JSON; the token on every call):

- ``GET /api/samples?start=0&count=100``: a page of the samples (``count`` at most 500) and
  what the page needs around them: ``{"reviewer", "shortcuts", "categories", "colours", "total",
  "splits": {name: {"samples", "reviewed"}}, "open", "start", "samples": [...]}``, each sample
  its ``position``, key, split, context, question, answer, labelled spans and the context's
  evidence (character ranges of the sentences the answer rests on), and this reviewer's last
  verdict; ``open`` is the first sample this reviewer has not reviewed (null when none is left);
- ``GET /api/open?after=N``: ``{"open", "splits"}``, the first sample past position ``N`` not
  reviewed yet (null when none is) and the progress per split;
- ``POST /api/verdicts``: one `Verdict` (view/reviews.py; ``reviewer``, ``split``, ``time`` and a
  span's ``start``/``end`` may be left out: the session's reviewer, the sample's split, now, the
  sample's spans in order), appended to ``OUT/reviews.jsonl``; answers ``{"ok": true}``
  or 400/404 with ``{"error": "..."}`` naming the field.

The server holds an index of the samples, not the samples (view/review_samples.py): a build of
a million rows is served in the memory of a page of them.
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
from lettuce_build.core.taxonomy import INJECTABLE_CATEGORIES
from lettuce_build.core.words import words
from lettuce_build.view.review_page import page
from lettuce_build.view.review_samples import ReviewSamples
from lettuce_build.view.reviews import ReviewLog, Verdict
from lettuce_build.view.samples import CATEGORY_STYLES, OTHER_STYLE

LOOPBACK = ("127.0.0.1", "localhost")
#: the most a verdict's body may hold (a sample has a handful of spans)
MAX_BODY = 64_000
#: samples a page asks for at a time, and the most one request may ask for
PAGE = 100
MAX_PAGE = 500
#: what the page shows of a labelled span
SHOWN_SPAN = {"start", "end", "text", "category"}


class ReviewServer:
    """The samples of one build (or one split of it), served to one reviewer."""

    def __init__(
        self,
        samples: ReviewSamples,
        *,
        log: ReviewLog,
        reviewer: str,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.samples = samples
        self.log = log
        self.reviewer = reviewer
        #: this reviewer's last verdict on each sample, by key (read once, then kept as they come)
        self.latest = {key: v for (who, key), v in log.latest().items() if who == reviewer}
        samples.mark_reviewed(self.latest)
        self.shortcuts = samples.baseline.report().lines()
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
        #: one request at a time reads the build's files and the reviewed marks
        self._lock = threading.Lock()

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

    def samples_json(self, start: int = 0, count: int = PAGE) -> dict[str, Any]:
        """A page of samples with this reviewer's last verdicts, and the progress around them."""
        count = max(0, min(count, MAX_PAGE))
        with self._lock:
            shown = [self._shown(position, sample) for position, sample in self.samples.page(start, count)]
            return {
                "reviewer": self.reviewer,
                "shortcuts": self.shortcuts,
                "categories": sorted(INJECTABLE_CATEGORIES),
                "colours": {name: colour for name, (_, colour) in CATEGORY_STYLES.items()},
                "other_colour": OTHER_STYLE[1],
                "total": len(self.samples),
                "splits": self.samples.progress(),
                "open": self.samples.first_open(),
                "start": start,
                "samples": shown,
            }

    def open_json(self, after: int) -> dict[str, Any]:
        with self._lock:
            return {"open": self.samples.first_open(after), "splits": self.samples.progress()}

    def _shown(self, position: int, sample: HallucinationSample) -> dict[str, Any]:
        key = str(sample.metadata["key"])
        verdict = self.latest.get(key)
        return {
            "position": position,
            "key": key,
            "split": sample.split,
            "context": sample.context,
            "question": sample.question,
            "answer": sample.answer,
            "labels": [span.model_dump(include=SHOWN_SPAN) for span in sample.labels],
            "evidence": evidence(sample.context, sample.answer, sample.labels, sample.language),
            "verdict": verdict.model_dump() if verdict else None,
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
        with self._lock:
            position = self.samples.position(str(data.get("key")))
            sample = None if position is None else self.samples.sample(position)
        if position is None or sample is None:
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
        with self._lock:
            self.latest[verdict.key] = verdict
            self.samples.reviewed[position] = True
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


def _number(query: dict[str, list[str]], name: str, default: int, lowest: int = 0) -> int | None:
    """A whole-number query parameter, its default when absent, None when it is not one."""
    given = (query.get(name) or [str(default)])[0]
    try:
        value = int(given)
    except ValueError:
        return None
    return value if value >= lowest else None


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
                query = parse_qs(urlsplit(self.path).query)
                start, count = _number(query, "start", 0), _number(query, "count", PAGE)
                if start is None or count is None:
                    self._json(400, {"error": "start and count are whole numbers (0 or more)"})
                else:
                    self._json(200, server.samples_json(start, count))
            elif path == "/api/open":
                after = _number(parse_qs(urlsplit(self.path).query), "after", 0, lowest=-1)
                if after is None:
                    self._json(400, {"error": "after is a sample's position (-1 or more)"})
                else:
                    self._json(200, server.open_json(after))
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
