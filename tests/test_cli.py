"""The `lettuce-build` CLI: version, taxonomy and validate on clean and corrupted outputs."""

import json

import pytest
from click.testing import CliRunner

from lettuce_build import __version__
from lettuce_build.builds.storage.folder import BuildDir, Manifest
from lettuce_build.cli import main
from lettuce_build.core.schema import FEATURES, sample_to_row
from lettuce_build.engine.records import FailureRow, StageStats
from lettuce_build.llm.protocol import BackendInfo

from .builds.storage.test_output import build


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_version():
    assert __version__ in run("--version").output


def test_taxonomy_lists_categories_subcategories_supported_and_omission():
    out = run("taxonomy").output
    for name in ("supported", "contradiction", "unsupported_addition", "fabricated_reference", "omission"):
        assert name in out
    for sub in (
        "numerical",
        "temporal",
        "entity",
        "relational",
        "value",
        "claim",
        "elaboration",
        "subjective",
        "behavior",
        "section",
        "identifier",
        "attribute",
    ):
        assert f"/{sub}" in out
    assert "13 subcategories" in out
    assert "Document level\n  omission" in out


def test_taxonomy_json_has_thirteen_subcategories():
    payload = json.loads(run("taxonomy", "--json").output)
    assert len(payload["subcategories"]) == 13
    assert "omission" in payload["document_level"]


def write_jsonl(path, rows):
    # escaped, so that a lone surrogate (which no UTF-8 file can hold raw) can be written too
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def jsonl_rows(samples):
    rows = [sample_to_row(s) for s in samples]
    for row, sample in zip(rows, samples, strict=True):
        row["category"] = sample.category
    return rows


def test_validate_passes_a_clean_output_folder_and_counts_it(tmp_path, samples):
    from lettuce_build.builds.storage.output import write_output

    paths = write_output(build(samples), tmp_path / "out", "readme")
    for target in (tmp_path / "out", paths.hub, next(paths.hub.rglob("train-*.parquet"))):
        result = run("validate", target)
        assert result.exit_code == 0, result.output
        assert "no violations" in result.output
    result = run("validate", tmp_path / "out")
    assert "checked 2 rows" in result.output
    assert "contradiction/numerical" in result.output


def test_validate_passes_a_clean_jsonl(tmp_path, samples):
    result = run("validate", write_jsonl(tmp_path / "ok.jsonl", jsonl_rows(samples)))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("corrupt", "expected"),
    [
        (lambda r: r["labels"][0].update(end=999), "(row 0): labels[0]: span_out_of_range"),
        (lambda r: r["labels"][0].update(text="9090"), "(row 0): labels[0].text: text_mismatch"),
        (
            lambda r: r["labels"][0].update(category="wrongness"),
            "(row 0): labels[0].category: unknown_category - 'wrongness' is not allowed; allowed: "
            "['contradiction', 'unsupported_addition', 'fabricated_reference']",
        ),
        (lambda r: r.pop("answer"), "answer: missing_column"),
        (
            lambda r: r.update(split="dev"),
            "(row 0): split: schema_literal_error - Input should be 'train', 'validation' or 'test'",
        ),
    ],
)
def test_validate_names_row_field_and_reason_on_corruption(tmp_path, samples, corrupt, expected):
    rows = jsonl_rows(samples)
    corrupt(rows[0])
    result = run("validate", write_jsonl(tmp_path / "bad.jsonl", rows))
    assert result.exit_code == 1
    assert expected in result.output
    assert "bad.jsonl:1" in result.output


def test_validate_names_a_truncated_and_a_non_utf8_line(tmp_path, samples):
    path = write_jsonl(tmp_path / "bad.jsonl", jsonl_rows(samples))
    good = path.read_bytes()
    path.write_bytes(good + b'{"prompt": "cut off\n' + b'{"prompt": "\xff\xfe"}\n')
    result = run("validate", path)
    assert result.exit_code == 1
    assert "bad.jsonl:3 (row 2): (line): malformed_json - line 3" in result.output
    assert "bad.jsonl:4 (row 3): (line): not_utf8 - line 4" in result.output
    assert "checked 2 rows" in result.output


