"""Faithful rewordings of an answer chosen from its context, made before any edit, so that clean
and hallucinated answers alike are not copies: a word the context lacks, or a departure from a
copied sentence, then tells a detector nothing on its own.

Each rule changes form, never what a sentence claims (the order of its steps, "only", the scope
of a negation stay as they are):

- markup: a link's target dropped, its text kept ("[the docs](https://…)" -> "the docs", and
  markdown's "[ASGI][asgi]" and "[Werkzeug]", reStructuredText's "`SQLAlchemy <http://…>`_" the
  same), an image dropped, bold and italic markers dropped;
- contractions: "does not" -> "doesn't", "cannot" -> "can't", "it is" -> "it's" (not where a
  contraction cannot stand: at a clause's end, "that is, ...");
- plain words for wordy or formal ones (`plain_words`): "in order to" -> "to", "provides" ->
  "offers", "multiple" -> "several", "However, " -> "But " (never a modal, a negation, an order
  or "only");
- a list joined with the sentence that leads it (`joined_list`): "HTTPX gives you:" over its
  items -> "HTTPX gives you a broadly requests-compatible API and HTTP/2 support.";
- "It" for an opening subject the question names (`it_for_subject`): "What is HTTPX?" is
  answered "It's a fully featured HTTP client.";
- a yes/no answer led by its yes or no (`led`): "Yes, types are entirely optional with attrs."
  An edit that flips the sentence flips the lead with it (`flip_lead`), inside its span, so no
  answer contradicts itself.

Code (inline or fenced) is never touched. The edit rules then read the reworded answer, so the
spans of an edit are exact in the text that is published.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import regex

from lettuce_build.core import english
from lettuce_build.rules.plain_words import plainer
from lettuce_build.rules.prose_words import NEGATIVES
from lettuce_build.rules.verbs import VERB_OBJECT, also_noun, present_base

#: code the rewordings leave alone: fenced blocks, reStructuredText's literals, inline spans
_CODE = regex.compile(r"```.*?```|``[^`\n]+``|`[^`\n]*`", regex.S)
#: an image (with a space after it) and a link: ``![alt](target)``, ``[text](target "title")``
_IMAGE = regex.compile(r"!\[[^\]\n]*\]\([^)\s]*(?:\s+\"[^\"\n]*\")?\)[ \t]?")
_LINK = regex.compile(r"\[([^\]\n]*)\]\([^)\s]*(?:\s+\"[^\"\n]*\")?\)")
#: markdown's link by reference ("[ASGI][asgi]", "[the docs][]")
_REFERENCE = regex.compile(r"(?<!!)\[([^\]\n]+)\]\[[^\]\n]*\]")
#: markdown's shortcut reference ("a wrapper around [Werkzeug] and [Jinja]"): a name of up to
#: three words in brackets, no link or footnote after it
_SHORTCUT = regex.compile(r"(?<![!\w\]])\[(\p{L}[\w.+-]*(?: [\w.+-]+){0,2})\](?![(\[:])")
#: reStructuredText's links, written with backticks (so read before code is set aside): one
#: with its target ("`SQLAlchemy <http://…>`_") and one by name ("`read the docs`_")
_RST_LINK = regex.compile(
    r"(?<![`\w])`([^`<\n]+?)\s*<[^`>\n]+>`__?(?![\w`])|(?<![`\w])`([^`<\n]+)`__?(?![\w`])"
)
#: bold or italic markers around words (``**word**``, ``__word__``, ``*word*``, ``_word_``)
_EMPHASIS = regex.compile(r"(?<![\w*_])(\*\*|__|\*|_)(?=[^\s*_])([^*_\n]+?)(?<=[^\s*_])\1(?![\w*_])")
#: two words and their contraction; "not" contracts after these auxiliaries
_NOT = {
    "do": "don't",
    "does": "doesn't",
    "did": "didn't",
    "is": "isn't",
    "are": "aren't",
    "was": "wasn't",
    "were": "weren't",
    "has": "hasn't",
    "have": "haven't",
    "should": "shouldn't",
    "would": "wouldn't",
    "could": "couldn't",
    "will": "won't",
}
_PRONOUN = {
    ("it", "is"): "it's",
    ("you", "are"): "you're",
    ("you", "will"): "you'll",
    ("they", "are"): "they're",
}
_CONTRACTIBLE = regex.compile(
    rf"\b({'|'.join(_NOT)}) not\b|\b(can) ?not\b|\b(it|you|they) (is|are|will)\b(?!\s*[,.;:!?)]|\s*$)",
    regex.I,
)


@functools.lru_cache(maxsize=4096)  # a passage's sentences are read by every shape and rule
def unlinked(text: str) -> str:
    """``text`` with its links' and images' markup dropped, their text kept (code untouched)."""
    text = _RST_LINK.sub(lambda m: m.group(1) or m.group(2), text)
    return _outside_code(
        text,
        lambda prose: _SHORTCUT.sub(r"\1", _REFERENCE.sub(r"\1", _LINK.sub(r"\1", _IMAGE.sub("", prose)))),
    )


@functools.lru_cache(maxsize=4096)  # graded for edits as each question is weighed
def reworded(answer: str) -> str:
    """``answer`` reworded by every rule, its code untouched."""
    return _outside_code(unlinked(answer), _prose)


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """``text`` with ``change`` made to its prose, code (inline or fenced) untouched."""
    parts, last = [], 0
    for code in _CODE.finditer(text):
        parts += [change(text[last : code.start()]), code.group()]
        last = code.end()
    parts.append(change(text[last:]))
    return "".join(parts)


def _prose(text: str) -> str:
    text = _EMPHASIS.sub(lambda m: m.group(2), text)
    text = plainer(text)
    return _CONTRACTIBLE.sub(_contracted, text)


def _contracted(match: regex.Match[str]) -> str:
    auxiliary, can, pronoun, verb = match.groups()
    if auxiliary is not None:
        word = _NOT[auxiliary.lower()]
        start = auxiliary
    elif can is not None:
        word, start = "can't", can
    else:
        contracted = _PRONOUN.get((pronoun.lower(), verb.lower()))
        if contracted is None:  # "it are", "they is": not a pair to contract
            return match.group()
        word, start = contracted, pronoun
    return word[0].upper() + word[1:] if start[0].isupper() else word


#: a list's lead that the items continue, and "the following" it may name them by
_LEAD_END = regex.compile(r"(?:\s+the following(?:\s+[a-z]+)?)?\s*:\s*$")
#: the words a lead may end with for its items to continue it: a verb's object or a verb
_CONTINUED_BY_ITEMS = frozenset("you us include includes including are is to like as offer offers".split())
#: how many items a list joined into a sentence holds, and how long that sentence may be
MAX_ITEMS, MAX_JOINED_CHARS = 8, 300


def joined_list(lead: str, items: list[str]) -> str | None:
    """A list and the sentence that leads it joined into one sentence ("HTTPX gives you:" over
    "* A broadly requests-compatible API." and "* HTTP/2 support." -> "HTTPX gives you a broadly
    requests-compatible API and HTTP/2 support."), as a reader says it (None: the list is no
    continuation of its lead: items that are sentences or definitions, a lead that is a title).
    What the items claim is kept whole: only their markers, final stops and capitals go."""
    if not 2 <= len(items) <= MAX_ITEMS or not (end := _LEAD_END.search(lead)):
        return None
    opening = lead[: end.start()]
    last = opening.rsplit(" ", 1)[-1].lower()
    if len(opening.split()) < 3 or (last not in _CONTINUED_BY_ITEMS and present_base(last) is None):
        return None
    parts = []
    for item in items:
        text = _plain(item).strip().rstrip(".;,")
        first = text.split(" ", 1)[0]
        if not text or regex.search(r"\s[-–—]\s|:\s|\.\s", text) or len(text.split()) > 14:
            return None  # a definition, a titled item, or sentences of their own
        head = first.split("-", 1)[0]  # "In-process" is as English as "in"
        proper = head == first and len(head) > 1 and english.is_proper(head)  # "A" is no name
        capitalised = head[:1].isupper() and (len(head) == 1 or head[1:].islower())
        if capitalised and english.is_english(head) and not proper:
            if present_base(first.lower()) is not None or first.lower() in ("can", "will", "is"):
                return None  # an item that is a sentence ("Can emit ALTER statements ...")
            text = text[0].lower() + text[1:]
        parts.append(text)
    if not regex.match(r"(?:and|or|etc)\b", parts[-1]):
        parts[-1] = f"and {parts[-1]}"
    joined = f"{_plain(opening)} {', '.join(parts[:-1])} {parts[-1]}."
    return joined if len(joined) <= MAX_JOINED_CHARS else None


def _plain(text: str) -> str:
    """``text`` without its links' markup and its emphasis (code untouched)."""
    return _outside_code(unlinked(text), lambda prose: _EMPHASIS.sub(lambda m: m.group(2), prose))


