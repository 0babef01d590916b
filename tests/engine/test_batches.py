"""`--batch`: a pass's misses go through a Batch API (a loopback one here, whose lines a scripted
OpenAI-compatible server answers) and come back into the request cache under the keys a live
call uses; what a batch does not answer is a failure row, asked again by the next run."""

from __future__ import annotations

import json
from pathlib import Path

import lettuce_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.engine.batches import BatchCompletions
from lettuce_build.engine.records import StageStats
from lettuce_build.llm.batch_api import BatchAPI
from lettuce_build.llm.batch_ledger import BATCHES_FILE, BatchLedger, BatchRecord
from lettuce_build.llm.cache import RequestCache, request_key
from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions
from lettuce_build.llm.protocol import ChatRequest
from tests.support.batch_server import serve_batches
from tests.support.documents import respond, write_readmes
from tests.support.openai_server import serve


def recipe(docs: Path, out: Path, url: str, **settings: object) -> Recipe:
    given = {
        "source": "readme",
        "input": str(docs),
        "out": out,
        "backend": "openai",
        "base_url": url,
        "model": "m",
        "batch": True,
        "batch_poll_seconds": 0.05,
        "max_retries": 0,
        **settings,
    }
    return Recipe.checked(given)


def test_a_batch_build_answers_through_batches_and_shares_its_answers_with_a_live_build(tmp_path):
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    with serve(respond) as upstream, serve_batches(upstream) as (url, server):
        batched = lettuce_build.build(recipe=recipe(docs, out, url, price_per_mtok=(3.0, 15.0)))
        live = lettuce_build.build(recipe=recipe(docs, out, url, batch=False))
    assert sum(batched.summary.by_split.values()) == 3
    # every request went through a batch once; only the plausibility check's scoring went live
    assert server.submitted and set(server.submitted.values()) == {1}
    ledger = BatchLedger(out / BATCHES_FILE).records()
    assert len(ledger) == 3 and all(r.collected and r.status == "completed" for r in ledger)
    assert [r.prompt_version.split("-")[0] for r in ledger] == ["question", "answer", "inject_menu"]
    cost = batched.summary.cost
    assert cost.batched_completion_tokens == cost.completion_tokens > 0
    assert cost.dollars == (cost.prompt_tokens * 3e-6 + cost.completion_tokens * 15e-6) * 0.5
    # the live build of the same recipe finds every answer in the cache: the keys are the same
    assert live.summary.cost.requests == 0 and live.summary.by_split == batched.summary.by_split


def test_a_refused_line_is_a_failure_row_with_the_providers_reason(tmp_path):
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    with serve(respond) as upstream, serve_batches(upstream, refuse="pebble is a tiny") as (url, _):
        result = lettuce_build.build(recipe=recipe(docs, out, url))
    failures = [row for row in BuildDir(out).failures() if row.reason == "provider_refused"]
    assert [row.key.split("::")[1] for row in failures] == ["pebble.md"]
    assert "HTTP 400 in the batch" in failures[0].detail
    assert "filtered by the content policy" in failures[0].detail
    assert sum(result.summary.by_split.values()) == 2


def test_an_expired_batch_keeps_what_it_answered_and_the_next_run_asks_only_the_rest(tmp_path):
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    with serve(respond) as upstream:
        with serve_batches(upstream, expire_after=1) as (url, server):
            first = lettuce_build.build(recipe=recipe(docs, out, url))
        expired = [row for row in BuildDir(out).failures() if "ended expired" in row.detail]
        assert len(expired) == 2 and expired[0].reason == "provider_error"
        assert "the next run asks it again" in expired[0].detail
        assert sum(first.summary.by_split.values()) == 1
        answered = {key for key in server.submitted}
        with serve_batches(upstream) as (url, again):
            second = lettuce_build.build(recipe=recipe(docs, out, url))
    asked_again = set(again.submitted)
    # the question the expired batch answered is not asked again; the two it never reached are
    assert len(asked_again & answered) == 2
    assert sum(second.summary.by_split.values()) == 3


def test_a_pass_is_split_into_batches_within_the_providers_limits(tmp_path):
    docs, out = write_readmes(tmp_path / "docs"), tmp_path / "out"
    with serve(respond) as upstream, serve_batches(upstream) as (url, server):
        result = lettuce_build.build(recipe=recipe(docs, out, url, batch_max_requests=2))
    ledger = BatchLedger(out / BATCHES_FILE).records()
    question = [r.requests for r in ledger if r.prompt_version.startswith("question")]
    assert question == [2, 1]
    assert sum(result.summary.by_split.values()) == 3 and set(server.submitted.values()) == {1}


def test_a_batch_whose_id_was_never_written_down_is_found_and_collected(tmp_path):
    """A build killed between making a batch and recording its id: the next one finds the batch
    among the provider's by its input file, waits for it and sends nothing twice."""
    with serve(respond) as upstream, serve_batches(upstream) as (url, server):
        backend = OpenAIBackend("m", OpenAIOptions(base_url=url, batch=True, batch_poll_seconds=0.05))
        api = BatchAPI(backend)
        request = ChatRequest.of("Write a realistic question.", "Text:\nfastgrid renders tables.", seed=1)
        key = request_key("m", request, "question-v2")
        file_id = api.upload(api.line(key, request), "lost.jsonl")
        api.create(file_id)
        ledger = BatchLedger(tmp_path / BATCHES_FILE)
        ledger.add(BatchRecord(file_id=file_id, model="m", prompt_version="question-v2", requests=1))
        cache = RequestCache(tmp_path / "cache.sqlite")
        completions = BatchCompletions(backend, cache, api=api, ledger=ledger)
        asked = completions.prefetch(
            "question-v2",
            lambda: iter([[(key, request)]]),
            StageStats(name="q", prompt_version="question-v2"),
        )
        assert asked == set()  # found in the cache once the lost batch was collected
        assert cache.present([key]) == {key}
        assert server.submitted[key] == 1
        record = ledger.records()[0]
        assert record.collected and record.batch_id is not None


def test_status_shows_the_batches_in_flight(tmp_path):
    from lettuce_build.view.summary import batch_lines

    ledger = BatchLedger(tmp_path / BATCHES_FILE)
    ledger.add(
        BatchRecord(
            file_id="file-1",
            batch_id="batch_9",
            model="m",
            prompt_version="answer-v2",
            requests=40,
            status="in_progress",
            completed=12,
        )
    )
    ledger.add(
        BatchRecord(
            file_id="file-2",
            batch_id="batch_8",
            model="m",
            prompt_version="question-v2",
            requests=40,
            collected=True,
        )
    )
    lines = batch_lines(tmp_path)
    assert lines[0] == "  batches: 2 sent, 1 in flight"
    assert "batch_9 in_progress: 12 answered, 0 failed of 40 (answer-v2" in lines[1]
    assert json.loads((tmp_path / BATCHES_FILE).read_text())[0]["batch_id"] == "batch_9"
