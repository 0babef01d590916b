"""`lettuce-build audit`: the quality gates' signals over hand-made rows, clean rows unflagged."""

import json

from click.testing import CliRunner

from lettuce_build.cli import main
from lettuce_build.core.schema import HallucinationSample, Span, sample_to_row
from lettuce_build.view.audit import quality_report, quality_text

CONTEXT = (
    "fastgrid renders large tables in the terminal. It is written in Python and needs no compiler. "
    "Install it with pip install fastgrid; it needs Python 3.10 or newer and about 4 MB of disk. "
    "The default page size is 50 rows, and --page-size changes it."
)


def sample(
    answer, question="How large is the default page size of fastgrid?", split="train", labels=(), edits=()
):
    spans = [
        Span(start=answer.index(t), end=answer.index(t) + len(t), text=t, label="x", category=c)
        for t, c in labels
    ]
    return HallucinationSample(
        prompt=f"{CONTEXT}\n\n{question}",
        context=CONTEXT,
        question=question,
        answer=answer,
        labels=spans,
        split=split,
        task_type="qa",
        dataset="lettucedetect-readme",
        context_modality="markdown",
        category=spans[0].category if spans else None,
        subcategory=None,
        metadata={"injection": {"applied": [{"original": o, "hallucinated": h} for o, h in edits]}}
        if edits
        else {},
    )


GOOD = [
    sample("The default page size is 50 rows, and --page-size changes it."),
    sample(
        "fastgrid needs Python 3.10 or newer and about 4 MB of disk.", question="What does fastgrid need?"
    ),
    sample(
        "The default page size is 80 rows.",
        question="How many rows are on a fastgrid page?",
        labels=[("80 rows", "contradiction")],
        edits=[("50 rows", "80 rows")],
    ),
]
DEFECTS = {
    "repetition": sample("fastgrid renders tables. " + "Let's focus on the 2B. " * 3),
    "mostly_markup": sample(
        "![logo](https://img.example.com/a.png) https://example.com/fastgrid/docs/tables/x.html"
    ),
    "asks_question": sample("fastgrid renders large tables. Can you tell me about the Google AI Cloud team?"),
    "unsupported": sample("Lionel Messi scored many goals for Barcelona and Argentina during a long career."),
    "question_off_context": sample(
        "fastgrid renders large tables in the terminal.", question="What is the capital of France?"
    ),
    "question_about_prompt": sample(
        "fastgrid renders large tables in the terminal.", question="What does this sentence say of fastgrid?"
    ),
    "span_in_context": sample(
        "fastgrid renders tables. It needs no compiler.",
        question="What does fastgrid render?",
        labels=[("needs no compiler", "unsupported_addition")],
    ),
    "no_op_edit": sample(
        "fastgrid needs about four megabytes of disk.",
        question="How much disk does fastgrid need?",
        labels=[("four megabytes", "contradiction")],
        edits=[("4 MB", "four megabytes")],
    ),
    "edit_about_prompt": sample(
        "Correct answer The default page size is 50 rows.",
        labels=[("Correct answer", "fabricated_reference")],
        edits=[("fastgrid renders large tables.", "Correct answer")],
    ),
    "degenerate_edit": sample(
        "The default page size is 2B, 2B and 2B rows.",
        labels=[("2B, 2B and 2B rows", "contradiction")],
        edits=[("50 rows", "2B, 2B and 2B rows")],
    ),
}


def write(path, samples):
    path.write_text("".join(json.dumps(sample_to_row(s)) + "\n" for s in samples), encoding="utf-8")
    return path


def test_true_rows_raise_no_signal(tmp_path):
    report = quality_report(write(tmp_path / "good.jsonl", GOOD))
    assert report.rows == 3 and report.clean
    assert list(report.groups["lettucedetect-readme clean"].support) == [1.0, 1.0]


def test_each_defect_is_found_and_only_in_its_row(tmp_path):
    for signal, bad in DEFECTS.items():
        report = quality_report(write(tmp_path / f"{signal}.jsonl", [*GOOD, bad]))
        found = {name for group in report.groups.values() for name, n in group.signals.items() if n}
        assert signal in found, signal
        assert sum(report.signal_total(name) for name in found) <= 2, (signal, found)  # nothing from GOOD


def test_a_question_in_train_and_test_is_reported(tmp_path):
    shared = sample("The default page size is 50 rows, and --page-size changes it.", split="test")
    report = quality_report(write(tmp_path / "split.jsonl", [*GOOD, shared]))
    assert report.shared_questions == ["how large is the default page size of fastgrid"]
    assert report.duplicate_questions == 1 and report.duplicate_answers == 1


