"""What a build asks of its hallucinations (the custom source's ``--error-types`` and
``--intensity``): spans only of the types asked for, and exactly as many edits as asked."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.core.error_types import allows
from lettuce_build.engine.stage import ParseFailure


def only_asked_types(labels: list[dict[str, Any]], allowed: list[str]) -> None:
    """Every span of a type the build asked for (``allowed``; none: any), else a `ParseFailure`
    (tried again)."""
    for span in labels:
        if not allows(allowed, span["category"], span["subcategory"]):
            kind = f"{span['category']}/{span['subcategory']}"
            raise ParseFailure("type_not_asked", f"{span['text'][:60]!r} is {kind}; asked for {allowed}")


class AskedEdits(BaseModel):
    """Exactly ``count`` edits per hallucinated answer, each of a type among ``allowed`` (none: any)."""

    model_config = ConfigDict(frozen=True)

    allowed: list[str] = Field(default_factory=list)
    count: int = Field(default=1, ge=1)

    def check(self, labels: list[dict[str, Any]], applied: int) -> None:
        """A `ParseFailure` for an injection that made another count of edits or another type."""
        if applied != self.count:
            raise ParseFailure("edit_count", f"{applied} edit(s) applied; asked for {self.count}")
        only_asked_types(labels, self.allowed)
