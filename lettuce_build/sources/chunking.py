"""The document chunker shared by the markdown sources, and the document-level hash split.

Split on markdown headings (never on ``#`` lines inside code fences), pack
sections greedily between a minimum and a maximum size, truncate an oversized
section, drop a too-short tail, keep the first few chunks of each document.
"""

from __future__ import annotations

import regex
from pydantic import BaseModel

from lettuce_build.core.seeding import fraction

_HEADING = regex.compile(r"^#{1,6}\s+\S")
_FENCE = regex.compile(r"^\s*(```|~~~)")


class ChunkConfig(BaseModel):
    min_chars: int = 300
    max_chars: int = 4000
    max_chunks: int = 3


def split_sections(markdown: str) -> list[str]:
    """Sections that each start at a heading line outside code fences (the first may have none)."""
    sections: list[list[str]] = [[]]
    fence: str | None = None
    for line in markdown.splitlines(keepends=True):
        if match := _FENCE.match(line):
            marker = match.group(1)
            fence = None if fence == marker else (fence or marker)
        elif fence is None and _HEADING.match(line) and sections[-1]:
            sections.append([])
        sections[-1].append(line)
    return ["".join(lines) for lines in sections if "".join(lines).strip()]


def chunk_markdown(markdown: str, config: ChunkConfig | None = None) -> list[str]:
    config = config or ChunkConfig()
    chunks: list[str] = []
    current = ""
    for section in split_sections(markdown):
        section = section[: config.max_chars]  # an oversized section is truncated, not split mid-way
        if not current:
            current = section
        elif len(current) + len(section) <= config.max_chars:
            current += section
        elif len(current) < config.min_chars:
            current = (current + section)[: config.max_chars]  # too short to stand alone: fill it up
        else:
            chunks.append(current)
            current = section
        if len(chunks) >= config.max_chunks:
            break
    if current and len(current) >= config.min_chars and len(chunks) < config.max_chunks:
        chunks.append(current)  # a too-short tail is dropped
    return [c.strip() for c in chunks[: config.max_chunks]]


def hash_split(document_id: str, validation: float = 0.05, test: float = 0.05) -> str:
    """train / validation / test from a hash of the document id: stable across runs and machines,
    and every chunk of a document lands in the same split."""
    bucket = fraction(document_id)
    if bucket < validation:
        return "validation"
    if bucket < validation + test:
        return "test"
    return "train"
