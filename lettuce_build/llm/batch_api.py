"""A provider's Batch API (OpenAI's files and batches endpoints, which several hosted providers
and gateways implement), as a build uses it: a file of requests uploaded, a batch made of it,
its state looked at, its output and error files read back as `Completion`s by key.

Each line of a batch file is one chat-completions call whose ``custom_id`` is the request's
cache key, so what a batch answers lands in the request cache under the same key a live call
would use: a batch build and a live build share answers.

Every call here fails as `BatchAPIError` with the provider's status and message (the API key
redacted), never with the SDK's exception: the caller decides what a failure costs.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import Any, Literal, TypeVar

import openai
from openai import OpenAI
from pydantic import BaseModel

from lettuce_build.core.errors import BatchAPIError
from lettuce_build.core.leaks import public_url
from lettuce_build.llm.openai_backend import NO_KEY, RETRIED_STATUS, OpenAIBackend, completion_of, failure
from lettuce_build.llm.protocol import PROVIDER_ERROR, PROVIDER_REFUSED, ChatRequest, Completion

T = TypeVar("T")

#: the endpoint every line of a batch calls
ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"
#: a batch in one of these states will change no more
FINAL_STATES = frozenset({"completed", "failed", "expired", "cancelled"})
#: how many of the account's most recent batches are searched for one whose id was never
#: written down (a build killed between making it and recording it)
SEARCHED_BATCHES = 1000


class BatchState(BaseModel):
    """A batch as the provider last reported it."""

    id: str
    status: str
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    #: why a batch failed as a whole (its input refused), as the provider says
    errors: list[str] = []

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATES


class BatchAPI:
    """The Batch API of the endpoint ``backend`` calls, for ``backend``'s model and options."""

    def __init__(self, backend: OpenAIBackend) -> None:
        self.backend = backend
        self.options = backend.options
        self._client: OpenAI | None = None

    @property
    def client(self) -> OpenAI:
        if self._client is None:  # the key is read when first needed, never kept elsewhere
            self._client = OpenAI(
                api_key=os.environ.get(self.options.api_key_env) or NO_KEY,
                base_url=self.options.base_url,
                max_retries=self.options.max_retries,
                timeout=self.options.request_timeout,
            )
        return self._client

    def line(self, key: str, request: ChatRequest) -> bytes:
        """One line of a batch file: the request's body under its cache key."""
        body = {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": self.backend.body(request)}
        return json.dumps(body, ensure_ascii=False).encode() + b"\n"

    def upload(self, lines: bytes, name: str) -> str:
        """Upload a batch file; its file id."""
        made = self._asked(lambda: self.client.files.create(file=(name, lines), purpose="batch"))
        return str(made.id)

    def create(self, file_id: str) -> BatchState:
        made = self._asked(
            lambda: self.client.batches.create(
                input_file_id=file_id,
                endpoint=ENDPOINT,
                completion_window=self.options.batch_window,  # type: ignore[arg-type]
                metadata={"made_by": "lettuce-build"},
            )
        )
        return _state(made)

    def find(self, file_id: str) -> BatchState | None:
        """The batch made of ``file_id``, among the account's recent ones (None: none was made)."""
        seen = 0
        for batch in self._asked(lambda: self.client.batches.list(limit=100)):
            if batch.input_file_id == file_id:
                return _state(batch)
            seen += 1
            if seen >= SEARCHED_BATCHES:
                break
        return None

    def state(self, batch_id: str) -> BatchState:
        return _state(self._asked(lambda: self.client.batches.retrieve(batch_id)))

    def cancel(self, batch_id: str) -> BatchState:
        return _state(self._asked(lambda: self.client.batches.cancel(batch_id)))

    def answers(self, state: BatchState) -> dict[str, Completion]:
        """What a batch answered and what it failed, by key (a request it never reached, as
        when it expired or was cancelled, is in neither)."""
        found: dict[str, Completion] = {}
        for file_id in (state.output_file_id, state.error_file_id):
            if not file_id:
                continue
            text = self._asked(functools.partial(self._file_text, file_id))
            for number, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    key, completion = self._answer(line, f"line {number} of {file_id}")
                    if key is not None:
                        found[key] = completion
        return found

    def _answer(self, line: str, where: str) -> tuple[str | None, Completion]:
        """One output or error line as (key, completion)."""
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            return None, failure(PROVIDER_ERROR, f"{where} is not JSON")
        if not isinstance(data, dict) or not isinstance(data.get("custom_id"), str):
            return None, failure(PROVIDER_ERROR, f"{where} has no custom_id")
        key = data["custom_id"]
        response = data.get("response") or {}
        error = data.get("error")
        status = response.get("status_code") if isinstance(response, dict) else None
        body = response.get("body") if isinstance(response, dict) else None
        if status == 200 and isinstance(body, dict):
            return key, completion_of(body, f"the batch's {where}")
        said = _message(body) or _message({"error": error}) or "no reason given"
        said = self.backend.redacted(" ".join(said.split())[:300])
        if isinstance(status, int) and status not in RETRIED_STATUS:
            return key, failure(PROVIDER_REFUSED, f"HTTP {status} in the batch ({where}): {said}")
        code = f"HTTP {status}" if status else (error or {}).get("code", "error")
        return key, failure(PROVIDER_ERROR, f"{code} in the batch ({where}): {said}")

    def _file_text(self, file_id: str) -> str:
        return self.client.files.content(file_id).text

    def _asked(self, call: Callable[[], T]) -> T:
        shown = public_url(self.options.base_url)
        try:
            return call()
        except openai.APIStatusError as err:
            said = self.backend.redacted(" ".join(err.response.text.split())[:300])
            raise BatchAPIError(f"the Batch API at {shown} answered HTTP {err.status_code}: {said}") from None
        except openai.OpenAIError as err:
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
            raise BatchAPIError(
                f"the Batch API at {shown} failed: {type(err).__name__}: {self.backend.redacted(first)}"
            ) from None


def _state(batch: Any) -> BatchState:
    counts = batch.request_counts
    errors = getattr(batch.errors, "data", None) or []
    return BatchState(
        id=batch.id,
        status=batch.status,
        total=counts.total if counts else 0,
        completed=counts.completed if counts else 0,
        failed=counts.failed if counts else 0,
        output_file_id=batch.output_file_id,
        error_file_id=batch.error_file_id,
        errors=[f"{e.code or 'error'}: {e.message or ''}".strip() for e in errors],
    )


def _message(body: Any) -> str | None:
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error.get("code") or "") or None
    return str(error) if error else None
