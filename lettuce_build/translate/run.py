"""A translation is a build: each sample and target language is a work item, asked through the
build's backend and request cache (resumable, failure rows with their reasons), and the samples
whose every span came back are written as a build writes its own (``OUT/dataset``, ``OUT/hub``),
with the report of what was kept and dropped per language (``OUT/translation.json``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from datasets import Dataset, DatasetDict, Features, List, Value
from datasets.arrow_writer import ArrowWriter
from huggingface_hub import DatasetCard

from lettuce_build.builds.running.context import open_run
from lettuce_build.builds.settings.run_spec import RunSpec
from lettuce_build.builds.storage.items import WORK_DIR, stored_list
from lettuce_build.builds.storage.output import HUB_DIR, write_output
from lettuce_build.core.languages import NAMES
from lettuce_build.core.schema import (
    FEATURES,
    SPAN_FEATURES,
    HallucinationSample,
    Span,
    default_prompt,
    row_to_sample,
    sample_to_row,
)
from lettuce_build.core.seen_keys import SeenKeys
from lettuce_build.llm.protocol import Backend
from lettuce_build.stages.translation import TranslateAnswerStage, TranslateContextStage
from lettuce_build.translate.report import REPORT_FILE, TranslationOptions, TranslationReport
from lettuce_build.view.validate import read_rows

#: the Hub config of a translation: ``translated-de-fr`` (one config per set of languages)
CONFIG_PREFIX = "translated"


#: a translation's work item: one sample and the language it goes into
ITEM_FEATURES = Features(
    {
        "key": Value("string"),
        "language": Value("string"),
        "source_language": Value("string"),
        "answer": Value("string"),
        "labels": List(SPAN_FEATURES),
        "question": Value("string"),
        "context": Value("string"),
        "sample": Value("string"),
    }
)
#: what a translation asks, in order: the answer with its spans first (the shorter request, and
#: the one most often refused), then the question and context of the answers that came back
STAGES = (TranslateAnswerStage, TranslateContextStage)


def translate(
    options: TranslationOptions, *, backend: Backend | None = None, judges: Sequence[Backend] | None = None
) -> TranslationReport:
    """Translate the samples at ``options.source`` (any layout `validate` reads) into its languages,
    on the models ``options.models`` names (or ``backend`` and ``judges``). With ``verify``, the
    judges read each translated span against its translated context, a span judged supported
    dropping its sample (``judge_supported``)."""
    with open_run(run_spec(options), backend=backend, judges=judges) as run:
        report = TranslationReport.empty(options, run.backend.model_id)
        asked = SeenKeys()  # this run's items: the folder may hold other languages' failures
        scratch = options.out / WORK_DIR
        work = stored_list(_noted(work_items(options, report), asked), scratch, ITEM_FEATURES)
        stages = [kind() for kind in STAGES]
        verify = bool(run.judges)
        checks = {stage.name: check for stage in stages if verify and (check := stage.check())}
        done = run.loop.run(stages, work, checks).done if len(work) else None
        splits = _samples(done, report, run.backend.model_id, scratch) if done is not None else DatasetDict()
        for row in run.build.iter_failures():
            if row.key in asked:
                report.languages[row.key.rsplit("::", 1)[1]].dropped[row.reason] += 1
        out = options.out
        config = "-".join([CONFIG_PREFIX, *options.languages])
        write_output(splits, out, config)
        (out / REPORT_FILE).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
        if (card := out / HUB_DIR / "README.md").exists():  # its YAML (configs, features) stays
            written = DatasetCard.load(card)
            written.text = report.card_text()
            written.save(card)
    report.dollars = run.manifest.cost.dollars  # as the finished manifest counts them
    return report


def run_spec(options: TranslationOptions) -> RunSpec:
    """A translation's run: its folder, seed, limit, price and models."""
    return RunSpec(
        out=options.out,
        source="translate",
        seed=options.seed,
        limit=options.limit,
        pricing=options.pricing,
        models=options.models,
    )


def _key(sample: HallucinationSample) -> str:
    """The sample's own key (a build's rows carry one), else a digest of what it says."""
    key = sample.metadata.get("key")
    if isinstance(key, str) and key:
        return key
    text = json.dumps([sample.prompt, sample.answer], ensure_ascii=False)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def work_items(options: TranslationOptions, report: TranslationReport) -> Iterator[dict[str, Any]]:
    """One work item per readable sample and language, as the samples are read; the rest
    counted by reason."""
    source = options.source
    if (source / "dataset").is_dir():  # a build folder: its dataset (its Hub folder holds the same rows)
        source = source / "dataset"
    seen = SeenKeys()
    for raw in read_rows(source):
        if options.limit is not None and report.rows >= options.limit:
            break
        if raw.data is None or raw.error is not None:
            report.skipped[raw.error.reason if raw.error else "unreadable"] += 1
            continue
        report.rows += 1
        try:
            sample = row_to_sample(raw.data)
        except ValueError:  # pydantic's errors and a metadata that is not JSON
            report.skipped["invalid_row"] += 1
            continue
        key = _key(sample)
        if not seen.add(key):
            report.skipped["duplicate_row"] += 1
            continue
        if sample.language not in NAMES:
            report.skipped[f"unknown_language_{sample.language}"] += 1
            continue
        for code in options.languages:
            if code == sample.language:
                report.skipped[f"already_{code}"] += 1
                continue
            report.languages[code].asked += 1
            yield (
                {
                    "key": f"{key}::{code}",
                    "language": code,
                    "source_language": sample.language,
                    "answer": sample.answer,
                    "labels": [span.model_dump() for span in sample.labels],
                    "question": sample.question,
                    "context": sample.context,
                    "sample": sample.model_dump_json(),
                }
            )


def _noted(items: Iterator[dict[str, Any]], keys: SeenKeys) -> Iterator[dict[str, Any]]:
    for item in items:
        keys.add(item["key"])
        yield item


def _samples(done: Dataset, report: TranslationReport, model: str, scratch: Path) -> DatasetDict:
    """The translated samples by split, each written to ``scratch`` as it is made: each span at
    its new offsets, of its type."""
    scratch.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    with ExitStack() as open_files:
        writers: dict[str, ArrowWriter] = {}
        for row in _translated(done, report, model):
            if (split := row["split"]) not in writers:
                files[split] = scratch / f"translated-{split}.arrow"
                writers[split] = open_files.enter_context(
                    ArrowWriter(path=str(files[split]), features=FEATURES)
                )
            writers[split].write(FEATURES.encode_example(row))
        for writer in writers.values():
            writer.finalize()
    return DatasetDict({split: Dataset.from_file(str(file)) for split, file in files.items()})


def _translated(done: Dataset, report: TranslationReport, model: str) -> Iterator[dict[str, Any]]:
    for item in done:
        sample = HallucinationSample.model_validate_json(item["sample"])
        answer, question, context = (
            item["translated_answer"],
            item["translated_question"],
            item["translated_context"],
        )
        labels = [Span.model_validate(span) for span in item["translated_labels"]]
        translated = sample.model_copy(
            update={
                "prompt": default_prompt(context, question),
                "context": context,
                "question": question,
                "answer": answer,
                "labels": labels,
                "language": item["language"],
                "metadata": sample.metadata
                | {
                    "key": item["key"],
                    "translated_from": item["source_language"],
                    "translation_model": model,
                },
            }
        )
        report.languages[item["language"]].kept += 1
        yield sample_to_row(translated)
