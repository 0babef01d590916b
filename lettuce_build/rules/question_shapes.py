"""Questions made from a sentence's own words, as the code source makes its requests from an
issue's: the sentence that answers is read for a shape a question can be turned from, and the
question is that shape turned ("To install attrs, run ..." -> "How do you install attrs?";
"`node` will be an AST node" stays unshaped; "The cache stores 10 files" -> "How many files does
the cache store?"). A small model then only chooses among them (`stages.question_choice`).

The shapes are English (the sentence's subject, a verb from a closed list, a modal or the
copula; the words they are read with are in `stages.question_words`); a sentence none fits
offers nothing, and the question is written by the model instead.
Each question carries the type of the taxonomy it is (`stages.questions.QUESTION_TYPES`).
"""

from __future__ import annotations

import json
from pathlib import PurePath
from typing import Any

import regex

from lettuce_build.core import english
from lettuce_build.rules.question_grammar import (
    NUMBER,
    PLAIN,
    VERB_FORMS,
    Shaped,
    after_auxiliary,
    alternation,
    as_subject,
    asks_alone,
    base_form,
    plain,
    singular,
    subject_then,
)
from lettuce_build.rules.question_words import (
    ASKED_AS,
    COUNTING,
    COURTESY,
    DANGLING,
    FROM_A_SOURCE,
    LINKING,
    NOT_SUBJECT,
    WANTING,
)
from lettuce_build.rules.verb_questions import verb_questions
from lettuce_build.rules.verbs import also_noun, present_base

__all__ = ["Shaped", "opening_name", "question_shapes", "subject_name"]


_COUNT_FORMS = {"has": "have"} | {form: verb for verb in COUNTING for form in (verb, singular(verb))}
#: a count of things, perhaps approximate ("over 150 different plugins", "up to 15 items")
_COUNT = (
    r"(?:over |about |around |up to |at most |more than |at least |nearly |only )?"
    rf"{NUMBER} (?:different |distinct |separate )?(?P<noun>[a-z]{{3,}}s)\b"
)


#: a verb a feature is asked by ("fastgrid supports ..."): asked "What does fastgrid support?"
_ASKED = subject_then(rf"(?:also )?(?P<verb>{alternation(list(ASKED_AS))}) \S")
#: a count a subject has ("fastgrid offers 12 themes"): asked "How many themes does ... offer?"
_COUNTED = subject_then(rf"(?:also )?(?P<verb>has|{alternation(list(COUNTING))}) {_COUNT}")
#: a count a modal allows ("Members may borrow up to 15 items"): asked "How many items may ...?"
_MAY_COUNT = subject_then(rf"(?P<modal>may|can|must) (?P<verb>[a-z]{{3,}}) {_COUNT}")
#: an event in a year ("The library opened in 1962"): asked "When did ...?"
_IN_A_YEAR = subject_then(r"(?P<verb>[a-z]{3,}ed|began|moved) in (?:19|20)\d\d\b")
#: a subject and what it is ("fastgrid is a table library", "Its tables are not sorted")
_COPULA = subject_then(r"(?P<be>is|are|was|were) (?P<not>not )?(?P<rest>.+)$")
#: how long a subject takes ("A full build takes about ten minutes"): asked "How long does ...?"
_TAKES = subject_then(
    r"(?P<verb>takes?) (?:about |around |over |under |up to |less than |more than |nearly )?"
    r"(?:\d[\d,.]*|an?|one|two|three|four|five|ten|a few) "
    r"(?:milliseconds?|ms|seconds?|minutes?|hours?|days?|weeks?)\b"
)
#: an "it" that stands for nothing, only for what follows ("It is possible to ...")
_EXPLETIVE = regex.compile(
    r"^It (?:is|was) (?:also |now |still |not )?(?:possible|recommended|necessary|important|advisable|worth"
    r"|best|better|common|likely|unlikely|true|clear|known)\b"
)
_THERE_ARE = regex.compile(
    rf"^There (?P<be>are|were) {_COUNT}(?:(?P<where> (?:in|per|for) {PLAIN}{{3,60}})(?:,|$)|[ ,]|$)"
)
#: a label a sentence opens with, no part of what it says ("``target``: The values ...", "Note: ...")
_LABEL = regex.compile(r"^(?:`{1,2}[^`]{1,40}`{1,2}|\*\*[^*]{1,40}\*\*|[A-Z][a-z]{1,15}):\s+(?=\p{Lu}|`)")
#: a sentence opening with a phrase in bold, and the word after it
_BOLD_TITLE = regex.compile(r"\*\*[^*\n]{1,60}(?<!:)\*\*\s+(?P<next>[\w'’]+)")
#: words that follow a subject: a bold opening followed by one is the sentence's subject
#: ("**Typer** is ..."), by another a list item's title ("**Multi-language support** out of ...")
_AFTER_A_SUBJECT = (
    frozenset("is are was were has have had can cannot will would should must may does do did also".split())
    | frozenset(VERB_FORMS)
    | frozenset(_COUNT_FORMS)
)
#: a plural subject: its head ending in "s", or two things joined
_PLURAL = regex.compile(r"(?<![su'’])s$|\band\b|\bboth\b|\ball\b")
#: a preposition after a subject's head ("builds from Git"); "of" is not one ("some of the hooks")
_AFTER_HEAD = regex.compile(r" (?:from|in|on|for|with|at|by|under|over|without|within|like) ")
#: a pronoun an asked verb takes: the question would ask for "it"
_PRONOUN_AFTER = regex.compile(r" (?:it|them|this|that|these|those|one)\b")
#: where a predicate's own clause ends and an aside begins ("very sparse, with an average of ...")
_ASIDE = regex.compile(r", (?:with|which|where|as|since|because|so|each|both|making|allowing) ")
#: a predicate a yes/no question carries whole: up to ten plain words, no clause after a comma
_PLAIN_PREDICATE = regex.compile(rf"{PLAIN}{{2,90}}")


