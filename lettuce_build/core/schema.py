"""The sample schema shared by every source: pydantic models, declared `Features`, invariants.

Offsets: every ``Span.start``/``Span.end`` is a Python string offset, i.e. a
count of Unicode code points into ``answer`` (not bytes, not UTF-16 units,
not grapheme clusters). ``answer[start:end] == text`` holds for every span.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

import regex
from datasets import ClassLabel, Features, List, Value
from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from lettuce_build.core.characters import invalid_character
from lettuce_build.core.taxonomy import (
    DEFAULT_TAXONOMY,
    INJECTABLE_CATEGORIES,
    Taxonomy,
    sample_category,
)

Split = Literal["train", "validation", "test"]
SPLITS: tuple[str, ...] = ("train", "validation", "test")
SPLIT_ALIASES = {"dev": "validation", "valid": "validation", "val": "validation"}


def normal_split(value: object) -> str:
    """An input's split name as one of `SPLITS`: aliases mapped (``dev`` is ``validation``),
    a missing or unknown one ``train``."""
    split = str(value or "train")
    split = SPLIT_ALIASES.get(split, split)
    return split if split in SPLITS else "train"


ContextModality = Literal["code", "tool_output", "markdown", "prose"]


class Span(BaseModel):
    """One labelled span of the answer; offsets are code-point offsets into the answer."""

    model_config = ConfigDict(extra="forbid")

    # strict: an offset given as "4" or 4.0 is a broken row, never silently coerced
    start: Annotated[int, Strict()]
    end: Annotated[int, Strict()]
    text: str
    label: str = Field(description="the native label the span was produced with (menu type, etc.)")
    category: str
    subcategory: str | None = None


class HallucinationSample(BaseModel):
    """One row of a published dataset. Clean samples have no labels and a null category."""

    model_config = ConfigDict(extra="forbid")

    prompt: str
    context: str
    question: str
    answer: str
    labels: list[Span] = Field(default_factory=list)
    split: Split
    task_type: str
    dataset: str
    language: str = "en"
    context_modality: ContextModality
    category: str | None = None
    subcategory: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


CATEGORY_FEATURE = ClassLabel(names=list(INJECTABLE_CATEGORIES))

SPAN_FEATURES = {
    "start": Value("int32"),
    "end": Value("int32"),
    "text": Value("string"),
    "label": Value("string"),
    "category": Value("string"),
    "subcategory": Value("string"),
}

#: Declared, never inferred. Spans are a `List` of structs (a `Sequence` of a dict would
#: turn into a dict of lists); metadata is a JSON string so every source shares one schema.
FEATURES = Features(
    {
        "prompt": Value("string"),
        "context": Value("string"),
        "question": Value("string"),
        "answer": Value("string"),
        "labels": List(SPAN_FEATURES),
        "split": Value("string"),
        "task_type": Value("string"),
        "dataset": Value("string"),
        "language": Value("string"),
        "context_modality": Value("string"),
        "category": CATEGORY_FEATURE,
        "subcategory": Value("string"),
        "metadata": Value("string"),
    }
)

COLUMNS: tuple[str, ...] = tuple(FEATURES)
#: the default prompt puts the request first: a detector that truncates a long input keeps it
PROMPT_PREFIX = "Question: "
_GRAPHEME = regex.compile(r"\X")
_CRLF = regex.compile(r"\r\n")


def default_prompt(context: str, question: str) -> str:
    """The prompt of every source that has none of its own (RAGTruth keeps its native prompts,
    which ask first too)."""
    return f"{PROMPT_PREFIX}{question}\n\nContext:\n{context}"


def request_first(prompt: str, question: str, context: str) -> bool:
    """Whether the prompt states its question before its context (a question or context it does
    not hold verbatim is not judged: RAGTruth's summaries carry their task in the prompt)."""
    asked, given = prompt.find(question), prompt.find(context)
    return not question or not context or asked == -1 or given == -1 or asked <= given


def grapheme_boundaries(text: str) -> set[int]:
    """Offsets where a user-perceived character starts or ends (a span edge must be one)."""
    if text.isascii():  # every offset but the middle of a \r\n: the common case, without \X
        return set(range(len(text) + 1)).difference(m.start() + 1 for m in _CRLF.finditer(text))
    return {0, *(m.end() for m in _GRAPHEME.finditer(text))}


def widen_to_graphemes(text: str, start: int, end: int) -> tuple[int, int]:
    """A natural span (annotators' offsets) widened to whole user-perceived characters."""
    boundaries = sorted(grapheme_boundaries(text))
    return max(b for b in boundaries if b <= start), min(b for b in boundaries if b >= end)


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no encoding, no file, no tokenizer takes it
        return False
    return True


def sample_to_row(sample: HallucinationSample) -> dict[str, Any]:
    """A sample as a row of `FEATURES` (category as its ClassLabel id, metadata as JSON)."""
    row = sample.model_dump(mode="python")
    row["category"] = None if sample.category is None else CATEGORY_FEATURE.str2int(sample.category)
    row["metadata"] = json.dumps(sample.metadata, ensure_ascii=False, sort_keys=True)
    return row


def row_to_sample(row: dict[str, Any]) -> HallucinationSample:
    """The inverse of `sample_to_row`; also accepts a category given by name (JSONL input)."""
    data = dict(row)
    category = data.get("category")
    if isinstance(category, int) and not isinstance(category, bool):
        data["category"] = CATEGORY_FEATURE.int2str(category)
    metadata = data.get("metadata")
    if isinstance(metadata, str):
        data["metadata"] = json.loads(metadata) if metadata else {}
    return HallucinationSample.model_validate(data)


class Violation(BaseModel):
    """One broken invariant: which field of which row, a stable reason code and a readable message."""

    row: int | None = None
    field: str
    reason: str
    message: str

    def __str__(self) -> str:
        where = f"row {self.row}: " if self.row is not None else ""
        return f"{where}{self.field}: {self.reason} - {self.message}"


def read_sample(row: dict[str, Any]) -> HallucinationSample | Violation:
    """A row as a sample, or the first thing wrong with it (a field of the wrong type or missing,
    metadata that is no JSON, a category id out of range)."""
    try:
        return row_to_sample(row)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(row)"
        return Violation(field=field, reason="schema", message=first["msg"])
    except ValueError as err:
        return Violation(field="metadata/category", reason="undecodable", message=str(err))


def check_sample(
    sample: HallucinationSample, taxonomy: Taxonomy = DEFAULT_TAXONOMY, row: int | None = None
) -> list[Violation]:
    """Every invariant a published row must satisfy, as a list of violations (empty when valid)."""
    found: list[Violation] = []

    def add(field: str, reason: str, message: str) -> None:
        found.append(Violation(row=row, field=field, reason=reason, message=message))

    answer = sample.answer
    for field in ("prompt", "context", "question", "answer"):
        text = getattr(sample, field)
        if not _is_unicode(text):
            add(field, "not_unicode", "holds a lone surrogate (not encodable as UTF-8)")
        elif problem := invalid_character(text):
            add(field, "invalid_characters", f"holds {problem} (control, bidi or zero-width)")
    if not answer.strip():
        add("answer", "empty_answer", "the answer is empty")
    if sample.prompt.startswith(PROMPT_PREFIX) and sample.prompt != default_prompt(
        sample.context, sample.question
    ):
        add(
            "prompt",
            "prompt_mismatch",
            "a 'Question:' prompt must be exactly the row's question and context in the template "
            "'Question: {question}\\n\\nContext:\\n{context}'",
        )
    if not request_first(sample.prompt, sample.question, sample.context):
        add("prompt", "request_after_context", "the question must come before the context in the prompt")
    boundaries = grapheme_boundaries(answer) if sample.labels else set()
    previous_end = -1
    for i, span in enumerate(sample.labels):
        where = f"labels[{i}]"
        if not 0 <= span.start <= span.end <= len(answer):
            add(
                where,
                "span_out_of_range",
                f"[{span.start}, {span.end}) must satisfy 0 <= start < end <= {len(answer)} "
                "(len(answer), in code points)",
            )
        elif span.start == span.end:
            add(
                where,
                "empty_span",
                f"[{span.start}, {span.end}) marks no character: a span needs start < end",
            )
        elif answer[span.start : span.end] != span.text:
            add(
                f"{where}.text",
                "text_mismatch",
                f"answer[{span.start}:{span.end}] is {answer[span.start : span.end]!r} "
                f"but text is {span.text!r}",
            )
        elif span.start not in boundaries or span.end not in boundaries:
            add(
                where,
                "splits_grapheme",
                f"[{span.start}, {span.end}) cuts a character apart (a base letter from its combining marks)",
            )
        if span.start < previous_end:
            add(
                where,
                "overlapping_or_unsorted_labels",
                f"starts at {span.start} before the previous span ends at {previous_end}",
            )
        previous_end = max(previous_end, span.end)
        if span.category not in INJECTABLE_CATEGORIES:
            add(
                f"{where}.category",
                "unknown_category",
                f"{span.category!r} is not allowed; allowed: {list(INJECTABLE_CATEGORIES)}",
            )
        elif not taxonomy.is_valid(span.category, span.subcategory):
            add(
                f"{where}.subcategory",
                "unknown_subcategory",
                f"{span.subcategory!r} is not a subcategory of {span.category}; "
                f"allowed: {sorted(taxonomy.subcategories[span.category])} or null",
            )

    expected = sample_category([(s.category, s.subcategory) for s in sample.labels])
    if not sample.labels:
        if sample.category is not None or sample.subcategory is not None:
            add(
                "category",
                "clean_sample_with_category",
                "a sample without labels must have null category and subcategory, "
                f"got {sample.category!r}/{sample.subcategory!r}",
            )
    elif (sample.category, sample.subcategory) != (expected.category, expected.subcategory):
        add(
            "category",
            "category_mismatch",
            f"the spans give {expected.category!r}/{expected.subcategory!r} "
            f"(majority rule), the sample says {sample.category!r}/{sample.subcategory!r}",
        )
    return found
