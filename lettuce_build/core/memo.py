"""A stage's answer about an item, kept for the next time it is asked about the same item.

The runner asks a stage about each item several times (whether it applies, its prompt, its
schema, its parse, a check's turn), and a rule-made stage works out the same thing each time:
the question choice grades every sentence of a passage for edits, the prose menu runs every
edit rule over the answer. Kept by the item's content (every field, so an item a stage has
added to is another item), a few thousand per stage instance, outside the instance (a stage
is hashed and pickled by `datasets` and Ray: what it remembered must not change that).
"""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

#: answers kept per stage instance and method: more than a batch of the runner's holds
KEPT = 4096

Owner = TypeVar("Owner")
Answer = TypeVar("Answer")


def item_identity(item: dict[str, Any], reads: tuple[str, ...] = ()) -> tuple[tuple[str, Any], ...]:
    """What tells one item from another: each field's value (a list or a dict as its text), or
    only those of the fields ``reads`` names."""
    fields = [(name, item.get(name)) for name in reads] if reads else sorted(item.items())
    return tuple(
        (name, value if isinstance(value, str | int | float | bool | None) else repr(value))
        for name, value in fields
    )


def per_item(
    *reads: str,
) -> Callable[[Callable[[Owner, dict[str, Any]], Answer]], Callable[[Owner, dict[str, Any]], Answer]]:
    """A stage's method about one item answered once per item's content (see the module); with
    ``reads``, once per value of those fields, where the method reads no other (an item a later
    stage added a question to is the same item to it)."""

    def remembering(
        method: Callable[[Owner, dict[str, Any]], Answer],
    ) -> Callable[[Owner, dict[str, Any]], Answer]:
        kept: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[tuple[str, Any], ...], Answer]] = (
            weakref.WeakKeyDictionary()
        )

        @functools.wraps(method)
        def remembered(owner: Owner, item: dict[str, Any]) -> Answer:
            answers = kept.setdefault(owner, OrderedDict())
            identity = item_identity(item, reads)
            if identity in answers:
                answers.move_to_end(identity)
                return answers[identity]
            answer = answers[identity] = method(owner, item)
            if len(answers) > KEPT:
                answers.popitem(last=False)
            return answer

        return remembered

    return remembering
