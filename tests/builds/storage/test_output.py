"""Outputs round-trip through parquet and `load_dataset` with the declared features unchanged."""

from datasets import Dataset, DatasetDict, load_dataset, load_from_disk

from lettuce_build.builds.storage.output import write_hub_folder, write_output
from lettuce_build.core.schema import FEATURES, row_to_sample, sample_to_row


def build(samples) -> DatasetDict:
    by_split: dict[str, list] = {}
    for sample in samples:
        by_split.setdefault(sample.split, []).append(sample_to_row(sample))
    return DatasetDict({s: Dataset.from_list(rows, features=FEATURES) for s, rows in by_split.items()})


def test_samples_survive_parquet_and_load_dataset_field_for_field(tmp_path, samples):
    paths = write_output(build(samples), tmp_path / "out", "readme")
    loaded = load_dataset(str(paths.hub), "readme")
    assert set(loaded) == {"train", "test"}
    for split in loaded.values():
        assert split.features == FEATURES
    back = [row_to_sample(row) for split in ("train", "test") for row in loaded[split]]
    assert back == samples


def test_labels_load_as_a_list_of_structs(tmp_path, samples):
    paths = write_output(build(samples), tmp_path / "out", "readme")
    row = load_dataset(str(paths.hub), "readme", split="train")[0]
    assert isinstance(row["labels"], list) and isinstance(row["labels"][0], dict)
    assert row["labels"][0]["text"] == "8080"


def test_save_to_disk_copy_loads_too(tmp_path, samples):
    paths = write_output(build(samples), tmp_path / "out", "readme")
    assert load_from_disk(str(paths.dataset))["train"].features == FEATURES


def test_a_second_config_merges_into_the_readme_instead_of_replacing_it(tmp_path, samples):
    write_output(build(samples), tmp_path / "a", "readme")
    hub = tmp_path / "a" / "hub"
    write_output(build(samples[:1]), tmp_path / "b", "wikipedia")
    # write the second config into the first folder's Hub layout
    from lettuce_build.builds.storage.output import write_hub_folder

    write_hub_folder(build(samples[:1]), hub, "wikipedia")
    assert load_dataset(str(hub), "readme")["test"].num_rows == 1
    assert load_dataset(str(hub), "wikipedia")["train"].num_rows == 1
    readme = (hub / "README.md").read_text()
    assert "config_name: readme" in readme and "config_name: wikipedia" in readme


def test_a_split_larger_than_a_shard_is_written_in_shards_that_load_as_one(tmp_path, samples):
    dataset = build(samples * 20)
    rows = sum(len(split) for split in dataset.values())
    write_hub_folder(dataset, tmp_path / "hub", "readme", max_file_bytes=2_000)
    shards = sorted(p.name for p in (tmp_path / "hub" / "readme").glob("train-*.parquet"))
    assert len(shards) > 1 and shards[0] == f"train-00000-of-{len(shards):05d}.parquet"
    loaded = load_dataset(str(tmp_path / "hub"), "readme")
    assert sum(len(split) for split in loaded.values()) == rows
    assert loaded["train"]["question"] == dataset["train"]["question"]  # in order


def test_the_default_config_holds_every_config_so_a_repository_loads_without_a_name(tmp_path, samples):
    hub, dataset = tmp_path / "hub", build(samples)
    write_hub_folder(dataset, hub, "readme")
    write_hub_folder(dataset, hub, "wiki")
    both = load_dataset(str(hub))  # no config name: as LettuceDetect's loaders call it
    assert {split: len(rows) for split, rows in both.items()} == {
        split: 2 * len(rows) for split, rows in dataset.items()
    }
    assert load_dataset(str(hub), "readme").num_rows == dataset.num_rows


def test_a_config_of_other_columns_stays_out_of_the_default_config(tmp_path, samples):
    hub = tmp_path / "hub"
    other = DatasetDict({"train": Dataset.from_dict({"text": ["a", "b"]})})
    write_hub_folder(other, hub, "notes")  # someone else's config in the same repository
    write_hub_folder(build(samples), hub, "readme")
    loaded = load_dataset(str(hub))  # the default config: every config of our columns
    assert set(loaded["train"].column_names) == set(FEATURES)
    assert loaded["train"].num_rows == build(samples)["train"].num_rows
