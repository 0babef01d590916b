"""The English words the question shapes of question_shapes.py are read and turned with: the
verbs a question asks after, and the words that open no subject or end no predicate."""

from __future__ import annotations

#: what a "What does X ...?" question asks after each verb it is turned from (base form), where
#: that is not the verb itself
_ASKED_OTHERWISE = {"let": "let you do", "help": "help with"}
#: verbs a "What does X ...?" question is turned from, in the base form, with what it asks after
#: "What does X" (most: the verb itself)
ASKED_AS: dict[str, str] = {
    verb: _ASKED_OTHERWISE.get(verb, verb)
    for verb in """provide support offer include contain require need return accept produce generate
    create use let allow enable help handle expose raise add replace mean set indicate control
    specify define store check render read write represent describe cover measure implement compute
    fix repair lend sell serve carry list track hold keep print show""".split()
} | {
    phrasal: phrasal
    for phrasal in (
        "consist of", "depend on", "work with", "come with", "belong to", "correspond to", "refer to",
        "rely on", "run on", "map to", "point to",
    )
}  # fmt: skip
#: verbs whose object a "How many" question counts
COUNTING = ("have", "contain", "include", "support", "provide", "offer", "ship with", "come with")
#: words a sentence may open with that are not its subject: a question turned from it would lose
#: what they say ("Then", "However") or misread the sentence ("If", "When")
NOT_SUBJECT = frozenset(
    """then but and so however also if when for in on with by as once after before here there
    note please finally first second third now otherwise instead unlike like while although
    because since see this these those they that it its you we our there's it's no not never
    none nothing sometimes often always still""".split()
)
#: words a sentence opening with is an instruction, not a subject (a changelog's "Ensure ..."),
#: besides the verbs of `ASKED_AS` ("Add support for ...")
IMPERATIVE = frozenset(
    """ensure recheck remove update bump improve rename drop avoid call pass install run make just
    please see try note""".split()
)
#: the past tenses a changelog's entries open with ("Fixed issue where ...")
CHANGELOG = frozenset(
    """fixed added removed changed improved updated deprecated reverted adjusted expanded created
    implemented refactored renamed moved dropped replaced corrected reworked enhanced restored""".split()
)
#: a subject's opening word written in lowercase inside a question (as any common English word)
LOWERED = frozenset({"The", "A", "An", "Each", "Every", "All", "Some", "Your", "Its", "This", "These"})
#: participles whose "from" names a source: asked "Where ... from?" ("taken from Fisher's paper")
FROM_A_SOURCE = frozenset(
    "taken derived obtained collected downloaded drawn loaded imported fetched retrieved adapted"
    " copied".split()
)
#: a predicate ending in these continues in a list after the sentence ("licensed under either of")
DANGLING = frozenset("of to in on for with by from as at under either the a an".split())
#: words that point at text a question does not carry ("these details", "the above code",
#: "using them") or speak as the document's authors ("our top priority"): no reader asks them
POINTING_BACK = frozenset(
    "above below aforementioned following former latter them they these those we our us".split()
)
#: what "this" may point at in a question: the thing the document is about ("this library")
THIS_MAY_NAME = frozenset(
    "project package library module tool repository repo crate plugin extension sdk api framework app".split()
)
#: a condition that is a courtesy, not a case a reader asks about ("If you love it, ...", "If
#: you need help with MkDocs, ...")
COURTESY = (
    "love", "like", "enjoy", "find", "are interested", "'re interested", "’re interested",
    "have any question", "have questions", "need help", "are unsure", "'re unsure", "’re unsure",
    "said", "work at", "are looking", "'re looking", "’re looking",
)  # fmt: skip
#: a goal behind "If you want to ...": asked as "How do you ...?"
WANTING = ("want to", "wish to", "need to", "would like to", "'d like to", "’d like to")
#: words that link a sentence to the one before without being part of its claim: a question
#: is asked of what follows them ("However, `httpx.Request()` does not support ...")
LINKING = tuple(
    """However|Besides|Instead|Additionally|Furthermore|Moreover|Finally|Of course|In fact|In addition
    |In practice|By default|In general|Typically|Usually|Normally|Similarly|Likewise|Alternatively
    |Therefore|Thus|Hence|Note that|Importantly|Currently|Today|For example|For instance
    |It is important to note that|It is also important to note that|Keep in mind that""".replace(
        "\n    ", ""
    ).split("|")
)
