"""What a source is: a loader of work items, its stages, and how a finished row becomes a sample."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from datasets import Dataset
from pydantic import BaseModel, Field

from lettuce_build.runner import Runner, Stage, StageResult
from lettuce_build.schema import HallucinationSample, Span, default_prompt
from lettuce_build.tables import TableError
from lettuce_build.taxonomy import sample_category


class SourceError(TableError):
    """Input a source cannot load, with the file, line or column and what was expected."""


class LoadOptions(BaseModel):
    limit: int | None = None
    ratio: float = 0.5
    seed: int = 0
    language: str = "en"
    #: where sources that need repositories (code) clone them from, and where to keep clones
    repo_url: str = "https://github.com/{repo}.git"
    work_dir: Path | None = None


class LoadResult(BaseModel):
    items: list[dict[str, Any]]
    documents: int = 0
    skipped: Counter[str] = Field(default_factory=Counter)


class CardMetadata(BaseModel):
    pretty_name: str
    description: str
    upstream: str
    languages: list[str]
    task_types: list[str]


class Source(ABC):
    """One builder per source. Work items carry at least ``key``, ``split``, ``context`` and
    ``inject``; `sample` turns an item that went through every stage into a published row."""

    name: ClassVar[str]
    dataset_name: ClassVar[str]
    modality: ClassVar[str]
    task_type: ClassVar[str] = "qa"
    card: ClassVar[CardMetadata]

    @abstractmethod
    def load(self, input_path: str | None, options: LoadOptions) -> LoadResult: ...

    @abstractmethod
    def stages(self) -> list[Stage]: ...

    def run_stages(
        self, runner: Runner, dataset: Dataset, record: Callable[[StageResult], None]
    ) -> tuple[Dataset, list[dict[str, Any]]]:
        """Run the stages in order, recording each. Returns the finished rows, and the rows whose
        injection failed (each with its ``fallback_reason``), which a build may keep as clean samples."""
        injection_failed: list[dict[str, Any]] = []
        for stage in self.stages():
            result = runner.run(dataset, stage)
            record(result)
            if stage.name == "inject" and result.failures:
                failed = {f.key: f.reason for f in result.failures}
                injection_failed = [
                    dict(row, inject=False, fallback_reason=failed[row["key"]])
                    for row in dataset.to_list()
                    if row["key"] in failed
                ]
            dataset = result.ok
        return dataset, injection_failed

    def sample(self, row: dict[str, Any]) -> HallucinationSample:
        """A finished row as a sample. Injected rows take the hallucinated answer and its spans; other
        rows keep the spans they arrived with (RAGTruth, PsiloQA), or none."""
        hallucinated = bool(row.get("inject")) and row.get("hallucinated_answer") is not None
        answer = row["hallucinated_answer"] if hallucinated else row["answer"]
        labels = [Span.model_validate(s) for s in row.get("labels") or []]
        verdict = sample_category([(s.category, s.subcategory) for s in labels])
        metadata = json.loads(row["metadata"]) if row.get("metadata") else {}
        if hallucinated and row.get("injection"):
            metadata["injection"] = json.loads(row["injection"])
        return HallucinationSample(
            prompt=row.get("prompt") or default_prompt(row["context"], row["question"]),
            context=row["context"],
            question=row["question"],
            answer=answer,
            labels=labels,
            split=row["split"],
            task_type=row.get("task_type") or self.task_type,
            dataset=self.dataset_name,
            language=row.get("language") or "en",
            context_modality=self.modality,
            category=verdict.category,
            subcategory=verdict.subcategory,
            metadata=metadata,
        )
