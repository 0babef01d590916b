"""PsiloQA: real LLM answers with natural, untyped hallucination spans, typed by the classify stage.

Context ``wiki_passage``, question ``question``, answer ``llm_answer``; ``labels`` are
[start, end] character pairs into the answer (out-of-range ones are dropped and
counted). Every span is classified in one batched stage; an item with any span that
fails to classify fails as a whole (no label is ever guessed) and is tried afresh on
the next run. All languages and the native train/validation/test splits are kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from datasets import Dataset

from lettuce_build.core.errors import SourceError
from lettuce_build.core.schema import SPLITS, normal_split, widen_to_graphemes
from lettuce_build.core.tables import read_table
from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Pipeline, Source, StageSettings, Tally
from lettuce_build.stages.classify import ClassifyStage, explode_spans, gather_labels

REQUIRED = ("wiki_passage", "question", "llm_answer", "labels")


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping or touching annotator spans as one: classified separately they would make a
    sample with overlapping labels, which fails whole after every call was paid for."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(set(spans)):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _spans(raw: Any) -> list[Any]:
    if isinstance(raw, str):
        return json.loads(raw) if raw.strip() else []
    return list(raw or [])


class PsiloQASource(Source):
    name = "psiloqa"
    dataset_name = "psiloqa"
    modality = "prose"
    hub_id = "s-nlp/PsiloQA"

    def _rows(self, input_path: str | None, tally: Tally) -> Iterator[dict[str, Any]]:
        path = Path(input_path) if input_path else None
        if path is not None and path.is_dir():
            files = [
                (split, file)
                for split in SPLITS
                for file in sorted(path.glob(f"{split}*.jsonl")) + sorted(path.glob(f"{split}*.parquet"))
            ]
            if not files:
                raise SourceError(f"{path}: no train/validation/test .jsonl or .parquet files")
            for split, file in files:
                for _, row in read_table(file, REQUIRED, tally.skip):
                    yield dict(row, split=split)
            return
        yield from self.rows(input_path, REQUIRED, tally)

    def items(self, input_path: str | None, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        for index, row in enumerate(self._rows(input_path, tally)):
            tally.documents += 1
            answer = row["llm_answer"]
            spans = []
            for pair in _spans(row["labels"]):
                start, end = int(pair[0]), int(pair[1])
                if 0 <= start < end <= len(answer):
                    spans.append(widen_to_graphemes(answer, start, end))  # never half a character
                else:
                    tally.skipped["span_out_of_range"] += 1
            merged = merge_spans(spans)
            if len(set(spans)) > len(merged):
                tally.skipped["spans_merged"] += len(set(spans)) - len(merged)
            split = normal_split(row.get("split"))
            yield {
                "key": f"psiloqa::{split}::{row.get('id', index)}",
                "split": split,
                "context": row["wiki_passage"],
                "question": row["question"],
                "answer": answer,
                "spans": merged,
                "language": str(row.get("lang") or "en"),
                "metadata": {"model": row.get("model_id"), "wiki_title": row.get("wiki_title")},
            }

    def pipeline(self, settings: StageSettings = DEFAULT_SETTINGS) -> Pipeline:
        return Pipeline(inject=[ClassifyStage()])  # its spans come with its data: nothing to generate

    def prepare(self, items: Dataset) -> Dataset:
        """One classify item per natural span."""
        spans = explode_spans(items.to_list())
        return Dataset.from_list(spans) if spans else items.select([])

    def finish(self, items: Dataset, done: Dataset) -> Dataset:
        """Each item with its classified spans; an item with any unclassified span is left out
        (its failure is recorded; no label is ever guessed). Answers without spans are clean."""
        rows = items.to_list()
        classified = done.to_list() if "span_category" in done.column_names else []
        complete, failed = gather_labels(classified, [], {r["key"]: len(r["spans"]) for r in rows})
        finished = []
        for item in rows:
            if not item["spans"]:
                finished.append(dict(item, labels=[]))
            elif item["key"] not in failed and item["key"] in complete:
                labels = [
                    {
                        "start": r["span_start"],
                        "end": r["span_end"],
                        "text": item["answer"][r["span_start"] : r["span_end"]],
                        "label": "psiloqa",
                        "category": r["span_category"],
                        "subcategory": r["span_subcategory"],
                    }
                    for r in complete[item["key"]]
                ]
                finished.append(dict(item, labels=labels))
        return Dataset.from_list(finished) if finished else items.select([])