_CAN = after_auxiliary(r"(?:can(?:not| not)?|can't)")
_WILL = after_auxiliary("will")
_DOES_NOT = after_auxiliary(r"(?P<aux>does|do)(?: not|n't)")
_TO_GOAL = regex.compile(
    rf"^To (?P<goal>[a-z]+ {PLAIN}{{3,80}}?)(?:, \S| (?=it's best|it is best|you (?:can|should|need|must)\b))"
)
#: whether a thing exists ("There is no corresponding convention for private arguments"): asked
#: "Is there a corresponding convention for private arguments?"
_THERE_IS = regex.compile(
    rf"^There (?P<be>is|are) (?P<not>no|not an?|not any|an?|one) (?P<what>[a-z]{PLAIN}{{3,70}}?)$"
)
_YOU_CAN = regex.compile(
    rf"^You can (?P<goal>[a-z]{PLAIN}{{3,80}}?)(?P<how> (?:by|with|using|via|through) .+)?$"
)
_IF = regex.compile(rf"^If (?P<condition>\S+ {PLAIN}{{3,80}}?)(?:,| then) (?P<then>\S.*)")
#: a parenthesis, however nested ("(or an iterable with `len()`)")
_ASIDE_IN_PARENTHESES = regex.compile(r" (?P<aside>\((?:[^()]|(?&aside))*\))")
#: a term and its definition, as a list defines them ("`idna` - Internationalized domain name
#: support"), or a name and its apposition ("Uvicorn, an ASGI web server, supports ...")
_DEFINED = regex.compile(
    r"^(?P<term>`[^`]{1,40}`|\p{Lu}[\p{L}\p{N}_.-]{1,30}) (?:-|–|—) \p{Lu}\p{Ll}"
    r"|^(?P<term>\p{Lu}[\p{L}\p{N}_.-]{1,30}), (?:an?|the) [^,]{3,60}, [a-z]"
)
#: a case a sentence opens with, and what happens in it ("When autogenerate renders constraints,
#: it renders them with their completed name")
_WHEN = regex.compile(rf"^(?P<word>When|Once|After) (?P<condition>\S+ {PLAIN}{{3,80}}?), (?P<then>\S.*)")
#: a case's first word that points back or stands for nothing: "When this happens", "When it runs"
LOWERED_OPENERS = frozenset("this that these those it they there".split())
#: a phrase a sentence opens with that sets its scene, before its subject ("Leveraging Starlette
#: and asyncio, Shiny allows ...", "When making a request over HTTPS, HTTPX needs ...")
_OPENING_PHRASE = regex.compile(
    rf"^(?:When|Once|As|After|Before|In|For|By|On|With|Through|Unlike|Like|Under|Within|\p{{Lu}}[a-z]+ing)"
    rf" {PLAIN}{{3,80}}, (?=\p{{Lu}}|`|[a-z]+ )"
)
#: a word that links a sentence to the one before without being part of its claim ("However,
#: `httpx.Request()` does not support ...", "By default, HTTPX verifies ..."); what follows is
#: asked as a sentence of its own
_MARKER = regex.compile(rf"^(?:{'|'.join(LINKING)}),? (?=\p{{L}}|`)")
#: a concession a sentence opens with: its main clause is what it claims ("Although GraphQL
#: support is no longer built in, you can still use GraphQL with Starlette")
_CONCESSION = regex.compile(rf"^(?:Although|Though|While|Whereas) {PLAIN}{{3,100}}, (?=\p{{Ll}})")
#: a second claim after "but": the first is asked on its own ("HTTP/2 does not change the core
#: semantics, but alters the way data is sent" -> "Does HTTP/2 change the core semantics?")
_BUT = regex.compile(r",? but ")
#: what follows a condition that is an invitation, not an answer ("If you would like to integrate
#: your library, feel free to open an issue")
_INVITATION = regex.compile(
    r"(?:then )?(?:feel free|please|contact|reach out|get in touch|let us know|open an issue|check out"
    r"|consider|you might|you may want|we would|we'd|we’d)\b",
    regex.I,
)
#: a predicate in the passive with how it was done ("computed from ...", "stored in ..."): asked
#: as "How are X computed?"
_PASSIVE = regex.compile(
    r"^(?P<adverb>(?:also|now|usually|typically|often|then|first) )?"
    r"(?P<participle>[a-z]{3,}ed|built|made|written|done|taken|given|shown|kept|held|sent|run|set"
    r"|read|found|known|drawn|chosen) (?P<preposition>from|by|with|in|into|using|via|through|as|on|against"
    r"|at|between|across|within|under) \S"
)
#: a year after a passive's "in" ("founded in 1962")
_YEAR_AFTER = regex.compile(r"(?<= in )(?:19|20)\d\d\b")
#: a passive's preposition that says where it was done ("documented in `core.py`", "included in
#: the tox environments", "written on STDOUT"; "stored in a sparse matrix" and "written in
#: Python" say how), and a time after one ("written in a time where ...": neither how nor where)
_PLACE = regex.compile(r"(?:(?:in|within) (?:the |`)|(?:on|at) )")
#: a participle and preposition that name what a thing stands on, not a place
_FOUNDATION = frozenset({("based", "on"), ("built", "on")})
_TIME_AFTER = regex.compile(
    r"(?:a |the |an )?(?:time|times|era|day|days|year|years|past|future|version|release)\b"
)
#: a second clause in a predicate ("encrypted with AES and the key is derived with scrypt"): a
#: yes/no question cannot carry it
_SECOND_CLAUSE = regex.compile(
    r" (?:is|are|was|were|has|have|does|do|can|will) "
    r"| and (?:still |also |now )?[a-z]+s (?:with|over|on|in|for|to|the|a|an|no|not)\b"  # "and works with"
    r"|n't\b"  # "passed the current context and imported templates aren't"
)
#: a subject's first word that makes it a quantity of things, not a thing
_QUANTIFIERS = frozenset("every each all some any most many no".split())
#: a predicate that defines its subject ("is a library", "are the files"), or gives its purpose
_DEFINING = regex.compile(r"^(?:a|an|the|one of|used (?:to|for)|to) ")
#: a predicate that is a value: a number or a version, perhaps "now" ("is now 0.7.6", "is 30 seconds")
_VALUE = regex.compile(r"^(?:now |currently )?(?:v?\d[\d.,]*\w*|`[^`]+`)(?: [a-z]+)?(?:,|$)")
#: a subject's first word that already determines it
_DETERMINERS = frozenset("the a an each every all some your its this these no any my our their".split())
MAX_WORDS = 14


