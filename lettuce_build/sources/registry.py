"""Every source by name; `lettuce-build sources` lists them."""

from __future__ import annotations

import difflib

from lettuce_build.core.errors import SourceError, UnknownSource
from lettuce_build.sources.acl import AclSource
from lettuce_build.sources.base import Source
from lettuce_build.sources.code import CodeSource
from lettuce_build.sources.custom import CustomSource
from lettuce_build.sources.documents import ReadmeSource, WikipediaSource
from lettuce_build.sources.psiloqa import PsiloQASource
from lettuce_build.sources.ragtruth import RagTruthSource
from lettuce_build.sources.tool_output import ToolOutputSource

SOURCES: dict[str, type[Source]] = {
    cls.name: cls
    for cls in (
        ReadmeSource,
        WikipediaSource,
        AclSource,
        CodeSource,
        ToolOutputSource,
        RagTruthSource,
        PsiloQASource,
        CustomSource,
    )
}


def register_source(cls: type[Source]) -> type[Source]:
    """Make a source class known by its ``name`` to `build`, the command line and `sources`:

    @register_source
    class MySource(Source):
        name = "mine"
        ...
    """
    if cls.name in SOURCES and SOURCES[cls.name] is not cls:
        raise SourceError(f"a source named {cls.name!r} is already registered: {SOURCES[cls.name].__name__}")
    SOURCES[cls.name] = cls
    return cls


def get_source(name: str) -> Source:
    if name not in SOURCES:
        close = difflib.get_close_matches(name, SOURCES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UnknownSource(f"unknown source {name!r}{hint} known: {', '.join(sorted(SOURCES))}")
    return SOURCES[name]()