def test_validate_reports_a_corrupted_parquet_file(tmp_path, samples):
    bad = samples[0].model_copy(deep=True)
    bad.labels[0].text = "oops"
    from datasets import Dataset

    from lettuce_build.core.schema import FEATURES

    path = tmp_path / "bad.parquet"
    Dataset.from_list([sample_to_row(bad)], features=FEATURES).to_parquet(path)
    result = run("validate", path)
    assert result.exit_code == 1
    assert "bad.parquet row 0: labels[0].text: text_mismatch" in result.output


def test_validate_with_a_custom_taxonomy_accepts_its_subcategories(tmp_path, samples):
    rows = jsonl_rows(samples)
    rows[0]["labels"][0]["subcategory"] = "unit"
    rows[0]["subcategory"] = "unit"
    path = write_jsonl(tmp_path / "custom.jsonl", rows)
    assert run("validate", path).exit_code == 1
    extra = tmp_path / "tax.yaml"
    extra.write_text("subcategories:\n  contradiction:\n    unit: A unit of measure swapped.\n")
    assert run("validate", path, "--taxonomy-file", extra).exit_code == 0


# Careless input (issue 11): every mistake is a one-line error, never a traceback or a silent pass.


@pytest.mark.parametrize(
    ("corrupt", "expected"),
    [
        (
            lambda r: r["labels"][0].update(start=str(r["labels"][0]["start"])),
            "labels.0.start: schema_int_type",
        ),
        (
            lambda r: r["labels"][0].update(start=float(r["labels"][0]["start"])),
            "labels.0.start: schema_int_type",
        ),
        (lambda r: r.update(answer="", labels=[], category=None, subcategory=None), "answer: empty_answer"),
        (lambda r: r.update(question=r["question"] + " \ud800"), "question: not_unicode"),
        (lambda r: r.update(context="Something else entirely."), "prompt: prompt_mismatch"),
        (lambda r: r.update(dataset="made-up"), "dataset: unknown_dataset"),
        (lambda r: r["labels"][0].update(end=r["labels"][0]["start"], text=""), "labels[0]: empty_span"),
        (lambda r: r.update(question=r["question"] + " \x00"), "question: invalid_characters"),
        (lambda r: r.update(question=r["question"] + " \x1b[2J"), "question: invalid_characters"),
        (lambda r: r.update(question="\u202e" + r["question"]), "question: invalid_characters"),
        (lambda r: r.update(question=r["question"] + "\u200b"), "question: invalid_characters"),
    ],
)
def test_validate_lets_nothing_through(tmp_path, samples, corrupt, expected):
    rows = jsonl_rows(samples)
    corrupt(rows[0])
    result = run("validate", write_jsonl(tmp_path / "bad.jsonl", rows))
    assert result.exit_code == 1 and expected in result.output, result.output


def test_validate_refuses_an_empty_file(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    result = run("validate", tmp_path / "empty.jsonl")
    assert result.exit_code == 1 and "no_rows" in result.output


def test_validate_of_a_build_folder_checks_the_hub_parquet_too(tmp_path, samples):
    from lettuce_build.builds.storage.output import write_output

    paths = write_output(build(samples), tmp_path / "out", "readme")
    parquet = next(paths.hub.rglob("train-*.parquet"))
    from datasets import Dataset

    bad = samples[0].model_copy(deep=True)
    bad.labels[0].text = "oops"
    Dataset.from_list([sample_to_row(bad)], features=FEATURES).to_parquet(parquet)
    result = run("validate", tmp_path / "out")
    assert result.exit_code == 1 and "text_mismatch" in result.output and "hub" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["--concurrency", "0"],
        ["--limit", "0"],
        ["--limit", "-5"],
        ["--ratio", "2"],
        ["--ratio", "nan"],
        ["--ratio", "1.5"],
    ],
)
def test_numeric_options_out_of_range_are_one_line_errors(tmp_path, args):
    result = run("build", "--source", "readme", "--input", tmp_path, "--out", tmp_path / "o", *args)
    assert result.exit_code == 2 and "Traceback" not in result.output
    [line] = result.output.strip().splitlines()  # no usage block: the error and where help is
    assert line.startswith(f"Error: Invalid value for '{args[0]}'")
    assert line.endswith("(see `main build --help`)") or line.endswith("(see `lettuce-build build --help`)")


