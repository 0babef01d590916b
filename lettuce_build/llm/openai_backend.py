"""A backend for any OpenAI-compatible chat endpoint (a vLLM server, a hosted teacher).

Async with a concurrency limit; retries with exponential backoff (honouring
Retry-After) on 429, 5xx, timeouts and dropped connections; JSON-schema
response format where the server supports it; reasoning text kept apart from
the answer. The API key is read from an environment variable when a request
is sent and goes nowhere but the Authorization header: not into errors, logs,
the cache or `info()`.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
from collections.abc import Sequence
from typing import Any, Literal

import httpx

from lettuce_build.core.leaks import SecretScanner, public_url
from lettuce_build.llm.protocol import BackendError, BackendInfo, ChatRequest, Completion
from lettuce_build.llm.settings import EndpointSettings

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})


class OpenAIOptions(EndpointSettings):
    max_retries: int = 5
    timeout: float = 300.0
    backoff_seconds: float = 1.0
    max_backoff_seconds: float = 60.0
    response_format: Literal["json_schema", "json_object", "none"] = "json_schema"
    extra_body: dict[str, Any] = {}


class OpenAIBackend:
    def __init__(self, model: str, options: OpenAIOptions | None = None) -> None:
        self.model = model
        self.options = options or OpenAIOptions()

    @property
    def model_id(self) -> str:
        return self.model

    def info(self) -> BackendInfo:
        # the variable's name is recorded, never its value; credentials in the URL are dropped
        options = self.options.model_dump()
        options["base_url"] = public_url(self.options.base_url)
        return BackendInfo(backend="openai", model=self.model, options=options)

    def _redacted(self, text: str) -> str:
        """Error text as it may be shown: a server may echo the key (or the whole header) back."""
        key = os.environ.get(self.options.api_key_env)
        return SecretScanner([key] if key else []).redact(text)

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.options.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.conversation(),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            **self.options.extra_body,
        }
        if request.seed is not None:
            body["seed"] = request.seed
        if request.repetition_penalty != 1.0:  # OpenAI's penalty is additive, from -2 to 2
            body["frequency_penalty"] = max(-2.0, min(2.0, request.repetition_penalty - 1.0))
        if request.json_schema is not None and self.options.response_format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": request.json_schema},
            }
        elif request.json_schema is not None and self.options.response_format == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None and (retry_after := response.headers.get("retry-after")):
            try:
                return min(float(retry_after), self.options.max_backoff_seconds)
            except ValueError:
                pass
        base = self.options.backoff_seconds * 2**attempt
        return min(base * (0.5 + random.random()), self.options.max_backoff_seconds)

    async def _one(
        self, client: httpx.AsyncClient, gate: asyncio.Semaphore, request: ChatRequest
    ) -> Completion:
        url = f"{self.options.base_url.rstrip('/')}/chat/completions"
        shown = public_url(url)
        problem = ""
        for attempt in range(self.options.max_retries + 1):
            response: httpx.Response | None = None
            async with gate:
                try:
                    response = await client.post(url, json=self._body(request), headers=self._headers())
                except (httpx.TimeoutException, httpx.TransportError) as err:
                    problem = f"{type(err).__name__} talking to {shown}"
                else:
                    if response.status_code == 200:
                        return _completion(response.json())
                    body = self._redacted(response.text[:300])
                    problem = f"HTTP {response.status_code} from {shown}: {body}"
                    if response.status_code not in RETRYABLE_STATUS:
                        raise BackendError(problem)
            if attempt < self.options.max_retries:
                await asyncio.sleep(self._delay(attempt, response))
        raise BackendError(f"gave up after {self.options.max_retries + 1} tries: {problem}")

    async def _generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        gate = asyncio.Semaphore(self.options.concurrency)
        async with httpx.AsyncClient(timeout=self.options.timeout) as client:
            return list(await asyncio.gather(*(self._one(client, gate, r) for r in requests)))

    def generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        if not requests:
            return []
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._generate(requests))
        # Called from inside a running loop (a notebook): run ours on a thread of its own.
        result: list[Completion] = []
        error: list[BaseException] = []

        def target() -> None:
            try:
                result.extend(asyncio.run(self._generate(requests)))
            except BaseException as err:  # handed back to the caller below
                error.append(err)

        thread = threading.Thread(target=target)
        thread.start()
        thread.join()
        if error:
            raise error[0]
        return result


def _completion(payload: dict[str, Any]) -> Completion:
    choice = payload["choices"][0]
    message = choice.get("message") or {}
    usage = payload.get("usage") or {}
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    return Completion.of(
        message.get("content") or "",
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=usage.get("prompt_tokens", 0),
        completion_tokens=usage.get("completion_tokens", 0),
        reasoning=reasoning,
    )
