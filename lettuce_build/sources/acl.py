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
import json
from collections import Counter
from pathlib import Path
from typing import Any

from lettuce_build.primitives.answers import AnswerStage
from lettuce_build.primitives.injection import InjectMenuStage
from lettuce_build.runner import Stage
from lettuce_build.sources.base import CardMetadata, LoadOptions, LoadResult, Source
from lettuce_build.sources.chunking import hash_split, seeded_fraction
from lettuce_build.tables import read_table

REQUIRED = ("question", "paper_id", "chunk", "retrieval_rank", "answerable")
TOP_K = 5


class AclSource(Source):
    name = "acl"
    dataset_name = "lettucedetect-acl"
    modality = "markdown"
    hub_id = "KRLabsOrg/acl-verbatim-spans"
    card = CardMetadata(
        pretty_name="LettuceDetect ACL paper hallucinations",
        description="Questions over retrieved ACL Anthology paper excerpts, grounded answers, and injected "
        "hallucinations from the paper menu.",
        upstream="KRLabsOrg/acl-verbatim-spans (config canonical)",
        languages=["en"],
        task_types=["qa"],
    )

    def _rows(self, input_path: str | None) -> list[dict[str, Any]]:
        if input_path is not None and Path(input_path).exists():
            return [row for _, row in read_table(Path(input_path), REQUIRED)]
        from datasets import load_dataset

        loaded = load_dataset(input_path or self.hub_id, "canonical")
        return [row for split in loaded.values() for row in split]

    def load(self, input_path: str | None, options: LoadOptions) -> LoadResult:
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in self._rows(input_path):
            groups.setdefault(str(row["question"]).strip(), []).append(row)
        skipped: Counter[str] = Counter()
        items = []
        for question, rows in groups.items():
            top = sorted(rows, key=lambda r: (int(r["retrieval_rank"]) < 0, int(r["retrieval_rank"])))[:TOP_K]
            answerable = [r for r in top if r["answerable"]]
            if not question or not answerable:
                skipped["no_answerable_excerpt" if question else "empty_question"] += 1
                continue
            context = "\n\n".join(f"Excerpt {i}:\n{r['chunk'].strip()}" for i, r in enumerate(top, start=1))
            key = f"acl::{hashlib.sha256(question.encode()).hexdigest()[:16]}"
            items.append(
                {
                    "key": key,
                    "split": hash_split(str(answerable[0]["paper_id"])),
                    "question": question,
                    "context": context,
                    "inject": seeded_fraction(options.seed, key, "inject") < options.ratio,
                    "language": "en",
                    "metadata": json.dumps(
                        {
                            "paper_ids": [str(r["paper_id"]) for r in top],
                            "answerable_excerpts": [i for i, r in enumerate(top, 1) if r["answerable"]],
                        }
                    ),
                }
            )
            if options.limit is not None and len(items) >= options.limit:
                break
        return LoadResult(items=items, documents=len(groups), skipped=skipped)

    def stages(self) -> list[Stage]:
        return [AnswerStage(), InjectMenuStage("paper")]
