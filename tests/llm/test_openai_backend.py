"""The OpenAI-compatible backend against a scripted HTTP server on loopback: retries, errors, secrets.

A request the provider does not answer is a completion of its own (``provider_refused``,
``provider_error``, ``malformed_response``), never an exception that takes the batch with it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions
from lettuce_build.llm.protocol import MALFORMED_RESPONSE, PROVIDER_ERROR, PROVIDER_REFUSED, ChatRequest

SECRET = "sk-test-0123456789-do-not-leak"


class Script:
    """What the server answers, in order; the last entry repeats."""

    def __init__(self, *answers: tuple[int, dict | str, float]) -> None:
        self.answers = list(answers)
        self.received: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.lock = threading.Lock()

    def next(self) -> tuple[int, dict | str, float]:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def ok_body(content: str = '{"city": "Paris"}', reasoning: str | None = None) -> dict:
    message = {"role": "assistant", "content": content}
    if reasoning:
        message["reasoning_content"] = reasoning
    return {
        "choices": [{"message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5},
    }


@pytest.fixture
def server() -> Iterator[tuple[str, Script]]:
    script = Script((200, ok_body(), 0.0))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers["Content-Length"])
            script.received.append(json.loads(self.rfile.read(length)))
            script.headers.append({name.lower(): value for name, value in self.headers.items()})
            with script.lock:
                status, body, delay = script.next()
                script.in_flight += 1
                script.peak_in_flight = max(script.peak_in_flight, script.in_flight)
            time.sleep(delay)
            with script.lock:
                script.in_flight -= 1
            payload = (json.dumps(body) if isinstance(body, dict) else body).encode()
            try:
                self.send_response(status)
                if status == 429 or status >= 500:
                    # a millisecond: what is tested is that a retry comes, not the SDK's backoff
                    self.send_header("retry-after-ms", "1")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and went away, as the test intended

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}/v1", script
    httpd.shutdown()
    httpd.server_close()


def backend(url: str, **options) -> OpenAIBackend:
    defaults = dict(base_url=url, max_retries=3, request_timeout=2.0, api_key_env="LB_TEST_KEY")
    return OpenAIBackend("teacher", OpenAIOptions(**{**defaults, **options}))


def request(schema: dict | None = None) -> ChatRequest:
    return ChatRequest.of("sys", "What is the capital of France?", seed=7, max_tokens=32, json_schema=schema)


def test_answers_come_back_in_order_with_tokens(server):
    url, script = server
    [completion] = backend(url).generate([request()])
    assert completion.text == '{"city": "Paris"}'
    assert (completion.finish_reason, completion.prompt_tokens, completion.completion_tokens) == (
        "stop",
        11,
        5,
    )
    assert script.received[0]["seed"] == 7 and script.received[0]["model"] == "teacher"


def test_a_schema_request_asks_for_a_strict_json_schema_response_format(server):
    url, script = server
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "note": {"type": "string", "default": ""}},
        "required": ["city"],
    }
    backend(url).generate([request(schema)])
    assert script.received[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {
            "name": "response",
            # strict mode: closed objects, every property required
            "schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "note": {"type": "string"}},
                "required": ["city", "note"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }


@pytest.mark.parametrize("status", [429, 500, 503])
def test_retryable_statuses_are_retried(server, status):
    url, script = server
    script.answers = [
        (status, {"error": "busy"}, 0.0),
        (status, {"error": "busy"}, 0.0),
        (200, ok_body(), 0.0),
    ]
    [completion] = backend(url).generate([request()])
    assert completion.text == '{"city": "Paris"}' and len(script.received) == 3


def test_a_timeout_is_retried(server):
    url, script = server
    script.answers = [(200, ok_body("late"), 1.5), (200, ok_body("in time"), 0.0)]
    [completion] = backend(url, request_timeout=0.5).generate([request()])
    assert completion.text == "in time"


def test_a_client_error_is_a_refusal_of_that_request_not_retried_naming_the_status(server):
    url, script = server
    script.answers = [(400, {"error": "bad schema"}, 0.0)]
    [completion] = backend(url).generate([request()])
    assert completion.finish_reason == PROVIDER_REFUSED and not completion.answered
    assert "HTTP 400" in completion.text and "bad schema" in completion.text
    assert len(script.received) == 1


def test_one_refused_request_leaves_the_rest_of_the_batch_answered(server):
    url, script = server
    script.answers = [
        (200, ok_body("one"), 0.0),
        (400, {"error": "content filter"}, 0.0),
        (200, ok_body("three"), 0.0),
    ]
    completions = backend(url, concurrency=1).generate([request(), request(), request()])
    assert [c.finish_reason for c in completions] == ["stop", PROVIDER_REFUSED, "stop"]
    assert [c.text for c in completions][::2] == ["one", "three"]


def test_giving_up_after_the_retries_is_a_provider_error(server):
    url, script = server
    script.answers = [(503, {"error": "down"}, 0.0)]
    [completion] = backend(url).generate([request()])
    assert completion.finish_reason == PROVIDER_ERROR
    assert completion.text.startswith("gave up after 4 tries: HTTP 503")


@pytest.mark.parametrize(
    "body",
    ["<html><body>Bad gateway</body></html>", {"choices": []}, {"id": "x", "object": "chat.completion"}],
    ids=["html", "no-choices", "no-choices-field"],
)
def test_a_200_that_is_no_chat_completion_is_a_malformed_response(server, body):
    url, script = server
    script.answers = [(200, body, 0.0)]
    [completion] = backend(url).generate([request()])
    assert completion.finish_reason == MALFORMED_RESPONSE and not completion.answered


def test_reasoning_is_kept_apart_from_the_answer(server):
    url, script = server
    script.answers = [(200, ok_body("Paris", reasoning="The user asks about France..."), 0.0)]
    [completion] = backend(url).generate([request()])
    assert completion.text == "Paris" and completion.reasoning == "The user asks about France..."


def test_thinking_inline_in_the_content_is_kept_apart_too(server):
    url, script = server
    script.answers = [(200, ok_body("<think>France, so...</think>\nParis"), 0.0)]
    [completion] = backend(url).generate([request()])
    assert completion.text == "Paris" and completion.reasoning == "France, so..."


def test_the_key_goes_only_into_the_authorization_header(server, monkeypatch):
    url, script = server
    monkeypatch.setenv("LB_TEST_KEY", SECRET)
    script.answers = [(401, {"error": "nope"}, 0.0)]
    chosen = backend(url)
    [refused] = chosen.generate([request()])
    headers = script.headers[0]
    assert headers["authorization"] == f"Bearer {SECRET}"
    assert not [name for name, value in headers.items() if SECRET in value and name != "authorization"]
    assert SECRET not in json.dumps(script.received)
    assert SECRET not in refused.text
    assert SECRET not in chosen.info().model_dump_json()


def test_an_error_body_that_echoes_the_key_is_redacted(server, monkeypatch):
    url, script = server
    monkeypatch.setenv("LB_TEST_KEY", SECRET)
    script.answers = [(401, {"error": f"Incorrect API key provided: Bearer {SECRET}"}, 0.0)]
    [refused] = backend(url).generate([request()])
    assert refused.finish_reason == PROVIDER_REFUSED
    assert "HTTP 401" in refused.text and "[redacted]" in refused.text
    assert SECRET not in refused.text and "Bearer sk" not in refused.text


def test_credentials_in_the_base_url_are_never_recorded():
    chosen = backend("https://user:s3cr3t-pass@api.example.org/v1?api-key=k3y-value&region=eu")
    recorded = chosen.info().model_dump_json()
    assert "s3cr3t" not in recorded and "k3y-value" not in recorded
    assert chosen.info().options["base_url"] == "https://api.example.org/v1?api-key=%5Bredacted%5D&region=eu"


def test_an_unreachable_endpoint_is_a_provider_error_that_names_it():
    [completion] = backend("http://127.0.0.1:9/v1", max_retries=1).generate([request()])
    assert completion.finish_reason == PROVIDER_ERROR
    assert completion.text.startswith("gave up after 2 tries: ConnectError talking to http://127.0.0.1:9/")


def test_concurrency_is_limited(server):
    url, script = server
    script.answers = [(200, ok_body(), 0.2)]
    completions = backend(url, concurrency=2).generate([request() for _ in range(6)])
    assert len(completions) == 6
    assert script.peak_in_flight == 2


def test_a_real_vllm_server_answers_with_schema_valid_json(vllm_server):
    from pydantic import BaseModel

    class City(BaseModel):
        city: str

    chosen = OpenAIBackend("smollm2-135m", OpenAIOptions(base_url=vllm_server, concurrency=4))
    requests = [
        ChatRequest.of(
            "Answer with JSON.",
            f"What is the capital of {country}?",
            max_tokens=64,
            seed=i,
            json_schema=City.model_json_schema(),
        )
        for i, country in enumerate(["France", "Italy", "Japan", "Peru"])
    ]
    completions = chosen.generate(requests)
    assert len(completions) == 4
    for completion in completions:
        assert completion.finish_reason == "stop"
        City.model_validate_json(completion.text)
        assert completion.completion_tokens > 0


@pytest.mark.parametrize("usage", ['"lots"', "[1, 2]", '{"total_tokens": "x", "prompt_tokens": null}'])
def test_an_answer_whose_usage_is_no_count_is_kept_with_no_tokens_counted(usage):
    from ..support.openai_server import serve_posts

    body = f'{{"choices": [{{"message": {{"content": "hi"}}, "finish_reason": "stop"}}], "usage": {usage}}}'
    with serve_posts(lambda raw: (200, "application/json", body.encode())) as url:
        backend = OpenAIBackend("m", OpenAIOptions(base_url=url, max_retries=0))
        [answer] = backend.generate([request()])
    assert (answer.text, answer.finish_reason, answer.prompt_tokens) == ("hi", "stop", 0)
