"""Hallucinations a small model cannot break: the answer's own text transformed by rules, as
FactCC makes its training claims, and offered as a menu the model chooses from.

Asked to write edits, the embedded model wrote "HTTPX" -> "True", "all" -> "alright" and
"pipeline" -> "multi-step"; the edits a rule made read like real slips ("100 rows" -> "35
rows"). Each rule here makes an edit of one type, so its label is true by construction:

- ``number``: a count changed, its unit kept, to another count of that unit the context gives in
  another role, else by a plausible amount (off by one, doubled, the next round number):
  contradiction/numerical (value_edits.py, context_values.py);
- ``date``, ``version``, ``duration``, ``ordering``: a year or date shifted, a version bumped, a
  duration changed, before/after or first/last flipped: contradiction/temporal;
- ``entity``: a name swapped for one that may stand in its place (prose_entities.py: of its
  listed class, or beside the same words) that the context names (a hard negative), else one of
  its listed class the context does not name: contradiction/entity; ``foreign_entity``: for one
  that only another document of the build names: fabricated_reference/entity;
- ``code``: code the answer quotes swapped for other code of its form the context quotes ("pass
  [`--rows`]" -> "pass [`--sort`]", code_swaps.py): contradiction/entity;
- ``negation``, ``comparative``: a negation added or removed, more/less, faster/slower:
  contradiction/relational; ``quantifier``, ``modal``: all/some, must/may: contradiction/value;
- ``swap``: two names of the answer traded ("for [Alembic now makes use of SQLAlchemy]'s ..."
  -> "for [SQLAlchemy now makes use of Alembic]'s ...", swapped_names.py): contradiction/relational;
- ``role``: a role swapped for its counterpart ("HTTP [client]" -> "HTTP [server]"):
  contradiction/relational; ``state``: a state for its opposite ("[enabled] by default" ->
  "[disabled] by default"): contradiction/value (opposites.py; most contexts spell both);
- ``term``: a common word of a class swapped for another of it that the context spells ("returns
  a [list]" -> "returns a [tuple]", term_classes.py): contradiction/value;
- ``addition``: a sentence of another document of the build that no sentence of this context
  supports, or one the context says of a name said of another of its names
  (context_additions.py), added after one of the answer's: unsupported_addition/claim.

Every candidate is checked before it is offered, as its edit will be (the gates, the span rules),
so whatever the model chooses applies. Names are told from words by Debian's English word list
(core/english.py): a rule that needs it offers nothing without it.

English only: the rules that read words (``negation``, ``comparative``, ``quantifier``, ``modal``,
the ``entity`` rules, ``swap``, ``role``, ``state``, ``term`` and ``addition``) apply to answers in
English; an answer in another language is offered the rules of digits alone (``number``,
``date``, ``version``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from random import Random

import regex
from pydantic import BaseModel, ConfigDict

from lettuce_build.core import english
from lettuce_build.core.edit_types import edit_type
from lettuce_build.core.edits import Edit, apply_edits, narrowed_to_insertions, placed_at
from lettuce_build.core.gates import edit_problem
from lettuce_build.core.sentences import is_complete, sentence_spans
from lettuce_build.core.spans import ValidationConfig, validate_spans
from lettuce_build.core.taxonomy import CONTRADICTION, FABRICATED_REFERENCE, UNSUPPORTED_ADDITION
from lettuce_build.core.words import content_stems, content_words, context_stems, in_context, words
from lettuce_build.rules.code_swaps import code_swaps
from lettuce_build.rules.context_additions import addable, said_of_another
from lettuce_build.rules.negations import NEEDS_NEGATION, negations
from lettuce_build.rules.opposites import opposites
from lettuce_build.rules.prose_entities import entity_swaps
from lettuce_build.rules.prose_names import blocked, free, names
from lettuce_build.rules.prose_words import (
    ADVERBS,
    ALTERNATIVES,
    FLIPS,
    IDIOM,
)
from lettuce_build.rules.rewording import LEAD, flip_lead
from lettuce_build.rules.swapped_names import swapped_names
from lettuce_build.rules.term_classes import class_swaps
from lettuce_build.rules.value_edits import FOLLOWING, numbers, temporal

#: the rules whose edits have each type (category, subcategory)
_RULES_BY_TYPE: dict[tuple[str, str], tuple[str, ...]] = {
    (CONTRADICTION, "numerical"): ("number",),
    (CONTRADICTION, "temporal"): ("date", "version", "duration", "ordering"),
    (CONTRADICTION, "entity"): ("entity", "code"),
    (FABRICATED_REFERENCE, "entity"): ("foreign_entity",),
    (CONTRADICTION, "relational"): ("negation", "comparative", "role", "swap"),
    (CONTRADICTION, "value"): ("quantifier", "modal", "state", "term"),
    (UNSUPPORTED_ADDITION, "claim"): ("addition",),
}
#: the type each rule's edits have
RULE_TYPES = {rule: kind for kind, rules in _RULES_BY_TYPE.items() for rule in rules}
#: a span and its replacement are at least this long (the span rules' minimum)
MIN_CHARS = 4
#: an edit widens by at most this many words to be found where it was made
MAX_WIDENING = 4

#: a determiner right after a word ("all the", "all its"): "some" needs "of" before it
_DETERMINER_AFTER = regex.compile(
    r"\s+(?:the|these|those|this|that|its|their|your|our|his|her|my)\b", regex.I
)
#: a negative right after a word ("sometimes not", "often no longer", "always never")
_NEGATIVE_AFTER = regex.compile(r"\s+(?:not|no|never|none|nothing)\b", regex.I)


class ProseEdit(BaseModel):
    """One offered hallucination: the text it replaces and what replaces it, typed by its rule."""

    model_config = ConfigDict(frozen=True)

    rule: str
    original: str
    hallucinated: str

    @property
    def entry(self) -> str:
        """How the menu shows it, and what the model answers with."""
        return f"{self.original}  ->  {self.hallucinated}"

    @property
    def kind(self) -> tuple[str, str]:
        """Its (category, subcategory)."""
        return RULE_TYPES[self.rule]

    def edit(self) -> Edit:
        category, subcategory = self.kind
        return Edit(
            original=self.original,
            hallucinated=self.hallucinated,
            label=self.rule,
            category=category,
            subcategory=subcategory,
        )


# -- where an edit may go -------------------------------------------------------------------


#: the word (or number, or percentage) just before a position, matched backwards from it
_WORD_BEFORE = regex.compile(r"[\w%]+\s+", flags=regex.REVERSE)
#: the name just before a position ("version", "Python", "chardet")
#: a lowercase word (an added sentence's words must all be English or the context's)
_LOWER_WORD = regex.compile(r"\b[a-z][a-z'-]*\b")


def _settled(answer: str, start: int, end: int, new: str) -> tuple[str, str] | None:
    """(original, hallucinated) replacing ``answer[start:end]`` with ``new``, widened by whole
    words until the edit is found exactly there and both sides have `MIN_CHARS` (None: it cannot)."""
    left, right = start, end
    for _ in range(MAX_WIDENING + 1):
        original = answer[left:right]
        hallucinated = answer[left:start] + new + answer[end:right]
        if (
            len(original.strip()) >= MIN_CHARS
            and len(hallucinated.strip()) >= MIN_CHARS
            and placed_at(answer, original) == left
        ):
            return original, hallucinated
        if following := FOLLOWING.match(answer, right):
            right = following.end()  # the next word, on the same run of text
        elif left > 0 and (before := _WORD_BEFORE.match(answer, 0, left)):
            left = before.start()
        else:
            return None
    return None


def _with_lead(answer: str, original: str, hallucinated: str) -> tuple[str, str] | None:
    """A negation of an answer led by "Yes, " or "No, ": the lead flipped with it, inside one
    edit from the lead on, so that the answer never contradicts itself (None: a negation past
    the first sentence, which the lead does not answer for)."""
    if not (lead := LEAD.match(answer)):
        return original, hallucinated
    at = placed_at(answer, original)
    first_sentence_end = sentence_spans(answer)[0][1]
    if at < 0 or at >= first_sentence_end:
        return None
    flipped = f"{flip_lead(lead['lead'])}, "
    return answer[: at + len(original)], flipped + answer[lead.end() : at] + hallucinated


# -- the rules ------------------------------------------------------------------------------


#: an article right before an edit ("an [optional] argument")
_ARTICLE_BEFORE = regex.compile(r"(?<![\w'])(?P<article>[Aa]n?) $")


def _with_article(answer: str, start: int, new: str) -> tuple[int, str]:
    """The edit at ``start`` widened to the article before it where the new words need the other
    one ("an [optional] argument" -> "[a required] argument", never "an required")."""
    found = _ARTICLE_BEFORE.search(answer[:start])
    if found is None or not new[:1].isalpha():
        return start, new
    article = found["article"]
    fitting = "an" if _vowel_sound(new.split(" ", 1)[0]) else "a"
    if article.lower() == fitting:
        return start, new
    return found.start(), f"{fitting.capitalize() if article[0].isupper() else fitting} {new}"


def _vowel_sound(word: str) -> bool:
    """Whether ``word`` is said opening with a vowel: an acronym by its first letter's name ("an
    HTTP", "an SQL", "a URL"), a word by its first letter, but for "u" said "you" ("a unique")."""
    if word[:2].isupper():
        return word[0] in "AEFHILMNORSX"
    lowered = word.lower()
    if lowered.startswith(("uni", "use", "usu", "one", "eu")):
        return False
    return lowered.startswith(("hour", "honest")) or lowered[:1] in tuple("aeiou")


