"""`lettuce-build translate` end to end with a scripted translator: the samples whose spans came
back are written as a build writes its own, each span at its new offsets with its type; the
others are failure rows with their reasons; a bad input row is a named skip; a rerun asks
nothing again."""

import json
from pathlib import Path

from click.testing import CliRunner
from datasets import load_dataset

from lettuce_build.cli import main
from lettuce_build.core.schema import HallucinationSample, Span, default_prompt, sample_to_row
from lettuce_build.formats import FORMATS
from lettuce_build.view.samples import load_samples

from ..support.scripted import ScriptedBackend

CONTEXT = "Pebblemq is a message queue. Install it with `pip install pebblemq`. It listens on port 5672."
QUESTION = "How do I run Pebblemq?"
HALLUCINATED = "Install it with `pip install pebblemq`; it listens on port 8080."
CLEAN = "Install it with `pip install pebblemq`; it listens on port 5672."
LOSES_ITS_TAG = "It is a message queue that listens on port 6000."
#: marked English -> a German translator's answer (the last one drops its tag)
ANSWERS = {
    "Install it with <c1/>; it listens on port <h1>8080</h1>.": (
        "Installieren Sie es mit <c1/>; es lauscht auf Port <h1>8080</h1>."
    ),
    "Install it with <c1/>; it listens on port 5672.": (
        "Installieren Sie es mit <c1/>; es lauscht auf Port 5672."
    ),
    "It is a message queue that listens on port <h1>6000</h1>.": (
        "Es ist eine Nachrichtenwarteschlange, die auf Port 6000 lauscht."
    ),
}
GERMAN_CONTEXT = {
    "question": "Wie starte ich Pebblemq?",
    "context": (
        "Pebblemq ist eine Nachrichtenwarteschlange. Installieren Sie es mit <c1/>. Es lauscht auf Port 5672."
    ),
}


def translator(request) -> str:
    user = request.messages[-1].content
    if "Passage:" in user:
        return json.dumps(GERMAN_CONTEXT)
    return json.dumps({"text": ANSWERS[user.split(":\n\n", 1)[1].strip()]})


def sample(answer: str, span: str | None, split: str) -> HallucinationSample:
    labels = []
    if span is not None:
        start = answer.index(span)
        labels = [
            Span(
                start=start,
                end=start + len(span),
                text=span,
                label="NUMERICAL",
                category="contradiction",
                subcategory="numerical",
            )
        ]
    return HallucinationSample(
        prompt=default_prompt(CONTEXT, QUESTION),
        context=CONTEXT,
        question=QUESTION,
        answer=answer,
        labels=labels,
        split=split,
        task_type="qa",
        dataset="lettucedetect-readme",
        context_modality="markdown",
        category="contradiction" if labels else None,
        subcategory="numerical" if labels else None,
        metadata={"key": f"readme::{answer[:12]}::{split}"},
    )


def write_rows(path: Path) -> Path:
    rows = [
        sample(HALLUCINATED, "8080", "train"),
        sample(CLEAN, None, "test"),
        sample(LOSES_ITS_TAG, "6000", "train"),
    ]
    lines = [json.dumps(sample_to_row(row)) for row in rows] + ['{"answer": "a row of nothing we know"}']
    path.write_text("\n".join(lines) + "\n")
    return path


