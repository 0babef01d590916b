"""Generate an answer that is correct by construction: grounded strictly in the evidence."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from typing import Any, Literal

import regex
from datasets import Value
from pydantic import BaseModel, Field

from lettuce_build.core import english
from lettuce_build.core.gates import DEFAULT_GATES, GateConfig, answer_problem, markup_share
from lettuce_build.core.sentences import complete_prefix, is_complete, split_sentences
from lettuce_build.core.words import content_stems, content_words
from lettuce_build.engine.stage import CutText, ParseFailure, Sampling, Stage, item_language
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.rules.rewording import it_for_subject, joined_list, led, reworded, unlinked
from lettuce_build.stages.judge import AnswerJudgeStage
from lettuce_build.stages.prose_edits import Editable
from lettuce_build.stages.question_fit import is_yes_no

MIN_ANSWER_CHARS = 40
DEFAULT_EVIDENCE_CHARS = 6000


class AnswerStage(Stage):
    """A grounded answer to the item's question from its evidence column (default ``context``)."""

    name = "answer"

    outputs = {"answer": Value("string"), "answer_cut": Value("bool")}
    #: the penalty keeps small models out of loops (measured: see the README's "Labels that are true")
    sampling = Sampling(temperature=0.7, max_tokens=400, repetition_penalty=1.15)

    def __init__(
        self,
        evidence_chars: int = DEFAULT_EVIDENCE_CHARS,
        *,
        evidence_field: str = "context",
        prompt: str = "answer",
        prose: bool = True,
        gates: GateConfig = DEFAULT_GATES,
        keeps_given: bool = False,
    ) -> None:
        self.prompt = prompt  # "answer", or a source's own style ("answer_tool_output")
        self.evidence_field = evidence_field  # what the answer is grounded in (tool_output: the gold lines)
        #: rows may bring their own answer (the custom source's ``given_answer``): it is carried
        #: through when the support gate finds it supported by the evidence, and never asked for
        self.keeps_given = keeps_given
        self.requires = ("question", evidence_field, *self.given_columns())
        self.evidence_chars = evidence_chars
        #: the answer should read as prose (markup may not dominate it): not for tool output
        self.prose = prose
        self.gates = gates

    def given_columns(self) -> tuple[str, ...]:
        """What an item that may bring its answer carries: the answer, and the modality its gate reads."""
        return ("given_answer", "modality") if self.keeps_given else ()

    def brought(self, item: dict[str, Any]) -> bool:
        """Whether the item brings its answer."""
        return self.keeps_given and bool(item["given_answer"])

    def applies(self, item: dict[str, Any]) -> bool:
        return not self.brought(item)

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        """An answer the row brings, when the support gate finds its evidence supports it; else
        the row fails with the gate's reason (``given_answer_unsupported``, say)."""
        answer = item["given_answer"]
        evidence = item[self.evidence_field][: self.evidence_chars]
        prose = item.get("modality") in ("prose", "markdown")
        problem = answer_problem(
            answer,
            evidence,
            instructions=self.template.instructions,
            prose=prose,
            config=self.gates,
            language=item_language(item),
        )
        if problem:
            reason = problem[0].removeprefix("answer_")  # answer_unsupported -> given_answer_unsupported
            raise ParseFailure(f"given_answer_{reason}", problem[1], retry=False)
        return {"answer": answer, "answer_cut": False}

    def check(self) -> AnswerJudgeStage:
        """A judge reads the answer against the evidence it was grounded in."""
        return AnswerJudgeStage(self.evidence_field)

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(
            evidence=item[self.evidence_field][: self.evidence_chars], question=item["question"]
        )
        return self.request(system, user)

    def salvage(self, text: str) -> str | None:
        """An answer cut at max_tokens keeps its complete sentences (and no half code block)."""
        kept = complete_prefix(text)
        if kept.count("```") % 2:
            kept = kept[: kept.rfind("```")]
        return kept.rstrip() or None

    #: an answer shorter than this is no answer (a model's "Yes.")
    min_chars = MIN_ANSWER_CHARS

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        answer = response.strip()
        if len(answer) < self.min_chars:
            raise ParseFailure("answer_too_short", f"{len(answer)} characters (< {self.min_chars})")
        evidence = item[self.evidence_field][: self.evidence_chars]
        if problem := answer_problem(
            answer,
            evidence,
            instructions=self.template.instructions,
            prose=self.prose,
            config=self.gates,
            language=item_language(item),
        ):
            raise ParseFailure(*problem)
        return {"answer": answer, "answer_cut": isinstance(response, CutText)}


