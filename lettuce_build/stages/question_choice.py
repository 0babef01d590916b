"""Questions by construction for small models: the question is chosen among those turned from
its answer's sentence (`stages.question_shapes`), as the code source's requests are chosen among
those made of the issue's words. Written freely, the embedded model's questions missed their
sentence or were not questions ("What is the code?", "What does the join request to the Xet
system for the Xet-hf-xet-... should answer?"); turned from the sentence, a question asks for it
by construction; the likelihood check (`QuestionFitCheck`) scores only the questions the model
writes where no shape fits.

The sentence a question is about is drawn (with the build's seed) among the chunk's sentences
that have a shape; where none has (or none leaves an answer the rules can edit), a sentence is
asked what a reader should know of its topic ("What should I know about `get_app_dir`?",
`rules.topic_questions`): most documentation sentences fit no shape. An English chunk with
neither fails (``no_question_shape``, not retried): the embedded model's written questions were
the worst part of its samples even under a pattern and every check ("What is the do better of
hf-xet?", "Are you a predictive or clustering model?").
A chunk in another language (the shapes are English) is asked as `FocusedQuestionStage` asks,
the model writing under its pattern. One question offered is taken without a model call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from lettuce_build.core.memo import per_item
from lettuce_build.core.seeding import fraction, item_parts
from lettuce_build.core.sentences import is_complete, split_sentences
from lettuce_build.core.words import content_stems, content_words, words
from lettuce_build.engine.stage import ParseFailure, item_language
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.prompts import load_prompt
from lettuce_build.rules.heading_questions import heading_questions
from lettuce_build.rules.question_shapes import Shaped, opening_name, question_shapes, subject_name
from lettuce_build.rules.rewording import reworded
from lettuce_build.rules.topic_questions import topic_question
from lettuce_build.stages.answers import evidence_sentences, neighbourhood
from lettuce_build.stages.prose_edits import SPELLED, Editable
from lettuce_build.stages.question_fit import QuestionFitCheck
from lettuce_build.stages.questions import DEFAULT_CHUNK_CHARS, Asked, FocusedQuestionStage, foreign_words


class ChosenQuestionStage(FocusedQuestionStage):
    """A question chosen through a JSON-schema enum among those its focus sentence is turned
    into; the item's drawn question type is offered first, where the sentence has it."""

    prompt = "question_choice"

    def __init__(
        self,
        chunk_chars: int = DEFAULT_CHUNK_CHARS,
        *,
        seed: int = 0,
        keeps_given: bool = False,
        editable: Editable | None = None,
    ) -> None:
        super().__init__(chunk_chars, seed=seed, keeps_given=keeps_given)
        #: what an answer must offer the build's edit rules (`ExtractiveAnswerStage.editable`):
        #: the focus is then the first sentence, from the drawn one on, that offers it under one
        #: of its questions, and only those questions are offered, so that an item is not asked
        #: a question only for its answer to fail
        self.editable = editable
        if editable is not None:
            self.requires = (*self.requires, "context", "donor")

    @property
    def prompt_version(self) -> str:
        # both prompts make this stage's questions: a change to either asks again
        return f"{self.template.version}+{load_prompt(FocusedQuestionStage.prompt).version}"

    @staticmethod
    def english(item: dict[str, Any]) -> bool:
        return item.get("language") in ("en", None)

    def shaped(self, item: dict[str, Any]) -> dict[str, tuple[Shaped, ...]]:
        """The item's sentences that offer questions, of those its own answer holds when it
        brings one (none in a language other than English: the shapes are English)."""
        return self._held(item, shaped_sentences)

    def topics(self, item: dict[str, Any]) -> dict[str, tuple[Shaped, ...]]:
        """The item's sentences no shape fits that are asked what a reader should know of their
        topic (`rules.topic_questions`), of those its own answer holds (none outside English)."""
        return self._held(item, topic_sentences)

    def _held(
        self, item: dict[str, Any], asked: Callable[[str, str | None], dict[str, tuple[Shaped, ...]]]
    ) -> dict[str, tuple[Shaped, ...]]:
        """The sentences ``asked`` turns into questions, of those the item's answer holds."""
        if not self.english(item):
            return {}
        chunk = item["chunk"][: self.chunk_chars]
        held = set(self.answered(item, evidence_sentences(chunk, item_language(item))))
        return {
            sentence: shapes
            for sentence, shapes in asked(chunk, subject_name(item)).items()
            if sentence in held
        }

    # asked for by the focus, the questions offered, the fit check and the parse: by the fields
    # it reads, so the fit check, which sees the question added, finds it too
    @per_item("key", "chunk", "context", "donor", "language", "metadata", "given_answer")
    def _focus_shapes(self, item: dict[str, Any]) -> tuple[str, tuple[Shaped, ...]] | None:
        """The sentence drawn, and the questions it is turned into (None: no sentence has any).
        A sentence a shape fits is drawn first; one asked by its topic where none is (or, above a
        ratio of 0, where none leaves an editable answer)."""
        shaped, topics = self.shaped(item), self.topics(item)
        if not shaped and not topics:
            return None
        point = fraction(*item_parts(item["key"], self.seed), "focus")
        if self.editable is None or self.given_answer(item):  # an answer a row brings is kept as it is
            pool = shaped or topics
            sentences = list(pool)
            drawn = sentences[int(point * len(sentences))]
            return drawn, pool[drawn]
        in_turn = _rotated(shaped, point) + _rotated(topics, point)
        return _first_editable(
            self.editable,
            item["key"],
            in_turn=in_turn,
            context=item["context"],
            donor=item["donor"],
            language=item_language(item),
        )

    def focus(self, item: dict[str, Any]) -> str:
        chosen = self._focus_shapes(item)
        return super().focus(item) if chosen is None else chosen[0]

    def offered(self, item: dict[str, Any]) -> list[str]:
        """The questions the focus sentence is turned into, the item's own type first."""
        chosen = self._focus_shapes(item)
        shapes = () if chosen is None else chosen[1]
        ordered = sorted(shapes, key=lambda shape: shape.question_type != item["question_type"])
        return [shape.question for shape in ordered]

    def applies(self, item: dict[str, Any]) -> bool:
        # a model call to choose among several; to write one in another language, or about an
        # answer the row brings that offers no shape
        offered = self.offered(item)
        written = not self.english(item) or (not offered and bool(self.given_answer(item)))
        return super().applies(item) and (len(offered) > 1 or written)

    def passed(self, item: dict[str, Any]) -> dict[str, Any]:
        if self.brought(item):
            return super().passed(item)
        if not (offered := self.offered(item)):
            if self.shaped(item) or self.topics(item):  # questions there are, but none leaves an edit
                detail = "no question of the chunk's leaves its answer an edit the rules make"
                raise ParseFailure("no_edit_rule", detail, retry=False)
            detail = "no sentence of the chunk turns into a question that points at it"
            raise ParseFailure("no_question_shape", detail, retry=False)
        return self.parse(item, Asked(question=offered[0]))

    def item_schema(self, item: dict[str, Any]) -> dict[str, Any] | None:
        if not (offered := self.offered(item)):
            return super().item_schema(item)
        choice = {"type": "string", "enum": offered}
        return {"type": "object", "properties": {"question": choice}, "required": ["question"]}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        if not (offered := self.offered(item)):  # no shape: the model writes it under its pattern
            system, user = load_prompt(FocusedQuestionStage.prompt).render(**self._fields(item))
        else:
            system, user = self.template.render(focus=self.focus(item), questions=offered)
        return self.request(system, user)

    def stand_in(self, item: dict[str, Any]) -> dict[str, Any]:
        # a dry run's choice: one of the questions offered (so the fit check is not counted)
        offered = self.offered(item)
        return {"question": offered[0], "focus": self.focus(item)} if offered else {}

    def scored_by(self) -> QuestionFitCheck:
        """The fit check, on the questions the model wrote (no shape) alone: one turned from its
        sentence asks for it by construction, and every one the embedded model's likelihood
        refused was right ("How long does a single crossing take?" -3.4 nats over "A single
        crossing takes 25 minutes, and bicycles ride free on weekdays.")."""
        return QuestionFitCheck(scores_item=lambda item: item["question"] not in self.offered(item))

    def about_focus(self, item: dict[str, Any], question: str) -> bool:
        # a question turned from the sentence is about it, in the words it was turned from ("It"
        # said as the project's name); a written one (no shape) must use one of its terms
        return question in self.offered(item) or super().about_focus(item, question)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        offered = self.offered(item)
        if offered and response.question not in offered:
            detail = f"{response.question[:80]!r} is not one of the questions offered"
            raise ParseFailure("question_not_offered", detail)
        asked = super().parse(item, response)
        # a written question (no shape) may bring no word its passage lacks: those the embedded
        # model brought made its worst questions ("Can you use analysism to ...?", "What is the
        # 407-499th percentile of ...?")
        passage = " ".join(
            neighbourhood(
                evidence_sentences(item["chunk"][: self.chunk_chars], item_language(item)), asked["focus"], 1
            )
        )
        if not offered and (foreign := foreign_words(asked["question"], passage or asked["focus"])):
            detail = f"{asked['question'][:80]!r} brings words its passage lacks ({', '.join(foreign[:5])})"
            raise ParseFailure("question_off_focus", detail)
        return asked