def _determined(subject: str) -> str:
    """A common-noun subject with its article ("minimum version" -> "the minimum version")."""
    first = subject.split(" ", 1)[0]
    common = first.islower() and english.is_english(first)
    return f"the {subject}" if common and first not in _DETERMINERS else subject


def question_shapes(sentence: str, name: str | None = None) -> list[Shaped]:
    """Questions ``sentence`` answers, turned from its own words (none: it has no shape known
    here). ``name``: what "It" stands for (the document's project), when known."""
    if (title := _BOLD_TITLE.match(sentence.lstrip())) and title["next"] not in _AFTER_A_SUBJECT:
        return []  # a list item's bold title ("**Multi-language support** out of the box: ...")
    # a parenthesis is an aside a question leaves out ("an aspirate (FNA) of a mass")
    text = " ".join(_ASIDE_IN_PARENTHESES.sub("", plain(sentence)).split()).rstrip(".:")
    text = _LABEL.sub("", text)
    first = text.split(" ", 1)[0] if text else ""
    if not first or (first[0].islower() and english.is_english(first) is not False):
        return []  # a list item's fragment or a continuation ("a concise overview ..."): no sentence
    if opened := _CONCESSION.match(text) or _MARKER.match(text):
        main = text[opened.end() :]
        text = main[0].upper() + main[1:]
    if _EXPLETIVE.match(text):
        return []  # "It is possible to pack custom types" is not about "it": no "Is msgpack possible to ...?"
    shaped: list[Shaped] = []
    if (match := _DEFINED.match(text)) and english.is_english(match["term"].strip("`")) is not True:
        shaped.append(Shaped(f"What is {match['term']}?", "Definition"))
    if match := _TO_GOAL.match(text):
        shaped.append(Shaped(f"How do you {match['goal']}?", "Instrumental/Procedural"))
    if match := _YOU_CAN.match(text):
        if match["how"]:
            shaped.append(Shaped(f"How can you {match['goal']}?", "Instrumental/Procedural"))
        shaped.append(Shaped(f"Can you {match['goal']}?", "Verification"))
    claim = regex.split(r":\s", text, maxsplit=1)[0]  # "There is no X: ..." (never inside "`x:`")
    if (match := _THERE_IS.match(claim)) and match["what"].split()[-1] not in DANGLING:
        what = match["what"]
        article = "any" if match["be"] == "are" else "an" if what[0] in "aeiou" else "a"
        shaped.append(Shaped(f"{match['be'].capitalize()} there {article} {what}?", "Verification"))
    if match := _THERE_ARE.match(text):
        where = match["where"] or ""
        shaped.append(Shaped(f"How many {match['noun']} {match['be']} there{where}?", "Quantification"))
    if (match := _IF.match(text)) and not _INVITATION.match(match["then"]):
        shaped += _conditional(match["condition"])
    if (match := _WHEN.match(text)) and not _INVITATION.match(match["then"]):
        shaped += _conditional(match["condition"], word=match["word"].lower())
    shaped += _subject_shapes(text, name)
    if (opening := _OPENING_PHRASE.match(text)) and not shaped:
        # "When making a request over HTTPS, HTTPX needs to verify ...": the main clause is asked
        main = text[opening.end() :]
        # a capital past the sentence's start is a name's ("..., Shiny allows"): kept as written
        named = name or (main.split(" ", 1)[0] if main[:1].isupper() else None)
        shaped += _subject_shapes(main, named) + verb_questions(main, named)
    if (first_claim := _BUT.split(text, maxsplit=1)[0]) != text:
        shaped += _subject_shapes(first_claim, name)
    shaped += verb_questions(text, name)
    asked = (Shaped(regex.sub(r" (?:also|still|even)\b", "", s.question), s.question_type) for s in shaped)
    return [
        s for s in dict.fromkeys(asked) if len(s.question.split()) <= MAX_WORDS and asks_alone(s.question)
    ]


