"""PsiloQA: every span classified; an item with an unclassified span fails whole; bad spans counted."""

import json

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.psiloqa import PsiloQASource

from ..support.documents import classify_respond
from ..support.scripted import ScriptedBackend


def row(answer, spans, split="train", lang="de"):
    return {
        "wiki_passage": "Die Stadt hat 3000 Einwohner.",
        "question": "Wie viele Einwohner?",
        "llm_answer": answer,
        "labels": spans,
        "lang": lang,
        "split": split,
    }


def write(folder):
    folder.mkdir()
    (folder / "train.jsonl").write_text(
        json.dumps(row("Die Stadt hat 4000 Einwohner.", [[14, 18]]))
        + "\n"
        + json.dumps(row("Sie hat UNSURE Leute und 5 Kirchen.", [[8, 14], [26, 35]]))
        + "\n"
        + json.dumps(row("Keine Fehler hier.", []))
        + "\n"
    )
    (folder / "validation.jsonl").write_text(
        json.dumps(row("Etwa 9000 Menschen.", [[5, 9], [50, 60]], "x")) + "\n"
    )
    return folder


def test_out_of_range_spans_are_dropped_with_a_count_and_splits_and_languages_kept(tmp_path):
    loaded = PsiloQASource().load(str(write(tmp_path / "pq")), LoadOptions())
    assert loaded.skipped == {"span_out_of_range": 1}
    assert [i["split"] for i in loaded.items] == ["train", "train", "train", "validation"]
    assert {i["language"] for i in loaded.items} == {"de"}


def test_one_unclassified_span_fails_its_whole_item(tmp_path):
    summary = run_build(
        Recipe(source="psiloqa", input=str(write(tmp_path / "pq")), out=tmp_path / "out"),
        ScriptedBackend(classify_respond),
    )
    assert summary.by_split == {"train": 2, "validation": 1}  # the UNSURE item is missing
    assert summary.hallucinated == 2 and summary.clean == 1
    failures = BuildDir(tmp_path / "out").failures(stage="classify")
    assert [f.key for f in failures] == ["psiloqa::train::1::span0"] and failures[
        0
    ].reason == "malformed_json"
    assert summary.example.labels[0].category == "contradiction"


def test_the_failed_item_is_retried_on_the_next_run(tmp_path):
    folder = write(tmp_path / "pq")
    run_build(
        Recipe(source="psiloqa", input=str(folder), out=tmp_path / "out"),
        ScriptedBackend(classify_respond),
    )
    fixed = ScriptedBackend(lambda r: '{"category": "unsupported_addition", "subcategory": "claim"}')
    summary = run_build(Recipe(source="psiloqa", input=str(folder), out=tmp_path / "out"), fixed)
    assert summary.by_split == {"train": 3, "validation": 1}
    assert len(fixed.requests) == 1  # only the span that failed is asked again


def test_overlapping_and_touching_spans_are_merged_before_classification():
    from lettuce_build.sources.psiloqa import merge_spans

    assert merge_spans([(10, 20), (0, 5), (15, 25), (25, 30), (40, 45), (0, 5)]) == [
        (0, 5),
        (10, 30),
        (40, 45),
    ]
