"""LettuceDetect's own format: one JSON array of its `HallucinationSample` fields, which its
`HallucinationData.from_json` loads and its training and evaluation scripts read.

How our rows map (the original value kept in ``metadata`` where it changes, so that reading the
export back restores it):

- ``split``: ``train`` and ``test`` as they are, ``validation`` -> ``dev`` (its scripts read
  ``train``, ``dev`` and ``test``);
- ``context_modality``: ``prose``, ``code`` and ``markdown`` as they are; ``tool_output`` ->
  ``code`` (program output is read as code is; ``metadata.context_modality`` keeps it);
- ``task_type``: RAGTruth's ``QA``, ``Summary`` and ``Data2txt`` as they are; every other task
  (``qa``, ``tool_output_qa``, ``code_fix``: a request answered from a context) -> ``qa``
  (``metadata.task_type`` keeps it);
- ``labels``: ``start``, ``end``, ``label``, ``category`` and ``subcategory`` by name, and the
  span's ``text``; the sample's ``category`` and ``subcategory`` by name (ours is a ClassLabel);
- ``metadata``: an object (ours is JSON text on the Hub).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, get_args

from lettuce_build.core.schema import ContextModality, HallucinationSample, normal_split
from lettuce_build.formats import base

SPLITS = {"train": "train", "validation": "dev", "test": "test"}
MODALITIES = {"prose": "prose", "code": "code", "markdown": "markdown", "tool_output": "code"}
#: task types LettuceDetect's data uses; any other is a request answered from a context: ``qa``
KNOWN_TASKS = ("qa", "QA", "Summary", "Data2txt")


def to_record(sample: HallucinationSample) -> dict[str, Any]:
    metadata = dict(sample.metadata)
    modality = MODALITIES[sample.context_modality]
    if modality != sample.context_modality:
        metadata["context_modality"] = sample.context_modality
    task = sample.task_type if sample.task_type in KNOWN_TASKS else "qa"
    if task != sample.task_type:
        metadata["task_type"] = sample.task_type
    return {
        "prompt": sample.prompt,
        "answer": sample.answer,
        "labels": [span.model_dump() for span in sample.labels],
        "split": SPLITS[sample.split],
        "task_type": task,
        "dataset": sample.dataset,
        "language": sample.language,
        "context_modality": modality,
        "category": sample.category,
        "subcategory": sample.subcategory,
        "context": sample.context,
        "question": sample.question,
        "metadata": metadata,
    }


def to_row(where: str, record: dict[str, Any]) -> base.Foreign:
    """A LettuceDetect record as our row: its ``context`` (else its prompt) is what the answer is
    checked against; a null question is an empty one."""
    for field in ("prompt", "answer"):
        if not isinstance(record.get(field), str):
            kind = type(record.get(field)).__name__
            return base.bad(where, field, "not_a_string", f"expected a string, got {kind}")
    spans = base.checked_spans(record["answer"], record.get("labels", []), where)
    if isinstance(spans, base.Foreign):
        return spans
    given = record.get("metadata")
    metadata: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
    modality = metadata.pop("context_modality", None) or record.get("context_modality") or "prose"
    task = metadata.pop("task_type", None) or record.get("task_type") or "qa"
    context, question = record.get("context"), record.get("question")
    return base.Foreign(
        where,
        row=base.categorised(
            {
                "prompt": record["prompt"],
                "context": context if isinstance(context, str) else record["prompt"],
                "question": question if isinstance(question, str) else "",
                "answer": record["answer"],
                "labels": spans,
                "split": normal_split(record.get("split")),
                "task_type": str(task),
                "dataset": str(record.get("dataset") or "(unknown)"),
                "language": str(record.get("language") or "en"),
                "context_modality": modality if modality in get_args(ContextModality) else "prose",
                "category": record.get("category") if spans else None,
                "subcategory": record.get("subcategory") if spans else None,
                "metadata": metadata,
            }
        ),
    )


class LettuceDetectFormat(base.ExportFormat):
    name = "lettucedetect"
    summary = "a JSON array of LettuceDetect's HallucinationSample fields (splits train/dev/test)"

    def write(self, samples: Iterable[HallucinationSample], out: Path) -> base.ExportCounts:
        counts = base.ExportCounts()
        with out.open("w", encoding="utf-8") as file:  # an array written record by record
            file.write("[")
            for sample in samples:
                file.write(",\n" if counts.samples else "\n")
                file.write(json.dumps(to_record(sample), ensure_ascii=False))
                counts.add(sample)
            file.write("\n]\n")
        return counts

    def read(self, path: Path) -> Iterator[base.Foreign]:
        for where, record in base.records(path):
            yield (
                base.Foreign(where, problem=record) if not isinstance(record, dict) else to_row(where, record)
            )

    def recognises(self, record: dict[str, Any]) -> bool:
        return {"prompt", "answer", "labels"} <= set(record) and not isinstance(record.get("metadata"), str)
