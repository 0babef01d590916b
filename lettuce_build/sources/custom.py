"""Your own data (``--source custom``): rows of a context, with the question, the answer and
labelled spans where you have them; what a row lacks is generated.

Input: a JSONL, JSON, CSV or parquet file, a Hub dataset id, rows in memory
(``lettuce_build.build("custom", input=rows)``), a RAGTruth folder (``response.jsonl`` and
``source_info.jsonl``), or a folder of documents (``.md``, ``.txt``, ``.rst``), each cut into
chunks the stages read whole (paragraphs kept together; nothing dropped).

Columns (``--columns context=passage,question=query`` maps other names): ``context`` (text, or
a list of passages), and optional ``question``, ``answer``, ``id``, ``split``, ``modality``
(prose, markdown, code, tool_output), ``language``, ``metadata`` and ``labels`` (character spans
over the answer: ``start``, ``end``, and ``category`` with an optional ``subcategory`` of the
taxonomy, or a RAGTruth ``label_type``).

- A row without a question gets one (the question stage); without an answer, a grounded one
  (the answer stage). A given question is published as written; a given answer is the clean
  answer only if the support gate (and, with ``--verify``, the judge) finds it supported, else
  its row is a failure with the reason.
- A row with ``labels`` is published as labelled, beside the generated rows (its metadata says
  ``origin: given``); its spans are checked (offsets, types), never re-typed.
- A row that cannot be used (no context, an empty one, a label out of range or of an unknown
  type, a mapped column it lacks, a context longer than the stages read when it carries its own
  question or answer) is skipped, counted and named with its file and row; with
  ``--strict-input`` the build stops before any model call instead.
- Splits are the rows' own (``dev`` is ``validation``), or drawn per document by the seeded hash.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

from datasets import Dataset, concatenate_datasets

from lettuce_build.core.error_types import allows, targets
from lettuce_build.core.errors import SourceError, TaxonomyError
from lettuce_build.core.schema import SPLIT_ALIASES, SPLITS, ContextModality, HallucinationSample
from lettuce_build.core.seeding import fraction
from lettuce_build.core.tables import read_input
from lettuce_build.core.taxonomy import DEFAULT_TAXONOMY, map_label
from lettuce_build.formats.ragtruth import RagTruthFormat
from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Pipeline, Source, StageSettings, Tally
from lettuce_build.sources.chunking import hash_split, packed
from lettuce_build.sources.documents import decode_document, is_markdown
from lettuce_build.stages.answers import DEFAULT_EVIDENCE_CHARS
from lettuce_build.stages.given import (
    TypedGenerateStage,
    given_answer_stage,
    given_question_stage,
    inject_stage,
)
from lettuce_build.stages.prose_edits import rule_edits

#: the columns a row may have (by these names, or mapped with ``--columns``)
COLUMNS = ("context", "question", "answer", "id", "split", "modality", "language", "metadata", "labels")
#: a context is read whole by the stages up to this length; a longer one is chunked (a row with
#: only a context) or skipped (a row whose question or answer was written for all of it)
MAX_CONTEXT_CHARS = DEFAULT_EVIDENCE_CHARS
#: the question types drawn for generated questions (a custom row may be about anything)
QUESTION_TYPES = ("Definition", "Feature Specification", "Quantification", "Verification")


@functools.lru_cache(maxsize=8)  # one set of types a build, asked for by each of its items
def _targets(types: tuple[str, ...]) -> list[tuple[str, str]]:
    return targets(types)


class CustomSource(Source):
    name = "custom"
    dataset_name = "custom"
    modality = "prose"
    own_options = ("intensity", "columns")
    donors = True

    def items(self, input_path: str | None, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        if input_path is None:
            raise SourceError(
                "custom: --input is required (a JSONL, JSON, CSV or parquet file, a folder of documents, "
                "a RAGTruth folder or a Hub dataset id)"
            )
        path = Path(input_path)
        if RagTruthFormat.is_export(path):
            rows: Iterator[tuple[str, dict[str, Any]]] = _ragtruth_rows(path, tally)
        elif path.is_dir():
            yield from self._documents(path, options, tally)
            return
        else:
            rows = _table_rows(input_path, options.columns, tally)
        for where, row in rows:
            tally.documents += 1
            yield from self._items(where, row, options, tally)

    def _items(
        self, where: str, row: dict[str, Any], options: LoadOptions, tally: Tally
    ) -> Iterator[dict[str, Any]]:
        """The work items of one row (several when its context alone is chunked), or none, the
        row skipped with its reason."""
        given = _given(where, row, tally)
        if given is None:
            return
        doc = str(given["id"]) if given["id"] is not None else where
        split = given["split"] or hash_split(doc)
        chunks = [given["context"]]
        if len(given["context"]) > MAX_CONTEXT_CHARS:
            if given["question"] or given["answer"] or given["labels"] is not None:
                tally.skip(
                    "context_too_long",
                    where,
                    f"context: {len(given['context']):,} characters; expected at most {MAX_CONTEXT_CHARS:,} "
                    "(what the stages read) for a row with its own question or answer",
                )
                return
            chunks = packed(given["context"], MAX_CONTEXT_CHARS)
        labels = given["labels"]
        if labels is not None and not all(
            allows(options.error_types, s["category"], s["subcategory"]) for s in labels
        ):
            tally.skip("label_type_not_asked", where, f"labels: expected only {options.error_types}")
            return
        for index, chunk in enumerate(chunks):
            key = f"custom::{doc}" + (f"::{index}" if len(chunks) > 1 else "")
            yield self._item(key, split, context=chunk, given=given, options=options)

    def _item(
        self, key: str, split: str, *, context: str, given: dict[str, Any], options: LoadOptions
    ) -> dict[str, Any]:
        kinds = _targets(tuple(options.error_types))
        category, subcategory = kinds[int(fraction(options.seed, key, "target") * len(kinds))]
        pick = int(fraction(options.seed, key, "question_type") * len(QUESTION_TYPES))
        given_fields = [name for name in ("question", "answer", "labels") if given[name] not in (None, "")]
        metadata = {**given["metadata"], "given": given_fields}
        if given["labels"] is not None:
            metadata["origin"] = "given"
        return {
            "key": key,
            "split": split,
            "context": context,
            "chunk": context,
            "question_type": QUESTION_TYPES[pick],
            "given_question": given["question"],
            "given_answer": given["answer"],
            "given_labels": json.dumps(given["labels"] or []),
            "prelabelled": given["labels"] is not None,
            "modality": given["modality"],
            "language": given["language"] or options.language,
            "target_category": category,
            "target_subcategory": subcategory,
            "metadata": metadata,
        }

    def _documents(self, folder: Path, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        """A folder of documents: each chunked, each chunk a row with only its context."""
        names = sorted(
            str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and is_markdown(p.name)
        )
        if not names:
            raise SourceError(f"{folder}: no .md, .txt or .rst documents inside")
        for name in names:
            text, why = decode_document((folder / name).read_bytes())
            if text is None:
                tally.skip(str(why), f"{folder}/{name}", "expected a UTF-8 text document")
                continue
            tally.documents += 1
            chunks = packed(text, MAX_CONTEXT_CHARS)
            given = {**_EMPTY, "modality": "markdown" if name.endswith((".md", ".rst")) else "prose"}
            for index, chunk in enumerate(chunks):
                yield self._item(
                    f"custom::{name}::{index}", hash_split(name), context=chunk, given=given, options=options
                )

    def pipeline(self, settings: StageSettings = DEFAULT_SETTINGS) -> Pipeline:
        extractive = settings.answers == "extractive"
        inject = inject_stage(
            settings.answers,
            settings.edit_anchors,
            allowed=settings.error_types,
            intensity=settings.intensity,
            seed=settings.seed,
        )
        editable = rule_edits(inject, asked=settings.edits_asked)
        asked = [
            given_question_stage(settings.answers, seed=settings.seed, editable=editable),
            given_answer_stage(settings.answers, focused=extractive, editable=editable),
        ]
        written = [
            given_question_stage(settings.answers, seed=settings.seed),
            given_answer_stage(settings.answers, focused=extractive),
        ]
        generate = TypedGenerateStage(allowed=settings.error_types, seed=settings.seed)
        return Pipeline(inject=[*asked, inject], generate=[*written, generate])

    def prepare(self, items: Dataset) -> Dataset:
        """The rows the stages work on: those that came without labels."""
        flags = items["prelabelled"][:]
        return items.select([i for i, labelled in enumerate(flags) if not labelled])

    def finish(self, items: Dataset, done: Dataset) -> Dataset:
        """What the stages made, and the labelled rows as they came."""
        flags = items["prelabelled"][:]
        given = items.select([i for i, labelled in enumerate(flags) if labelled])
        if not len(given):
            return done
        rows = [
            {
                **{column: None for column in done.column_names},
                **{column: row[column] for column in done.column_names if column in row},
                "question": row["given_question"],
                "answer": row["given_answer"],
                "labels": json.loads(row["given_labels"]),
            }
            for row in given.to_list()
        ]
        return concatenate_datasets([done, Dataset.from_list(rows, features=done.features)])

    def sample(self, row: dict[str, Any]) -> HallucinationSample:
        sample = super().sample(row)
        return sample.model_copy(update={"context_modality": row.get("modality") or self.modality})


_EMPTY: dict[str, Any] = {
    "context": "",
    "question": "",
    "answer": "",
    "id": None,
    "split": None,
    "modality": "prose",
    "language": None,
    "metadata": {},
    "labels": None,
}


def _table_rows(
    input_path: str, columns: dict[str, str], tally: Tally
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, row with our column names) of a file or a Hub dataset; a row that lacks a mapped
    column is skipped and named."""
    unknown = sorted(set(columns) - set(COLUMNS))
    if unknown:
        raise SourceError(f"--columns {unknown}: expected names among {list(COLUMNS)}")
    name = Path(input_path).name if Path(input_path).exists() else input_path
    for number, row in enumerate(read_input(input_path, skip=tally.skip), start=1):
        where = f"{name} row {number}"
        missing = [f"{theirs} (for {ours})" for ours, theirs in columns.items() if theirs not in row]
        if missing:
            tally.skip("missing_column", where, f"no column {', '.join(missing)}; it has {sorted(row)}")
            continue
        renamed = {ours: row[theirs] for ours, theirs in columns.items()}
        yield where, {**{k: v for k, v in row.items() if k not in columns.values()}, **renamed}


