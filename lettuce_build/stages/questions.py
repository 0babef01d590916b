"""Derive one realistic user question that a document chunk can answer."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import regex
from datasets import Value
from pydantic import BaseModel

from lettuce_build.core import gates
from lettuce_build.core.gates import QUESTION_MARKS
from lettuce_build.core.seeding import fraction, item_parts
from lettuce_build.core.sentences import sentence_count, split_sentences
from lettuce_build.core.words import STOPWORDS, content_stems, content_words, context_stems
from lettuce_build.engine.stage import ParseFailure, Sampling, Stage, item_language
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.stages.answers import NEIGHBOURS, evidence_sentences, neighbourhood
from lettuce_build.stages.question_fit import QuestionFitCheck


class QuestionType(NamedTuple):
    """One type of the question taxonomy: what it asks, and how such a question begins (a
    focused question is decoded to begin so)."""

    definition: str
    openers: tuple[str, ...]


_YES_NO = ("Is", "Are", "Does", "Do", "Can")
QUESTION_TYPES: dict[str, QuestionType] = {
    "Verification": QuestionType("asks whether something is true", _YES_NO),
    "Disjunctive": QuestionType("asks which of two or more alternatives holds", (*_YES_NO, "Which")),
    "Concept Completion": QuestionType(
        "asks who, what, when or where", ("What", "Who", "When", "Where", "Which")
    ),
    "Example": QuestionType("asks for an example of something", ("What", "Which")),
    "Feature Specification": QuestionType(
        "asks for properties or features of something", ("What", "Which", "How")
    ),
    "Quantification": QuestionType("asks how much or how many", ("How many", "How much", "How long", "What")),
    "Definition": QuestionType("asks what something means", ("What is", "What are", "What does")),
    "Comparison": QuestionType(
        "asks how two things are alike or differ", ("How does", "How do", "What", "Which")
    ),
    "Interpretation": QuestionType("asks what something implies or means in context", ("What", "Why", "How")),
    "Causal Antecedent": QuestionType("asks what caused something", ("Why", "What")),
    "Causal Consequence": QuestionType("asks what follows from something", ("What", "How")),
    "Goal Orientation": QuestionType("asks for the purpose of something", ("Why", "What")),
    "Instrumental/Procedural": QuestionType(
        "asks how to do something", ("How do", "How can", "How does", "How to")
    ),
    "Enablement": QuestionType("asks what makes something possible", ("What", "How", "Which")),
    "Expectation": QuestionType("asks why something expected did or did not happen", ("Why",)),
    "Judgmental": QuestionType(
        "asks for an assessment grounded in the text", (*_YES_NO, "Should", "What", "How")
    ),
    "Assertion": QuestionType("states a gap in knowledge and asks to fill it", ("What", "How", "Which")),
    "Request/Directive": QuestionType("asks the reader to do or provide something", ("How", "What", "Can")),
}

MIN_QUESTION_CHARS = 8
MAX_QUESTION_CHARS = 300
DEFAULT_CHUNK_CHARS = 6000

_PREFIX = regex.compile(r"^\s*(?:\*\*)?(?:question|q)\s*[:.)-]\s*(?:\*\*)?\s*", regex.IGNORECASE)
#: what a model wraps a one-line reply in (stripped from questions and requests)
QUOTES = "\"'“”‘’`*"
_DECORATION = regex.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)+")
_RESIDUE = regex.compile(r"\{\{|\}\}|\{%|%\}|<\|")
_MARKDOWN = regex.compile(r"\]\(|!\[|^#+\s|\[[^\]]*\]\[|</?[A-Za-z][^>]*>|\*\w[^*]*\*")


def question_problem(question: str, language: str = "en") -> tuple[str, str] | None:
    """(reason, detail) when ``question`` does not read as one question, else None."""
    if len(question) < MIN_QUESTION_CHARS:
        return "question_too_short", f"{question!r} is under {MIN_QUESTION_CHARS} characters"
    if len(question) > MAX_QUESTION_CHARS:
        return "question_too_long", f"{len(question)} characters (> {MAX_QUESTION_CHARS})"
    if _RESIDUE.search(question):
        return "template_residue", f"{question[:80]!r} holds template syntax"
    if _MARKDOWN.search(question):
        return "markdown_in_question", f"{question[:80]!r} holds markdown or HTML (links, tags, emphasis)"
    if not question.endswith(QUESTION_MARKS):
        return "not_a_question", f"{question[:80]!r} does not end with a question mark"
    if sentence_count(question, language) > 1:
        return "several_sentences", f"{question[:80]!r} is more than one sentence"
    return None


def _clean_line(line: str) -> str:
    line = _DECORATION.sub("", line)
    line = _PREFIX.sub("", line).strip().strip(QUOTES).strip()
    return _PREFIX.sub("", line).strip()


def clean_question(text: str) -> str:
    """The first line of the response that reads as a question, without "Question:"/"Q:" prefixes,
    heading or list markers, or surrounding quotes; else its first non-empty line, so cleaned.

    Small models wrap the question in chatter ("Sure! Here is one:\n\nQuestion: ...?"): the
    question itself is kept, never the chatter.
    """
    lines = [cleaned for line in text.splitlines() if (cleaned := _clean_line(line))]
    return next((line for line in lines if question_problem(line) is None), lines[0] if lines else "")


#: the share of a sentence's content words an answer must hold to say that sentence
MOSTLY_SAID = 0.8


class QuestionStage(Stage):
    """One question of a given type that a chunk answers, written freely (capable models)."""

    name = "question"
    prompt = "question"

    requires: tuple[str, ...] = ("chunk", "question_type")
    # a small model writes a usable question about half the time; attempts are 80 tokens each
    max_attempts = 4
    outputs = {"question": Value("string")}
    sampling = Sampling(temperature=0.7, max_tokens=80)

    def __init__(self, chunk_chars: int = DEFAULT_CHUNK_CHARS, *, keeps_given: bool = False) -> None:
        self.chunk_chars = chunk_chars
        #: rows may bring their own question (the custom source's ``given_question``): it is
        #: carried through as written, when it is about its context, and never asked for
        self.keeps_given = keeps_given
        if keeps_given:
            self.requires = (*type(self).requires, "given_question", "given_answer")

    def brought(self, item: dict[str, Any]) -> bool:
        """Whether the item brings its question."""
        return self.keeps_given and bool(item["given_question"])

    def given_answer(self, item: dict[str, Any]) -> str:
        """The answer the row brings without its question ("" when it brings none): its question
        is asked about that answer (asked about another part of the context, it went unanswered
        by it: seen)."""
        return (self.keeps_given and item["given_answer"]) or ""

    def answered(self, item: dict[str, Any], sentences: Iterable[str]) -> list[str]:
        """Of the chunk's ``sentences``, those the row's own answer says (most of their content
        words are its: an answer may reword a sentence a little); all of them when it brings
        none, or says none of them."""
        listed = list(sentences)
        if not (answer := self.given_answer(item)):
            return listed
        said = content_stems(answer)

        def says(sentence: str) -> bool:
            stems = content_stems(sentence)
            return bool(stems) and len(stems & said) >= MOSTLY_SAID * len(stems)

        return [sentence for sentence in listed if says(sentence)] or listed

    def applies(self, item: dict[str, Any]) -> bool:
        return not self.brought(item)

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        """A question the row brings, when it is about its context (one none of whose words the
        context holds fails the row, as a generated one would, and as `audit` would flag it); it
        has no focus: an extractive answer chooses among all the context's sentences."""
        question = item["given_question"]
        if problem := gates.question_problem(question, item["chunk"]):
            raise ParseFailure(f"given_{problem[0]}", problem[1], retry=False)
        return {"question": question, "focus": ""}

    def salvage(self, text: str) -> str | None:
        """Only the first line is used: a cut response keeps its complete lines."""
        return text[: text.rfind("\n")] if "\n" in text else None

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(**self._fields(item))
        return self.request(system, user)

    def _fields(self, item: dict[str, Any]) -> dict[str, Any]:
        question_type = item["question_type"]
        return {
            "question_type": question_type,
            "question_type_definition": QUESTION_TYPES[question_type].definition,
            "chunk": self.given_answer(item) or item["chunk"][: self.chunk_chars],
        }

    def checked(self, item: dict[str, Any], question: str) -> str:
        """The question, or a `ParseFailure` saying why it is not one the chunk answers."""
        language = item_language(item)
        if problem := question_problem(question, language) or gates.question_problem(question, item["chunk"]):
            raise ParseFailure(*problem)
        if run := gates.echo(question, self.template.instructions):
            raise ParseFailure("question_echoes_prompt", f"the question repeats the instructions: {run!r}")
        return question

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        return {"question": self.checked(item, clean_question(response))}


