"""A build gives back the pages of the files it reads while it reads them, and only those: a
dataset in memory and a file it did not name are never touched."""

import sys
import time
from pathlib import Path

import pytest
from datasets import Dataset

from lettuce_build.core.memory import file_mappings_of, pages_released, release_read

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")

ROWS = {"key": [f"k{i}" for i in range(20_000)], "text": [f"row {i} " * 20 for i in range(20_000)]}


def resident_kb(path: Path) -> int:
    """How much of ``path`` this process's memory maps hold in its RSS (from /proc/self/smaps)."""
    total, current = 0, None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split(maxsplit=5)
        if "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
            current = fields[5] if len(fields) == 6 else None
        elif fields[0] == "Rss:" and current == str(path.resolve()):
            total += int(fields[1])
    return total


def on_disk(folder: Path) -> tuple[Dataset, Path]:
    Dataset.from_dict(ROWS).save_to_disk(str(folder))
    dataset = Dataset.load_from_disk(str(folder))
    [file] = [Path(f["filename"]) for f in dataset.cache_files]
    return dataset, file


def test_the_pages_a_block_reads_of_a_dataset_go_back_as_it_reads_and_the_rows_stay_the_same(tmp_path):
    dataset, file = on_disk(tmp_path / "build")
    with pages_released(dataset, every=0.01, after=1 << 20):  # the file: about 4 MB
        assert dataset["text"][:] == ROWS["text"]
        deadline = time.monotonic() + 5
        while resident_kb(file) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert resident_kb(file) == 0
    assert dataset["text"][:] == ROWS["text"] and dataset["key"][:] == ROWS["key"]
    assert resident_kb(file) > 0  # after the block, nothing is released any more


def test_a_dataset_in_memory_has_no_file_mapping_so_nothing_of_it_is_released(tmp_path):
    in_memory = Dataset.from_dict(ROWS)
    assert file_mappings_of((in_memory,)) == []
    with pages_released(in_memory, every=0.001):
        time.sleep(0.05)
        assert in_memory["text"][:] == ROWS["text"]


def test_what_a_step_read_goes_back_when_it_says_it_is_done_and_a_file_it_did_not_name_keeps_its_pages(
    tmp_path,
):
    dataset, file = on_disk(tmp_path / "build")
    other, other_file = on_disk(tmp_path / "other")
    assert dataset["text"][:] == other["text"][:]  # every page of both read, outside any block
    assert resident_kb(file) > 0
    release_read(dataset)
    assert resident_kb(file) == 0
    assert resident_kb(other_file) > 0
    assert dataset["key"][:] == ROWS["key"]  # read again from the page cache, unchanged
