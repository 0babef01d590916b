"""ACL Anthology paper chunks: retrieved excerpts per question, grounded answers, the paper menu.

Upstream (`KRLabsOrg/acl-verbatim-spans`, config ``canonical``) has one row per
(question, retrieved chunk) with ``question``, ``paper_id``, ``chunk``,
``retrieval_rank`` and ``answerable``. Rows are grouped per question; the top 5
retrieved chunks (rank 1 and up, with text) become "Excerpt i:" blocks; a question
needs at least one answerable row among all of its rows; the split is a hash of the
paper id of its best-ranked answerable excerpt (or first answerable row).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Pipeline, Source, StageSettings, Tally
from lettuce_build.sources.chunking import hash_split
from lettuce_build.stages.answers import answer_stage
from lettuce_build.stages.generation import GenerateStage
from lettuce_build.stages.prose_edits import prose_inject_stage, rule_edits

REQUIRED = ("question", "paper_id", "chunk", "retrieval_rank", "answerable")
TOP_K = 5


class AclSource(Source):
    name = "acl"
    dataset_name = "lettucedetect-acl"
    modality = "markdown"
    hub_id = "KRLabsOrg/acl-verbatim-spans"

    def items(self, input_path: str | None, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        # Rows are grouped per question, so the whole table is read first (upstream does not
        # promise that a question's rows are adjacent); --limit then stops the items early.
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in self.rows(input_path, REQUIRED, tally, hub_config="canonical"):
            groups.setdefault(str(row["question"]).strip(), []).append(row)
        tally.documents = len(groups)
        for question, rows in groups.items():
            # only chunks the retriever returned (rank 1 and up) and that hold text are context;
            # whether the question is answerable is read off all its rows
            retrieved = [r for r in rows if int(r["retrieval_rank"]) >= 1 and str(r["chunk"] or "").strip()]
            top = sorted(retrieved, key=lambda r: int(r["retrieval_rank"]))[:TOP_K]
            answerable = sorted((r for r in rows if r["answerable"]), key=lambda r: r not in top)
            if not question or not answerable or not top:
                reason = (
                    "empty_question"
                    if not question
                    else "no_answerable_row"
                    if not answerable
                    else "no_retrieved_chunk"
                )
                tally.skipped[reason] += 1
                continue
            context = "\n\n".join(f"Excerpt {i}:\n{r['chunk'].strip()}" for i, r in enumerate(top, start=1))
            yield {
                "key": f"acl::{hashlib.sha256(question.encode()).hexdigest()[:16]}",
                "split": hash_split(str(answerable[0]["paper_id"])),
                "question": question,
                "context": context,
                "language": "en",
                "metadata": {
                    "paper_ids": [str(r["paper_id"]) for r in top],
                    "answerable_excerpts": [i for i, r in enumerate(top, 1) if r["answerable"]],
                    "retrieved": len(retrieved),
                },
            }

    def pipeline(self, settings: StageSettings = DEFAULT_SETTINGS) -> Pipeline:
        inject = prose_inject_stage(
            settings.edit_anchors, "paper", allowed=settings.error_types, seed=settings.seed
        )
        return Pipeline(
            inject=[
                answer_stage(settings.answers, editable=rule_edits(inject, asked=settings.edits_asked)),
                inject,
            ],
            generate=[answer_stage(settings.answers), GenerateStage(seed=settings.seed)],
        )
