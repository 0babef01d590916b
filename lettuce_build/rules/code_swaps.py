"""Code an answer quotes swapped for other code its context quotes, of the same form: an option for
an option ("pass [`--rows`]" -> "pass [`--sort`]"), a call for a call, a dotted path for a dotted
path ("use [`websocket.send()`]" -> "use [`websocket.receive()`]"). Documentation makes most of
its claims about code; an edit spelled from the context's own code is found only by reading
which of its names does what. The rules that edit words leave code alone (`prose_names.BLOCKED`);
this one replaces it whole, inside its backticks.

The edited claim must stay false by the context: code the context lists beside the original
("`send` and `receive`") is refused, and so is a swap after which the context says the answer's
words around it.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from lettuce_build.rules.opposites import listed_together, said_around

#: inline code in one or two backticks (markdown's, reStructuredText's literal, a role's target
#: with its role: ":class:`.Script`", MyST's "{func}`get_app_dir`")
_CODE = regex.compile(
    r"(?:(?::(?P<role>[a-z]+):)|\{(?P<role>[a-z]+)\})?"
    r"(?<!`)(?P<ticks>`{1,2})(?P<code>[^`\s][^`\n]{0,58}?)(?P=ticks)(?!`)"
)
#: the forms code takes, by what it looks like
_FORMS = (
    ("option", regex.compile(r"-{1,2}[a-z][\w-]*(?:=\S+)?")),
    ("call", regex.compile(r"[.~]?[A-Za-z_][\w.]*\(\)")),
    ("file", regex.compile(r"[\w./-]+\.(?:py|toml|ini|cfg|txt|md|rst|json|yaml|yml|lock)")),
    ("dotted", regex.compile(r"[.~]?[A-Za-z_]\w*(?:\.\w+)+")),
    ("class", regex.compile(r"[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+")),
    ("snake", regex.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")),
    # a setting as it is written ("`is_flag=True`", "`protocol=3`")
    ("setting", regex.compile(r"[A-Za-z_]\w*=[\w.\"'-]+")),
)


def _form(match: regex.Match[str]) -> str | None:
    """What the code is: its role where it has one (":meth:" is a method, whatever it looks
    like), else the form it looks like (None: none known)."""
    if match["role"]:
        return f"role {match['role']}"
    return next((name for name, pattern in _FORMS if pattern.fullmatch(match["code"])), None)


def code_swaps(answer: str, context: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, other code, "code") for each code span of ``answer`` the context gives
    another of its form for (the one it quotes first), that leaves the answer false by it."""
    quoted: dict[str, list[str]] = {}
    for match in _CODE.finditer(context):
        if (form := _form(match)) is not None:
            quoted.setdefault(form, [])
            if match["code"] not in quoted[form]:
                quoted[form].append(match["code"])
    in_answer = {match["code"] for match in _CODE.finditer(answer)}
    for match in _CODE.finditer(answer):
        code = match["code"]
        others = [
            other
            for other in quoted.get(_form(match) or "", [])
            if other not in in_answer
            and other.lstrip(".~") != code.lstrip(".~")
            and not listed_together(context, f"{match['ticks']}{code}{match['ticks']}", f"`{other}`")
            and not said_around(answer, match.span("code"), other, context)
        ]
        if others:
            yield match.start("code"), match.end("code"), others[0], "code"