def _flips(answer: str, context: str) -> Iterator[tuple[int, int, str, str]]:
    spelled = set(words(context))
    for match in regex.finditer(r"(?<![\w'-])[a-z]+(?:n't)?(?![\w'-])", answer):
        word = match.group()
        if word in FLIPS and not IDIOM.search(answer[max(0, match.start() - 12) : match.end() + 12]):
            new, rule = FLIPS[word]
            if new not in spelled:  # another contradicting word the context spells, where it has one
                new = next((other for other in ALTERNATIVES.get(word, ()) if other in spelled), new)
            if rule == "quantifier" and word not in ADVERBS and not _quantifies(answer, match.end()):
                continue  # "this is all built" holds no quantity to change
            if rule == "quantifier" and _NEGATIVE_AFTER.match(answer, match.end()):
                continue  # "sometimes no longer apply" made "always no longer apply" reads as no English
            if rule == "modal" and _NEGATIVE_AFTER.match(answer, match.end()):
                continue  # "may not be desirable" made "must not be desirable": a prohibition, no flip
            if rule == "negation" and answer[: match.start()].endswith(", "):
                continue  # "only the name, never the product" made "only the name, always the product"
            if rule == "negation" and NEEDS_NEGATION.match(answer, match.end()):
                continue  # "doesn't enforce any" made "does enforce any": "any" needs the negation
            following = FOLLOWING.match(answer, match.end())
            if rule == "ordering" and word in ("before", "after") and not following:
                continue  # an adverb ("used that API before,"): "used that API after" is no English
            start = match.start()
            if word == "all" and new in ("some", "most") and _DETERMINER_AFTER.match(answer, match.end()):
                new = f"{new} of"  # "all the features" made "some the features"
            elif (
                word == "few"
                and answer[max(0, start - 2) : start] == "a "
                and not answer[start - 3 : start - 2].isalnum()
            ):
                start -= 2  # "a few ways" made "a many ways"
            elif word == "more" and following and _is_plural(following.group(1)):
                new = "fewer"  # "more operations" made "less operations"
            yield start, match.end(), new, rule
    yield from negations(answer)


