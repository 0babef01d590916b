"""A backend for any OpenAI-compatible chat endpoint (a vLLM server, a hosted teacher), on the
``openai`` SDK.

The SDK retries 408, 409, 429, 5xx, timeouts and dropped connections with backoff, honouring
``Retry-After``; on top of it: a concurrency limit, ``--rpm``/``--tpm`` and the provider's
``x-ratelimit-*`` headers (llm/rate_limits.py), JSON-schema responses (``"strict": true``),
reasoning text kept apart from the answer, token usage on every completion.

A request the provider does not answer is a completion of its own, never an exception that
takes the batch down with it: a refusal (a 4xx the SDK does not retry: a content filter, a bad
key) is ``provider_refused``, what is still failing after every retry ``provider_error``, a 200
that is no chat completion ``malformed_response``; the text says why (status and the provider's
message). The runner turns each into a failure row of its item and commits the batch's answers.

The API key is read
from an environment variable when a batch is sent and given to the SDK's client for that batch
only: it goes into the Authorization header and nowhere else, not into errors (a server may echo
it: they are redacted), logs, the cache or `info()`.
"""

from __future__ import annotations

import asyncio
import functools
import os
import queue
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future
from types import SimpleNamespace
from typing import Any, Literal

import httpx
import openai
from openai import AsyncOpenAI

from lettuce_build.core import interrupts
from lettuce_build.core.leaks import SecretScanner, public_url
from lettuce_build.llm.pricing import CHARS_PER_TOKEN, estimated_tokens
from lettuce_build.llm.protocol import (
    MALFORMED_RESPONSE,
    PROVIDER_ERROR,
    PROVIDER_REFUSED,
    BackendInfo,
    ChatRequest,
    Completion,
    Scores,
    scored_tokens,
)
from lettuce_build.llm.rate_limits import RateLimiter
from lettuce_build.llm.settings import EndpointSettings

#: what the SDK is given as the key when the variable is unset (a local server needs none)
NO_KEY = "no-key"


class OpenAIOptions(EndpointSettings):
    response_format: Literal["json_schema", "json_object", "none"] = "json_schema"
    extra_body: dict[str, Any] = {}