#: extractive answers choose among at most this many sentences of the evidence
MAX_SENTENCES = 40
MIN_SENTENCE_CHARS = 30
MAX_SENTENCE_CHARS = 300
_FENCE = regex.compile(r"^\s*(```|~~~)")
#: a reStructuredText heading's underline (or overline): one punctuation character repeated
_UNDERLINE = regex.compile(r"^([=\-~^\"'`#*+_])\1{2,}$")
_LIST_MARKER = regex.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
#: an HTML comment is not read on the page (READMEs keep licence headers in them)
_COMMENT = regex.compile(r"<!--.*?(?:-->|$)", regex.DOTALL)
#: a reStructuredText link's target wrapped onto a line of its own ("`FriendFeed" then
#: "<http://friendfeed.com>`_."): the sentence goes on, it is no HTML
_LINK_TARGET_LINE = regex.compile(r"^<[^<>\s]+>`__?")


def _paragraphs(evidence: str) -> list[str]:
    """The evidence's prose paragraphs with hard-wrapped lines joined; a list item is a paragraph
    of its own, and a list with the sentence that leads it ("HTTPX gives you:") one sentence too
    (`rewording.joined_list`); code fences, headings (markdown's and reStructuredText's), tables,
    quotes, HTML and HTML comments are left out."""
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = False
    items: list[int] = []  # the paragraphs that are list items, by index

    def flush() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for line in _COMMENT.sub("\n", evidence).splitlines():
        stripped = line.strip()
        if _FENCE.match(line):
            flush()
            in_fence = not in_fence
        elif not in_fence and _UNDERLINE.match(stripped):
            current.clear()  # the line above was a reStructuredText heading: left out like "## ..."
        elif (
            in_fence
            or not stripped
            or (stripped.startswith(("#", "|", ">", "<")) and not _LINK_TARGET_LINE.match(stripped))
        ):
            flush()
        elif _LIST_MARKER.match(line):
            flush()
            items.append(len(paragraphs))
            current.append(_LIST_MARKER.sub("", line).strip())
        else:
            current.append(stripped)
    flush()
    return _with_lists_joined(paragraphs, set(items))


def _with_lists_joined(paragraphs: list[str], items: set[int]) -> list[str]:
    """The paragraphs, each list that follows a paragraph ending in ":" added after its items as
    one sentence with its lead, where the two join (`joined_list`)."""
    joined: list[str] = []
    index = 0
    while index < len(paragraphs):
        joined.append(paragraphs[index])
        run = index + 1
        while run in items:
            run += 1
        if run > index + 1 and index not in items:
            listed = paragraphs[index + 1 : run]
            joined += listed
            lead = split_sentences(paragraphs[index])[-1] if paragraphs[index].strip() else ""
            if (sentence := joined_list(lead, listed)) is not None:
                joined.append(sentence)
            index = run
        else:
            index += 1
    return joined


def continues(sentence: str) -> bool:
    """Whether an English sentence opens with a lowercase common word: a list item's fragment or
    a clause cut from its sentence ("a nice human-readable `__repr__`."), which an answer cannot
    open with (a name written in lowercase, "httpx supports ...", is a sentence)."""
    first = sentence.split(" ", 1)[0]
    return first[:1].islower() and english.is_english(first.strip(",.;:")) is True


#: words an English sentence does not end on: one that does was cut where its list or clause
#: began ("Third-party extensions may define domains for more languages, such as")
DANGLING = frozenset("a an the and or but as including than of e.g i.e".split())


def dangles(sentence: str) -> bool:
    """Whether an English sentence ends on a word that leads into more (see `DANGLING`)."""
    last = sentence.rstrip(" .,;:!)\"'`*_").rsplit(None, 1)[-1:]
    return bool(last) and last[0].casefold().rstrip(".") in DANGLING


