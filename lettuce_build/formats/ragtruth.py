"""RAGTruth's layout: a folder of ``response.jsonl`` (each response with its character-offset
``labels``: ``start``, ``end``, ``text``, ``label_type``) and ``source_info.jsonl`` (the prompt,
the task type and the source, whose ``source_info`` holds the question and the passages), so that
tooling made for RAGTruth (and lettuce-build's own ``ragtruth`` source) reads a build.

Our categories become RAGTruth's label types (``contradiction`` -> ``Evident Conflict``,
``unsupported_addition`` and ``fabricated_reference`` -> ``Evident Baseless Info``); each label's
``meta`` keeps our category and subcategory, and each response's ``lettuce_build`` object what
RAGTruth has no field for (task type, modality, language, dataset, metadata), so reading the
export back restores the rows. ``validation`` is written as ``dev``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from lettuce_build.core.schema import HallucinationSample, normal_split
from lettuce_build.core.taxonomy import CONTRADICTION
from lettuce_build.formats import base

RESPONSES = "response.jsonl"
SOURCES = "source_info.jsonl"
SPLITS = {"train": "train", "validation": "dev", "test": "test"}
#: RAGTruth's task types; every other task is a question answered from passages
TASKS = ("QA", "Summary", "Data2txt")


def label_type(category: str) -> str:
    return "Evident Conflict" if category == CONTRADICTION else "Evident Baseless Info"


class RagTruthFormat(base.ExportFormat):
    name = "ragtruth"
    summary = "a folder of RAGTruth's response.jsonl and source_info.jsonl"
    folder = True

    def write(self, samples: Iterable[HallucinationSample], out: Path) -> base.ExportCounts:
        out.mkdir(parents=True, exist_ok=True)
        counts = base.ExportCounts()
        with (
            (out / RESPONSES).open("w", encoding="utf-8") as responses,
            (out / SOURCES).open("w", encoding="utf-8") as sources,
        ):
            for number, sample in enumerate(samples):
                source_id = str(number)
                task = sample.task_type if sample.task_type in TASKS else "QA"
                sources.write(
                    base.json_line(
                        {
                            "source_id": source_id,
                            "task_type": task,
                            "source": sample.dataset,
                            "source_info": {"question": sample.question, "passages": sample.context},
                            "prompt": sample.prompt,
                        }
                    )
                )
                labels = [
                    {
                        "start": span.start,
                        "end": span.end,
                        "text": span.text,
                        "label_type": label_type(span.category),
                        "meta": json.dumps(
                            {"label": span.label, "category": span.category, "subcategory": span.subcategory}
                        ),
                        "implicit_true": False,
                        "due_to_null": False,
                    }
                    for span in sample.labels
                ]
                kept = {
                    "task_type": sample.task_type,
                    "context_modality": sample.context_modality,
                    "language": sample.language,
                    "dataset": sample.dataset,
                    "category": sample.category,
                    "subcategory": sample.subcategory,
                    "metadata": sample.metadata,
                }
                response = {
                    "id": source_id,
                    "source_id": source_id,
                    "model": str(sample.metadata.get("model") or "lettuce-build"),
                    "labels": labels,
                    "split": SPLITS[sample.split],
                    "quality": "good",
                    "response": sample.answer,
                    "lettuce_build": kept,
                }
                responses.write(base.json_line(response))
                counts.add(sample)
        return counts

    def read(self, path: Path) -> Iterator[base.Foreign]:
        sources: dict[str, dict[str, Any]] = {}
        for where, record in base.records(path / SOURCES):
            if isinstance(record, dict):
                sources[str(record.get("source_id"))] = record
            else:
                yield base.Foreign(where, problem=record)
        for where, record in base.records(path / RESPONSES):
            if not isinstance(record, dict):
                yield base.Foreign(where, problem=record)
                continue
            source = sources.get(str(record.get("source_id")))
            if source is None:
                message = f"{record.get('source_id')!r} is not in {SOURCES}"
                yield base.bad(where, "source_id", "no_source_info", message)
                continue
            yield _row(where, record, source)

    @staticmethod
    def is_export(path: Path) -> bool:
        return path.is_dir() and (path / RESPONSES).is_file() and (path / SOURCES).is_file()


def _row(where: str, response: dict[str, Any], source: dict[str, Any]) -> base.Foreign:
    answer = response.get("response")
    if not isinstance(answer, str):
        return base.bad(where, "response", "not_a_string", f"expected a string, got {type(answer).__name__}")
    labels = []
    for label in response.get("labels") or []:
        if not isinstance(label, dict) or label.get("implicit_true"):
            continue  # the annotators marked it true: no hallucination
        try:
            ours = json.loads(label.get("meta") or "{}")
        except (TypeError, json.JSONDecodeError):
            ours = {}
        ours = ours if isinstance(ours, dict) else {}
        native = str(label.get("label_type") or "")
        fallback = CONTRADICTION if "Conflict" in native else "unsupported_addition"
        labels.append(
            {
                "start": label.get("start"),
                "end": label.get("end"),
                "label": ours.get("label") or native,
                "category": ours.get("category") or fallback,
                "subcategory": ours.get("subcategory"),
            }
        )
    spans = base.checked_spans(answer, labels, where)
    if isinstance(spans, base.Foreign):
        return spans
    info = source.get("source_info")
    if isinstance(info, dict):
        passages, question = info.get("passages"), info.get("question")
    else:
        passages, question = info, ""
    own = response.get("lettuce_build")
    kept: dict[str, Any] = own if isinstance(own, dict) else {}
    return base.Foreign(
        where,
        row=base.categorised(
            {
                "prompt": str(source.get("prompt") or ""),
                "context": str(passages or ""),
                "question": str(question or ""),
                "answer": answer,
                "labels": spans,
                "split": normal_split(response.get("split")),
                "task_type": str(kept.get("task_type") or source.get("task_type") or "QA"),
                "dataset": str(kept.get("dataset") or source.get("source") or "ragtruth"),
                "language": str(kept.get("language") or "en"),
                "context_modality": str(kept.get("context_modality") or "prose"),
                "category": kept.get("category"),
                "subcategory": kept.get("subcategory"),
                "metadata": kept.get("metadata") or {},
            }
        ),
    )
