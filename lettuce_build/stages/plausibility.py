"""Plausibility from the model's own likelihood: is a hallucinated span something a model would
write there?

A span a detector should learn from reads like the text around it; garbage does not ("Não haga
interesse decesseres ..." spliced into an English sentence, "#1015021359209842730301741200551172").
The gates see words, not fluency. The model sees fluency: after the same prefix (the context,
the question and the answer up to the span), it scores the edited text and the text it replaced,
each followed by the few words after the span, and we compare their log-likelihoods. A false but
plausible edit costs a little (the original is what the context supports); garbage costs a lot.
An edit more than `MAX_DROP` nats less likely than its original (in all: e^-25 times as likely)
is ``implausible_edit``, and balancing takes another item in its place. An added sentence has no
original: all its tokens are the drop (a fluent 20-token sentence costs 40-60 nats, and every
added claim was refused), so an insertion may cost up to `MAX_INSERTED_NATS` a token it adds.

Why the whole log-likelihood and not its mean per token: measured on 16 real READMEs with the
embedded model (benchmarks/plausibility.py, the README's "Plausible spans"), the per-token drop
of a number changed, a negation added or a name swapped (median 1.9 nats/token) was no smaller
than garbage's (2.0): garbage is long, and its later tokens are easy once its first are paid
for. The total separates them: 16 of 20 garbage edits lose more than 25 nats, no false but
plausible one does.

`PlausibilityCheck` is a `CheckStage` every injecting and generating stage is checked by, asked
of the build's own model through its runner (so scores are cached like answers, and a re-run
asks nothing again): one scoring request per item, two prefills per span, nothing generated. A
backend that gives no prompt log-probabilities (a hosted API without them) answers
``scored: false``: the item passes and the summary says how many were not scored.
"""

from __future__ import annotations

import ast
import difflib
import functools
import itertools
import json
from collections.abc import Iterable, Sequence
from typing import Any

import regex
from pydantic import BaseModel, Field

from lettuce_build.engine.records import Judgement
from lettuce_build.engine.stage import CheckStage, ParseFailure, Sampling
from lettuce_build.llm.protocol import ChatRequest, Scores
from lettuce_build.stages.scored import POINTS, ScoreReport, quantiles, spread, tally

#: an edit more than this many nats less likely than its original is implausible: set from real
#: README edits (benchmarks/plausibility.py; the README quotes the distribution)
MAX_DROP = 25.0
#: an insertion may cost this many nats a token it adds, on average: fluent sentences added to
#: real READMEs cost the embedded model 2.3-3.0 a token, garbage spliced in 4.7 (tests/stages/
#: test_plausibility.py)
MAX_INSERTED_NATS = 3.5
#: what the scoring prompt shows of the context, and of the answer before a span
CONTEXT_CHARS = 3000
PREFIX_CHARS = 1200
#: the words after a span scored with it: an edit that breaks its sentence shows there
TAIL = regex.compile(r"^[ \t]*(?:\S+[ \t]+){0,2}\S+")
SYSTEM = "Answer the question from the context."
#: a word, a run of white space, or one other character: what the diff of two answers aligns
_TOKEN = regex.compile(r"\w+|\s+|[^\w\s]")


class ScoredEdit(BaseModel):
    """One span's scores, as the verdict records it."""

    original: str
    edited: str
    #: the log-likelihood of each, followed by the words after the span, and their tokens
    original_logprob: float
    edited_logprob: float
    original_tokens: int
    edited_tokens: int

    @property
    def drop(self) -> float:
        """How much less likely the edit is than its original, in nats."""
        return self.original_logprob - self.edited_logprob


def _clean_position(opcodes: Sequence[tuple[str, int, int, int, int]], at: int, end: bool) -> int:
    """Where position ``at`` of the hallucinated answer falls in the clean one: exactly in text
    both share, else at the start (or ``end``: the end) of the change that holds it."""
    for tag, i1, _, j1, j2 in opcodes:
        if tag == "equal" and j1 <= at <= j2:
            return i1 + at - j1
    for _, i1, i2, j1, j2 in opcodes:
        if j1 <= at <= j2:
            return i2 if end else i1
    return opcodes[-1][2] if opcodes else 0