class Asked(BaseModel):
    question: str


#: the characters a focused question is written in: no second line, markup, quote or early "?"
_PLAIN = r"[^\n?!\"\\\[\]()<>*#`{}|_~]"
_TERM = regex.compile(r"[^\W_]+(?:[.-][^\W_]+)*")
#: at most this many of the focus sentence's words are offered (the longest: names, terms)
MAX_FOCUS_TERMS = 12


def focus_terms(sentence: str) -> list[str]:
    """The focus sentence's content words as written, longest first: a focused question must
    use one, so it shares a content word with its chunk by construction."""
    terms = {t for t in _TERM.findall(sentence) if len(t) > 2 and t.lower() not in STOPWORDS}
    return sorted(terms, key=lambda t: (-len(t), t))[:MAX_FOCUS_TERMS]


#: a focused question asks one thing: an opener, a term and about a hundred characters more
MAX_FOCUSED_QUESTION_CHARS = 150
#: the words a focused question may put between its opener and its term ("How many of the
#: rows", "What is a page"): a closed list of short words costs a grammar next to nothing,
#: where free words before the term cost a compile of 13 ms a request (42 ms on a 150k
#: vocabulary: benchmarks/grammar_cost.py)
_LEAD_WORDS = (
    "the",
    "a",
    "an",
    "I",
    "you",
    "we",
    "is",
    "are",
    "does",
    "do",
    "can",
    "to",
    "use",
    "its",
    "this",
    "kind of",
    "type of",
    "of",
)