def _conditional(condition: str, word: str = "if") -> list[Shaped]:
    """What "If <condition>, ..." answers: how to reach a goal ("If you want to use DNSSEC, run
    ...": "How do you use DNSSEC?"), or what happens in a case, not in a courtesy ("If you love
    it, ...") and not in a case without its subject ("If not specified, ..."); "When <condition>,
    ..." the same ("When the child process is stuck, it is killed": "What happens when the child
    process is stuck?"), and "Once ..." and "After ..." ("After the migration has run, ...")."""
    if wanted := regex.match(rf"(?:you|we) (?:{'|'.join(WANTING)}) (?P<goal>[a-z].+)", condition):
        return [Shaped(f"How do you {wanted['goal']}?", "Instrumental/Procedural")]
    first = condition.split(" ", 1)[0]
    if (
        first in ("not", "only", "given") or first.endswith("ed")
        or regex.match(rf"you (?:{'|'.join(COURTESY)})\b", condition)
        or "please" in condition.split()
        or len(condition.split()) < (4 if word == "if" else 3)  # "When types are rendered" is a case
    ):  # fmt: skip
        return []
    if word != "if" and (first.endswith("ing") or first in LOWERED_OPENERS):
        return []  # "When using X, ...", "When this happens, ...": no case of its own
    if word in ("once", "after") and first in ("you", "we"):
        return []  # "Once you have a token, ...": a step of instructions, no event
    return [Shaped(f"What happens {word} {condition}?", "Causal Consequence")]