@functools.lru_cache(maxsize=1024)  # the focus is asked for several times an item
def _first_editable(
    editable: Editable,
    key: str,
    *,
    in_turn: tuple[tuple[str, tuple[Shaped, ...]], ...],
    context: str,
    donor: str,
    language: str,
) -> tuple[str, tuple[Shaped, ...]]:
    """The first sentence of ``in_turn`` the edit rules could edit as the answer to one of its
    questions, with those questions: an edit a question repeats is not made ("Is the default
    page size 50 rows?" leaves "50" alone), so the question counts. A sentence whose edits are
    spelled from the context comes first (only reading finds them), for clean and hallucinated
    items alike, so that both classes hold the same sentences. The first sentence with no
    question where none could: the item fails without a model call."""
    graded = []
    editable_sentences: set[str] = set()
    for sentence, shapes in in_turn:
        if sentence in editable_sentences:  # its shapes leave an edit: its topic question is not asked
            continue
        # graded as it is answered: the edits are made on the reworded answer (rules/rewording.py)
        answer = {"key": key, "answer": reworded(sentence), "context": context, "donor": donor}
        answer["language"] = language
        grades = {shape: editable({**answer, "question": shape.question}) for shape in shapes}
        if best := max(grades.values(), default=0):
            editable_sentences.add(sentence)
            graded.append((best, sentence, tuple(shape for shape, grade in grades.items() if grade == best)))
            if best >= SPELLED:
                break
    if graded:
        _, sentence, kept = max(graded, key=lambda found: found[0])  # the first of the best grade
        return sentence, kept
    return in_turn[0][0], ()