def question_pattern(sentence: str, question_type: str) -> str:
    """The regular expression a focused question is decoded under: one of its type's openers,
    at most two short lead words, one of the focus sentence's terms, then plain words and one
    question mark at the end. No bounded run of characters: a run of 60 either side of the term
    cost 840 ms of grammar compile per request on the embedded tokenizer; the question's length
    and that the term stands as a word of its own are checked after decoding (`uses_focus`,
    `MAX_FOCUSED_QUESTION_CHARS`), and max_tokens bounds what the model writes."""
    openers = "|".join(QUESTION_TYPES[question_type].openers)
    terms = "|".join(t.replace(".", r"\.") for t in focus_terms(sentence)) or r"[^\W_]{3,}"
    lead = "|".join(_LEAD_WORDS)
    return rf"^({openers}) (?:(?:{lead}) ){{0,2}}({terms}){_PLAIN}*\?$"


#: a focused question may bring at most this share of content words its answer's passage lacks
MAX_FOREIGN_SHARE = 0.5


def foreign_words(question: str, passage: str) -> list[str]:
    """The question's content words (stemmed) that its passage does not hold."""
    held = context_stems(passage)
    return [word for word in content_words(question) if not content_stems(word) & held]


def uses_focus(question: str, sentence: str) -> bool:
    """Whether the question uses one of the focus sentence's terms as a word of its own (seen
    live: "abovereserved" is not "reserved"), so it is about that sentence."""
    terms = focus_terms(sentence)
    if not terms:
        return True
    found = {t.lower() for t in _TERM.findall(question)}
    return any(term.lower() in found for term in terms)