def _quantifies(text: str, end: int) -> bool:
    """Whether the quantifier ending at ``end`` is followed by what it counts: "of", "the", or a
    plural noun ("all tests"), not an adjective or a verb ("most convenient", "all built")."""
    following = FOLLOWING.match(text, end)
    word = following.group(1).lower() if following else ""
    return word in ("of", "the") or _is_plural(word)


def _is_plural(word: str) -> bool:
    """Whether a word reads as a plural noun ("tests", not "class" or "is")."""
    return word.endswith("s") and not word.endswith("ss") and len(word) > 3


def _additions(
    answer: str, context: str, donor: str, draw: Random, *, refused: tuple[str, ...]
) -> Iterator[tuple[int, int, str, str]]:
    """A sentence of the donor that this context does not support, added after an answer sentence:
    of those, the one sharing most words with the context (a sponsor's blurb added to a sentence
    on classes read as what it was, and the plausibility check refused it), none ``refused``."""
    if not english.known() or not donor:
        return
    context_words = set(words(context))
    supports = [set(content_words(context[s:e])) for s, e in sentence_spans(context)]
    usable = []
    for start, end in sentence_spans(donor):
        sentence = " ".join(donor[start:end].split())
        said = content_words(sentence)
        if not addable(sentence) or "\n" in donor[start:end]:
            continue
        unknown = [
            w for w in _LOWER_WORD.findall(sentence)
            if w not in context_words and not english.is_english(w)
        ]  # fmt: skip
        alien = [n for n in names(sentence) if not in_context(n, context)]
        most = max((len(set(said) & s) for s in supports), default=0)
        if not unknown and not alien and said and most * 2 < len(set(said)):
            if not any(span in sentence for span in refused):
                usable.append(sentence)
    answer_sentences = [(s, e) for s, e in sentence_spans(answer) if is_complete(answer[s:e])]
    if usable and answer_sentences:
        topical = context_stems(context)
        added = max(usable, key=lambda sentence: (len(content_stems(sentence) & topical), draw.random()))
        for start, end in draw.sample(answer_sentences, min(2, len(answer_sentences))):
            yield start, end, f"{answer[start:end]} {added}", "addition"


