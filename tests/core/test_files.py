"""A folder's files, listed one entry at a time, their names sorted in Arrow, read ahead of use."""

import itertools
import os

from lettuce_build.core import files
from lettuce_build.core.files import READ_AHEAD, read_ahead, sorted_names, walk_files


def test_every_file_in_nested_folders_is_walked_and_a_linked_folder_is_not_followed(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("top.md", "a/one.md", "a/b/two.md"):
        (tmp_path / name).write_text(name)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "far.md").write_text("far")
    os.symlink(tmp_path / "outside", tmp_path / "a" / "link")
    walked = sorted(os.path.relpath(e.path, tmp_path / "a") for e in walk_files(tmp_path / "a"))
    assert walked == ["b/two.md", "one.md"]


def test_names_are_relative_sorted_by_their_bytes_kept_when_asked_and_need_not_be_utf8(tmp_path):
    (tmp_path / "sub").mkdir()
    odd = os.fsdecode(b"caf\xe9.md")  # Latin-1 bytes: not UTF-8
    for name in ("b.md", "a.txt", "sub/c.md", "skip.png", odd):
        (tmp_path / name).write_bytes(b"x")
    names = sorted_names(tmp_path, lambda name: not name.endswith(".png"))
    assert list(names) == ["a.txt", "b.md", odd, "sub/c.md"]
    assert (tmp_path / list(names)[2]).read_bytes() == b"x"


def test_names_past_one_chunk_come_back_whole_and_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "_CHUNK", 3)
    for number in range(8):
        (tmp_path / f"{number}.md").write_text("x")
    assert list(sorted_names(tmp_path, lambda name: True)) == [f"{n}.md" for n in range(8)]


def test_a_folder_is_read_ahead_in_name_order_and_can_be_left_early(tmp_path):
    names = [f"doc{i:04d}.md" for i in range(READ_AHEAD * 2 + 5)]
    for name in names:
        (tmp_path / name).write_text(f"# {name}\n")
    assert list(read_ahead(tmp_path, names)) == [f"# {name}\n".encode() for name in names]
    assert list(itertools.islice(read_ahead(tmp_path, names), 3)) == [
        b"# doc0000.md\n",
        b"# doc0001.md\n",
        b"# doc0002.md\n",
    ]