@functools.lru_cache(maxsize=256)
def evidence_sentences(evidence: str, language: str = "en") -> tuple[str, ...]:
    """The evidence's prose sentences an extractive answer may choose, in order: no URLs or
    markup, no questions, of a readable length. Cached: an item's schema, prompt and parse all
    read them."""
    found: list[str] = []
    for paragraph in _paragraphs(evidence):
        for sentence in split_sentences(paragraph, language):
            prose = unlinked(sentence)  # a link's markup is reworded away: its text is what counts
            if (
                MIN_SENTENCE_CHARS <= len(prose)
                and len(sentence) <= MAX_SENTENCE_CHARS
                and not sentence.endswith(("?", ":"))  # ":" introduces what follows, not a claim
                and markup_share(prose) == 0.0
                and len(content_words(prose)) >= 3
                and not (language == "en" and (continues(sentence) or dangles(sentence)))
                and sentence not in found
            ):
                found.append(sentence)
    return tuple(found[:MAX_SENTENCES])


def best_sentence(question: str, sentences: Sequence[str]) -> str | None:
    """The sentence sharing most content words with ``question`` (the first of a tie; None: none
    shares any): where a reader of the question would look for its answer."""
    asked = set(content_words(question))
    shared = [len(asked & set(content_words(sentence))) for sentence in sentences]
    best = max(range(len(sentences)), key=lambda i: (shared[i], -i), default=None)
    return sentences[best] if best is not None and shared[best] else None


def neighbourhood(sentences: tuple[str, ...], focus: str, reach: int) -> tuple[str, ...]:
    """The focus sentence with up to ``reach`` sentences either side, or () when it is not one
    of ``sentences``."""
    if focus not in sentences:
        return ()
    at = sentences.index(focus)
    return sentences[max(0, at - reach) : at + reach + 1]


class Extracted(BaseModel):
    sentences: list[str] = Field(min_length=1, max_length=3)


AnswerMode = Literal["free", "extractive"]


