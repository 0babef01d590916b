"""A backend for any OpenAI-compatible chat endpoint (a vLLM server, a hosted teacher), on the
``openai`` SDK.

The SDK retries 408, 409, 429, 5xx, timeouts and dropped connections with backoff, honouring
``Retry-After``; on top of it: a concurrency limit, JSON-schema responses (``"strict": true``),
reasoning text kept apart from the answer, token usage on every completion. The API key is read
from an environment variable when a batch is sent and given to the SDK's client for that batch
only: it goes into the Authorization header and nowhere else, not into errors (a server may echo
it: they are redacted), logs, the cache or `info()`.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from typing import Any, Literal

import openai
from openai import AsyncOpenAI

from lettuce_build.core.leaks import SecretScanner, public_url
from lettuce_build.llm.protocol import BackendError, BackendInfo, ChatRequest, Completion
from lettuce_build.llm.settings import EndpointSettings

#: what the SDK is given as the key when the variable is unset (a local server needs none)
NO_KEY = "no-key"


class OpenAIOptions(EndpointSettings):
    #: retries after the first try (the SDK's backoff: exponential with jitter, Retry-After first)
    max_retries: int = 5
    #: seconds per request
    timeout: float = 300.0
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

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": request.conversation(),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "extra_body": self.options.extra_body or None,
        }
        if request.seed is not None:
            arguments["seed"] = request.seed
        if request.repetition_penalty != 1.0:  # OpenAI's penalty is additive, from -2 to 2
            arguments["frequency_penalty"] = max(-2.0, min(2.0, request.repetition_penalty - 1.0))
        if request.json_schema is not None and self.options.response_format == "json_schema":
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "response",
                    "schema": strict_schema(request.json_schema),
                    "strict": True,
                },
            }
        elif request.json_schema is not None and self.options.response_format == "json_object":
            arguments["response_format"] = {"type": "json_object"}
        return arguments

    async def _one(self, client: AsyncOpenAI, gate: asyncio.Semaphore, request: ChatRequest) -> Completion:
        shown = public_url(f"{self.options.base_url.rstrip('/')}/chat/completions")
        tries = f"{self.options.max_retries + 1} tries"
        async with gate:
            try:
                response = await client.chat.completions.create(**self._arguments(request))
            except openai.APIStatusError as err:
                problem = f"HTTP {err.status_code} from {shown}: {self._redacted(err.response.text[:300])}"
                if err.status_code in RETRIED_STATUS:
                    problem = f"gave up after {tries}: {problem}"
                raise BackendError(problem) from None
            except openai.APITimeoutError:
                raise BackendError(f"gave up after {tries}: timed out talking to {shown}") from None
            except openai.APIConnectionError as err:
                cause = type(err.__cause__).__name__ if err.__cause__ else "connection error"
                raise BackendError(f"gave up after {tries}: {cause} talking to {shown}") from None
        return _completion(response)

    async def _generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        gate = asyncio.Semaphore(self.options.concurrency)
        client = AsyncOpenAI(
            api_key=os.environ.get(self.options.api_key_env) or NO_KEY,
            base_url=self.options.base_url,
            max_retries=self.options.max_retries,
            timeout=self.options.timeout,
        )
        async with client:
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


def strict_schema(schema: Any) -> Any:
    """The schema as OpenAI's strict mode takes it: every object closed (no additional
    properties) and every property required; a default means nothing once a field is required."""
    if isinstance(schema, list):
        return [strict_schema(part) for part in schema]
    if not isinstance(schema, dict):
        return schema
    strict = {key: strict_schema(value) for key, value in schema.items() if key != "default"}
    if isinstance(schema.get("properties"), dict):
        strict["additionalProperties"] = False
        strict["required"] = list(schema["properties"])
    return strict


#: the statuses the SDK retries: an error with one of them came after every try
RETRIED_STATUS = frozenset({408, 409, 429, *range(500, 600)})


def _completion(response: Any) -> Completion:
    choice = response.choices[0]
    message = choice.message
    usage = response.usage
    # vLLM and others put a thinking model's deliberation beside the content (not in the SDK's
    # own fields: read from the message's extra fields)
    reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
    return Completion.of(
        message.content or "",
        finish_reason=choice.finish_reason,
        prompt_tokens=usage.prompt_tokens if usage else 0,
        completion_tokens=usage.completion_tokens if usage else 0,
        reasoning=reasoning,
    )
