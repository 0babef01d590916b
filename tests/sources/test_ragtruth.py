"""RAGTruth: mechanical label mapping with the entity refinement, native splits, clear errors."""

import json

import pytest

from lettuce_build.builds.running.run import run_build
from lettuce_build.builds.settings.recipe import Recipe
from lettuce_build.core.errors import TableError
from lettuce_build.core.schema import check_sample
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.ragtruth import RagTruthSource

from ..support.scripted import ScriptedBackend

ANSWER = "The museum opened in 1901 and was designed by Okonkwo Mbeki. It holds 400 paintings."


def span(text, label, **extra):
    start = ANSWER.index(text)
    return {"start": start, "end": start + len(text), "text": text, "label_type": label, **extra}


def write(folder, labels, label_extra=None):
    folder.mkdir(exist_ok=True)
    responses = [
        {"id": "1", "source_id": "s1", "model": "m", "response": ANSWER, "labels": labels, "split": "train"},
        {
            "id": "2",
            "source_id": "s2",
            "model": "m",
            "response": "A plain summary of the museum.",
            "labels": [],
            "split": "test",
        },
        {
            "id": "3",
            "source_id": "s3",
            "model": "m",
            "response": "Name: Museum.",
            "labels": [],
            "split": "train",
        },
    ]
    sources = [
        {
            "source_id": "s1",
            "task_type": "QA",
            "prompt": "Answer the question.",
            "source_info": {
                "question": "When did the museum open?",
                "passages": "The museum opened in 1910 with 300 paintings.",
            },
        },
        {
            "source_id": "s2",
            "task_type": "Summary",
            "prompt": "Summarize.",
            "source_info": "The museum is old.",
        },
        {
            "source_id": "s3",
            "task_type": "Data2txt",
            "prompt": "Describe.",
            "source_info": {"name": "Museum"},
        },
    ]
    (folder / "response.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))
    (folder / "source_info.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sources))
    return str(folder)


def test_spans_map_mechanically_with_the_entity_refinement(tmp_path):
    labels = [
        span("1901", "Evident Conflict"),
        span("designed by Okonkwo Mbeki", "Evident Baseless Info"),
        span("400 paintings", "Subtle Conflict"),
    ]
    loaded = RagTruthSource().load(write(tmp_path / "rt", labels), LoadOptions())
    qa = loaded.items[0]
    assert [(s["text"], s["category"], s["subcategory"]) for s in qa["labels"]] == [
        ("1901", "contradiction", None),
        ("designed by Okonkwo Mbeki", "fabricated_reference", "entity"),  # the name is not in the context
        ("400 paintings", "contradiction", None),
    ]
    assert qa["question"] == "When did the museum open?" and qa["task_type"] == "QA"
    assert [i["task_type"] for i in loaded.items] == ["QA", "Summary", "Data2txt"]
    assert [i["split"] for i in loaded.items] == ["train", "test", "train"]


def test_an_unknown_label_stops_with_a_clear_error(tmp_path):
    with pytest.raises(TableError, match="unknown native label 'Mild Conflict'"):
        RagTruthSource().load(write(tmp_path / "rt", [span("1901", "Mild Conflict")]), LoadOptions())


def test_offsets_that_miss_their_text_are_relocated_or_counted(tmp_path):
    moved = dict(span("1901", "Evident Conflict"), start=0, end=4)
    lost = {"start": 0, "end": 3, "text": "not in the answer", "label_type": "Evident Conflict"}
    implicit = dict(span("400 paintings", "Subtle Conflict"), implicit_true=True)
    loaded = RagTruthSource().load(write(tmp_path / "rt", [moved, lost, implicit]), LoadOptions())
    assert [s["text"] for s in loaded.items[0]["labels"]] == ["1901"]
    assert loaded.skipped == {"span_text_mismatch": 1, "implicit_true_span": 1}


def test_a_ragtruth_build_makes_no_model_call_and_passes_every_invariant(tmp_path):
    backend = ScriptedBackend(lambda r: "never asked")
    summary = run_build(
        Recipe(
            source="ragtruth",
            input=write(tmp_path / "rt", [span("1901", "Evident Conflict")]),
            out=tmp_path / "out",
        ),
        backend,
    )
    assert backend.calls == [] and summary.by_split == {"train": 2, "test": 1}
    assert check_sample(summary.example) == [] and summary.example.category == "contradiction"


def test_a_labelled_answer_holding_a_bidi_control_is_refused_and_a_context_is_cleaned(tmp_path):
    folder = write(tmp_path / "rt", [span("1901", "Evident Conflict")])
    responses = [json.loads(line) for line in (tmp_path / "rt" / "response.jsonl").read_text().splitlines()]
    responses[0]["response"] = ANSWER.replace("museum", "mus\u202eeum", 1)  # before the span
    (tmp_path / "rt" / "response.jsonl").write_text("".join(json.dumps(r) + "\n" for r in responses))
    sources = [json.loads(line) for line in (tmp_path / "rt" / "source_info.jsonl").read_text().splitlines()]
    sources[1]["source_info"] = "The museum\x1b[0m is old."
    (tmp_path / "rt" / "source_info.jsonl").write_text("".join(json.dumps(s) + "\n" for s in sources))
    loaded = RagTruthSource().load(folder, LoadOptions())
    assert loaded.skipped["invalid_characters"] == 1
    assert all("\x1b" not in item["context"] for item in loaded.items)
    assert len(loaded.items) == 2
