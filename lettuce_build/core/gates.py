"""Quality gates: checks that a row is true, not only exact, with every threshold in `GateConfig`.

Span validation (spans.py) checks geometry: a span is where it says and of a sane size. The gates
check what the text says, with no model: a question the context can answer, a clean answer that
is prose drawn from its context (not a loop, a list of URLs, a question back, or the prompt's own
instructions), and an edit that changes something and adds what the context does not say. Each
gate is a failure reason of its stage; `lettuce-build audit` measures the same signals over
published rows (view/audit.py).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections import Counter
from operator import itemgetter

from pydantic import BaseModel, Field

from lettuce_build.core.sentences import is_complete, split_sentences
from lettuce_build.core.words import (
    STOPWORDS,
    content_words,
    context_stems,
    has_number,
    has_time,
    in_context,
    negation_changed,
    says_the_same,
    stem,
    support,
    words,
)

_URL = re.compile(r"https?://\S+|www\.\S+")
_MARKUP = re.compile(r"!\[[^\]]*\]\([^)]*\)|\[[^\]]*\]\([^)]*\)|<[^>\n]{1,200}>|\[!\[|\]\[[^\]]*\]")


class GateConfig(BaseModel):
    """Every threshold of the gates. The support threshold was set from measured answers (see
    the README's "Labels that are true"): grounded answers of the embedded model on real READMEs
    have most content words in their context, the rows the gate exists for (repetition, unrelated
    chatter) far fewer."""

    #: a sentence, a line or a word 8-gram repeated this often is a degenerate loop
    max_repeats: int = Field(default=3, ge=2)
    repeat_ngram: int = Field(default=8, ge=3)
    #: prose and markdown answers: at most this share of characters in URLs, image tags or markup
    max_markup_share: float = Field(default=0.4, ge=0.0, le=1.0)
    #: a clean answer needs at least this share of its content words in the context, whatever
    #: its length (a one-word answer the context never says is as unsupported as a long one)
    min_support: float = Field(default=0.5, ge=0.0, le=1.0)
    #: one character this many times in a row (not a space, nor a markdown rule's "-", "=" or
    #: "*") is a loop: a server that ignores max_tokens writes a million "x"
    max_char_run: int = Field(default=50, ge=8)
    #: an answer sharing a run of this many words with the prompt's instructions echoes them
    echo_words: int = Field(default=6, ge=3)


DEFAULT_GATES = GateConfig()

Problem = tuple[str, str]


#: words with which a question talks about its prompt ("What does this sentence answer?")
PROMPT_WORDS = frozenset(
    {"sentence", "sentences", "text", "passage", "document", "fact", "question", "answer"}
)


def question_problem(question: str, context: str) -> Problem | None:
    """A question none of whose content words occurs in its context cannot be about it, and one
    that names its prompt ("the sentence", "the passage") where the context does not is about
    the prompt, not the subject; one that stutters is a loop, not a question."""
    mine = content_words(question)
    if not mine:
        return None  # the question's own checks judge a question of stopwords
    found = context_stems(context)
    if not any(stem(w) in found for w in mine):
        return "question_off_context", f"no content word of {question[:80]!r} occurs in the context"
    if meta := prompt_words(question, context):
        return "question_about_prompt", f"{question[:80]!r} speaks of its prompt: {', '.join(meta)}"
    if loop := stutters(question):  # "Xet-hf-xet-hf-xet-hf-hf-hf": a small model looping
        return "question_degenerate", f"{question[:80]!r} repeats itself: {loop}"
    return None


def prompt_words(text: str, *contexts: str) -> list[str]:
    """The words of the text that name its prompt ("sentence", "answer") and that none of the
    contexts uses: a model writing about its instructions, not about the subject (seen live: an
    edit "Correct answer", the injection prompt's own heading)."""
    named = {w for w in content_words(text) if w in PROMPT_WORDS}
    if not named:
        return []
    found = frozenset().union(*map(context_stems, contexts))
    return sorted(w for w in named if stem(w) not in found)


def repeated(text: str, config: GateConfig = DEFAULT_GATES, *, language: str = "en") -> str | None:
    """The most repeated sentence, line or word n-gram that occurs ``max_repeats`` times or
    more, each kind counted apart (counted together, an answer of one line of one sentence of
    n words was its own repetition three times over)."""
    if run := char_run(text, config):
        return run
    tokens = words(text)
    # a sentence, line or n-gram of two words or more that repeats brings its first two words
    # as often: where no two words follow each other that often, none repeats (in ASCII text,
    # whose words are the same cut from a part of it or from the whole; most answers end here)
    pairs = Counter(itertools.pairwise(tokens))
    if text.isascii() and max(pairs.values(), default=0) < config.max_repeats:
        return None
    sentences = Counter(" ".join(words(s)) for s in split_sentences(text, language))
    lines = Counter(" ".join(words(line)) for line in text.splitlines())
    n = config.repeat_ngram
    grams = Counter(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    found = [
        (times, unit)
        for counted in (sentences, lines, grams)
        for unit, times in counted.items()
        if times >= config.max_repeats and " " in unit  # a unit is two words or more
    ]
    return max(found, key=itemgetter(0))[1] if found else None


#: markdown draws rules and underlines headings with long runs of these: never a loop
_RULE_CHARACTERS = "-=*_~#."


def char_run(text: str, config: GateConfig = DEFAULT_GATES) -> str | None:
    """A run of ``max_char_run`` or more of one character (a space or a rule's excepted), shown
    as the character and the run's length."""
    for match in re.finditer(rf"(\S)\1{{{config.max_char_run - 1},}}", text):
        if match.group(1) not in _RULE_CHARACTERS:
            return f"{match.group(1)!r} x{len(match.group())}"
    return None


def markup_share(text: str) -> float:
    """The share of the text's non-space characters inside URLs, image or link markup, HTML tags."""
    spans = sorted(match.span() for pattern in (_URL, _MARKUP) for match in pattern.finditer(text))
    total = len(re.sub(r"\s", "", text)) if spans else 0
    if not total:
        return 0.0
    covered, reached = 0, 0
    for start, end in spans:  # overlapping spans counted once
        start = max(start, reached)
        if end > start:
            covered += sum(not c.isspace() for c in text[start:end])
            reached = end
    return covered / total


#: a question mark: Latin's, the full-width one of Chinese and Japanese, Arabic's
QUESTION_MARKS = ("?", "？", "؟")


def asks_question(text: str, language: str = "en") -> str | None:
    """A sentence of the text outside code that ends with a question mark."""
    prose = re.sub(r"```.*?(```|$)|`[^`\n]*`", " ", text, flags=re.DOTALL)
    return next((s for s in split_sentences(prose, language) if s.endswith(QUESTION_MARKS)), None)


@functools.lru_cache(maxsize=64)
def _runs(text: str, n: int) -> frozenset[str]:
    """Every run of ``n`` words of a text (a prompt's: made once, read for every answer)."""
    tokens = words(text)
    return frozenset(" ".join(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def echo(text: str, instructions: str, config: GateConfig = DEFAULT_GATES) -> str | None:
    """A run of ``echo_words`` words the text shares with the prompt's instructions."""
    n = config.echo_words
    runs = _runs(instructions, n)
    mine = words(text)
    return next((run for i in range(len(mine) - n + 1) if (run := " ".join(mine[i : i + n])) in runs), None)


def answer_problem(
    answer: str,
    context: str,
    *,
    instructions: str = "",
    prose: bool = True,
    config: GateConfig = DEFAULT_GATES,
    language: str = "en",
) -> Problem | None:
    """Why a clean answer is not a true, usable answer to learn from, or None. ``prose``: the
    answer should read as prose (markdown and paper answers), so markup may not dominate it;
    ``language``: the answer's, whose sentences are cut by its own rules."""
    if loop := repeated(answer, config, language=language):
        return "answer_repetition", f"{loop[:60]!r} occurs {config.max_repeats} or more times"
    if prose and (share := markup_share(answer)) > config.max_markup_share:
        return "answer_mostly_markup", f"{share:.0%} of the answer is URLs, images or markup"
    if question := asks_question(answer, language):
        return "answer_asks_question", f"the answer asks {question[:80]!r}"
    if instructions and (run := echo(answer, instructions, config)):
        return "answer_echoes_prompt", f"the answer repeats the instructions: {run!r}"
    if why := unsupported(answer, context, config):
        return "answer_unsupported", why
    return None


def unsupported(answer: str, context: str, config: GateConfig = DEFAULT_GATES) -> str | None:
    """Why a clean answer is not supported by its context, at any length: too few of its content
    words occur there, or it has no content word at all (nothing it says can be checked)."""
    share, counted = support(answer, context)
    if counted == 0:
        return "the answer has no content word to find in the context"
    if share < config.min_support:
        return f"{share:.0%} of its content words occur in the context (< {config.min_support:.0%})"
    return None


#: the categories whose span adds something; one the context already says is supported
ADDING = frozenset({"unsupported_addition", "fabricated_reference"})


#: words padded apart by runs of spaces inside a line ("what  we   have  seen")
_PADDED = re.compile(r"\w(?: {2,}\S+){2,}")
#: any word three times in a row ("no, no, no"), stopwords included
_SAID_THRICE = re.compile(r"\b(\w+)\b(?:\W+\1\b){2}", re.IGNORECASE)


def _noise(token: str) -> bool:
    """A long token whose letters flip case again and again ("jahnKcriN/zenSii9-H7kUKHU8"), as
    random characters do and names, even camel-cased ones, do not."""
    if len(token) < 24:
        return False
    letters = [c for c in token if c.isalpha()]
    return sum(a.islower() != b.islower() for a, b in itertools.pairwise(letters)) >= 10


def stutters(text: str, config: GateConfig = DEFAULT_GATES) -> str | None:
    """A content word said ``max_repeats`` times or more in one short text ("2B, 2B and 2B"),
    any word three times in a row, words padded apart by runs of spaces, or a text with no word
    at all: what a looping model writes into an edit."""
    if not words(text):
        return "(no word)"
    if run := char_run(text, config):
        return run
    if any(unicodedata.category(c) == "Cf" for c in text):
        return "(invisible characters)"
    if _PADDED.search(text):
        return "(runs of spaces between words)"
    if any(_noise(token) for token in text.split()):
        return "(random characters)"
    if thrice := _SAID_THRICE.search(text):
        return thrice.group(1).lower()
    # one-letter words count too: "ve 2 2 2 2 2" is a loop
    counted = Counter(w for w in words(text) if w not in STOPWORDS).most_common(1)
    return counted[0][0] if counted and counted[0][1] >= config.max_repeats else None


#: a claim has at least this many words; a replacement of a sentence with fewer claims nothing
MIN_CLAIM_WORDS = 3


def replaces_sentence_by_fragment(original: str, replacement: str) -> bool:
    """Whether a whole sentence (five words or more, ending as one) became a word or two: what is
    left claims nothing a reader could check (seen live on the embedded model: "emberlog is a
    structured logging library for Go services." -> "welcomed", another sentence -> "2cmh")."""
    # words, not runs between spaces: a Chinese sentence has no space in it
    sentence = len(words(original)) >= 5 and is_complete(original)
    return sentence and len(words(replacement)) < MIN_CLAIM_WORDS


def only_removes(original: str, replacement: str) -> bool:
    """Whether the replacement is the original with words taken out and nothing added (and no
    negation among what was taken out: removing one flips the claim)."""
    kept, given = words(replacement), words(original)
    # a replacement with no word at all is degenerate, not a removal (`stutters`)
    if not kept or len(kept) >= len(given) or negation_changed(original, replacement):
        return False
    position = 0
    for word in kept:
        while position < len(given) and given[position] != word:
            position += 1
        if position == len(given):
            return False
        position += 1
    return True


def edit_problem(
    original: str,
    replacement: str,
    *,
    category: str,
    context: str,
    config: GateConfig = DEFAULT_GATES,
    subcategory: str | None = None,
    code: bool = False,
    language: str = "en",
) -> Problem | None:
    """Why an injected edit does not make a span worth learning from: it changes nothing that
    matters, it only removes words of its original (what is left is still true, unless a
    negation was removed), it turns a sentence into a word or two (`replaces_sentence_by_fragment`),
    it adds what
    the context already says (word-bounded, case-insensitive), its text is a loop, a question or
    talk of its prompt, or its type says "numerical" or "temporal" where no number, date or time
    is changed (a name swapped for a name would be labelled a numerical error). In ``code`` only
    spacing is form; ``language``: the texts', whose sentences are cut by its own rules."""
    if says_the_same(original, replacement, code=code):
        return "no_op_edit", f"{original[:60]!r} -> {replacement[:60]!r} says the same"
    if only_removes(original, replacement):
        return "removal_only_edit", f"{original[:60]!r} -> {replacement[:60]!r} only removes words"
    if category in ADDING and in_context(replacement, context):
        return "span_in_context", f"{replacement[:60]!r} already occurs in the context"
    if (word := stutters(replacement, config)) and not stutters(original, config):
        return "degenerate_edit", f"{replacement[:60]!r} repeats {word!r}"
    if (question := asks_question(replacement, language)) and not asks_question(original, language):
        return "edit_asks_question", f"the edit writes a question, not a claim: {question[:60]!r}"
    if meta := prompt_words(replacement, original, context):
        return "edit_about_prompt", f"{replacement[:60]!r} speaks of its prompt: {', '.join(meta)}"
    if not code and replaces_sentence_by_fragment(original, replacement):
        return "fragment_edit", f"the sentence {original[:60]!r} became {replacement[:60]!r}"
    if subcategory == "numerical" and not (has_number(original) or has_number(replacement)):
        return "type_mismatch", f"{original[:60]!r} -> {replacement[:60]!r} changes no number"
    if subcategory == "temporal" and not (has_time(original) or has_time(replacement)):
        return "type_mismatch", f"{original[:60]!r} -> {replacement[:60]!r} changes no date, time or order"
    return None


#: every failure reason a gate gives (the summary counts them apart from other failures)
GATE_REASONS = frozenset(
    {
        "question_off_context",
        "question_echoes_prompt",
        "question_about_prompt",
        "question_degenerate",
        "answer_repetition",
        "answer_mostly_markup",
        "answer_asks_question",
        "answer_echoes_prompt",
        "answer_unsupported",
        "no_op_edit",
        "removal_only_edit",
        "fragment_edit",
        "span_in_context",
        "degenerate_edit",
        "edit_asks_question",
        "edit_about_prompt",
        "type_mismatch",
    }
)