def _subject_shapes(text: str, name: str | None) -> list[Shaped]:
    shaped: list[Shaped] = []
    if (match := _COUNTED.match(text)) and (subject := as_subject(match["subject"], name)):
        verb = _COUNT_FORMS[match["verb"]]
        aux = "do" if match["verb"] == verb else "does"
        shaped.append(Shaped(f"How many {match['noun']} {aux} {subject} {verb}?", "Quantification"))
    if (match := _MAY_COUNT.match(text)) and (subject := as_subject(match["subject"], name)):
        modal, verb = match["modal"], match["verb"]
        shaped.append(Shaped(f"How many {match['noun']} {modal} {subject} {verb}?", "Quantification"))
    if (match := _IN_A_YEAR.match(text)) and (subject := as_subject(match["subject"], name)):
        if base := base_form(match["verb"]):
            shaped.append(Shaped(f"When did {subject} {base}?", "Concept Completion"))
    if (match := _TAKES.match(text)) and (subject := as_subject(match["subject"], name)):
        aux = "does" if match["verb"] == "takes" else "do"
        shaped.append(Shaped(f"How long {aux} {subject} take?", "Quantification"))
    if (match := _ASKED.match(text)) and (subject := as_subject(match["subject"], name)):
        verb = VERB_FORMS[match["verb"]]
        aux = "do" if match["verb"] == verb else "does"
        # "do" wants a plural subject ("These bindings expose"): without one, "support" in
        # "Python 2.x support ended" is a noun; and "uses it" asks for a pronoun
        head = _AFTER_HEAD.split(match["subject"], maxsplit=1)[0]
        plural = aux == "does" or _PLURAL.search(head)
        to_verb = text.startswith(" to ", match.end("verb"))  # "needs to verify": `verb_questions` asks it
        if plural and not to_verb and not _PRONOUN_AFTER.match(text, match.end("verb")):
            shaped.append(Shaped(f"What {aux} {subject} {ASKED_AS[verb]}?", "Feature Specification"))
    if (match := _COPULA.match(text)) and (subject := as_subject(match["subject"], name)):
        rest = match["rest"]
        # a quantified subject is described, not defined: "Every log line is a single JSON object"
        # is asked "Is every log line a single JSON object?", never "What is every log line?"
        quantified = subject.split(" ", 1)[0].lower() in _QUANTIFIERS
        if quantified and _DEFINING.match(rest) and not rest.startswith(("used", "to ")):
            rest = rest.split(",", 1)[0]
            if _PLAIN_PREDICATE.fullmatch(rest) and len(rest.split()) <= 10:
                shaped.append(Shaped(f"{match['be'].capitalize()} {subject} {rest}?", "Verification"))
        elif _VALUE.match(rest) and not match["not"] and not quantified:  # "The minimum version is 0.7.6"
            shaped.append(Shaped(f"What {match['be']} {_determined(subject)}?", "Concept Completion"))
        elif _DEFINING.match(rest) and not match["not"]:
            kind = "Goal Orientation" if rest.startswith(("used", "to ")) else "Definition"
            asked = f"What {match['be']} {subject} used for?" if rest.startswith("used") else None
            shaped.append(Shaped(asked or f"What {match['be']} {subject}?", kind))
        elif not match["not"] and (passive := _PASSIVE.match(rest)):
            done = f"{match['be']} {subject} {passive['adverb'] or ''}{passive['participle']}"
            where = passive["preposition"] == "from" and passive["participle"] in FROM_A_SOURCE
            place = bool(_PLACE.match(rest, passive.start("preposition")))
            if (passive["participle"], passive["preposition"]) in _FOUNDATION:
                # "is based on Grokzen's redis-py-cluster": what it stands on, not where
                shaped.append(Shaped(f"What {done} {passive['preposition']}?", "Concept Completion"))
            elif _YEAR_AFTER.match(rest, passive.end() - 1):  # "founded in 1962": when, not how
                shaped.append(Shaped(f"When {done}?", "Concept Completion"))
            elif _TIME_AFTER.match(rest, passive.end() - 1):
                pass  # "written in a time where ...": neither how nor where
            elif place:  # "written on STDOUT", "documented in `core.py`": where, not how
                shaped.append(Shaped(f"Where {done}?", "Concept Completion"))
            else:
                shaped.append(
                    Shaped(f"Where {done} from?" if where else f"How {done}?", "Instrumental/Procedural")
                )
        rest = _ASIDE.split(rest, maxsplit=1)[0]  # the aside is the answer's, not the question's
        if (
            len(rest.split()) <= 10
            and _PLAIN_PREDICATE.fullmatch(rest)
            and rest.rsplit(" ", 1)[-1] not in DANGLING
            and not _DEFINING.match(rest)
            and not _SECOND_CLAUSE.search(rest)
        ):
            shaped.append(Shaped(f"{match['be'].capitalize()} {subject} {rest}?", "Verification"))
    if (match := _CAN.match(text)) and (subject := as_subject(match["subject"], name)):
        shaped.append(Shaped(f"Can {subject} {match['rest']}?", "Verification"))
    if (match := _WILL.match(text)) and (subject := as_subject(match["subject"], name)):
        shaped.append(Shaped(f"Will {subject} {match['rest']}?", "Verification"))
    if (match := _DOES_NOT.match(text)) and (subject := as_subject(match["subject"], name)):
        shaped.append(Shaped(f"{match['aux'].capitalize()} {subject} {match['rest']}?", "Verification"))
    return shaped


