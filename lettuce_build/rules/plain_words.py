"""Plain words for wordy or formal ones, as a writer answering in their own words says them:
"in order to" -> "to", "provides" -> "offers", "multiple" -> "several", "However, " -> "But ".
One of the faithful rewordings (`rewording.reworded`) made to clean and hallucinated answers
alike, so that a word the context never spells tells a detector nothing on its own.

Every entry says the same thing in documentation's sense of its words: none is a modal, a
negation, an order of steps, a quantity asked about ("only", "all") or a word of the edit rules'
tables, and each form is written out (no inflection is guessed). A word that is also a noun is
left where a determiner makes it one ("an attempt to"), and a few entries are refused where
their plain word would not fit the words after them (`_REFUSED_BEFORE`).
"""

from __future__ import annotations

import regex

#: wordy phrases and words, and the plain words that say the same
PLAINER: dict[str, str] = {
    # phrases
    "in order to": "to",
    "allows you to": "lets you",
    "allow you to": "let you",
    "enables you to": "lets you",
    "enable you to": "let you",
    "is able to": "can",
    "are able to": "can",
    "has the ability to": "can",
    "have the ability to": "can",
    "it is possible to": "you can",
    "it's possible to": "you can",
    "would like to": "want to",
    "such as": "like",
    "in addition to": "besides",
    "as well as": "and",
    "a number of": "several",
    "in the event that": "if",
    "prior to": "before",
    "due to": "because of",
    "whether or not": "whether",
    "with regard to": "about",
    "with respect to": "about",
    "make use of": "use",
    "makes use of": "uses",
    "take advantage of": "use",
    "takes advantage of": "uses",
    "rather than": "instead of",
    "for instance": "for example",
    "lots of": "plenty of",
    "ensure that": "make sure that",
    "ensures that": "makes sure that",
    # verbs, each form written
    "utilize": "use",
    "utilizes": "uses",
    "provide": "offer",
    "provides": "offers",
    "providing": "offering",
    "requires": "needs",  # not "require": "to require a confirmation" asks for one
    "is required": "is needed",
    "are required": "are needed",
    "be required": "be needed",
    "modify": "change",
    "modifies": "changes",
    "modified": "changed",
    "modifying": "changing",
    "displays": "shows",
    "to display": "to show",
    "is displayed": "is shown",
    "are displayed": "are shown",
    "be displayed": "be shown",
    "execute": "run",
    "executes": "runs",
    "executing": "running",
    "is executed": "is run",
    "are executed": "are run",
    "be executed": "be run",
    "invoke": "call",
    "invokes": "calls",
    "invoking": "calling",
    "is invoked": "is called",
    "are invoked": "are called",
    "be invoked": "be called",
    "attempt to": "try to",
    "attempts to": "tries to",
    "attempting to": "trying to",
    "retrieve": "get",
    "retrieves": "gets",
    "retrieving": "getting",
    "obtain": "get",
    "obtains": "gets",
    "obtaining": "getting",
    "demonstrate": "show",
    "demonstrates": "shows",
    "assist": "help",
    "assists": "helps",
    "create": "make",
    "creates": "makes",
    "creating": "making",
    "is created": "is made",
    "are created": "are made",
    "be created": "be made",
    "contain": "hold",
    "contains": "holds",
    "containing": "holding",
    "specify": "set",
    "specifies": "sets",
    "specifying": "setting",
    "configure": "set up",
    "configures": "sets up",
    "configuring": "setting up",
    "determine": "decide",
    "determines": "decides",
    "generate": "produce",
    "generates": "produces",
    "generated": "produced",
    "generating": "producing",
    "occur": "happen",
    "occurs": "happens",
    "occurred": "happened",
    "verify": "check",
    "verifies": "checks",
    "permits": "allows",
    # adverbs, adjectives and prepositions
    "approximately": "about",
    "simply": "just",
    "typically": "usually",
    "commonly": "often",
    "frequently": "often",
    "primarily": "mainly",
    "multiple": "several",
    "numerous": "many",
    "sufficient": "enough",
    "additional": "extra",
    "useful": "helpful",
    "necessary": "needed",
    "desired": "wanted",
    "various": "different",
    "entire": "whole",
    "in this case": "here",
    "via": "through",
    "regarding": "about",
    "upon": "on",
}
#: linking words a sentence opens with (their comma included), and what a plain writer opens with
OPENERS: dict[str, str] = {
    "However, ": "But ",
    "Therefore, ": "So ",
    "Thus, ": "So ",
    "Additionally, ": "Also, ",
    "In addition, ": "Also, ",
    "Furthermore, ": "Also, ",
    "Moreover, ": "Also, ",
    "For instance, ": "For example, ",
    "In general, ": "Generally, ",
    "Finally, ": "Lastly, ",
    "Note that ": "Keep in mind that ",
}
#: words that are nouns too: left as they are after a determiner ("an attempt to", "the display")
_DETERMINER = r"(?<!\b(?:a|an|the|any|each|every|this|that|its|their|your|our|no)\s)"
#: a next word that may be a bare verb: neither a determiner nor an "-ing" form
_BARE_VERB_NEXT = r"\s(?!(?:the|an?|its|their|your|this|that|only|directly)\b)[a-z]+\b(?<!ing)"
#: entries whose plain word does not fit some words after them: "instead of" takes no bare verb
#: ("rather than use"), "offer" no "with" ("provide the user with ..."), "enough" no noun after
#: an article ("a sufficient number")
_REFUSED_BEFORE = {
    "rather than": regex.compile(_BARE_VERB_NEXT),
    "provide": regex.compile(r"[^.;]*\bwith\b"),
    "provides": regex.compile(r"[^.;]*\bwith\b"),
    "providing": regex.compile(r"[^.;]*\bwith\b"),
}
_REFUSED_AFTER_ARTICLE = frozenset({"sufficient"})

_WORDY = regex.compile(
    _DETERMINER
    + rf"\b(?:{'|'.join(regex.escape(phrase) for phrase in sorted(PLAINER, key=len, reverse=True))})\b",
    regex.I,
)
_OPENER = regex.compile(rf"(?:^|(?<=[.!?]\s))(?:{'|'.join(regex.escape(opener) for opener in OPENERS)})")


def plainer(text: str) -> str:
    """``text`` (prose, no code) with its wordy words said plainly."""
    text = _OPENER.sub(lambda match: OPENERS[match.group()], text)
    return _WORDY.sub(lambda match: _plain(match, text), text)


def _plain(match: regex.Match[str], text: str) -> str:
    found = match.group()
    key = found.lower()
    refused = _REFUSED_BEFORE.get(key)
    if refused is not None and refused.match(text, match.end()):
        return found
    if key in _REFUSED_AFTER_ARTICLE and regex.search(r"\b(?:a|an)\s$", text[: match.start()], regex.I):
        return found  # "a sufficient number" is no "a enough number"
    said = PLAINER[key]
    return said[0].upper() + said[1:] if found[0].isupper() else said