def span_pairs(
    clean: str, hallucinated: str, labels: Sequence[dict[str, Any]]
) -> list[tuple[str, str, str, str]]:
    """Per span, in answer order: (prefix, original, edited, tail). The original is the clean
    answer's text the span replaced (aligned by a diff of words, so injected and generated
    answers are read alike; empty for a pure insertion); prefix and tail are the hallucinated
    answer's text before and after the span, the prefix cut to `PREFIX_CHARS` at a line or word."""
    spans = tuple(sorted((label["start"], label["end"]) for label in labels))
    return list(_span_pairs(clean, hallucinated, spans))


@functools.lru_cache(maxsize=256)
def _span_pairs(
    clean: str, hallucinated: str, spans: tuple[tuple[int, int], ...]
) -> tuple[tuple[str, str, str, str], ...]:
    """`span_pairs`, cached: an item's request and its parse both read them, and a diff of a
    long code answer is the check's one cost outside the model."""
    only = _only_difference(clean, hallucinated, *spans[0]) if len(spans) == 1 else None
    originals = [only] if only is not None else _diffed_originals(clean, hallucinated, spans)
    pairs = []
    for (start, end), original in zip(spans, originals, strict=True):
        prefix = hallucinated[:start]
        if len(prefix) > PREFIX_CHARS:
            cut = len(prefix) - PREFIX_CHARS
            prefix = prefix[max(prefix.find("\n", cut) + 1, prefix.find(" ", cut) + 1, cut) :]
        tail = TAIL.match(hallucinated[end:])
        pairs.append((prefix, original, hallucinated[start:end], tail.group() if tail else ""))
    return tuple(pairs)


def _diffed_originals(clean: str, hallucinated: str, spans: tuple[tuple[int, int], ...]) -> list[str]:
    """The clean text each span replaced, aligned by a diff of words."""
    opcodes: Sequence[tuple[str, int, int, int, int]]
    if clean and clean == hallucinated:  # a dry run's stand-in: what the diff would find, at once
        opcodes = [("equal", 0, len(clean), 0, len(clean))]
    else:
        opcodes = _word_opcodes(clean, hallucinated)
    return [
        clean[_clean_position(opcodes, start, False) : _clean_position(opcodes, end, True)]
        for start, end in spans
    ]


def _only_difference(clean: str, hallucinated: str, start: int, end: int) -> str | None:
    """The clean text a span replaced, where the span is all the two answers differ by (None:
    they differ elsewhere too); empty for an insertion, whose space may be shared either side."""
    after = len(hallucinated) - end
    if clean[:start] != hallucinated[:start] or not clean.endswith(hallucinated[end:]):
        return None
    return clean[start : max(start, len(clean) - after)]


def _word_opcodes(clean: str, hallucinated: str) -> list[tuple[str, int, int, int, int]]:
    """The two texts' differences as character ranges, found word by word: a diff of characters
    matches letters inside words ("befor[e]" kept of "before" -> "after", "Ita[ly]" of "Italy"
    -> "Forina"), and the original scored was half a word."""
    ours, theirs = _TOKEN.findall(clean), _TOKEN.findall(hallucinated)
    at_ours, at_theirs = _offsets(ours), _offsets(theirs)
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    return [
        (tag, at_ours[i1], at_ours[i2], at_theirs[j1], at_theirs[j2])
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
    ]


def _offsets(tokens: Sequence[str]) -> list[int]:
    """Where each token starts, and the end of the last."""
    return list(itertools.accumulate((len(token) for token in tokens), initial=0))


