"""Assembly: finished rows become checked samples, each split a file of its own in the rows'
order; a row that fails its check is a failure, never a sample; a re-run reuses the files."""

from pathlib import Path

from datasets import Dataset

from lettuce_build.builds.storage import samples
from lettuce_build.builds.storage.samples import assemble
from lettuce_build.sources.registry import get_source

SPLIT_OF = ("train", "train", "validation", "train", "test")


def finished_rows(count: int, empty_answer_at: int | None = None) -> Dataset:
    return Dataset.from_dict(
        {
            "key": [f"doc{i}" for i in range(count)],
            "split": [SPLIT_OF[i % len(SPLIT_OF)] for i in range(count)],
            "context": [f"Tool {i} reads files." for i in range(count)],
            "question": [f"What does tool {i} read?" for i in range(count)],
            "answer": ["" if i == empty_answer_at else f"Tool {i} reads files." for i in range(count)],
            "metadata": ["{}"] * count,
        }
    )


def test_each_split_is_its_own_file_holding_its_rows_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(samples, "SAMPLE_BATCH", 7)  # several batches, each feeding every split
    made = assemble(get_source("readme"), finished_rows(40), tmp_path)
    assert {name: len(split) for name, split in made.splits.items()} == {
        "train": 24,
        "validation": 8,
        "test": 8,
    }
    assert made.splits["test"]["answer"][:] == [f"Tool {i} reads files." for i in range(4, 40, 5)]
    for name, split in made.splits.items():
        [file] = split.cache_files
        assert Path(file["filename"]) == tmp_path / Path(file["filename"]).name
        assert name in Path(file["filename"]).name
    assert made.samples == 40 and made.hallucinated == 0 and made.invalid == []


def test_a_row_that_fails_its_check_is_a_failure_of_assembly_and_no_sample(tmp_path):
    made = assemble(get_source("readme"), finished_rows(10, empty_answer_at=4), tmp_path)
    assert [(f.key, f.stage, f.reason) for f in made.invalid] == [("doc4", "assemble", "empty_answer")]
    assert made.splits["test"]["answer"][:] == ["Tool 9 reads files."]
    assert made.samples == 9


def test_a_rerun_of_the_same_rows_reads_the_split_files_without_making_samples_again(tmp_path, monkeypatch):
    first = assemble(get_source("readme"), finished_rows(12), tmp_path)
    monkeypatch.setattr(samples, "_samples", lambda *_: (_ for _ in ()).throw(AssertionError("made again")))
    again = assemble(get_source("readme"), finished_rows(12), tmp_path)
    assert {n: s.to_list() for n, s in again.splits.items()} == {
        n: s.to_list() for n, s in first.splits.items()
    }


def test_no_finished_rows_make_no_split_and_no_file(tmp_path):
    made = assemble(get_source("readme"), finished_rows(0), tmp_path)
    assert made.samples == 0 and list(tmp_path.iterdir()) == []
