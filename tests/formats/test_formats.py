"""Each export format writes our samples in another tool's layout and reads back exactly what it
wrote: the rows, their spans, splits, categories and what the layout has no field for."""

import json

import pytest

from lettuce_build.core.schema import HallucinationSample, Span, row_to_sample
from lettuce_build.formats import FORMATS, format_of

ANSWER = "The cache keeps 200 entries and was added in 2021 by the storage team."


def span(start, end, text, category, subcategory, label="edit"):
    return Span(start=start, end=end, text=text, label=label, category=category, subcategory=subcategory)


def sample(split="train", modality="prose", task="qa", spans=True, **fields):
    labels = []
    if spans:
        labels = [
            span(16, 19, "200", "contradiction", "numerical"),
            span(50, 69, "by the storage team", "unsupported_addition", "claim"),
        ]
    base = {
        "prompt": "Question: How many entries does the cache keep?\n\nContext:\nThe cache keeps 100 entries.",
        "context": "The cache keeps 100 entries.",
        "question": "How many entries does the cache keep?",
        "answer": ANSWER,
        "labels": labels,
        "split": split,
        "task_type": task,
        "dataset": "lettucedetect-readme",
        "context_modality": modality,
        "category": "contradiction" if spans else None,
        "subcategory": "numerical" if spans else None,
        "metadata": {"doc_id": "cache.md", "chunk_index": 0},
    }
    return HallucinationSample.model_validate({**base, **fields})


SAMPLES = [
    sample(),
    sample(split="validation", spans=False),
    sample(split="test", modality="tool_output", task="tool_output_qa"),
    sample(split="test", modality="code", task="code_fix", spans=False),
]


def test_the_example_spans_are_where_they_say():
    for span in SAMPLES[0].labels:
        assert ANSWER[span.start : span.end] == span.text


@pytest.mark.parametrize("name", ["lettucedetect", "ragtruth", "sft", "jsonl"])
def test_an_export_reads_back_as_the_rows_it_was_written_from(tmp_path, name):
    layout = FORMATS[name]
    out = tmp_path / (
        "export" if layout.folder else f"export.{'json' if name == 'lettucedetect' else 'jsonl'}"
    )
    counts = layout.write(SAMPLES, out)
    assert (counts.samples, counts.spans) == (4, 4)
    assert format_of(out) is layout
    back = [row_to_sample(found.row) for found in layout.read(out)]
    assert back == SAMPLES


def test_a_spans_export_holds_one_row_per_span_and_reads_back_the_hallucinated_samples(tmp_path):
    out = tmp_path / "spans.jsonl"
    counts = FORMATS["spans"].write(SAMPLES, out)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert counts.records == len(rows) == 4 and counts.samples == 2
    assert {row["text"] for row in rows} == {"200", "by the storage team"}
    assert all(row["answer"][row["start"] : row["end"]] == row["text"] for row in rows)
    back = [row_to_sample(found.row) for found in FORMATS["spans"].read(out)]
    assert back == [s for s in SAMPLES if s.labels]


def test_lettucedetect_gets_its_splits_names_and_values_and_an_object_for_metadata(tmp_path):
    out = tmp_path / "data.json"
    FORMATS["lettucedetect"].write(SAMPLES, out)
    records = json.loads(out.read_text())  # one JSON array, as its scripts read it
    assert [r["split"] for r in records] == ["train", "dev", "test", "test"]
    assert (
        records[0]["category"] == "contradiction" and records[0]["labels"][0]["category"] == "contradiction"
    )
    assert [r["context_modality"] for r in records] == ["prose", "prose", "code", "code"]
    assert [r["task_type"] for r in records] == ["qa", "qa", "qa", "qa"]
    assert records[2]["metadata"]["context_modality"] == "tool_output"  # what it cannot say, kept
    assert isinstance(records[0]["metadata"], dict)


def test_lettucedetect_s_own_data_classes_load_the_export(tmp_path):
    from lettucedetect.datasets.hallucination_dataset import HallucinationData

    out = tmp_path / "data.json"
    FORMATS["lettucedetect"].write(SAMPLES, out)
    data = HallucinationData.from_json(json.loads(out.read_text()))
    first = data.samples[0]
    assert [first.answer[s["start"] : s["end"]] for s in first.labels] == ["200", "by the storage team"]
    assert first.metadata["doc_id"] == "cache.md" and first.context == SAMPLES[0].context


def test_the_sft_reply_is_the_spans_quoted_and_typed_which_lettucedetect_s_parser_reads(tmp_path):
    from lettucedetect.prompts.generative import parse_spans, spans_to_offsets

    out = tmp_path / "sft.jsonl"
    FORMATS["sft"].write(SAMPLES, out)
    row = json.loads(out.read_text().splitlines()[0])
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert row["messages"][1]["content"].endswith("Answer to verify:\n" + ANSWER)
    found = spans_to_offsets(ANSWER, parse_spans(row["messages"][2]["content"]))
    assert [(s["start"], s["end"], s["category"]) for s in found] == [
        (s.start, s.end, s.category) for s in SAMPLES[0].labels
    ]
    clean = json.loads(out.read_text().splitlines()[1])
    assert json.loads(clean["messages"][2]["content"]) == {"hallucinated_spans": []}


def test_an_sft_export_counts_spans_a_first_match_reader_would_misplace(tmp_path):
    answer = "It keeps 100 rows; the page shows 100 rows."
    span = Span(
        start=34, end=37, text="100", label="number", category="contradiction", subcategory="numerical"
    )
    repeated = sample(answer=answer, labels=[span])
    counts = FORMATS["sft"].write([repeated], tmp_path / "sft.jsonl")
    assert "1 span(s) quote text that occurs earlier" in counts.notes[0]
    [back] = FORMATS["sft"].read(tmp_path / "sft.jsonl")
    assert back.row["labels"][0]["start"] == 34  # restored from the offsets the row keeps


def test_a_ragtruth_export_is_read_by_the_ragtruth_source_too(tmp_path):
    from lettuce_build.sources.base import LoadOptions
    from lettuce_build.sources.ragtruth import RagTruthSource

    FORMATS["ragtruth"].write(SAMPLES, tmp_path / "rt")
    loaded = RagTruthSource().load(str(tmp_path / "rt"), LoadOptions())
    assert len(loaded.items) == 4
    assert [(s["start"], s["end"]) for s in loaded.items[0]["labels"]] == [(16, 19), (50, 69)]
    assert loaded.items[0]["labels"][0]["category"] == "contradiction"


def test_a_broken_record_is_named_in_its_place_and_the_others_are_read(tmp_path):
    out = tmp_path / "data.json"
    FORMATS["lettucedetect"].write(SAMPLES[:2], out)
    records = json.loads(out.read_text())
    records[0]["labels"][0]["end"] = 500
    out.write_text(json.dumps(records))
    first, second = FORMATS["lettucedetect"].read(out)
    assert (
        first.row is None
        and first.problem.field == "labels[0]"
        and first.problem.reason == "span_out_of_range"
    )
    assert second.row is not None
