"""A build's work items on disk: streamed into part files, reused while nothing that made
them changed, and pruned when no run uses them."""

import time

from lettuce_build.builds.storage.items import PART_ITEMS, input_signature, load_items, prune
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.documents import ReadmeSource

from ...support.documents import write_many_readmes


class CountingReadmes(ReadmeSource):
    def __init__(self) -> None:
        self.reads = 0

    def items(self, input_path, options, tally):
        for item in super().items(input_path, options, tally):
            self.reads += 1
            yield item


def test_items_are_written_in_parts_and_equal_the_loaded_ones(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", PART_ITEMS + 5)
    stored = load_items(ReadmeSource(), str(docs), LoadOptions(), tmp_path / "work")
    assert len(list((tmp_path / "work").glob("items-*-part-*.arrow"))) == 2
    assert stored.items.to_list() == ReadmeSource().load(str(docs), LoadOptions()).items
    assert stored.documents == PART_ITEMS + 5


def test_the_same_load_is_reused_and_a_changed_input_is_read_again(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 3)
    first = CountingReadmes()
    load_items(first, str(docs), LoadOptions(), tmp_path / "work")
    again = CountingReadmes()
    kept = load_items(again, str(docs), LoadOptions(), tmp_path / "work")
    assert first.reads == 3 and again.reads == 0 and len(kept.items) == 3 and kept.documents == 3

    [fourth] = [p for p in write_many_readmes(tmp_path / "more", 4).iterdir() if not (docs / p.name).exists()]
    fourth.rename(docs / fourth.name)
    changed = CountingReadmes()
    assert len(load_items(changed, str(docs), LoadOptions(), tmp_path / "work").items) == 4
    limited = CountingReadmes()
    load_items(limited, str(docs), LoadOptions(limit=2), tmp_path / "work")
    assert changed.reads == 4 and limited.reads == 2


def test_an_input_folder_is_known_by_its_files_in_any_order_and_changes_with_any_of_them(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 3)
    before = input_signature(str(docs))
    assert input_signature(str(docs)) == before
    first = sorted(docs.iterdir())[0]
    first.write_text(first.read_text() + "more\n")  # one file's size changes
    assert input_signature(str(docs)) != before
    changed = input_signature(str(docs))
    first.rename(docs / ("renamed" + first.suffix))
    assert input_signature(str(docs)) not in (before, changed)


def test_prune_removes_what_no_run_since_used_and_keeps_parts_of_a_used_load(tmp_path):
    docs = write_many_readmes(tmp_path / "docs", 2)
    work = tmp_path / "work"
    load_items(ReadmeSource(), str(docs), LoadOptions(limit=1), work)  # a load no later run uses
    stale = set(work.iterdir())
    time.sleep(0.05)
    since = time.time()
    load_items(ReadmeSource(), str(docs), LoadOptions(), work)
    prune(work, since)
    left = set(work.iterdir())
    assert left and not (left & stale)
    assert {p.name.partition("-part-")[0].removesuffix(".json") for p in left} == {
        next(iter(left)).name.partition("-part-")[0].removesuffix(".json")
    }


def test_a_dry_runs_sample_keeps_a_seeded_few_in_input_order_and_counts_every_item(tmp_path):
    import json

    from lettuce_build.builds.storage.items import sampled_items
    from lettuce_build.sources.custom import CustomSource

    rows = tmp_path / "rows.jsonl"
    lines = [json.dumps({"id": f"r{n}", "context": f"Release {n} holds {n + 3} files."}) for n in range(500)]
    rows.write_text("\n".join([*lines, json.dumps({"id": "r7", "context": "A key given twice."})]) + "\n")
    sample = sampled_items(CustomSource(), str(rows), LoadOptions(), tmp_path / "work", size=40, seed=1)
    keys = [key for key in sample.items["key"]]
    assert sample.made == 500 and len(sample.items) == 40 and sample.documents == 501
    assert sample.skipped == {"duplicate_key": 1}
    assert keys == sorted(keys, key=lambda key: int(key.removeprefix("custom::r")))  # input order
    assert len({int(key.removeprefix("custom::r")) // 100 for key in keys}) == 5  # from all over it
    again = sampled_items(CustomSource(), str(rows), LoadOptions(), tmp_path / "again", size=40, seed=1)
    assert again.items["key"] == keys
    whole = sampled_items(CustomSource(), str(rows), LoadOptions(), tmp_path / "whole", size=600, seed=1)
    assert whole.made == len(whole.items) == 500