def _offered_ok(answer: str, context: str, edit: ProseEdit, language: str) -> bool:
    """Whether the edit passes what its application will check: the gates and the span rules."""
    category, subcategory = edit.kind
    if edit_type(edit.original, edit.hallucinated, category, subcategory) != edit.kind:
        return False  # its injection would type it otherwise (an added sentence holding a "not")
    if edit_problem(
        edit.original,
        edit.hallucinated,
        category=category,
        context=context,
        subcategory=subcategory,
        language=language,
    ):
        return False
    result = narrowed_to_insertions(apply_edits(answer, [edit.edit()], MIN_CHARS))
    if not result.spans:
        return False
    return not validate_spans(
        result.text, result.spans, config=ValidationConfig(), clean_answer=answer, context=context
    )


@functools.lru_cache(maxsize=256)
def prose_edits(
    answer: str,
    context: str,
    *,
    donor: str,
    seed: tuple[object, ...] = (),
    language: str = "en",
    refused: tuple[str, ...] = (),
) -> tuple[ProseEdit, ...]:
    """Every rule's edits of ``answer``, in answer order, each checked (see `_offered_ok`), one per
    original text. ``donor``: another document of the build (foreign names, added sentences);
    ``refused``: spans a check refused at an earlier attempt (an added sentence holding one is
    not offered, and the next one is);
    ``language``: the answer's (the rules that read words are English only). Cached: an item's
    schema, prompt and parse all read them."""
    draw = Random(repr(("prose_edits", *seed)))
    untouchable = blocked(answer)
    made = [*numbers(answer, context, draw), *temporal(answer, context, draw)]
    if language == "en":
        made += [
            *_flips(answer, context),
            *entity_swaps(answer, context, donor, draw),
            *opposites(answer, context),
            *code_swaps(answer, context),
            *swapped_names(answer, context),
            *class_swaps(answer, context),
            *_additions(answer, context, donor, draw, refused=refused),
            *said_of_another(answer, context, draw),
        ]
    found: dict[str, ProseEdit] = {}
    for start, end, new, rule in sorted(made, key=lambda m: (m[0], m[1])):
        if rule not in ("addition", "code") and not free(untouchable, start, end):
            continue
        if rule not in ("addition", "code"):
            start, new = _with_article(answer, start, new)
        settled = _settled(answer, start, end, new)
        if settled is not None and rule == "negation":
            settled = _with_lead(answer, *settled)
        if settled is None or settled[0] in found:
            continue
        edit = ProseEdit(rule=rule, original=settled[0], hallucinated=settled[1])
        if _offered_ok(answer, context, edit, language):
            found[edit.original] = edit
    return tuple(found.values())
