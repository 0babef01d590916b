"""Generator mode: the model writes the hallucinated answer itself; spans are recovered afterwards.

Injection applies edits, so its spans are exact by construction. Generation asks for an answer
to the item's question holding a requested number of hallucinations of given taxonomy types,
and for a report of each (its type and the hallucinated phrase). It reads more naturally, and
its spans are approximate:

- ``diff``: a character-level diff against the item's clean answer marks what the generated
  answer inserted or replaced (widened to whole words; deletions leave nothing to mark);
- ``located``: when the generated answer shares too little with the clean one for a diff to mean
  anything (similarity below `MIN_DIFF_SIMILARITY`), the reported phrases, found in the answer.

A span takes the type of the report it overlaps, else ``unsupported_addition/claim``. The
injection's validation rules (coverage caps, minimum length, giveaway words) apply unchanged.
The record of each sample keeps the diff's spans and the located reports, so `span_report` can
measure one against the other.
"""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from typing import Annotated, Any, Literal

import regex
from pydantic import BaseModel, Field

from lettuce_build.core import seeding
from lettuce_build.core.schema import Span
from lettuce_build.core.seeding import item_parts
from lettuce_build.core.spans import ValidationConfig, validate_spans
from lettuce_build.core.taxonomy import BUILTIN_SUBCATEGORIES, DEFAULT_TAXONOMY, UNSUPPORTED_ADDITION
from lettuce_build.engine.stage import ParseFailure, Sampling, Stage, length_checked
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.stages.injection import DEFAULT_CONTEXT_CHARS, INJECTION_FEATURES, answer_stand_in
from lettuce_build.stages.judge import judge_spans

#: below this similarity (difflib's ratio) the diff of two answers marks nearly everything
MIN_DIFF_SIMILARITY = 0.5
MAX_HALLUCINATIONS = 3
#: a span shorter than the injection's minimum takes in its neighbouring words
MIN_SPAN_CHARS = ValidationConfig().min_span_chars
#: what a span no report overlaps is taken for
DEFAULT_TYPE = (UNSUPPORTED_ADDITION, "claim")
GENERATION_TYPES: tuple[str, ...] = tuple(
    f"{category}/{subcategory}" for category, names in BUILTIN_SUBCATEGORIES.items() for subcategory in names
)
_WORD = regex.compile(r"\w")

SpanOrigin = Literal["diff", "located"]


class Reported(BaseModel):
    type: Literal[GENERATION_TYPES]  # type: ignore[valid-type]
    # lengths are checked after decoding, never in the schema (see `length_checked`)
    phrase: Annotated[str, length_checked(2, 300)]


class Generated(BaseModel):
    answer: Annotated[str, length_checked(1, 6000)]
    hallucinations: list[Reported] = Field(max_length=MAX_HALLUCINATIONS)


def _word_char(text: str, index: int) -> bool:
    """A character of a token: a word character, or ``.``/``-`` between two of them (3.10, x-y)."""
    if not 0 <= index < len(text):
        return False
    if _WORD.match(text[index]):
        return True
    return (
        text[index] in ".-"
        and 0 < index < len(text) - 1
        and bool(_WORD.match(text[index - 1]))
        and bool(_WORD.match(text[index + 1]))
    )


def _tokens(text: str, start: int, end: int) -> tuple[int, int]:
    """To whole tokens (a diff that turned "3.10" into "3.8" marks the number, not one digit),
    without the spaces and separating punctuation at its edges."""
    while start > 0 and _word_char(text, start - 1) and _word_char(text, start):
        start -= 1
    while end < len(text) and _word_char(text, end) and _word_char(text, end - 1):
        end += 1
    while start < end and (text[start].isspace() or text[start] in ",;:"):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] in ",;:"):
        end -= 1
    return start, end


def _at_least(text: str, start: int, end: int, min_chars: int) -> tuple[int, int]:
    """At least ``min_chars`` long, by taking in the words before (else after): "3.8" -> "Python 3.8"."""
    while end - start < min_chars and (start > 0 or end < len(text)):
        if start > 0:
            start -= 1
            while start > 0 and (text[start].isspace() or _word_char(text, start - 1)):
                start -= 1
        else:
            end += 1
            while end < len(text) and _word_char(text, end):
                end += 1
    return start, end


def diff_spans(clean: str, generated: str, min_chars: int = MIN_SPAN_CHARS) -> list[tuple[int, int]]:
    """Offsets in ``generated`` of what it inserted or replaced relative to ``clean``: whole words,
    pieces a space apart merged, each at least ``min_chars`` long."""
    return _diff_spans(SequenceMatcher(None, clean, generated, autojunk=False), generated, min_chars)


def _diff_spans(matcher: SequenceMatcher[str], generated: str, min_chars: int) -> list[tuple[int, int]]:
    pieces = []
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert") and generated[j1:j2].strip():
            start, end = _tokens(generated, j1, j2)
            if start < end:
                pieces.append((start, end))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(pieces):
        if merged and not generated[merged[-1][1] : start].strip(" "):  # touching, or one space apart
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    widened: list[tuple[int, int]] = []
    for start, end in (_at_least(generated, a, b, min_chars) for a, b in merged):
        if widened and start <= widened[-1][1]:
            widened[-1] = (widened[-1][0], max(widened[-1][1], end))
        else:
            widened.append((start, end))
    return widened