def test_a_lettucedetect_format_file_is_audited_too(tmp_path):
    answer = "The default page size is 50 rows. " * 3
    records = [
        {"prompt": CONTEXT, "answer": answer, "labels": [], "split": "train", "dataset": "ragtruth"},
        {"prompt": CONTEXT, "answer": "It needs 4 MB.", "labels": [{"start": 9, "end": 13, "label": "x"}]},
    ]
    path = tmp_path / "ld.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    report = quality_report(path)
    assert report.rows == 2 and report.groups["ragtruth clean"].signals["repetition"] == 1


def test_strict_exits_non_zero_only_when_a_signal_is_present(tmp_path):
    good = CliRunner().invoke(main, ["audit", "--strict", str(write(tmp_path / "g.jsonl", GOOD))])
    assert good.exit_code == 0 and "gate signals: none" in good.output
    bad = CliRunner().invoke(
        main, ["audit", "--strict", str(write(tmp_path / "b.jsonl", [*GOOD, DEFECTS["repetition"]]))]
    )
    assert bad.exit_code == 1 and "gate signals present: repetition" in bad.output


CODE_CONTEXT = (
    "File: requests/sessions.py\n```python\nfrom .exceptions import TooManyRedirects\n\n"
    "def resolve_redirects(self, resp):\n    if self.max_redirects < 0:\n"
    "        raise TooManyRedirects(resp)\n```"
)


def code_sample(answer, labels=()):
    row = sample(answer, question="Stop following redirects past the limit.", labels=labels)
    return row.model_copy(update={"context": CODE_CONTEXT, "context_modality": "code"})


def test_a_code_answer_calling_a_name_its_context_never_shows_is_reported(tmp_path):
    grounded = code_sample(
        "```python\nfrom operator import itemgetter\n\ndef resolve(self, resp):\n"
        "    if self.max_redirects < 0:\n        raise TooManyRedirects(resp)\n"
        "    return sorted(resp.history, key=itemgetter(0))\n```"
    )
    ungrounded = code_sample(
        "```python\ndef resolve(self, resp):\n    url = parse_url(resp.url)\n"
        "    raise TooManyRedirects(url)\n```"
    )
    labelled = code_sample(
        "```python\ndef resolve(self, resp):\n    url = parse_url(resp.url)\n```",
        labels=[("parse_url", "fabricated_reference")],
    )
    report = quality_report(write(tmp_path / "code.jsonl", [grounded, ungrounded, labelled]))
    assert report.groups["lettucedetect-readme clean"].signals["ungrounded_reference"] == 1
    assert "parse_url" in report.groups["lettucedetect-readme clean"].examples["ungrounded_reference"][0]
    # a name that is the labelled span is the hallucination itself, not an ungrounded clean name
    assert report.groups["lettucedetect-readme hallucinated"].signals["ungrounded_reference"] == 0
    assert not report.clean
    # the share is always published for code, zero included (the code card shows this text)
    text = quality_text(tmp_path / "code.jsonl", report)
    assert "answers calling a name the context never shows: 1 of 2 (0.50)" in text
    assert "answers calling a name the context never shows: 0 of 1 (0.00)" in text


def test_near_duplicates_share_their_content_words_in_any_order(tmp_path):
    rows = [
        sample("The default page size is 50 rows.", question="What is fastgrid's default page size?"),
        sample("50 rows is the default page size.", question="Default page size of fastgrid: what is it?"),
        sample("It needs Python 3.10 or newer.", question="Which Python does fastgrid need?"),
    ]
    report = quality_report(write(tmp_path / "near.jsonl", rows))
    assert report.duplicate_questions == 0 and report.near_duplicate_questions == 1
    assert report.duplicate_answers == 0 and report.near_duplicate_answers == 1


def test_rows_it_cannot_read_are_named_counted_and_fail_strict(tmp_path):
    broken = sample_to_row(GOOD[0])
    broken["labels"] = [{"start": "zero"}]
    lines = [json.dumps(sample_to_row(GOOD[1])), "{not json", json.dumps(broken)]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = quality_report(path)
    assert report.rows == 1 and report.unreadable == 2 and not report.clean
    assert any(f"{path}:2" in e and "malformed_json" in e for e in report.unreadable_examples)
    assert any(f"{path}:3" in e and "labels" in e for e in report.unreadable_examples)
    result = CliRunner().invoke(main, ["audit", "--strict", str(path)])
    assert result.exit_code == 1 and "unreadable rows: 2" in result.output