class FocusedQuestionStage(QuestionStage):
    """A question asked about one prose sentence of the chunk (drawn with the build's seed), for
    small models. Asked about a whole chunk, the embedded model's questions missed it or were not
    questions (measured: see the README); here the prompt shows the sentence that answers it, and
    structured output holds the question to a question word, one of that sentence's terms and a
    closing question mark. The sentence is kept as the ``focus`` column: an extractive answer is
    built around it (`stages.answers.ExtractiveAnswerStage`).
    """

    prompt = "question_focused"
    response_model = Asked
    #: a small model's questions often fail the checks (the fit most): more tries than the default
    max_attempts = 6
    outputs = {"question": Value("string"), "focus": Value("string")}

    def __init__(
        self, chunk_chars: int = DEFAULT_CHUNK_CHARS, *, seed: int = 0, keeps_given: bool = False
    ) -> None:
        super().__init__(chunk_chars, keeps_given=keeps_given)
        #: the build's seed: which sentence a question is about is drawn with it
        self.seed = seed

    def focus(self, item: dict[str, Any]) -> str:
        """The sentence the question is about (the chunk's opening, when it has no prose
        sentence: its answer will fail for want of sentences anyway)."""
        chunk = item["chunk"][: self.chunk_chars]
        sentences = self.answered(item, evidence_sentences(chunk, item_language(item)))
        if not sentences:
            return item["chunk"][:MAX_QUESTION_CHARS]
        return sentences[int(fraction(*item_parts(item["key"], self.seed), "focus") * len(sentences))]

    def scored_by(self) -> QuestionFitCheck:
        """Does the question ask for its answer: the model scores its focus after it and after a
        generic question (stages/question_fit.py)."""
        return QuestionFitCheck()

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        asked = {"type": "string", "pattern": question_pattern(self.focus(item), item["question_type"])}
        return {"type": "object", "properties": {"question": asked}, "required": ["question"]}

    def _fields(self, item: dict[str, Any]) -> dict[str, Any]:
        # the passage is the focus with its neighbours: the whole chunk drowned a small model
        sentences = evidence_sentences(item["chunk"][: self.chunk_chars], item_language(item))
        focus = self.focus(item)
        return {
            **super()._fields(item),
            "focus": focus,
            "passage": " ".join(neighbourhood(sentences, focus, 1)) or focus,
        }

    def about_focus(self, item: dict[str, Any], question: str) -> bool:
        """Whether the question is about its focus sentence (uses one of its terms)."""
        return uses_focus(question, self.focus(item))

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        question = self.checked(item, " ".join(response.question.split()))
        focus = self.focus(item)
        if len(question) > MAX_FOCUSED_QUESTION_CHARS:
            detail = f"{len(question)} characters (> {MAX_FOCUSED_QUESTION_CHARS})"
            raise ParseFailure("question_too_long", detail)
        if not self.about_focus(item, question):
            offered = ", ".join(focus_terms(focus)[:5])
            detail = f"{question[:80]!r} uses none of its sentence's terms as a word ({offered})"
            raise ParseFailure("question_off_focus", detail)
        # the passage its answer is chosen from: a question mostly of other words asks about
        # something else (seen live: "How to create a custom countdown timer using the
        # countdown-a-day package?" over a sentence about annotated-types' metadata objects)
        sentences = evidence_sentences(item["chunk"][: self.chunk_chars], item_language(item))
        passage = " ".join(neighbourhood(sentences, focus, NEIGHBOURS)) or focus
        asked = content_words(question)
        if (foreign := foreign_words(question, passage)) and len(foreign) > MAX_FOREIGN_SHARE * len(asked):
            missing = ", ".join(foreign[:5])
            detail = f"{question[:80]!r}: {len(foreign)} of {len(asked)} words not in its passage ({missing})"
            raise ParseFailure("question_off_focus", detail)
        # where a reader would look for the answer: the chunk's sentence sharing most of the
        # question's words must be one its answer may hold (seen live: "How can I use HTTP
        # proxies ... with Python 3.6?" over a changelog whose 3.6 line is elsewhere)
        if (elsewhere := points_elsewhere(question, item["chunk"], passage, item_language(item))) is not None:
            raise ParseFailure("question_off_focus", f"{question[:80]!r} points at {elsewhere[:80]!r}")
        return {"question": question, "focus": focus}


def points_elsewhere(question: str, chunk: str, passage: str, language: str = "en") -> str | None:
    """The chunk's sentence the question's words point at most, when none of those it points at
    as much lies in ``passage`` (None: the question points into its passage, or nowhere)."""
    asked = set(content_words(question))
    held = set(content_words(passage))
    scored = [(len(asked & set(content_words(s))), s) for s in split_sentences(chunk, language)]
    top = max((shared for shared, _ in scored), default=0)
    best = [s for shared, s in scored if shared == top and top]
    inside = [s for s in best if len(set(content_words(s)) - held) <= len(content_words(s)) / 5]
    return best[0] if best and not inside else None
