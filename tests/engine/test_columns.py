"""A dataset's column as Arrow, in the dataset's own order, whether it is a file, a slice or a selection."""

import numpy as np
from datasets import Dataset

from lettuce_build.engine.columns import arrow_column, batch_rows, per_key, selected


def test_a_column_of_a_selection_holds_the_selected_rows_in_the_selections_order(tmp_path):
    Dataset.from_dict({"key": [f"k{i}" for i in range(100)], "n": list(range(100))}).save_to_disk(
        str(tmp_path)
    )
    dataset = Dataset.load_from_disk(str(tmp_path))
    picked = [97, 3, 50, 3, 0]
    assert arrow_column(dataset.select(picked), "key").to_pylist() == ["k97", "k3", "k50", "k3", "k0"]
    assert arrow_column(dataset.select(range(10, 20)), "n").to_pylist() == list(range(10, 20))
    assert arrow_column(dataset.select(picked).select([4, 0]), "n").to_pylist() == [0, 97]
    assert arrow_column(dataset, "n").to_pylist() == list(range(100))


def test_a_batch_becomes_one_dict_per_row():
    assert batch_rows({"a": [1, 2], "b": ["x", "y"]}) == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]


def test_a_selection_made_by_arrow_holds_what_select_would(tmp_path):
    Dataset.from_dict({"key": [f"k{i}" for i in range(100)], "n": list(range(100))}).save_to_disk(
        str(tmp_path)
    )
    dataset = Dataset.load_from_disk(str(tmp_path))
    picked = np.array([97, 3, 50, 3, 0])
    assert selected(dataset, picked, "a")[:] == dataset.select(picked)[:]
    assert selected(dataset.select(range(90, -1, -1)), np.array([5, 3, 50]), "b")["n"] == [85, 87, 40]
    run = selected(dataset, np.arange(10, 20), "c")  # a contiguous run is a slice, not a mapping
    assert run["n"] == list(range(10, 20)) and run._indices is None
    assert len(selected(dataset, np.array([], dtype=np.int64), "d")) == 0


def test_each_keys_value_comes_in_the_datasets_order_for_a_selection_too(tmp_path):
    Dataset.from_dict({"key": [f"k{i}" for i in range(100)]}).save_to_disk(str(tmp_path))
    dataset = Dataset.load_from_disk(str(tmp_path))
    picked = np.array([97, 3, 50, 4, 0, 61])
    number = lambda key: int(key[1:])  # noqa: E731
    assert per_key(dataset.select(picked), number, np.int64).tolist() == picked.tolist()
    assert per_key(selected(dataset, picked, "p"), number, np.int64).tolist() == picked.tolist()
    assert per_key(dataset, number, np.int64).tolist() == list(range(100))
