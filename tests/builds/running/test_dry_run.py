"""`build --dry-run`: the requests a build would send per stage, its cache hits, the tokens and a
cost, with no model call and nothing written."""

import pytest
from click.testing import CliRunner

import lettuce_build
from lettuce_build.builds.running.dry_run import estimate
from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.cli import main
from lettuce_build.sources.registry import get_source

from ...support.documents import respond, write_readmes
from ...support.scripted import ScriptedBackend


def test_a_build_never_run_asks_for_everything_and_nothing_is_called_or_written(tmp_path):
    readmes = write_readmes(tmp_path / "readmes")
    backend = ScriptedBackend(respond)
    options = Recipe(
        source="readme", input=str(readmes), out=tmp_path / "out", ratio=0.5, price_per_mtok=(3.0, 15.0)
    )
    dry = estimate(options, backend)
    assert backend.calls == [] and not (tmp_path / "out").exists()
    # the build's model scores its own edits (plausibility): prefills, no completion
    assert dry.items > 0 and [s.name for s in dry.stages] == ["question", "answer", "inject", "plausibility"]
    question, answer, inject, scored = dry.stages
    assert scored.items == inject.items and scored.completion_tokens == 0 and scored.prompt_tokens > 0
    assert question.items == question.cache_misses == dry.items and question.cache_hits == 0
    assert answer.cache_misses == dry.items
    # balancing's first wave: the share asked for, with its margin for injections that fail
    assert round(dry.items * 0.5) <= inject.items == inject.cache_misses <= dry.items
    assert all(s.prompt_tokens > 0 for s in dry.stages)
    limit = get_source("readme").pipeline().inject[0].sampling.max_tokens
    assert question.completion_tokens == question.cache_misses * limit  # an upper bound
    assert dry.dollars == pytest.approx(dry.prompt_tokens * 3e-6 + dry.completion_tokens * 15e-6)


def test_after_a_build_every_request_is_found_in_its_cache(tmp_path):
    readmes = write_readmes(tmp_path / "readmes")
    options = Recipe(source="readme", input=str(readmes), out=tmp_path / "out", ratio=0.5)
    run_build(options, ScriptedBackend(respond))
    before = {path: path.read_bytes() for path in (tmp_path / "out").rglob("*") if path.is_file()}
    dry = estimate(options, ScriptedBackend(respond))
    assert all(s.cache_misses == 0 and s.cache_hits >= s.items > 0 for s in dry.stages)
    after = {path: path.read_bytes() for path in (tmp_path / "out").rglob("*") if path.is_file()}
    assert after == before  # the build's folder is only read
    assert dry.prompt_tokens == dry.completion_tokens == 0
    changed = options.model_copy(update={"seed": 1})  # another seed: other questions, all to ask
    assert estimate(changed, ScriptedBackend(respond)).stages[0].cache_hits == 0