class OpenAIBackend:
    def __init__(self, model: str, options: OpenAIOptions | None = None) -> None:
        self.model = model
        self.options = options or OpenAIOptions()
        #: shared by every request of every call, so that the limits hold across a whole build;
        #: with neither ``rpm`` nor ``tpm`` it holds requests only while the provider's headers say
        self.limiter = RateLimiter(self.options.rpm, self.options.tpm)

    @property
    def model_id(self) -> str:
        return self.model

    def info(self) -> BackendInfo:
        # the variable's name is recorded, never its value; credentials in the URL are dropped
        options = self.options.model_dump()
        options["base_url"] = public_url(self.options.base_url)
        return BackendInfo(backend="openai", model=self.model, options=options)

    def redacted(self, text: str) -> str:
        """Error text as it may be shown: a server may echo the key (or the whole header) back."""
        key = os.environ.get(self.options.api_key_env)
        return SecretScanner([key] if key else []).redact(text)

    def body(self, request: ChatRequest) -> dict[str, Any]:
        """The request as the JSON body of one chat-completions call (a Batch API line's too)."""
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": request.conversation(),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
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
        return {**arguments, **self.options.extra_body}

    async def _call(
        self, client: AsyncOpenAI, gate: asyncio.Semaphore, body: dict[str, Any], tokens: int
    ) -> Any:
        """The server's answer to ``body`` (estimated at ``tokens`` for ``--tpm``): its JSON, or
        the failure `Completion` saying why there is none.

        Posted through the SDK's client as it is (its retries, timeouts and errors), not through
        its typed ``create``: that walks every key of the body, a JSON schema's included, against
        its type hints, a fifth of a scripted build's CPU (measured with py-spy), and sends the
        same bytes."""
        shown = public_url(f"{self.options.base_url.rstrip('/')}/chat/completions")
        tries = f"{self.options.max_retries + 1} tries"
        async with gate:
            if wait := self.limiter.reserve(tokens):
                await asyncio.sleep(wait)
            while (paused := self.limiter.pause_left()) > 0:  # the provider said stop meanwhile
                await asyncio.sleep(paused)
            try:
                raw = await client.post("/chat/completions", body=body, cast_to=httpx.Response)
                self.limiter.observe(raw.headers)
                answer = raw.json()
                self.limiter.settle(tokens, _used(answer, "total_tokens"))
                return answer
            except openai.APIStatusError as err:
                self.limiter.observe(err.response.headers)
                said = self.redacted(" ".join(err.response.text.split())[:300])
                problem = f"HTTP {err.status_code} from {shown}: {said}"
                if err.status_code in RETRIED_STATUS:
                    return failure(PROVIDER_ERROR, f"gave up after {tries}: {problem}")
                return failure(PROVIDER_REFUSED, problem)
            except openai.APITimeoutError:
                return failure(PROVIDER_ERROR, f"gave up after {tries}: timed out talking to {shown}")
            except openai.APIConnectionError as err:
                cause = type(err.__cause__).__name__ if err.__cause__ else "connection error"
                return failure(PROVIDER_ERROR, f"gave up after {tries}: {cause} talking to {shown}")
            except openai.OpenAIError as err:  # anything else the SDK raises: the provider's
                first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
                return failure(
                    PROVIDER_ERROR, f"{type(err).__name__} talking to {shown}: {self.redacted(first)}"
                )
            except ValueError as err:  # a body that says it is JSON and is not (an HTML error page)
                return failure(
                    MALFORMED_RESPONSE, f"{shown} answered 200 with a body that is not JSON: {err}"
                )

    async def _one(self, client: AsyncOpenAI, gate: asyncio.Semaphore, request: ChatRequest) -> Completion:
        if request.continuations:
            return await self._score(client, gate, request)
        answer = await self._call(client, gate, self.body(request), sum(estimated_tokens(request)))
        if isinstance(answer, Completion):
            return answer
        try:
            return _completion(_attributes(answer))
        except _NotACompletion as err:
            shown = public_url(f"{self.options.base_url.rstrip('/')}/chat/completions")
            return failure(MALFORMED_RESPONSE, f"{shown} answered 200 with {self.redacted(str(err))}")

    async def _score(self, client: AsyncOpenAI, gate: asyncio.Semaphore, request: ChatRequest) -> Completion:
        """A scoring request (see `ChatRequest.continuations`): a call per continuation asking
        for the prompt's log-probabilities (vLLM's server: ``prompt_logprobs`` with the final
        assistant message continued). A server that refuses them (4xx) or returns none scores
        nothing, said in the answer: the build goes on unscored; a failing server fails as ever."""
        found, used = [], 0
        for conversation, (_, scored) in zip(request.scoring(), request.continuations, strict=True):
            body = {
                "model": self.model,
                "messages": conversation,
                "temperature": 0.0,
                "max_tokens": 1,
                **self.options.extra_body,
                "prompt_logprobs": 0,
                "continue_final_message": True,
                "add_generation_prompt": False,
            }
            answer = await self._call(client, gate, body, round(len(str(conversation)) / CHARS_PER_TOKEN))
            if isinstance(answer, Completion):
                if answer.finish_reason != PROVIDER_REFUSED:
                    return answer
                return _unscored(f"the server refused prompt log-probabilities: {answer.text[:200]}")
            prompt = answer.get("prompt_logprobs") if isinstance(answer, dict) else None
            if not isinstance(prompt, list):
                return _unscored("the server returned no prompt log-probabilities")
            used += _used(answer, "prompt_tokens")
            found.append(scored_tokens([_token(entry) for entry in prompt], scored))
        return Completion(
            text=Scores(logprobs=found).model_dump_json(), finish_reason="stop", prompt_tokens=used
        )

    def _client(self) -> AsyncOpenAI:
        return AsyncOpenAI(
            api_key=os.environ.get(self.options.api_key_env) or NO_KEY,
            base_url=self.options.base_url,
            max_retries=self.options.max_retries,
            timeout=self.options.request_timeout,
        )

    async def _generate(self, requests: Sequence[ChatRequest]) -> list[Completion]:
        gate = asyncio.Semaphore(self.options.concurrency)
        async with self._client() as client:
            return list(await asyncio.gather(*(self._one(client, gate, r) for r in requests)))

    def stream(self, requests: Iterable[ChatRequest]) -> Iterator[list[tuple[int, Completion]]]:
        """A whole pass, answered as the server answers: each answer handed back (with its
        position) as soon as it arrives, so the runner commits it at once; a killed build loses
        only what was in flight. Requests are taken from ``requests`` (in this thread: rendering
        them reads the cache) only as the concurrency has room, twice over."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="openai-stream", daemon=True)
        thread.start()
        client, gate = self._client(), asyncio.Semaphore(self.options.concurrency)
        done: queue.SimpleQueue[tuple[int, Future[Completion]]] = queue.SimpleQueue()
        in_flight: dict[int, Future[Completion]] = {}
        taken = enumerate(requests)
        try:
            while True:
                while len(in_flight) < 2 * self.options.concurrency and (next_one := next(taken, None)):
                    index, request = next_one
                    future = asyncio.run_coroutine_threadsafe(self._one(client, gate, request), loop)
                    future.add_done_callback(functools.partial(_report_done, done, index))
                    in_flight[index] = future
                if not in_flight:
                    return
                chunk = [_waited(done)]
                while not done.empty():  # whatever else arrived meanwhile: committed together
                    chunk.append(done.get())
                for index, _ in chunk:
                    del in_flight[index]
                yield [(index, future.result()) for index, future in chunk]
        finally:  # finished, or stopped (a Ctrl-C): what is in flight is abandoned
            for future in in_flight.values():
                future.cancel()
            asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()

    def close(self) -> None:
        """Nothing to release: each pass's stream closes its own client."""

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