def _ragtruth_rows(folder: Path, tally: Tally) -> Iterator[tuple[str, dict[str, Any]]]:
    """A RAGTruth folder's responses as rows of ours, with their labels."""
    for found in RagTruthFormat().read(folder):
        if found.row is None:
            assert found.problem is not None
            tally.skip(found.problem.reason, found.where, f"{found.problem.field}: {found.problem.message}")
            continue
        row = found.row
        yield found.where, {**row, "modality": row["context_modality"], "id": Path(found.where).name}


def _given(where: str, row: dict[str, Any], tally: Tally) -> dict[str, Any] | None:
    """What a row gives, checked (every column of `_EMPTY`); None when it cannot be used, the
    row skipped with its reason."""

    def skip(reason: str, message: str) -> dict[str, Any] | None:
        """The row skipped: what `_given` returns for it."""
        tally.skip(reason, where, message)
        return None

    context = row.get("context")
    if isinstance(context, list) and all(isinstance(p, str) for p in context):
        context = "\n\n".join(context)
    if context is None:
        return skip("no_context", f"expected a context column; the row has {sorted(row)}")
    if not isinstance(context, str):
        return skip(
            "not_a_string", f"context: expected text or a list of passages, got {type(context).__name__}"
        )
    if not context.strip():
        return skip("empty_context", "context: expected some text")
    given = {**_EMPTY, "context": context}
    for name in ("question", "answer", "language"):
        value = row.get(name)
        if value is not None and not isinstance(value, str):
            return skip("not_a_string", f"{name}: expected text, got {type(value).__name__}")
        if name == "language":
            given[name] = value
        else:  # as written; text that is all blank counts as absent
            given[name] = value if value and value.strip() else ""
    given["id"] = row.get("id")
    split = row.get("split")
    if split not in (None, ""):
        split = SPLIT_ALIASES.get(str(split), str(split))
        if split not in SPLITS:
            return skip(
                "unknown_split", f"split: {row.get('split')!r}; expected one of {list(SPLITS)} (or dev)"
            )
        given["split"] = split
    modality = row.get("modality") or "prose"
    if modality not in get_args(ContextModality):
        return skip(
            "unknown_modality", f"modality: {modality!r}; expected one of {list(get_args(ContextModality))}"
        )
    given["modality"] = modality
    metadata = row.get("metadata") or {}
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata)
        except json.JSONDecodeError:
            metadata = None
    if not isinstance(metadata, dict):
        return skip("bad_metadata", "metadata: expected a JSON object")
    given["metadata"] = metadata
    if row.get("labels") is not None:
        labels = _labels(row["labels"], given["answer"], skip)
        if labels is None:
            return None
        given["labels"] = labels
    return given


