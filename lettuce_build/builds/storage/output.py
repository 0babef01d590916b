"""Writing a build's `DatasetDict`: `save_to_disk` plus a Hub-style folder.

The Hub-style folder is what the Hub would hold: ``<config>/<split>-*.parquet``
and a README.md whose YAML carries ``configs`` and ``dataset_info`` exactly as
`datasets` writes them, so ``load_dataset(folder, config)`` returns the declared
features unchanged. Writing a second config into the same folder merges its
YAML with the configs already there instead of replacing them.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import datasets.config
import pyarrow as pa
from datasets import Dataset, DatasetDict, DatasetInfo, Features, SplitDict, SplitInfo
from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData
from pydantic import BaseModel

from lettuce_build.core.errors import CorruptOutput
from lettuce_build.core.memory import COPY_RELEASE_AFTER_BYTES, pages_released

DATASET_DIR = "dataset"
HUB_DIR = "hub"


class OutputPaths(BaseModel):
    dataset: Path
    hub: Path


def read_saved(folder: Path) -> Dataset | DatasetDict:
    """A folder `save_to_disk` wrote; one whose files cannot be read is named as corrupt."""
    from datasets import load_from_disk

    try:
        return load_from_disk(str(folder))
    except (OSError, ValueError, KeyError, pa.ArrowException) as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
        raise CorruptOutput(
            f"{folder} is corrupt and cannot be read ({type(err).__name__}: {first}); run the "
            "build again to write it anew"
        ) from err


def _split_info(dataset_dict: DatasetDict) -> SplitDict:
    splits = SplitDict()
    for name, split in dataset_dict.items():
        splits.add(SplitInfo(name=name, num_bytes=split.data.nbytes, num_examples=split.num_rows))
    return splits


#: the config that holds every other (see `_every_config`)
DEFAULT_CONFIG = "default"
#: the largest parquet file of a split, as `datasets`' own push_to_hub splits its files
#: ("shard" in this package means a slice of a build's items: see builds/shards.py)
MAX_FILE_BYTES = 500 * 1024**2
#: the Arrow data of one parquet row group. `datasets` makes them up to 100 MB, which the writer
#: holds in memory while it writes one: a build's memory then grew with its output. Smaller
#: groups read as well (the Hub's viewer asks only that they stay under 100 MB)
ROW_GROUP_BYTES = 8 * 1024**2


def _rows_per_group(dataset: Dataset) -> int:
    """Rows per parquet row group, for groups of about `ROW_GROUP_BYTES` of Arrow data."""
    return max(1, len(dataset) * ROW_GROUP_BYTES // max(1, dataset.data.nbytes))


def _file_count(dataset: Dataset, max_bytes: int) -> int:
    return max(1, math.ceil(dataset.data.nbytes / max_bytes))


def write_hub_folder(
    dataset_dict: DatasetDict, folder: Path, config_name: str, max_file_bytes: int = MAX_FILE_BYTES
) -> Path:
    """Write one config as ``<config>/<split>-NNNNN-of-MMMMM.parquet`` (files of at most
    ``max_file_bytes`` of Arrow data, named as `datasets` names them) and merge README YAML."""
    folder.mkdir(parents=True, exist_ok=True)
    config_dir = folder / config_name
    config_dir.mkdir(exist_ok=True)
    for stale in config_dir.glob("*.parquet"):
        stale.unlink()  # a rebuild replaces its config wholesale; other configs are untouched
    data_files = []
    for split, dataset in dataset_dict.items():
        files = _file_count(dataset, max_file_bytes)
        for index in range(files):
            part = dataset.shard(num_shards=files, index=index, contiguous=True)
            path = config_dir / f"{split}-{index:05d}-of-{files:05d}.parquet"
            part.to_parquet(path, batch_size=_rows_per_group(part))
        data_files.append({"split": split, "path": f"{config_name}/{split}-*"})

    readme = folder / "README.md"
    card = DatasetCard.load(readme) if readme.exists() else DatasetCard("---\n\n---\n")
    card_data = card.data
    assert isinstance(card_data, DatasetCardData)  # a dataset card's
    MetadataConfigs({config_name: {"data_files": data_files}}).to_dataset_card_data(card_data)
    features = next(iter(dataset_dict.values())).features
    info = DatasetInfo(features=features, splits=_split_info(dataset_dict), config_name=config_name)
    DatasetInfosDict({config_name: info}).to_dataset_card_data(card_data)
    every = {DEFAULT_CONFIG: {"data_files": _every_config(card_data, features)}}
    MetadataConfigs(every).to_dataset_card_data(card_data)
    card.data = card_data
    card.save(readme)
    return folder


def _every_config(card_data: DatasetCardData, features: Features) -> list[dict[str, Any]]:
    """The default config's data files: each split of every other config of ``features``
    (``load_dataset(repo)`` without a name, as LettuceDetect's loaders call it, reads them all;
    a config of the repository with other columns would make that fail, and stays out)."""
    infos = DatasetInfosDict.from_dataset_card_data(card_data)
    paths: dict[str, list[str]] = {}
    for name, config in MetadataConfigs.from_dataset_card_data(card_data).items():
        if name == DEFAULT_CONFIG or name not in infos or infos[name].features != features:
            continue
        for entry in config.get("data_files", []):
            found = entry["path"] if isinstance(entry["path"], list) else [entry["path"]]
            paths.setdefault(entry["split"], []).extend(found)
    return [{"split": split, "path": sorted(found)} for split, found in paths.items()]


def write_output(dataset_dict: DatasetDict, out_dir: str | Path, config_name: str) -> OutputPaths:
    """Replace a build's outputs: `save_to_disk` (``out/dataset``) and a Hub folder (``out/hub``).

    Both are written to a staging folder first and then renamed into place, so a reader never
    sees half an output, and nothing of an earlier build survives a new one. An empty
    `DatasetDict` (a build with no samples) removes the earlier outputs.
    """
    out = Path(out_dir)
    staging = out / ".output-staging"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    if len(dataset_dict):
        with pages_released(*dataset_dict.values(), after=COPY_RELEASE_AFTER_BYTES):
            with _record_batches_of(min(_rows_per_group(split) for split in dataset_dict.values())):
                dataset_dict.save_to_disk(str(staging / DATASET_DIR))
            write_hub_folder(dataset_dict, staging / HUB_DIR, config_name)
    for name in (DATASET_DIR, HUB_DIR):
        _replace(staging / name, out / name)
    shutil.rmtree(staging, ignore_errors=True)
    return OutputPaths(dataset=out / DATASET_DIR, hub=out / HUB_DIR)


@contextmanager
def _record_batches_of(rows: int) -> Iterator[None]:
    """`save_to_disk` writing Arrow record batches of ``rows`` rows. It writes batches of
    `datasets.config.DEFAULT_MAX_BATCH_SIZE` (1,000) rows, and opening a file reads the header of
    every batch, which maps the pages around each: loading a million samples' dataset took 65 MB
    of them, the build's peak (a batch of about `ROW_GROUP_BYTES`: a fifth of that)."""
    default = datasets.config.DEFAULT_MAX_BATCH_SIZE
    datasets.config.DEFAULT_MAX_BATCH_SIZE = max(default, rows)
    try:
        yield
    finally:
        datasets.config.DEFAULT_MAX_BATCH_SIZE = default


def _replace(new: Path, old: Path) -> None:
    """Move ``new`` to ``old`` by renames (the earlier ``old``, if any, goes first)."""
    trash = old.with_name(f".{old.name}-replaced")
    shutil.rmtree(trash, ignore_errors=True)
    if old.exists():
        old.rename(trash)
    if new.exists():
        new.rename(old)
    shutil.rmtree(trash, ignore_errors=True)