def test_translated_samples_keep_their_spans_and_the_rest_are_failures_with_reasons(tmp_path, monkeypatch):
    rows, out = write_rows(tmp_path / "rows.jsonl"), tmp_path / "de"
    backend = ScriptedBackend(translator)
    monkeypatch.setattr("lettuce_build.llm.factory.make_backend", lambda *args, **kwargs: backend)
    result = CliRunner().invoke(main, ["translate", str(rows), "--to", "de", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "German (de): kept 2 of 3 (67%); dropped: 1 span_lost" in result.output
    assert "not translated: 1 missing_column" in result.output

    kept = {s.split: s for s in load_samples(out)}
    hallucinated, clean = kept["train"], kept["test"]
    [span] = hallucinated.labels
    assert hallucinated.answer[span.start : span.end] == span.text == "8080"
    assert (span.label, span.category, span.subcategory) == ("NUMERICAL", "contradiction", "numerical")
    assert (
        "`pip install pebblemq`" in hallucinated.answer and "`pip install pebblemq`" in hallucinated.context
    )
    assert clean.labels == [] and clean.language == hallucinated.language == "de"
    assert hallucinated.prompt == default_prompt(hallucinated.context, "Wie starte ich Pebblemq?")
    assert (
        hallucinated.metadata["translated_from"] == "en"
        and hallucinated.metadata["translation_model"] == "scripted"
    )
    report = json.loads((out / "translation.json").read_text())
    assert report["languages"]["de"] == {"asked": 3, "kept": 2, "dropped": {"span_lost": 1}}

    card = (out / "hub" / "README.md").read_text()
    assert "| German (de) | 3 | 2 (66.7%) | span_lost 33.3% |" in card and "`scripted`" in card
    assert load_dataset(str(out / "hub"), "translated-de", split="train")[0]["language"] == "de"

    validated = CliRunner().invoke(main, ["validate", str(out)])
    assert validated.exit_code == 0, validated.output
    failures = CliRunner().invoke(main, ["failures", str(out)])
    assert "span_lost" in failures.output

    asked = len(backend.calls)
    again = CliRunner().invoke(main, ["translate", str(rows), "--to", "de", "--out", str(out)])
    assert again.exit_code == 0 and len(backend.calls) == asked  # the cache answers the rerun
    # streamed: the work items and the translated samples went to files as they came, never a
    # list of them all; the rerun found its items, by their content, where the first run left them
    work = out / "work"
    assert len(list(work.glob("items-*.json"))) == 1  # one set of items, named by its content
    assert sorted(path.name for path in work.glob("translated-*.arrow")) == [
        "translated-test.arrow",
        "translated-train.arrow",
    ]


def test_an_unknown_language_is_refused_in_one_line(tmp_path):
    rows = write_rows(tmp_path / "rows.jsonl")
    result = CliRunner().invoke(main, ["translate", str(rows), "--to", "xx", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "'xx' is not one of" in result.output


def test_a_dry_run_counts_what_a_translation_would_send_and_after_it_nothing(tmp_path, monkeypatch):
    rows, out = write_rows(tmp_path / "rows.jsonl"), tmp_path / "de"
    backend = ScriptedBackend(translator)
    monkeypatch.setattr("lettuce_build.llm.factory.make_backend", lambda *args, **kwargs: backend)
    args = ["translate", str(rows), "--to", "de", "--to", "fr", "--out", str(out)]
    before = CliRunner().invoke(main, [*args, "--dry-run", "--price-per-mtok", "3/15"])
    assert before.exit_code == 0, before.output
    assert backend.calls == [] and not out.exists()
    # the table's rows (the rehearsal's progress bars may come before them)
    rows = [line.split() for line in before.output.splitlines() if line.startswith("  translate_")]
    lines = {row[0]: row[1:] for row in rows}
    assert lines["translate_answer"][:3] == lines["translate_context"][:3] == ["6", "0", "6"]
    assert "estimated cost at $3/$15 per million tokens in/out" in before.output
    del args[4:6]  # German only: the dry run after it finds every request cached
    assert CliRunner().invoke(main, args).exit_code == 0
    after = CliRunner().invoke(main, [*args, "--dry-run"])
    answers = next(
        line for line in after.output.splitlines() if line.startswith("  translate_answer")
    ).split()
    # every request cached (the failed item's cached retry counts as a hit too): nothing to send
    assert answers[1] == "3" and answers[3] == "0", after.output


def test_with_verify_a_judge_reads_the_translated_spans_and_one_judged_supported_drops_its_sample(
    tmp_path, monkeypatch
):
    rows, out = write_rows(tmp_path / "rows.jsonl"), tmp_path / "de"
    judged = []

    def translator_and_judge(request) -> str:
        if request.json_schema and "spans" in request.json_schema["properties"]:
            judged.append(request.messages[-1].content)
            return json.dumps({"spans": [{"span": 1, "verdict": "supported", "category": "supported"}]})
        return translator(request)

    backend = ScriptedBackend(translator_and_judge)
    monkeypatch.setattr("lettuce_build.llm.factory.make_backend", lambda *args, **kwargs: backend)
    result = CliRunner().invoke(main, ["translate", str(rows), "--to", "de", "--out", str(out), "--verify"])
    assert result.exit_code == 0, result.output
    assert judged and "[[1: 8080]]" in judged[0] and "Wie starte ich Pebblemq?" in judged[0]
    assert "German (de): kept 1 of 3" in result.output and "judge_supported" in result.output
    assert [s.labels for s in load_samples(out)] == [[]]  # the clean sample is kept, unjudged


def test_an_export_in_lettucedetect_s_json_translates_as_our_rows_do(tmp_path, monkeypatch):
    samples = [sample(HALLUCINATED, "8080", "train"), sample(CLEAN, None, "test")]
    exported = tmp_path / "lettucedetect.json"
    FORMATS["lettucedetect"].write(samples, exported)
    backend = ScriptedBackend(translator)
    monkeypatch.setattr("lettuce_build.llm.factory.make_backend", lambda *args, **kwargs: backend)
    out = tmp_path / "de"
    result = CliRunner().invoke(main, ["translate", str(exported), "--to", "de", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "German (de): kept 2 of 2" in result.output
    [span] = next(s for s in load_samples(out) if s.labels).labels
    assert span.text == "8080" and span.category == "contradiction"


def test_a_priced_translation_says_its_dollars_in_the_summary_and_the_manifest(tmp_path, monkeypatch):
    rows, out = write_rows(tmp_path / "rows.jsonl"), tmp_path / "de"
    backend = ScriptedBackend(translator)
    monkeypatch.setattr("lettuce_build.llm.factory.make_backend", lambda *args, **kwargs: backend)
    args = ["translate", str(rows), "--to", "de", "--out", str(out), "--price-per-mtok", "3/15"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    dollars = manifest["cost"]["dollars"]
    assert dollars > 0 and manifest["cost"]["prompt_tokens"] > 0
    assert f"cost so far: ${dollars:.4f}" in result.output
    again = CliRunner().invoke(main, args)  # answered from the cache: nothing more spent
    assert json.loads((out / "manifest.json").read_text())["cost"]["dollars"] == dollars, again.output