def test_the_command_line_prints_the_table_and_a_cost_for_an_endpoint(tmp_path):
    readmes = write_readmes(tmp_path / "readmes")
    result = CliRunner().invoke(
        main,
        ["build", "--source", "readme", "--input", str(readmes), "--out", str(tmp_path / "out")]
        + ["--dry-run", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
        + ["--price-per-mtok", "3/15"],
    )
    assert result.exit_code == 0, result.output
    assert "dry run of readme:" in result.output and "question" in result.output
    assert "estimated cost at $3/$15 per million tokens in/out: at most $" in result.output
    assert not (tmp_path / "out").exists()
    batched = CliRunner().invoke(
        main,
        ["build", "--source", "readme", "--input", str(readmes), "--out", str(tmp_path / "out")]
        + ["--dry-run", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
        + ["--price-per-mtok", "3/15", "--batch"],
    )
    assert "per million tokens in/out, batched at 0.5 of it: at most $" in batched.output
    bad = CliRunner().invoke(
        main,
        ["build", "--source", "readme", "--out", str(tmp_path / "o"), "--dry-run", "--price-per-mtok", "3"],
    )
    assert bad.exit_code == 2 and "is not IN/OUT dollars per million tokens" in bad.output


def test_the_python_api_has_it_too(tmp_path):
    readmes = write_readmes(tmp_path / "readmes")
    dry = lettuce_build.dry_run(
        "readme", input=str(readmes), out=tmp_path / "out", backend="openai", model="m"
    )
    assert dry.stages[0].cache_misses == dry.items


def test_the_scoring_of_questions_and_edits_is_counted_and_no_plausibility_counts_none(tmp_path):
    readmes = write_readmes(tmp_path / "readmes")
    options = Recipe(source="readme", input=str(readmes), out=tmp_path / "out", answers="extractive")
    names = [s.name for s in estimate(options, ScriptedBackend(respond)).stages]
    assert names == ["question", "question_fit", "answer", "inject", "plausibility"]
    quiet = options.model_copy(update={"plausibility": False})
    assert [s.name for s in estimate(quiet, ScriptedBackend(respond)).stages] == [
        "question",
        "answer",
        "inject",
    ]


def test_a_dry_run_counts_the_requests_the_build_then_sends_stage_by_stage(tmp_path):
    readmes = write_readmes(tmp_path / "readmes")
    options = Recipe(source="readme", input=str(readmes), out=tmp_path / "out", answers="extractive")
    dry = estimate(options, ScriptedBackend(respond))
    run_build(options, ScriptedBackend(respond))
    sent = {s.name: s.cache_misses for s in BuildDir(tmp_path / "out").read_manifest().stages}
    assert {s.name: s.cache_misses for s in dry.stages} == {n: c for n, c in sent.items() if n != "assemble"}


def test_a_dry_run_asked_to_stop_says_it_wrote_nothing(tmp_path, monkeypatch):
    # a build's stop says what it kept and how to continue; a dry run kept nothing to continue
    import signal

    from lettuce_build.builds.running import dry_run
    from lettuce_build.core.interrupts import Interrupted

    def stopped(*_args):
        raise Interrupted(signal.SIGINT)

    monkeypatch.setattr(dry_run, "build_stages", stopped)  # inside the rehearsal's run context
    options = Recipe(source="readme", input=str(write_readmes(tmp_path / "r")), out=tmp_path / "out")
    with pytest.raises(Interrupted) as stop:
        estimate(options, ScriptedBackend(respond))
    assert stop.value.line == "interrupted: the dry run stopped; it wrote nothing"
    assert stop.value.exit_code == 130 and not (tmp_path / "out").exists()


def test_a_large_input_is_counted_whole_and_its_stages_estimated_from_a_seeded_sample(tmp_path, monkeypatch):
    import json

    from lettuce_build.builds.running import dry_run
    from lettuce_build.view.summary import dry_run_text

    rows = tmp_path / "rows.jsonl"
    sentence = "The cache of release {n} holds {k} files, and each file is read {m} times a day."
    rows.write_text(
        "".join(
            json.dumps({"context": sentence.format(n=n, k=n % 90 + 10, m=n % 7 + 2)}) + "\n"
            for n in range(1200)
        )
    )
    options = Recipe(source="custom", input=str(rows), out=tmp_path / "out", backend="openai", model="m")
    exact = estimate(options, ScriptedBackend(respond), exact=True)
    monkeypatch.setattr(dry_run, "SAMPLE_ITEMS", 400)
    sampled = estimate(options, ScriptedBackend(respond))
    assert exact.sampled is None and sampled.sampled == 400 and sampled.items == exact.items == 1200
    for whole, estimated in zip(exact.stages, sampled.stages, strict=True):
        assert estimated.cache_misses == pytest.approx(whole.cache_misses, rel=0.15, abs=5)
        assert estimated.prompt_tokens == pytest.approx(whole.prompt_tokens, rel=0.15)
    asked = sum(s.cache_misses for s in exact.stages)
    assert abs(sum(s.cache_misses for s in sampled.stages) - asked) <= max(sampled.requests_margin, 5)
    assert "seeded sample of 400 of the 1200 items" in dry_run_text(sampled)
    assert estimate(options, ScriptedBackend(respond)).stages == sampled.stages  # seeded: the same again