#: a lead an answer to a yes/no question opens with
LEAD = regex.compile(r"^(?P<lead>Yes|No), ")
#: a negative word (a contraction's "n't" included)
#: a sentence opening with a clause of its own: its negatives may not be the claim's
_SUBORDINATE = regex.compile(r"^(?:Although|Though|While|Whereas|If|When|Unless|Once|Since|As|Because)\b")


def led(answer: str, focus: str) -> str:
    """``answer`` (to a yes/no question asked of ``focus``, its first sentence) led by the yes or
    no that sentence gives: "No" for one negative in its main clause, "Yes" for none; as it is
    where that cannot be told (two negatives, a negative after a comma or in an opening clause)."""
    if not answer.startswith(focus) or LEAD.match(answer):
        return answer
    negatives = list(NEGATIVES.finditer(focus))
    if not negatives:
        lead = "Yes"
    elif (
        len(negatives) == 1
        and "," not in focus[: negatives[0].start()]
        and not _SUBORDINATE.match(focus)
        and not focus.startswith(" to ", negatives[0].end())  # "will try not to change": a yes
    ):
        lead = "No"
    else:
        return answer
    first = answer.split(" ", 1)[0]
    lowered = first in ("It", "It's") or (
        first.istitle() and english.is_english(first) and not english.is_proper(first)
    )
    return f"{lead}, {first.lower() if lowered else first}{answer[len(first) :]}"


