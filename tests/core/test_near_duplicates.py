"""Near-duplicate rows: a changed line, changed whitespace or reordered paragraphs of one document
are duplicates; two documents of one template are not; rows sharing only a context are not."""

from lettuce_build.core.minhash import shingles, signatures, similarity
from lettuce_build.core.near_duplicates import NearDuplicates, to_remove

README = """# fastgrid

fastgrid renders large tables in the terminal, page by page, with sticky headers and colours.
It is written in pure Python and needs no compiler, only Python 3.10 or newer and 4 MB of disk.

## Install

Install it with pip install fastgrid, or from a clone with pip install -e . inside the folder.
The wheel ships its own fonts, so nothing else has to be installed on a server without a desktop.

## Use

Call fastgrid.show(rows) with a list of dictionaries; the default page size is 50 rows, and the
--page-size flag changes it. Keys become the headers, in the order of the first row's keys.
Press n for the next page, p for the previous one and q to leave the table at any time.
"""

OTHER = """# pebble

pebble stores small files in a content-addressed folder, so two copies of a file take the room of one.
It is written in Rust and ships as one static binary for Linux, macOS and Windows, with no runtime.

## Install

Download the binary of your platform from the releases page, or build it with cargo install pebble.
Nothing else is needed; the store is an ordinary folder you can back up with any tool you like.

## Use

Run pebble add FILE to store a file and print its digest, and pebble get DIGEST to read it back.
pebble gc removes what no tag names; pebble tag NAME DIGEST gives a stored file a name to keep it.
"""

ANSWER = "The default page size is 50 rows; the --page-size flag changes it."


def alike(a: str, b: str) -> float:
    first, second = signatures([a, b])
    return similarity(first, second)


def test_a_changed_line_changed_whitespace_and_reordered_paragraphs_stay_above_the_threshold():
    line_changed = README.replace("Press n for the next page", "Press the space bar for the next page")
    spaced = README.replace("\n", "\n\n").replace(" ", "  ")
    paragraphs = README.split("\n\n")
    reordered = "\n\n".join([paragraphs[0], paragraphs[2], paragraphs[1], *paragraphs[3:]])
    for variant in (line_changed, spaced, reordered):
        assert alike(README, variant) >= 0.8
    assert alike(README, OTHER) < 0.2


def test_rows_are_duplicates_only_when_context_and_answer_both_are():
    near = NearDuplicates()
    near.add("a", "train", README, ANSWER)
    near.add("b", "train", README, "fastgrid is written in pure Python and needs no compiler at all.")
    near.add("c", "train", OTHER, ANSWER)
    assert near.pairs == []  # a shared context (b), or a shared answer (c), is not a duplicate
    near.add("d", "test", README.replace("\n", "\n\n"), ANSWER + " ")
    assert [(p.first, p.second) for p in near.pairs] == [("a", "d")] and near.pairs[0].similarity >= 0.8


def test_a_cluster_across_splits_keeps_its_test_copy_and_otherwise_its_first_key():
    near = NearDuplicates()
    for key, split in (("k1", "train"), ("k2", "test"), ("k3", "train")):
        near.add(key, split, README, ANSWER)
    assert near.clusters() == [["k1", "k2", "k3"]]
    assert near.removed() == {"k1", "k3"}
    assert to_remove([["x2", "x1"]], {"x1": "train", "x2": "train"}) == {"x2"}
    report = near.report()
    assert report.removed_by_split == {"train": 2} and len(report.pairs) == 3


def test_a_context_in_two_splits_is_a_leak_even_when_the_rows_differ():
    near = NearDuplicates()
    near.add("a", "train", README, ANSWER)
    near.add("b", "test", README.replace("Press n", "Press N"), "Something else entirely, asked of it.")
    near.add("c", "train", OTHER, ANSWER)
    (leak,) = near.split_leaks
    assert (leak.first, leak.first_split, leak.second, leak.second_split) == ("a", "train", "b", "test")
    assert near.pairs == []


def test_text_without_spaces_is_shingled_by_characters():
    japanese = "日本語のテキストはスペースなしで書かれています。これは二番目の文です。"
    assert len(shingles(japanese)) > 20
    assert alike(japanese * 3, japanese * 3 + "追加") >= 0.8


def test_rows_signed_elsewhere_count_as_rows_added_one_by_one():
    from lettuce_build.core.near_duplicates import sign

    rows = [("a", "train", README, ANSWER), ("b", "test", README.replace("\n", "\n\n"), ANSWER + " ")]
    one_by_one, signed = NearDuplicates(), NearDuplicates()
    for row in rows:
        one_by_one.add(*row)
    signed.add_signed([(key, "", split) for key, split, *_ in rows], sign([(c, a) for *_, c, a in rows]))
    assert signed.report() == one_by_one.report() and len(signed.pairs) == 1 and len(signed.split_leaks) == 1
