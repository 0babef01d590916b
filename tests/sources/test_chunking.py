"""The shared chunker and the document-level hash split."""

from pathlib import Path

import regex

from lettuce_build.sources.chunking import ChunkConfig, chunk_markdown, hash_split, split_sections


def test_headings_inside_code_fences_do_not_split():
    markdown = "# Title\nintro\n```bash\n# a comment, not a heading\necho hi\n```\n## Next\nmore\n"
    sections = split_sections(markdown)
    assert len(sections) == 2
    assert "# a comment, not a heading" in sections[0] and sections[1].startswith("## Next")


def test_tilde_fences_count_too():
    assert len(split_sections("# A\n~~~\n# not a heading\n~~~\n# B\n")) == 2


def test_a_setext_heading_starts_a_section():
    markdown = "Saltbox\n=======\n\nA cache.\n\nInstall\n-------\n\npip install saltbox\n"
    assert split_sections(markdown) == [
        "Saltbox\n=======\n\nA cache.\n\n",
        "Install\n-------\n\npip install saltbox\n",
    ]


def test_a_four_backtick_fence_is_not_closed_by_three_backticks_inside_it():
    markdown = (
        "# Writing docs\n````markdown\n```bash\necho hi\n```\n# still inside the example\n````\n"
        "# Next\nmore\n"
    )
    sections = split_sections(markdown)
    assert len(sections) == 2
    assert "# still inside the example" in sections[0] and sections[1] == "# Next\nmore\n"


def test_a_heading_inside_a_list_or_quote_is_not_a_section():
    assert len(split_sections("# A\n- item\n\n  # nested? no: a list item's heading\n> # quoted\n")) == 1


def test_on_real_readmes_sections_start_at_headings_and_lose_nothing():
    for readme in (Path(__file__).resolve().parents[2] / "examples" / "readmes").glob("*.md"):
        text = readme.read_text()
        sections = split_sections(text)
        assert "".join(sections).strip() == text.strip()
        assert all(regex.match(r"#{1,6} |.+\n(?:=+|-+)\n", s) for s in sections[1:]), readme.name


def test_sections_pack_greedily_up_to_the_maximum():
    section = "## S\n" + "x" * 95 + "\n"  # 101 chars
    chunks = chunk_markdown(section * 10, ChunkConfig(min_chars=50, max_chars=250, max_chunks=10))
    assert [len(c) for c in chunks][:4] == [201, 201, 201, 201]
    assert all(len(c) <= 250 for c in chunks)


def test_an_oversized_section_is_truncated_to_the_maximum():
    [chunk] = chunk_markdown("# Big\n" + "y" * 5000, ChunkConfig(min_chars=10, max_chars=1000, max_chunks=3))
    assert len(chunk) == 1000


def test_a_short_leading_section_is_filled_up_not_emitted_alone():
    markdown = "# A\nshort\n## B\n" + "z" * 400 + "\n"
    [chunk] = chunk_markdown(markdown, ChunkConfig(min_chars=300, max_chars=300))
    assert chunk.startswith("# A") and len(chunk) <= 300


def test_a_too_short_tail_is_dropped():
    markdown = "# A\n" + "a" * 350 + "\n# B\n" + "b" * 3990 + "\n# C\ntiny\n"
    chunks = chunk_markdown(markdown)
    assert len(chunks) == 2 and "tiny" not in chunks[-1]


def test_only_the_first_chunks_are_kept():
    markdown = "".join(f"# S{i}\n" + "w" * 3990 + "\n" for i in range(6))
    assert len(chunk_markdown(markdown, ChunkConfig(max_chunks=3))) == 3


def test_a_document_that_fits_one_chunk_is_that_chunk_stripped():
    markdown = "\n\n# Title\nintro line\n```\n# not a heading\n```\nTitle two\n---\nmore text\n\n"
    fits = ChunkConfig(min_chars=20, max_chars=len(markdown))
    assert len(split_sections(markdown)) == 2
    assert chunk_markdown(markdown, fits) == ["".join(split_sections(markdown)).strip()]
    # without the blank lines before its first heading it is too short to stand alone
    assert chunk_markdown(markdown, fits.model_copy(update={"min_chars": len(markdown) - 1})) == []


def test_the_hash_split_is_fixed_across_runs_and_machines():
    # sha256-based: these values must never change, or published splits would reshuffle
    assert [hash_split(f"doc-{i}") for i in (0, 7, 19, 50, 52)] == [
        "train",
        "validation",
        "test",
        "validation",
        "test",
    ]
    counts = {s: 0 for s in ("train", "validation", "test")}
    for i in range(4000):
        counts[hash_split(f"repo-{i}")] += 1
    assert 120 < counts["validation"] < 280 and 120 < counts["test"] < 280