def flip_lead(lead: str) -> str:
    """The lead an answer takes when its claim is flipped."""
    return "No" if lead == "Yes" else "Yes"


#: auxiliaries a subject of any number takes, and a plural noun's ending
_ANY_NUMBER = frozenset("can will should must may could would".split())
_PLURAL_HEAD = regex.compile(r"(?<![su'’])s`?$")
#: subjects "it" never stands for
_PRONOUNS = frozenset("you we they i he she it this that these those there".split())
#: a singular subject's auxiliary, after which "it" can stand for the subject
_SINGULAR_AUXILIARY = frozenset("is was has does can will should must may could would".split())


def _singular_verb(word: str, after: str) -> bool:
    """Whether ``word`` (followed by ``after``) is a verb a singular subject takes ("is",
    "monitors the ..."; not "applications", nor "options are")."""
    if word in _SINGULAR_AUXILIARY:
        return True
    return present_base(word) is not None and (not also_noun(word) or bool(VERB_OBJECT.match(after)))


def it_for_subject(answer: str, question: str) -> str:
    """``answer`` with its opening subject said as "It" where the question names that subject
    ("What is HTTPX?" answered "HTTPX is a fully featured HTTP client." -> "It is a fully featured
    HTTP client."): a reader's answer does not repeat what was just asked about. Only a singular
    subject of up to five words, opening the answer and named whole in the question: the longest
    the question names, so "Style configuration options are ..." stays as it is."""
    words = answer.split(" ")
    asked = f" {question.lower().rstrip('?')} "
    if words[0].lower() in _PRONOUNS:  # "You can use a Console object ..." is not about "it"
        return answer
    for end in range(min(5, len(words) - 1), 0, -1):
        if f" {' '.join(words[:end]).lower()} " not in asked:
            continue
        after = words[end + 1] if end + 1 < len(words) else ""
        plural = " and " in f" {' '.join(words[:end])} " or _PLURAL_HEAD.search(words[end - 1])
        # a modal takes a subject of any number: "Future Jinja versions will ..." is no "it"
        if plural and words[end] in _ANY_NUMBER:
            return answer
        return f"It {' '.join(words[end:])}" if _singular_verb(words[end], after) else answer
    return answer