class ExtractiveAnswerStage(AnswerStage):
    """An answer made of one to three sentences of the evidence, chosen by the model through a
    JSON-schema enum: true by construction, which a small model's free answers are not (the
    embedded model's were unsupported, looping or questions back; see the README). A detector
    trained only on copied sentences learns less than one trained on free answers: builds with
    capable models keep those (``--answers free``).

    ``focused``: the item's question was asked about one sentence, its ``focus`` column
    (`stages.questions.FocusedQuestionStage`). That sentence is the answer; the model chooses
    up to two of its neighbours (two each side) that belong with it, so the answer reads as one
    passage and answers the question, which a choice among all the chunk's sentences often did
    not.
    """

    response_model = Extracted

    def __init__(
        self,
        evidence_chars: int = DEFAULT_EVIDENCE_CHARS,
        evidence_field: str = "context",
        *,
        focused: bool = False,
        keeps_given: bool = False,
        editable: Editable | None = None,
    ) -> None:
        super().__init__(
            evidence_chars, evidence_field=evidence_field, prompt="answer_extractive", keeps_given=keeps_given
        )
        self.focused = focused
        if focused:
            # the focus is a whole sentence of the evidence, asked about: an answer alone
            self.min_chars = MIN_SENTENCE_CHARS
            self.requires = ("question", "focus", evidence_field, *self.given_columns())
        #: whether the build's edit rules could edit an answer (`InjectProseMenuStage.offers`):
        #: an answer they could not is no sample. Kept, it could only ever be published clean,
        #: and clean rows would be the short answers with no number or name in them: a detector
        #: tells the classes apart by that, without reading the context (`lettuce-build audit`)
        self.editable = editable
        if editable is not None:
            self.requires = (*self.requires, "donor")  # the rules borrow from another document

    def _sentences(self, item: dict[str, Any]) -> tuple[str, ...]:
        """The sentences offered: the evidence's, or with a focus, its neighbourhood."""
        sentences = evidence_sentences(item[self.evidence_field][: self.evidence_chars], item_language(item))
        if not self.focused:
            return sentences
        return neighbourhood(sentences, item["focus"], NEIGHBOURS) or sentences

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        sentences = self._sentences(item)
        if not sentences:
            return None
        choice = {"type": "string", "enum": list(sentences)}
        # with a focus, which is always kept, two more make the answer's three at most
        listed = {"type": "array", "items": choice, "minItems": 1, "maxItems": 2 if self.focused else 3}
        return {"type": "object", "properties": {"sentences": listed}, "required": ["sentences"]}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(question=item["question"], sentences=self._sentences(item))
        return self.request(system, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        offered = self._sentences(item)
        if not offered:
            raise ParseFailure(
                "no_sentences", "the evidence has no prose sentence to answer with", retry=False
            )
        chosen = set(response.sentences)
        if self.focused and item["focus"] in offered:
            chosen = _on_topic(item["question"], item["focus"], offered, chosen)
        picked = [s for s in offered if s in chosen]  # evidence order, each once
        if not picked:
            raise ParseFailure(
                "not_from_evidence", f"none of {response.sentences!r} is a sentence of the evidence"
            )
        # a list item has no full stop of its own: joined bare, two items would read as one
        # sentence (one that ends in "," or ":" ends in a full stop instead: never ",.")
        # reworded before any edit (rules/rewording.py): clean and hallucinated answers alike are
        # not copies of the context, and the rules then read the text that is published
        joined = " ".join(s if is_complete(s) else f"{s.rstrip(',;:')}." for s in picked)
        answer, focus = reworded(joined), reworded(item.get("focus") or "")
        if self.focused:  # "It" for the subject asked about, where the answer stays an answer's length
            if len(said := reworded(it_for_subject(joined, item["question"]))) >= self.min_chars:
                answer, focus = said, reworded(it_for_subject(item["focus"], item["question"]))
            if is_yes_no(item["question"]):  # "Yes, ..." or "No, ...", as its sentence says
                answer = led(answer, focus)
        made = super().parse(item, answer)
        if self.editable is not None and not self.editable({**item, **made}):
            raise ParseFailure("no_edit_rule", "no edit rule applies to the answer: it could only be clean")
        return made


#: a focused answer may take up to this many sentences either side of its focus
NEIGHBOURS = 2


def _on_topic(question: str, focus: str, offered: Sequence[str], chosen: set[str]) -> set[str]:
    """A focused answer's sentences: the focus (asked about, it answers the question), the one
    the question's words point at, and the neighbours the model chose that share a content word
    with either, one that most of the passage does not say. The embedded model often chose a
    neighbour about something else ("The field outline may be a GeoJSON polygon" under a
    question on rootstocks), which then took the injected error: a span in a sentence off the
    question. That holds for a short focus too: a neighbour kept only for length took the error
    ("unsafe [English] characters" before "Python type annotations are used.")."""
    kept = {focus}
    if (best := best_sentence(question, offered)) is not None:
        kept.add(best)
    # a word most of the passage says (the project's name) ties no sentence to the question:
    # "All about FastAPI, right from the source." joined an answer on Typer through "FastAPI"
    said = Counter(stem for sentence in offered for stem in content_stems(sentence))
    common = {stem for stem, count in said.items() if len(offered) >= 3 and count * 2 > len(offered)}
    topic = content_stems(f"{question} {focus}") - common
    # one not offered is no sentence of it
    return kept | {sentence for sentence in chosen.intersection(offered) if topic & _parts(sentence)}


def _parts(sentence: str) -> frozenset[str]:
    """Its content stems, a hyphenated word's parts as well: "the page-size option" is about a page's size."""
    return content_stems(sentence) | content_stems(sentence.replace("-", " "))


def answer_stage(mode: AnswerMode, *, focused: bool = False, editable: Editable | None = None) -> AnswerStage:
    """The answer stage of a source in this mode (``focused``: its questions carry a focus;
    ``editable``: what an extractive answer must offer the edit rules, see `ExtractiveAnswerStage`)."""
    if mode == "extractive":
        return ExtractiveAnswerStage(focused=focused, editable=editable)
    return AnswerStage()
