"""ACL Anthology paper chunks: retrieved excerpts per question, grounded answers, the paper menu.

Upstream (`KRLabsOrg/acl-verbatim-spans`, config ``canonical``) has one row per
(question, retrieved chunk) with ``question``, ``paper_id``, ``chunk``,
``retrieval_rank`` and ``answerable``. Rows are grouped per question, the top 5
by retrieval rank become "Excerpt i:" blocks, a question needs at least one
answerable excerpt, and the split is a hash of the best-ranked answerable
excerpt's paper id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

from lettuce_build.primitives.answers import AnswerStage
from lettuce_build.primitives.injection import InjectMenuStage
from lettuce_build.runner import Stage
from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Source, StageSettings, Tally
from lettuce_build.sources.chunking import hash_split

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
        for row in self.rows(input_path, REQUIRED, hub_config="canonical"):
            groups.setdefault(str(row["question"]).strip(), []).append(row)
        tally.documents = len(groups)
        for question, rows in groups.items():
            top = sorted(rows, key=lambda r: (int(r["retrieval_rank"]) < 0, int(r["retrieval_rank"])))[:TOP_K]
            answerable = [r for r in top if r["answerable"]]
            if not question or not answerable:
                tally.skipped["no_answerable_excerpt" if question else "empty_question"] += 1
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
                },
            }

    def stages(self, settings: StageSettings = DEFAULT_SETTINGS) -> list[Stage]:
        return [AnswerStage(), InjectMenuStage("paper", anchors=settings.edit_anchors)]
