"""ACL: rows grouped per question, top 5 retrieved chunks with text, an answerable row required."""

import json

import pytest

from lettuce_build.core.errors import TableError
from lettuce_build.sources.acl import AclSource
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.chunking import hash_split


def row(question, paper, rank, answerable, chunk=None):
    return {
        "question": question,
        "paper_id": paper,
        "chunk_index": rank,
        "chunk": chunk or f"Chunk {paper}/{rank}.",
        "label": int(answerable),
        "answerable": answerable,
        "spans": [],
        "source": "silver",
        "retrieval_rank": rank,
    }


def write(tmp_path, rows):
    path = tmp_path / "acl.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def test_excerpts_come_in_retrieval_order_top_five(tmp_path):
    rows = [row("What is BLEU?", f"P{r}", r, r == 3) for r in (6, 2, 1, 5, 3, 4)]
    [item] = AclSource().load(write(tmp_path, rows), LoadOptions()).items
    assert item["question"] == "What is BLEU?"
    assert item["context"].startswith("Excerpt 1:\nChunk P1/1.\n\nExcerpt 2:\nChunk P2/2.")
    assert "Excerpt 5:\nChunk P5/5." in item["context"] and "P6" not in item["context"]
    assert item["split"] == hash_split("P3")
    assert json.loads(item["metadata"])["answerable_excerpts"] == [3]


def test_answerable_is_read_off_all_rows_and_unanswerable_questions_are_skipped(tmp_path):
    rows = [row("Q?", "P", r, r == 7) for r in range(1, 8)]  # answerable only outside the top five
    rows += [row("None?", "P", r, False) for r in (1, 2)] + [row("Other?", "P", 1, True)]
    loaded = AclSource().load(write(tmp_path, rows), LoadOptions())
    assert [i["question"] for i in loaded.items] == ["Q?", "Other?"]
    assert loaded.skipped["no_answerable_row"] == 1


def test_only_retrieved_chunks_with_text_are_context(tmp_path):
    rows = [row("Q?", "P", 0, True, chunk="Not retrieved."), row("Q?", "P", -1, False, chunk="Never.")]
    rows += [row("Q?", "P", 2, False, chunk="   "), row("Q?", "P", 3, False, chunk="Third.")]
    [item] = AclSource().load(write(tmp_path, rows), LoadOptions()).items
    assert item["context"] == "Excerpt 1:\nThird."


def test_acl_uses_the_paper_menu_without_a_question_stage():
    assert [s.name for s in AclSource().pipeline().inject] == ["answer", "inject"]
    assert AclSource().pipeline().inject[1].menu == "paper"


def test_missing_acl_columns_are_named(tmp_path):
    path = tmp_path / "acl.jsonl"
    path.write_text(json.dumps({"question": "q", "paper_id": "p", "chunk": "c"}) + "\n")
    with pytest.raises(TableError, match=r"missing column\(s\) \['retrieval_rank', 'answerable'\]"):
        AclSource().load(str(path), LoadOptions())