def subject_name(item: dict[str, Any]) -> str | None:
    """What "It" stands for in an item's document: its project's name, from the document's file
    name or repository ("attrs.md", "python-attrs/attrs"), when it reads as a name."""
    metadata = item.get("metadata") or {}
    if isinstance(metadata, str):  # as work items carry it: JSON
        metadata = json.loads(metadata)
    doc_id = str(metadata.get("doc_id") or "")
    name = PurePath(doc_id.rsplit("/", 1)[-1]).stem if doc_id else ""
    return name if regex.fullmatch(r"[\p{L}][\p{L}\p{N}_.-]{1,39}", name) else None


def _is_verb(word: str) -> bool:
    """Whether ``word`` after a subject is its verb: an auxiliary, or a verb in the third person
    that is no plural noun besides ("offers" is, from the closed list; "classes" is not)."""
    return word in _AFTER_A_SUBJECT or (present_base(word) is not None and not also_noun(word))


#: a name a passage may open with: a word of its own ("Greppo", "HTTP/2") or code
_NAME = regex.compile(r"`[^`\s]{1,40}`|[\p{Lu}\p{N}][\p{L}\p{N}_./+-]{1,39}")


def opening_name(sentences: tuple[str, ...]) -> str | None:
    """What "It" stands for in a passage that names no project (a custom row): the subject of
    its first sentence, when that is a name and no common word ("Greppo is a Python framework
    ... It provides a toolkit ..."; not "The" nor "Middleware")."""
    first, _, rest = plain(sentences[0]).partition(" ") if sentences else ("", "", "")
    if not _NAME.fullmatch(first) or first.lower() in NOT_SUBJECT or not _is_verb(rest.split(" ", 1)[0]):
        return None  # "Middleware classes should ...": a noun's first word
    word = first.strip("`")
    named = first.startswith("`") or english.is_english(word) is False or english.is_proper(word)
    return first if named else None
