"""Tool output from squeez: the query as the question, the output as the context, an answer grounded
in the gold relevant lines (with the task as extra evidence), targeted tool-output injection."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lettuce_build.core.errors import SourceError
from lettuce_build.core.schema import SPLITS, normal_split
from lettuce_build.core.seeding import fraction
from lettuce_build.core.tables import read_table
from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Pipeline, Source, StageSettings, Tally
from lettuce_build.stages.answers import AnswerStage
from lettuce_build.stages.generation import GenerateStage
from lettuce_build.stages.injection import InjectTaxonomyStage

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

    def _rows(self, input_path: str | None, tally: Tally) -> Iterator[dict[str, Any]]:
        if input_path is not None and Path(input_path).is_dir():
            files = [Path(input_path) / f"squeez_{s}.jsonl" for s in SPLITS]
            if not any(f.exists() for f in files):
                raise SourceError(f"{input_path}: no squeez_<split>.jsonl files; run squeez phase 7 first")
            for file in files:
                if file.exists():
                    for _, row in read_table(file, REQUIRED, tally.skip):
                        yield dict(row, split=row.get("split") or file.stem.split("_")[-1])
            return
        yield from self.rows(input_path, REQUIRED, tally)

    def items(self, input_path: str | None, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        seen: Counter[str] = Counter()
        for row in self._rows(input_path, tally):
            tally.documents += 1
            if not row["relevant_lines"] or row.get("is_irrelevant"):
                tally.skipped["irrelevant_output"] += 1
                continue
            split = normal_split(row.get("split"))
            base = f"{split}::{row['instance_id']}::{row['tool_type']}"
            seen[base] += 1
            # the spec's key; a second call of the same type on the same instance gets a number
            key = base if seen[base] == 1 else f"{base}::{seen[base]}"
            target = TARGETS[int(fraction(options.seed, key, "target") * len(TARGETS))]
            task = str(row["background_task"])[:TASK_CHARS]
            yield {
                "key": key,
                "split": split,
                "question": row["query"],
                "context": row["tool_output"],
                "evidence": f"Task:\n{task}\n\nRelevant lines of the tool output:\n"
                + "\n".join(row["relevant_lines"]),
                "target_category": target[0],
                "target_subcategory": target[1],
                "language": "en",
                "metadata": {
                    "instance_id": row["instance_id"],
                    "tool_type": row["tool_type"],
                    "command": row.get("command"),
                    "repo": row.get("repo"),
                },
            }

    def document_of(self, item: dict[str, Any]) -> str:
        return "::".join(str(item["key"]).split("::")[:2])  # {split}::{instance}: its tool calls

    def pipeline(self, settings: StageSettings = DEFAULT_SETTINGS) -> Pipeline:
        answer = AnswerStage(evidence_field="evidence", prompt="answer_tool_output", prose=False)
        # tool output is no prose for the prose rules: its model writes edits of its anchors
        anchors = "free" if settings.edit_anchors == "free" else "constrained"
        inject = InjectTaxonomyStage("tool_output", anchors=anchors, seed=settings.seed)
        return Pipeline(inject=[answer, inject], generate=[answer, GenerateStage(seed=settings.seed)])