def test_an_unknown_failure_reason_lists_the_build_s_reasons(tmp_path):
    build = BuildDir(tmp_path / "b")
    failure = FailureRow(key="k", stage="answer", reason="empty_output", attempt=0)
    build.record_stage(
        Manifest(source="readme", backend=BackendInfo(backend="scripted", model="m"), seed=0),
        StageStats(name="answer", prompt_version="v1", items_in=1, ok=0, failed=1),
        [failure],
    )
    assert run("failures", tmp_path / "b", "--reason", "empty_output").exit_code == 0
    result = run("failures", tmp_path / "b", "--reason", "no_such_reason")
    assert result.exit_code == 2
    assert "no failure of this build has reason 'no_such_reason'; its reasons: empty_output" in result.output


def test_squeez_limit_below_one_is_refused(tmp_path):
    result = run("squeez", "--phase", "1", "--output-dir", tmp_path / "o", "--limit", "-1")
    assert result.exit_code == 2 and "Invalid value for '--limit'" in result.output


def test_an_unknown_source_suggests_the_nearest_name(tmp_path):
    result = run("build", "--source", "readmee", "--input", tmp_path, "--out", tmp_path / "o")
    assert result.exit_code == 1 and "did you mean 'readme'?" in result.output


def test_a_model_path_that_does_not_exist_fails_before_loading_anything(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n" + "Alpha runs on port 8080 and needs Python 3.11 or newer. " * 10)
    result = run(
        "build",
        "--source",
        "readme",
        "--input",
        docs,
        "--out",
        tmp_path / "o",
        "--model",
        tmp_path / "no-such-model",
    )
    assert result.exit_code == 1 and "no such folder" in result.output and "Traceback" not in result.output


def test_a_corrupt_manifest_is_a_one_line_error_in_status_and_push(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "manifest.json").write_text("{not json")
    for args in (
        ["status", tmp_path / "b"],
        ["push", "--source", "readme", "--build", tmp_path / "b", "--dry-run", tmp_path / "dry"],
    ):
        result = run(*args)
        assert result.exit_code == 1 and "is not a build manifest" in result.output, result.output


def test_verbose_shows_the_traceback(tmp_path):
    (tmp_path / "b").mkdir()
    result = run("-v", "status", tmp_path / "b")
    assert result.exit_code == 1 and isinstance(result.exception, Exception)
    assert type(result.exception).__name__ == "ManifestError"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        (
            "FAIL_TO_PASS",
            "tests/test_x.py::t",
            "row 0 (acme__x-1): FAIL_TO_PASS: Value error, expected a JSON list",
        ),
        ("base_commit", None, "row 0 (acme__x-1): base_commit: Input should be a valid string"),
        (
            "base_commit",
            "--upload-pack=evil",
            "row 0 (acme__x-1): base_commit: Value error, expected a commit hash",
        ),
    ],
)
def test_squeez_names_the_row_of_an_unusable_instance(tmp_path, field, value, expected):
    row = {
        "instance_id": "acme__x-1",
        "repo": "acme/x",
        "base_commit": "a" * 40,
        "patch": "",
        "problem_statement": "p",
        field: value,
    }
    (tmp_path / "i.jsonl").write_text(json.dumps(row) + "\n")
    result = run(
        "squeez", "--phase", "1", "--output-dir", tmp_path / "o", "--instances", tmp_path / "i.jsonl"
    )
    assert result.exit_code == 1 and expected in result.output, result.output


def test_validate_and_audit_read_a_json_array_of_rows(tmp_path, samples):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([sample_to_row(s) for s in samples]), encoding="utf-8")
    result = run("validate", path)
    assert result.exit_code == 0 and f"checked {len(samples)} rows" in result.output, result.output
    assert f"data quality of {len(samples)} rows" in run("audit", path).output


def test_sources_lists_the_stages_each_build_runs():
    out = run("sources", "--stages").output
    assert (
        "embedded model, inject: question (ChosenQuestionStage) -> answer (ExtractiveAnswerStage) "
        "-> inject (InjectProseMenuStage)" in out
    )
    assert "a capable model, generate: question (QuestionStage) -> answer (AnswerStage) -> generate" in out
    assert "embedded model, inject: no model stage" in out  # RAGTruth's spans come with its data
