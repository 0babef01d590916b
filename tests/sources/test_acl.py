"""ACL: rows grouped per question, top 5 by retrieval rank, an answerable excerpt required."""

import json

import pytest

from lettuce_build.sources.acl import AclSource
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.chunking import hash_split
from lettuce_build.tables import TableError


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


def test_a_question_without_an_answerable_excerpt_in_the_top_five_is_skipped(tmp_path):
    rows = [row("Q?", "P", r, r == 7) for r in range(1, 8)] + [row("Other?", "P", 1, True)]
    loaded = AclSource().load(write(tmp_path, rows), LoadOptions())
    assert [i["question"] for i in loaded.items] == ["Other?"]
    assert loaded.skipped["no_answerable_excerpt"] == 1


def test_acl_uses_the_paper_menu_without_a_question_stage():
    assert [s.name for s in AclSource().stages()] == ["answer", "inject"]
    assert AclSource().stages()[1].menu == "paper"


def test_missing_acl_columns_are_named(tmp_path):
    path = tmp_path / "acl.jsonl"
    path.write_text(json.dumps({"question": "q", "paper_id": "p", "chunk": "c"}) + "\n")
    with pytest.raises(TableError, match=r"missing column\(s\) \['retrieval_rank', 'answerable'\]"):
        AclSource().load(str(path), LoadOptions())
