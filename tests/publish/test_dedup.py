"""`lettuce-build dedup` and the audit's duplicate lines: planted copies (exact, a changed line,
changed whitespace) are named in pairs, one row of each cluster stays (the test copy where a
cluster crosses splits), and rows that only share a context all stay."""

import json

from click.testing import CliRunner

from lettuce_build.cli import main
from lettuce_build.core.schema import HallucinationSample, sample_to_row
from lettuce_build.view.audit import quality_report
from lettuce_build.view.samples import load_samples

from ..support.documents import README_A, README_B

ANSWER = "Run fastgrid show data.csv to page through a CSV file; the default page size is 50 rows."


def row(key, context, answer, split="train"):
    sample = HallucinationSample(
        prompt=f"{context}\n\nHow do I page through a file?",
        context=context,
        question="How do I page through a file?",
        answer=answer,
        split=split,
        task_type="qa",
        dataset="lettucedetect-readme",
        context_modality="markdown",
        metadata={"key": key},
    )
    data = sample_to_row(sample)
    data["category"] = None
    return data


def planted(path):
    rows = [
        row("a", README_A, ANSWER),
        row("a-exact", README_A, ANSWER),  # an exact copy
        row("a-line", README_A.replace("It is written in Python", "It is built in Python"), ANSWER, "test"),
        row("a-space", README_A.replace("\n\n", "\n\n\n"), ANSWER.replace(" ", "  ")),
        row("a-other-answer", README_A, "fastgrid needs Python 3.10 or newer and about 4 MB of disk space."),
        row("b", README_B, "pebble build renders the site into public/ and pebble watch rebuilds it."),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_dedup_keeps_one_row_of_each_cluster_and_the_test_copy_of_one_across_splits(tmp_path):
    source = planted(tmp_path / "rows.jsonl")
    result = CliRunner().invoke(main, ["dedup", str(source), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "6 rows read, 3 kept" in result.output
    kept = {s.metadata["key"] for s in load_samples(tmp_path / "out")}
    assert kept == {"a-line", "a-other-answer", "b"}  # a-line is the cluster's test copy
    report = json.loads((tmp_path / "out" / "dedup.json").read_text())
    assert sorted(report["removed"]) == ["a", "a-exact", "a-space"]
    assert report["duplicates"]["removed_by_split"] == {"train": 3}


def test_the_audit_names_duplicate_pairs_and_contexts_found_in_two_splits(tmp_path):
    report = quality_report(planted(tmp_path / "rows.jsonl"))
    duplicates = report.duplicates
    assert duplicates is not None
    named = {(p.first, p.second) for p in duplicates.pairs}
    assert ("a", "a-exact") in named and ("a", "a-line") in named and ("a", "a-space") in named
    assert all(p.similarity >= 0.8 for p in duplicates.pairs)
    assert any({leak.first_split, leak.second_split} == {"train", "test"} for leak in duplicates.split_leaks)


def test_dedup_refuses_to_write_over_its_input(tmp_path):
    source = planted(tmp_path / "rows.jsonl")
    first = CliRunner().invoke(main, ["dedup", str(source), "--out", str(tmp_path / "out")])
    assert first.exit_code == 0
    again = CliRunner().invoke(main, ["dedup", str(tmp_path / "out"), "--out", str(tmp_path / "out")])
    assert again.exit_code != 0 and "other than its input" in again.output


def test_rows_signed_by_a_pool_of_processes_are_deduplicated_alike(tmp_path, monkeypatch):
    from lettuce_build.publish import dedup

    source = planted(tmp_path / "rows.jsonl")
    alone = dedup.dedup(source, tmp_path / "alone")
    monkeypatch.setattr(dedup, "ALONE_ROWS", 2)
    monkeypatch.setattr(dedup, "BATCH_ROWS", 2)
    pooled = dedup.dedup(source, tmp_path / "pooled")
    assert pooled == alone and pooled.kept == 3
