"""Reading and checking an output a batch at a time: parquet and saved datasets give every row
as `datasets` does, and a file of bad rows keeps the first problems and counts them all."""

import pyarrow.parquet as pq
from click.testing import CliRunner
from datasets import Dataset, DatasetDict

from lettuce_build.cli import main
from lettuce_build.core.schema import FEATURES, sample_to_row
from lettuce_build.view import validate
from lettuce_build.view.validate import read_rows

from .test_audit import GOOD


def rows():
    return [sample_to_row(s) for s in GOOD] * 3


def test_parquet_and_saved_datasets_are_read_in_batches_as_datasets_reads_them(tmp_path, monkeypatch):
    monkeypatch.setattr(validate, "PARQUET_BATCH_ROWS", 2)
    dataset = Dataset.from_list(rows(), features=FEATURES)
    dataset.to_parquet(tmp_path / "rows.parquet")
    DatasetDict({"train": dataset}).save_to_disk(str(tmp_path / "saved"))
    expected = list(dataset)
    assert [raw.data for raw in read_rows(tmp_path / "rows.parquet")] == expected
    assert [raw.data for raw in read_rows(tmp_path / "saved")] == expected
    assert [raw.where for raw in read_rows(tmp_path / "saved")][-1] == f"{tmp_path / 'saved'}/train row 8"


def test_a_truncated_parquet_is_a_problem_not_a_traceback(tmp_path):
    Dataset.from_list(rows(), features=FEATURES).to_parquet(tmp_path / "rows.parquet")
    data = (tmp_path / "rows.parquet").read_bytes()
    (tmp_path / "cut.parquet").write_bytes(data[: len(data) // 2])
    (found,) = list(read_rows(tmp_path / "cut.parquet"))
    assert found.error is not None and found.error.reason == "unreadable"
    assert pq.ParquetFile(tmp_path / "rows.parquet").metadata.num_rows == 9


def test_every_problem_is_counted_and_the_first_thousand_kept(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("{not json\n" * 1_005)
    report = validate.validate(path)
    assert report.problem_count == 1_005 and len(report.problems) == validate.MAX_PROBLEMS_KEPT
    result = CliRunner().invoke(main, ["validate", str(path), "--max-shown", "2000"])
    assert result.exit_code == 1 and "1005 violation(s)" in result.output and "and 5 more" in result.output
