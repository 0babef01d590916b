"""Every source by name; `lettuce-build sources` lists them."""

from __future__ import annotations

from lettuce_build.sources.acl import AclSource
from lettuce_build.sources.base import Source
from lettuce_build.sources.code import CodeSource
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
    )
}


def get_source(name: str) -> Source:
    if name not in SOURCES:
        raise KeyError(f"unknown source {name!r}; known: {sorted(SOURCES)}")
    return SOURCES[name]()