def _rotated(
    shaped: dict[str, tuple[Shaped, ...]], point: float
) -> tuple[tuple[str, tuple[Shaped, ...]], ...]:
    """The sentences and their questions in turn from the one at ``point`` (in [0, 1))."""
    sentences = list(shaped)
    drawn = int(point * len(sentences))
    return tuple((sentence, shaped[sentence]) for sentence in sentences[drawn:] + sentences[:drawn])


@functools.lru_cache(maxsize=256)
def topic_sentences(chunk: str, name: str | None) -> dict[str, tuple[Shaped, ...]]:
    """The chunk's answer sentences, each with its topic question (`rules.topic_questions`)
    where that points at it alone. A sentence a shape fits is asked by its shapes first (see
    `_focus_shapes`); its topic question is there for when each shape repeats what an edit would
    change ("What do class-level field attributes define?" leaves "attributes" alone)."""
    sentences = split_sentences(chunk)
    found: dict[str, tuple[Shaped, ...]] = {}
    for sentence in evidence_sentences(chunk):
        asked = topic_question(sentence, name)
        if asked is not None and _points_at(asked.question, sentence, sentences, name):
            found[sentence] = (asked,)
    return found


@functools.lru_cache(maxsize=256)
def shaped_sentences(chunk: str, name: str | None) -> dict[str, tuple[Shaped, ...]]:
    """The chunk's answer sentences with the questions they are turned into, each question kept
    only where a reader would look for its answer in that sentence: of the chunk's sentences,
    the first sharing most of its words says what the sentence says (seen live: "What does
    this library support?" over a README whose opening sentence says "library" and "supports"
    first). Cached: an item's focus, schema, prompt and parse all read them."""
    sentences = split_sentences(chunk)
    answering = evidence_sentences(chunk)
    name = name or opening_name(answering)  # a passage of no project: "It" is what it opens with
    headed = heading_questions(chunk, answering, name)
    shaped: dict[str, tuple[Shaped, ...]] = {}
    for sentence in answering:
        shapes = question_shapes(sentence, name)
        kept = tuple(s for s in shapes if _points_at(s.question, sentence, sentences, name))
        # a heading's question points under it, whatever other sentence shares its words
        if kept := tuple(dict.fromkeys((*kept, headed[sentence]) if sentence in headed else kept)):
            shaped[sentence] = kept
    return shaped


def _points_at(question: str, sentence: str, sentences: list[str], name: str | None) -> bool:
    """Whether the chunk's first sentence sharing most of the question's content words says what
    ``sentence`` says (or holds it: a list item the segmenter joined to it); the project's name
    is in every sentence and points nowhere, except for a question asking only about it ("What
    is attrs?"), which points at the first sentence naming it (not a heading)."""
    asked = set(content_words(question)) - {(name or "").lower()}
    if not asked and name:  # "What is attrs?": the first sentence that would be asked it answers it
        asking = (s for s in sentences if is_complete(s) and question in _questions(s, name))
        return next(asking, None) == sentence
    # stems, so that "What does the pool invoke?" finds "The pool invokes ..."
    stems = content_stems(question) - content_stems(name or "")
    best = max(sentences, key=lambda s: len(stems & content_stems(s)), default="")
    said = set(content_words(best))
    holds = sentence in best or len(said & set(words(sentence))) >= MOSTLY * len(said)
    return bool(stems & content_stems(best)) and holds


def _questions(sentence: str, name: str | None) -> set[str]:
    return {shape.question for shape in question_shapes(sentence, name)}


#: the share of the best-matching sentence's content words its answer sentence must hold
MOSTLY = 0.8