class PlausibilityCheck(CheckStage):
    """Each span of a hallucinated answer scored against the text it replaced (see the module)."""

    name = "plausibility"
    prompt_version = "plausibility-v1"
    response_model = Scores
    #: nothing is generated (backends prefill only); the answer is the scores' JSON, whose
    #: length this bounds as it bounds any answer's (engine/responses.py)
    sampling = Sampling(temperature=0.0, max_tokens=2000)
    requires = ("context", "question", "answer", "hallucinated_answer", "labels")

    def __init__(self, max_drop: float = MAX_DROP) -> None:
        self.max_drop = max_drop

    def applies(self, item: dict[str, Any]) -> bool:
        return bool(item.get("labels"))

    def render(self, item: dict[str, Any]) -> ChatRequest:
        user = f"Context:\n{item['context'][:CONTEXT_CHARS]}\n\nQuestion: {item['question']}"
        continuations = []
        for prefix, original, edited, tail in span_pairs(
            item["answer"], item["hallucinated_answer"], item["labels"]
        ):
            continuations += [(prefix, original + tail), (prefix, edited + tail)]
        return self.request(SYSTEM, user).with_params(continuations=tuple(continuations))

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        scores: Scores = response
        if not scores.scored:
            return {"judgement": json.dumps({"scored": False, "why": scores.why, "edits": []})}
        pairs = span_pairs(item["answer"], item["hallucinated_answer"], item["labels"])
        if len(scores.logprobs) != 2 * len(pairs):  # a server's answer to another request
            detail = f"{len(scores.logprobs)} scores for {2 * len(pairs)} texts"
            raise ParseFailure("scores_mismatch", detail)
        edits = []
        for number, (_, original, edited, tail) in enumerate(pairs):
            before, after = scores.logprobs[2 * number], scores.logprobs[2 * number + 1]
            if not after or (not before and original + tail):  # too long to score: nothing to compare
                continue  # (a sentence added at the answer's end is compared with nothing at all)
            scored = ScoredEdit(
                original=original,
                edited=edited,
                original_logprob=sum(before),
                edited_logprob=sum(after),
                original_tokens=len(before),
                edited_tokens=len(after),
            )
            edits.append(scored)
        verdict = {"scored": True, "edits": [{**e.model_dump(), "drop": round(e.drop, 4)} for e in edits]}
        return {"judgement": json.dumps(verdict, ensure_ascii=False)}

    def rejection(self, verdict: dict[str, Any]) -> ParseFailure | None:
        refused = [edit for edit in verdict["edits"] if implausible(edit, self.max_drop)]
        if not refused:
            return None
        worst = max(refused, key=lambda e: e["drop"])
        detail = (
            f"{worst['edited'][:60]!r} is {worst['drop']:.1f} nats less likely than "
            f"{worst['original'][:60]!r} (at most {allowed_drop(worst, self.max_drop):.1f})"
        )
        return ParseFailure("implausible_edit", detail)


#: a refusal's detail as a retry reads it (`Stage.earlier`): the check's name, then the refused
#: span as Python writes a string
_REFUSED = regex.compile(r"""^plausibility: (?P<text>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*") is [\d.]+ nats""")


def refused_span(detail: str) -> str | None:
    """The span (its first 60 characters) a refusal of this check names (None: no such refusal)."""
    match = _REFUSED.match(detail)
    return str(ast.literal_eval(match["text"])) if match else None


def allowed_drop(edit: dict[str, Any], max_drop: float) -> float:
    """How far a scored span may fall below its original: ``max_drop``, or for an insertion (no
    original) `MAX_INSERTED_NATS` a token it adds where that is more."""
    if edit["original"].strip():
        return max_drop
    return max(max_drop, MAX_INSERTED_NATS * (edit["edited_tokens"] - edit["original_tokens"]))


def implausible(edit: dict[str, Any], max_drop: float) -> bool:
    """Whether a scored span (a verdict's edit) is refused as implausible."""
    return bool(edit["drop"] > allowed_drop(edit, max_drop))


class PlausibilityReport(ScoreReport):
    """What the plausibility check found, as the summary, manifest, card and audit show it
    (``scored``: spans, every attempt counted; ``unscored``: items)."""

    title = "plausibility"
    unscored_kind = "items"

    max_drop: float = MAX_DROP
    #: spans refused as implausible
    implausible: int = 0
    #: the drop (nats) of every scored span at these quantiles
    quantiles: dict[str, float] = Field(default_factory=dict)

    def found(self) -> str:
        return (
            f"{self.scored} spans scored, {self.implausible} refused as implausible "
            f"(likelihood drop > {self.max_drop:g} nats, an insertion's > {MAX_INSERTED_NATS:g} a token); "
            f"drop quantiles: {spread(self.quantiles)}"
        )


def plausibility_report(
    judgements: Iterable[Judgement], max_drop: float = MAX_DROP
) -> PlausibilityReport | None:
    """The figures of a build's plausibility verdicts (None: nothing was checked)."""
    refused = 0

    def scored(verdict: dict[str, Any]) -> list[float]:
        nonlocal refused  # counted in the one pass over the verdicts
        refused += sum(implausible(edit, max_drop) for edit in verdict["edits"])
        return [edit["drop"] for edit in verdict["edits"]]

    drops = tally(judgements, PlausibilityCheck.name, scored)
    if drops is None:
        return None
    return PlausibilityReport(
        max_drop=max_drop,
        scored=len(drops.figures),
        implausible=refused,
        quantiles=quantiles(drops.figures, (*POINTS, ("max", 1.0))),
        **drops.fields(),
    )