def locate(phrase: str, answer: str) -> tuple[int, int] | None:
    """Where a reported phrase stands in the answer: exactly, else ignoring case."""
    phrase = phrase.strip()
    if not phrase:
        return None
    found = answer.find(phrase)
    if found < 0:
        found = answer.casefold().find(phrase.casefold())
        if found < 0 or len(answer.casefold()) != len(answer):  # casefolding changed the offsets
            return None
    return found, found + len(phrase)


class Recovered(BaseModel):
    spans: list[Span]
    origin: SpanOrigin
    #: the reports found in the answer: type, phrase, start, end
    located: list[dict[str, Any]]
    #: every diff span (also when the located reports became the spans)
    diff: list[tuple[int, int]]
    similarity: float


def recover_spans(clean: str, generated: str, reported: list[Reported]) -> Recovered:
    """The generated answer's spans, from the diff where it means something, else from the reports."""
    located = []
    for report in reported:
        where = locate(report.phrase, generated)
        if where is not None:
            located.append({"type": report.type, "phrase": report.phrase, "start": where[0], "end": where[1]})
    matcher = SequenceMatcher(None, clean, generated, autojunk=False)  # one alignment for both
    diff = _diff_spans(matcher, generated, MIN_SPAN_CHARS)
    ratio = matcher.ratio()
    origin: SpanOrigin = "diff" if clean.strip() and ratio >= MIN_DIFF_SIMILARITY else "located"
    if origin == "diff":
        offsets = diff
    else:
        offsets = sorted({(r["start"], r["end"]) for r in located})
        offsets = [o for i, o in enumerate(offsets) if not any(p[0] <= o[0] < p[1] for p in offsets[:i])]
    spans = []
    for start, end in offsets:
        overlapping = [r for r in located if r["start"] < end and start < r["end"]]
        label = overlapping[0]["type"] if overlapping else "unreported"
        category, subcategory = label.split("/") if overlapping else DEFAULT_TYPE
        spans.append(
            Span(
                start=start,
                end=end,
                text=generated[start:end],
                label=label,
                category=category,
                subcategory=subcategory,
            )
        )
    return Recovered(spans=spans, origin=origin, located=located, diff=diff, similarity=ratio)


class GenerateStage(Stage):
    """A hallucinated answer written by the model, with its spans recovered (see the module)."""

    name = "generate"
    prompt = "generate"
    hallucinates = True  # a failed generation leaves the item's correct clean answer
    max_attempts = 2
    #: ``inject``: balancing offers an item by setting it (see engine/balance.py)
    requires = ("context", "question", "answer", "inject")
    outputs = INJECTION_FEATURES
    response_model = Generated
    sampling = Sampling(temperature=0.8, max_tokens=900)

    check = judge_spans

    def __init__(
        self,
        context_chars: int = DEFAULT_CONTEXT_CHARS,
        validation: ValidationConfig | None = None,
        seed: int = 0,
    ):
        self.context_chars = context_chars
        self.validation = validation or ValidationConfig()
        #: the build's seed: which types an item asks for is drawn with it
        self.seed = seed

    def stand_in(self, item: dict[str, Any]) -> dict[str, Any]:
        return answer_stand_in(item)

    def applies(self, item: dict[str, Any]) -> bool:
        return bool(item["inject"])

    def requested(self, item: dict[str, Any]) -> list[str]:
        """1-3 types, drawn from the item's key and the build's seed: the same every run."""
        rng = seeding.rng("generate", *item_parts(item["key"], self.seed))
        return rng.sample(GENERATION_TYPES, rng.randint(1, MAX_HALLUCINATIONS))

    def render(self, item: dict[str, Any]) -> ChatRequest:
        types = self.requested(item)
        system, user = self.template.render(
            question=item["question"],
            count=len(types),
            requested=[(t, DEFAULT_TAXONOMY.definition(*t.split("/"))) for t in types],
            context=item["context"][: self.context_chars],
            answer=item["answer"],
        )
        return self.request(system, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        clean, generated = item["answer"], response.answer.strip()
        if generated == clean.strip():
            raise ParseFailure("no_change", "the generated answer is the clean answer")
        recovered = recover_spans(clean, generated, response.hallucinations)
        if not recovered.spans:
            raise ParseFailure("no_spans", f"no span recovered ({recovered.origin})")
        failures = validate_spans(
            generated, recovered.spans, config=self.validation, clean_answer=clean, context=item["context"]
        )
        if failures:
            raise ParseFailure(failures[0].reason, "; ".join(f.message for f in failures))
        record = {
            "mode": "generate",
            "span_origin": recovered.origin,
            "requested": self.requested(item),
            "reported": [r.model_dump() for r in response.hallucinations],
            "located": recovered.located,
            "diff": recovered.diff,
            "similarity": round(recovered.similarity, 4),
        }
        return {
            "hallucinated_answer": generated,
            "labels": [s.model_dump() for s in recovered.spans],
            "injection": json.dumps(record, ensure_ascii=False),
        }
