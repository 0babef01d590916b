"""Tool output from squeez: the query as the question, the output as the context, an answer grounded
in the gold relevant lines (with the task as extra evidence), targeted tool-output injection."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from lettuce_build.primitives.answers import AnswerStage
from lettuce_build.primitives.injection import InjectTaxonomyStage
from lettuce_build.runner import Stage
from lettuce_build.schema import SPLITS
from lettuce_build.sources.base import CardMetadata, LoadOptions, LoadResult, Source, SourceError
from lettuce_build.sources.chunking import seeded_fraction
from lettuce_build.tables import read_table

REQUIRED = ("instance_id", "tool_type", "query", "background_task", "tool_output", "relevant_lines")
TARGETS = (
    ("contradiction", "value"),
    ("contradiction", "numerical"),
    ("unsupported_addition", "claim"),
    ("unsupported_addition", "behavior"),
    ("fabricated_reference", "identifier"),
    ("fabricated_reference", "section"),
)
TASK_CHARS = 2000


class ToolOutputSource(Source):
    name = "tool_output"
    dataset_name = "lettucedetect-tool-output"
    modality = "tool_output"
    task_type = "tool_output_qa"
    hub_id = "KRLabsOrg/tool-output-extraction-swebench"
    card = CardMetadata(
        pretty_name="LettuceDetect tool-output hallucinations",
        description="Real tool outputs from SWE-bench repositories, answers grounded in their relevant "
        "lines, and injected hallucinations of values, behaviour, identifiers and locations.",
        upstream="a local squeez build, or KRLabsOrg/tool-output-extraction-swebench",
        languages=["en", "code"],
        task_types=["tool_output_qa"],
    )

    def _rows(self, input_path: str | None) -> list[dict[str, Any]]:
        if input_path is not None and Path(input_path).is_dir():
            files = [Path(input_path) / f"squeez_{s}.jsonl" for s in SPLITS]
            if not any(f.exists() for f in files):
                raise SourceError(f"{input_path}: no squeez_<split>.jsonl files; run squeez phase 7 first")
            return [
                dict(row, split=row.get("split") or f.stem.split("_")[-1])
                for f in files
                if f.exists()
                for _, row in read_table(f, REQUIRED)
            ]
        if input_path is not None and Path(input_path).exists():
            return [row for _, row in read_table(Path(input_path), REQUIRED)]
        from datasets import load_dataset

        loaded = load_dataset(input_path or self.hub_id)
        return [dict(row, split=split) for split, rows in loaded.items() for row in rows]

    def load(self, input_path: str | None, options: LoadOptions) -> LoadResult:
        skipped: Counter[str] = Counter()
        seen: Counter[str] = Counter()
        items = []
        for row in self._rows(input_path):
            if not row["relevant_lines"] or row.get("is_irrelevant"):
                skipped["irrelevant_output"] += 1
                continue
            split = {"dev": "validation"}.get(row.get("split") or "train", row.get("split") or "train")
            base = f"{split}::{row['instance_id']}::{row['tool_type']}"
            seen[base] += 1
            # the spec's key; a second call of the same type on the same instance gets a number
            key = base if seen[base] == 1 else f"{base}::{seen[base]}"
            target = TARGETS[int(seeded_fraction(options.seed, key, "target") * len(TARGETS))]
            task = str(row["background_task"])[:TASK_CHARS]
            items.append(
                {
                    "key": key,
                    "split": split if split in SPLITS else "train",
                    "question": row["query"],
                    "context": row["tool_output"],
                    "evidence": f"Task:\n{task}\n\nRelevant lines of the tool output:\n"
                    + "\n".join(row["relevant_lines"]),
                    "target_category": target[0],
                    "target_subcategory": target[1],
                    "inject": seeded_fraction(options.seed, key, "inject") < options.ratio,
                    "language": "en",
                    "metadata": json.dumps(
                        {
                            "instance_id": row["instance_id"],
                            "tool_type": row["tool_type"],
                            "command": row.get("command"),
                            "repo": row.get("repo"),
                        }
                    ),
                }
            )
            if options.limit is not None and len(items) >= options.limit:
                break
        return LoadResult(items=items, documents=len(items) + sum(skipped.values()), skipped=skipped)

    def stages(self) -> list[Stage]:
        return [AnswerStage(evidence_field="evidence"), InjectTaxonomyStage("tool_output")]
