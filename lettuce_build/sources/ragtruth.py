"""RAGTruth: natural hallucinations of real model responses, labels mapped mechanically.

``response.jsonl`` holds responses with character-offset spans and a native split;
``source_info.jsonl`` the prompt, task type (QA, Data2txt, Summary) and source. No
model call: each span's ``label_type`` goes through `map_label(..., "ragtruth")`,
then the entity refinement on its text. A span whose offsets do not match its text
is re-located by its text, else dropped and counted; implicit-true spans (the
annotators marked them as true) are counted and left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lettuce_build.core.errors import SourceError, TaxonomyError
from lettuce_build.core.schema import widen_to_graphemes
from lettuce_build.core.tables import read_jsonl
from lettuce_build.core.taxonomy import map_label, refine_ragtruth
from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Pipeline, Source, StageSettings, Tally

RESPONSE_COLUMNS = ("source_id", "response", "labels", "split")
SOURCE_COLUMNS = ("source_id", "task_type", "source_info", "prompt")


def _context(source_info: Any) -> tuple[str, str]:
    """(context, question) from a source_info value: QA carries a question and passages."""
    if isinstance(source_info, dict):
        question = str(source_info.get("question", ""))
        passages = source_info.get("passages")
        if passages is not None:
            return str(passages), question
        return json.dumps(source_info, ensure_ascii=False, indent=1), question
    return str(source_info), ""


class RagTruthSource(Source):
    name = "ragtruth"
    dataset_name = "ragtruth"
    modality = "prose"

    def _files(
        self, input_path: str | None, tally: Tally
    ) -> tuple[Iterator[dict[str, Any]], list[dict[str, Any]]]:
        if input_path is None:
            raise SourceError(
                "ragtruth: --input is required (a folder with response.jsonl and source_info.jsonl)"
            )
        folder = Path(input_path)
        if folder.is_dir():
            paths = folder / "response.jsonl", folder / "source_info.jsonl"
            for path in paths:
                if not path.exists():
                    raise SourceError(
                        f"{path} is missing; ragtruth needs response.jsonl and source_info.jsonl"
                    )
            responses = (
                row for _, row in read_jsonl(paths[0], RESPONSE_COLUMNS, tally.skip)
            )  # read as needed
            return responses, [row for _, row in read_jsonl(paths[1], SOURCE_COLUMNS, tally.skip)]
        from datasets import load_dataset

        files = {"response": "response.jsonl", "source_info": "source_info.jsonl"}
        loaded = load_dataset(input_path, data_files=files)
        return iter(loaded["response"]), loaded["source_info"].to_list()

    def items(self, input_path: str | None, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        responses, sources = self._files(input_path, tally)
        by_source = {str(s["source_id"]): s for s in sources}
        skipped = tally.skipped
        for number, response in enumerate(responses):
            tally.documents += 1
            source = by_source.get(str(response["source_id"]))
            if source is None:
                skipped["no_source_info"] += 1
                continue
            answer = response["response"]
            context, question = _context(source["source_info"])
            labels = []
            for span in response["labels"] or []:
                if span.get("implicit_true"):
                    skipped["implicit_true_span"] += 1
                    continue
                start, end, text = int(span["start"]), int(span["end"]), span.get("text") or ""
                if answer[start:end] != text:
                    found = answer.find(text) if text else -1
                    if found < 0:
                        skipped["span_text_mismatch"] += 1
                        continue
                    start, end = found, found + len(text)
                start, end = widen_to_graphemes(answer, start, end)  # never half a character
                text = answer[start:end]
                try:
                    mapped = refine_ragtruth(map_label(span["label_type"], "ragtruth"), text, context)
                except TaxonomyError as err:
                    raise SourceError(f"ragtruth response {response.get('id')}: {err}") from err
                labels.append(
                    {
                        "start": start,
                        "end": end,
                        "text": text,
                        "label": span["label_type"],
                        "category": mapped.category,
                        "subcategory": mapped.subcategory,
                    }
                )
            labels.sort(key=lambda s: (s["start"], s["end"]))
            kept: list[dict[str, Any]] = []
            for span in labels:  # annotators' overlapping spans: the earlier one stays
                if kept and span["start"] < kept[-1]["end"]:
                    skipped["overlapping_span"] += 1
                    continue
                kept.append(span)
            yield {
                "key": f"ragtruth::{response.get('id', number)}",
                "split": "test" if response["split"] == "test" else "train",
                "prompt": source["prompt"],
                "context": context,
                "question": question,
                "answer": answer,
                "labels": kept,
                "task_type": source["task_type"],
                "language": "en",
                "metadata": {
                    "source_id": str(response["source_id"]),
                    "model": response.get("model"),
                    "quality": response.get("quality"),
                },
            }

    def pipeline(self, settings: StageSettings = DEFAULT_SETTINGS) -> Pipeline:
        return Pipeline(inject=[])  # mechanical mapping: no model call