def _waited(done: queue.SimpleQueue[Any]) -> Any:
    """The next answer, waited for in short sleeps so that a stop (Ctrl-C) is seen at once."""
    while True:
        try:
            return done.get(timeout=0.5)
        except queue.Empty:
            interrupts.check()


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


class _NotACompletion(Exception):
    """A 200 whose body is not a chat completion (an HTML page, no choices, no message)."""


def failure(reason: str, why: str) -> Completion:
    return Completion(text=why, finish_reason=reason)


def completion_of(body: dict[str, Any], where: str) -> Completion:
    """A chat completion's JSON body (a Batch API output line's) as a `Completion`; one that is
    no chat completion is ``malformed_response``, saying ``where`` it came from. Read as the
    SDK's objects are, by attribute, with no field required that the answer does not need."""
    try:
        return _completion(_attributes(body))
    except _NotACompletion as err:
        return failure(MALFORMED_RESPONSE, f"{where} holds no chat completion: {err}")


def _attributes(value: Any) -> Any:
    if isinstance(value, dict):
        return SimpleNamespace(**{str(k): _attributes(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_attributes(v) for v in value]
    return value


def _used(answer: Any, field: str) -> int:
    """A count of an answer's ``usage`` (0 where a provider sent none, or none that is a count)."""
    usage = answer.get("usage") if isinstance(answer, dict) else None
    count = usage.get(field) if isinstance(usage, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else 0


def _unscored(why: str) -> Completion:
    return Completion(text=Scores(scored=False, why=why).model_dump_json(), finish_reason="stop")


def _token(entry: Any) -> tuple[str, float | None]:
    """A ``prompt_logprobs`` entry as (text, log-probability): None for the first token, else
    one token's ``{"logprob", "decoded_token"}`` under its id (asked with 0 alternatives)."""
    if not isinstance(entry, dict) or not entry:
        return "", None
    first = next(iter(entry.values()))
    if not isinstance(first, dict):
        return "", None
    return str(first.get("decoded_token") or ""), float(first.get("logprob", 0.0))


def _completion(response: Any) -> Completion:
    # a body that is not JSON reaches us as text; one that is JSON but no completion as a model
    # with its fields missing: either is the provider's fault, not the request's
    if isinstance(response, str | bytes) or not hasattr(response, "choices"):
        excerpt = " ".join(str(response).split())[:200]
        raise _NotACompletion(f"a body that is not a chat completion: {excerpt!r}")
    if not response.choices or not isinstance(response.choices, list):
        raise _NotACompletion("no choices")
    choice = response.choices[0]
    message = getattr(choice, "message", None)
    if message is None or not isinstance(getattr(message, "content", None), str | None):
        raise _NotACompletion("a choice without a message")
    usage = getattr(response, "usage", None)
    # vLLM and others put a thinking model's deliberation beside the content (not in the SDK's
    # own fields: read from the message's extra fields)
    reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
    return Completion.of(
        message.content or "",
        finish_reason=getattr(choice, "finish_reason", None),
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        reasoning=reasoning,
    )


def _report_done(
    done: queue.SimpleQueue[tuple[int, Future[Completion]]], index: int, future: Future[Completion]
) -> None:
    """A finished request's future, put where the sending thread collects it."""
    done.put((index, future))
