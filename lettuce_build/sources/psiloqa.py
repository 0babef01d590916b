"""PsiloQA: real LLM answers with natural, untyped hallucination spans, typed by `classify_span`.

Context ``wiki_passage``, question ``question``, answer ``llm_answer``; ``labels`` are
[start, end] character pairs into the answer (out-of-range ones are dropped and
counted). Every span is classified in one batched stage; an item with any span that
fails to classify fails as a whole (no label is ever guessed) and is tried afresh on
the next run. All languages and the native train/validation/test splits are kept.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from datasets import Dataset

from lettuce_build.primitives.classify import ClassifyStage, explode_spans, gather_labels
from lettuce_build.runner import Runner, Stage, StageResult
from lettuce_build.schema import SPLITS, widen_to_graphemes
from lettuce_build.sources.base import CardMetadata, LoadOptions, LoadResult, Source, SourceError
from lettuce_build.tables import read_table

REQUIRED = ("wiki_passage", "question", "llm_answer", "labels")


def _spans(raw: Any) -> list[Any]:
    if isinstance(raw, str):
        return json.loads(raw) if raw.strip() else []
    return list(raw or [])


class PsiloQASource(Source):
    name = "psiloqa"
    dataset_name = "psiloqa"
    modality = "prose"
    hub_id = "s-nlp/PsiloQA"
    card = CardMetadata(
        pretty_name="PsiloQA in the unified taxonomy",
        description="PsiloQA's multilingual LLM answers with their natural hallucination spans, each "
        "classified into the unified taxonomy.",
        upstream="s-nlp/PsiloQA (14 languages; train/validation/test)",
        languages=["multilingual"],
        task_types=["qa"],
    )

    def _rows(self, input_path: str | None) -> list[dict[str, Any]]:
        path = Path(input_path) if input_path else None
        if path is not None and path.is_dir():
            rows = []
            for split in SPLITS:
                for file in sorted(path.glob(f"{split}*.jsonl")) + sorted(path.glob(f"{split}*.parquet")):
                    rows += [dict(row, split=split) for _, row in read_table(file, REQUIRED)]
            if not rows:
                raise SourceError(f"{path}: no train/validation/test .jsonl or .parquet files")
            return rows
        if path is not None and path.exists():
            return [row for _, row in read_table(path, REQUIRED)]
        from datasets import load_dataset

        loaded = load_dataset(input_path or self.hub_id)
        return [dict(row, split=split) for split, rows in loaded.items() for row in rows]

    def load(self, input_path: str | None, options: LoadOptions) -> LoadResult:
        skipped: Counter[str] = Counter()
        items = []
        for index, row in enumerate(self._rows(input_path)):
            answer = row["llm_answer"]
            spans = []
            for pair in _spans(row["labels"]):
                start, end = int(pair[0]), int(pair[1])
                if 0 <= start < end <= len(answer):
                    spans.append(widen_to_graphemes(answer, start, end))  # never half a character
                else:
                    skipped["span_out_of_range"] += 1
            spans = sorted(set(spans))
            split = {"dev": "validation"}.get(
                str(row.get("split") or "train"), str(row.get("split") or "train")
            )
            key = f"psiloqa::{split}::{row.get('id', index)}"
            items.append(
                {
                    "key": key,
                    "split": split if split in SPLITS else "train",
                    "context": row["wiki_passage"],
                    "question": row["question"],
                    "answer": answer,
                    "spans": spans,
                    "language": str(row.get("lang") or "en"),
                    "metadata": json.dumps(
                        {"model": row.get("model_id"), "wiki_title": row.get("wiki_title")}
                    ),
                }
            )
            if options.limit is not None and len(items) >= options.limit:
                break
        return LoadResult(items=items, documents=len(items), skipped=skipped)

    def stages(self) -> list[Stage]:
        return [ClassifyStage()]

    def run_stages(
        self, runner: Runner, dataset: Dataset, record: Any
    ) -> tuple[Dataset, list[dict[str, Any]]]:
        items = dataset.to_list()
        span_rows = explode_spans(items)
        classified, failed_keys = [], []
        if span_rows:
            result: StageResult = runner.run(Dataset.from_list(span_rows), self.stages()[0])
            record(result)
            classified, failed_keys = result.ok.to_list(), [f.key for f in result.failures]
        counts = {item["key"]: len(item["spans"]) for item in items}
        complete, failed_items = gather_labels(classified, failed_keys, counts)
        finished = []
        for item in items:
            if not item["spans"]:
                finished.append(dict(item, labels=[]))  # a clean answer needs no classification
            elif item["key"] not in failed_items and item["key"] in complete:
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
        return Dataset.from_list(finished) if finished else dataset.select([]), []
