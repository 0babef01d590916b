"""Every source by name; `lettuce-build sources` lists them."""

from __future__ import annotations

from lettuce_build.sources.acl import AclSource
from lettuce_build.sources.base import Source
from lettuce_build.sources.documents import ReadmeSource, WikipediaSource

SOURCES: dict[str, type[Source]] = {cls.name: cls for cls in (ReadmeSource, WikipediaSource, AclSource)}


def get_source(name: str) -> Source:
    if name not in SOURCES:
        raise KeyError(f"unknown source {name!r}; known: {sorted(SOURCES)}")
    return SOURCES[name]()