def _labels(raw: Any, answer: str, skip: Any) -> list[dict[str, Any]] | None:
    """A row's labelled spans as ours, or None (the row skipped with the reason)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return skip("bad_labels", "labels: expected a JSON list of spans")
    if not answer:
        return skip("labels_without_answer", "labels: spans need the answer they point into")
    if not isinstance(raw, list):
        return skip("bad_labels", f"labels: expected a list of spans, got {type(raw).__name__}")
    spans = []
    for i, span in enumerate(raw):
        start, end = (span.get("start"), span.get("end")) if isinstance(span, dict) else (None, None)
        if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
            return skip("bad_labels", f"labels[{i}]: expected an object with integer start and end")
        if not 0 <= start < end <= len(answer):
            return skip(
                "label_out_of_range",
                f"labels[{i}]: [{start}, {end}) is outside the answer (0..{len(answer)})",
            )
        text = span.get("text")
        if text is not None and text != answer[start:end]:
            return skip(
                "label_text_mismatch", f"labels[{i}]: {text!r} is not the answer's {answer[start:end]!r}"
            )
        kind = _span_type(span)
        if kind is None:
            known = ", ".join(DEFAULT_TAXONOMY.categories)
            return skip(
                "unknown_label_type",
                f"labels[{i}]: expected a category of the taxonomy ({known}) or a RAGTruth label_type",
            )
        category, subcategory = kind
        label = str(span.get("label") or span.get("label_type") or category)
        spans.append(
            {
                "start": start,
                "end": end,
                "text": answer[start:end],
                "label": label,
                "category": category,
                "subcategory": subcategory,
            }
        )
    return sorted(spans, key=lambda s: s["start"])


def _span_type(span: dict[str, Any]) -> tuple[str, str | None] | None:
    """A span's (category, subcategory): ours by name, or a RAGTruth label type mapped."""
    category, subcategory = span.get("category"), span.get("subcategory")
    if isinstance(category, str) and DEFAULT_TAXONOMY.is_valid(category, subcategory):
        return category, subcategory
    native = span.get("label_type") or span.get("label")
    if not isinstance(native, str) or category is not None:
        return None
    try:
        mapped = map_label(native, "ragtruth")
    except TaxonomyError:
        return None
    return (mapped.category, mapped.subcategory) if not mapped.document_level else None