def test_a_parquet_of_another_schema_reads_no_row_and_fails_strict(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"text": ["a", "b"], "label": [0, 1]}), path)
    report = quality_report(path)
    assert report.rows == 0 and report.unreadable == 1 and not report.clean
    result = CliRunner().invoke(main, ["audit", "--strict", str(path)])
    assert result.exit_code == 1 and "missing_column" in result.output


def test_an_empty_file_fails_strict(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    result = CliRunner().invoke(main, ["audit", "--strict", str(path)])
    assert result.exit_code == 1 and "no row could be read" in result.output


def lettucedetect_record(answer, labels, **fields):
    """A record as LettuceDetect's own `HallucinationSample.to_json` writes it: every key, the
    context null for prose, metadata an object."""
    return {
        "prompt": f"User request: How big is a page?\n\n{CONTEXT}",
        "answer": answer,
        "labels": labels,
        "split": "dev",
        "task_type": "qa",
        "dataset": "ragtruth",
        "language": "en",
        "context_modality": "prose",
        "category": "contradiction" if labels else None,
        "subcategory": None,
        "context": None,
        "question": None,
        "metadata": {"source": "x"},
        **fields,
    }


def test_lettucedetect_own_json_is_read_whole_in_array_and_lines(tmp_path):
    records = [
        lettucedetect_record("The default page size is 50 rows.", []),
        lettucedetect_record(
            "The default page size is 80 rows.",
            [{"start": 25, "end": 27, "label": "x", "category": "contradiction"}],
            context=CONTEXT,
            question="How big is a page?",
        ),
    ]
    array, lines = tmp_path / "ld.json", tmp_path / "ld.jsonl"
    array.write_text(json.dumps(records), encoding="utf-8")
    lines.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for path in (array, lines):
        report = quality_report(path)
        assert report.rows == 2 and report.unreadable == 0, path
        assert report.by_category == {"(clean)": 1, "contradiction": 1}


def test_a_lettucedetect_span_out_of_range_is_reported_not_raised(tmp_path):
    records = [
        lettucedetect_record("The default page size is 50 rows.", []),
        lettucedetect_record("Short.", [{"start": 3, "end": 40, "label": "x"}]),
    ]
    path = tmp_path / "ld.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    report = quality_report(path)
    assert report.rows == 1 and report.unreadable == 1
    assert "labels[0]: span_out_of_range" in report.unreadable_examples[0]


def test_control_bidi_and_zero_width_characters_are_a_signal(tmp_path):
    for text in (
        "fastgrid\x1b[31m renders tables.",
        "fastgrid \u202erenders tables.",
        "fast\u200bgrid renders.",
    ):
        report = quality_report(write(tmp_path / "c.jsonl", [*GOOD, sample(text)]))
        assert report.signal_total("invalid_characters") == 1, text
        assert not report.clean


def test_the_audit_reports_the_spelling_baseline_and_strict_fails_above_the_f1_asked(tmp_path):
    clean = sample("The default page size is 50 rows, and --page-size changes it.")
    wrong = sample("The default page size is 80 lines.", labels=[("80 lines", "contradiction")])
    path = write(tmp_path / "s.jsonl", [clean, wrong])
    report = quality_report(path)
    assert report.shortcuts.example_f1 == 1.0 and report.shortcuts.spans.novel == 1
    assert "spelling baseline" in quality_text(path, report)
    loose = CliRunner().invoke(main, ["audit", "--strict", str(path)])
    strict = CliRunner().invoke(main, ["audit", "--strict", "--max-spelling-f1", "0.67", str(path)])
    assert loose.exit_code == 0 and strict.exit_code == 1
    assert "above --max-spelling-f1 0.67" in strict.output


def test_batches_checked_by_a_pool_of_processes_report_what_one_process_reports(tmp_path, monkeypatch):
    from lettuce_build.view import audit

    rows = [*GOOD, *DEFECTS.values(), sample("The default page size is 50 rows.", split="test")] * 3
    path = write(tmp_path / "many.jsonl", rows)
    alone = quality_text(path, quality_report(path))
    monkeypatch.setattr(audit, "ALONE_ROWS", 4)
    monkeypatch.setattr(audit, "BATCH_ROWS", 4)
    pooled = quality_text(path, quality_report(path))
    assert pooled == alone
    assert "near-duplicate rows" in alone and "repetition: 3" in alone
