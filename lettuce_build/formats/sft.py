"""Chat rows for a generative detector: the context, the question and the answer to check in, the
answer's hallucinated spans out, quoted and typed.

Each row holds ``messages`` (system: the task and our taxonomy; user: the prompt, then
``Answer to verify:`` and the answer, the layout LettuceDetect's generative detector reads; assistant:
``{"hallucinated_spans": [{"text", "category", "subcategory"}]}``, the spans in answer order,
empty for a clean answer), with ``split``, ``dataset`` and ``metadata`` beside it (a trainer
that reads ``messages`` ignores them). ``metadata.answer_chars`` says where the answer starts in
the user message, and ``metadata.span_starts`` each span's offset, so that reading the export
back restores the spans exactly; a reader that locates a span by its first occurrence in the
answer misplaces one whose text comes earlier too (the export counts them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from lettuce_build.core.schema import HallucinationSample, normal_split
from lettuce_build.core.taxonomy import BUILTIN_SUBCATEGORIES, CATEGORY_DEFINITIONS, INJECTABLE_CATEGORIES
from lettuce_build.formats import base

ANSWER_MARK = "\n\nAnswer to verify:\n"


def system_prompt() -> str:
    """The detector's instructions: what a hallucinated span is, the taxonomy, the reply's form."""
    lines = [
        "Find the hallucinated spans of the answer: the parts the context does not support. The "
        "context is the only evidence; what it states or implies is supported.",
        "Quote each hallucinated span exactly as it stands in the answer and give its category and "
        "subcategory:",
    ]
    for category in INJECTABLE_CATEGORIES:
        lines.append(f"- {category}: {CATEGORY_DEFINITIONS[category]}")
        for name, meaning in BUILTIN_SUBCATEGORIES[category].items():
            lines.append(f"  - {name}: {meaning}")
    lines.append(
        'Reply with JSON only: {"hallucinated_spans": [{"text": "...", "category": "...", '
        '"subcategory": "..."}]}, and {"hallucinated_spans": []} when every part is supported.'
    )
    return "\n".join(lines)


def to_record(sample: HallucinationSample, system: str) -> dict[str, Any]:
    spans = sorted(sample.labels, key=lambda span: span.start)
    reply = {
        "hallucinated_spans": [
            {"text": span.text, "category": span.category, "subcategory": span.subcategory} for span in spans
        ]
    }
    metadata = {
        **sample.metadata,
        "answer_chars": len(sample.answer),
        "span_starts": [span.start for span in spans],
        "span_labels": [span.label for span in spans],
        "sample": {
            "context": sample.context,
            "question": sample.question,
            "task_type": sample.task_type,
            "language": sample.language,
            "context_modality": sample.context_modality,
        },
    }
    return {
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": f"{sample.prompt}{ANSWER_MARK}{sample.answer}"},
            {"role": "assistant", "content": json.dumps(reply, ensure_ascii=False)},
        ],
        "split": sample.split,
        "dataset": sample.dataset,
        "metadata": metadata,
    }


def misplaced_by_first_match(sample: HallucinationSample) -> int:
    """Spans whose text occurs earlier in the answer than the span itself."""
    return sum(sample.answer.find(span.text) < span.start for span in sample.labels)


class SftFormat(base.ExportFormat):
    name = "sft"
    summary = "chat rows (messages) for a generative detector: the answer's spans quoted and typed"

    def write(self, samples: Iterable[HallucinationSample], out: Path) -> base.ExportCounts:
        counts, system, misplaced = base.ExportCounts(), system_prompt(), 0
        with out.open("w", encoding="utf-8") as file:
            for sample in samples:
                file.write(base.json_line(to_record(sample, system)))
                misplaced += misplaced_by_first_match(sample)
                counts.add(sample)
        if misplaced:
            counts.notes.append(
                f"{misplaced} span(s) quote text that occurs earlier in their answer: a reader that "
                "locates spans by first match misplaces them (metadata.span_starts has the offsets)"
            )
        return counts

    def read(self, path: Path) -> Iterator[base.Foreign]:
        for where, record in base.records(path):
            yield base.Foreign(where, problem=record) if not isinstance(record, dict) else _row(where, record)

    def recognises(self, record: dict[str, Any]) -> bool:
        return isinstance(record.get("messages"), list)


def _row(where: str, record: dict[str, Any]) -> base.Foreign:
    messages = record.get("messages")
    roles = [m.get("role") for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    if roles != ["system", "user", "assistant"]:
        return base.bad(
            where, "messages", "not_a_chat", f"expected system, user and assistant turns, got {roles}"
        )
    assert isinstance(messages, list)
    user, reply = str(messages[1].get("content") or ""), str(messages[2].get("content") or "")
    metadata = dict(record.get("metadata") or {})
    answer_chars = metadata.pop("answer_chars", None)
    starts = metadata.pop("span_starts", [])
    labels = metadata.pop("span_labels", [])
    sample = metadata.pop("sample", {})
    if not isinstance(answer_chars, int) or not user[: len(user) - answer_chars].endswith(ANSWER_MARK):
        message = "expected the answer's length, the answer ending the user turn"
        return base.bad(where, "metadata.answer_chars", "no_answer", message)
    answer = user[len(user) - answer_chars :]
    try:
        quoted = json.loads(reply)["hallucinated_spans"]
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        return base.bad(where, "messages[2]", "not_a_reply", f"expected a hallucinated_spans object ({err})")
    if not isinstance(quoted, list) or len(quoted) != len(starts) or len(labels) != len(starts):
        message = "expected one offset and label per quoted span"
        return base.bad(where, "metadata.span_starts", "span_count", message)
    spans = []
    for span, start, label in zip(quoted, starts, labels, strict=True):
        text = str(span.get("text") or "") if isinstance(span, dict) else ""
        spans.append(
            {
                "start": start,
                "end": start + len(text) if isinstance(start, int) else None,
                "label": label,
                "category": span.get("category") if isinstance(span, dict) else None,
                "subcategory": span.get("subcategory") if isinstance(span, dict) else None,
            }
        )
    checked = base.checked_spans(answer, spans, where)
    if isinstance(checked, base.Foreign):
        return checked
    if any(span["text"] != str(quoted[i].get("text")) for i, span in enumerate(checked)):
        message = "a quoted span is not the answer's text at its offset"
        return base.bad(where, "messages[2]", "span_text_mismatch", message)
    return base.Foreign(
        where,
        row=base.categorised(
            {
                "prompt": user[: len(user) - answer_chars - len(ANSWER_MARK)],
                "context": str(sample.get("context") or ""),
                "question": str(sample.get("question") or ""),
                "answer": answer,
                "labels": checked,
                "split": normal_split(record.get("split")),
                "task_type": str(sample.get("task_type") or "qa"),
                "dataset": str(record.get("dataset") or "(unknown)"),
                "language": str(sample.get("language") or "en"),
                "context_modality": str(sample.get("context_modality") or "prose"),
                "category": None,
                "metadata": metadata,
            }
        ),
    )
