"""The document chunker shared by the markdown sources, and the document-level hash split.

Split on markdown headings as a CommonMark parser sees them (``markdown-it-py``: ATX ``#``
headings and setext headings underlined with ``===`` or ``---``, never a ``#`` line inside a
fence, however many backticks open it, nor a heading nested in a list or quote), pack
sections greedily between a minimum and a maximum size, truncate an oversized
section, drop a too-short tail, keep the first few chunks of each document.
"""

from __future__ import annotations

import regex
from markdown_it import MarkdownIt
from pydantic import BaseModel

from lettuce_build.core.seeding import fraction
from lettuce_build.core.sentences import sentence_cut

#: lines as markdown-it counts them (it normalises \r\n and \r to \n)
_LINE = regex.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+\Z")
#: block structure only: a heading's position needs no inline parsing (a fifth of a build's
#: driver time when it ran)
_PARSER = MarkdownIt("commonmark").disable("inline")


class ChunkConfig(BaseModel):
    min_chars: int = 300
    max_chars: int = 4000
    max_chunks: int = 3


def split_sections(markdown: str) -> list[str]:
    """Sections that each start at a top-level heading (the first may have none)."""
    lines = _LINE.findall(markdown)
    starts = sorted(
        {
            token.map[0]
            for token in _PARSER.parse(markdown)
            if token.type == "heading_open" and token.level == 0 and token.map and token.map[0] > 0
        }
    )
    bounds = [0, *starts, len(lines)]
    sections = ("".join(lines[a:b]) for a, b in zip(bounds, bounds[1:], strict=False))
    return [section for section in sections if section.strip()]


def chunk_markdown(markdown: str, config: ChunkConfig | None = None, language: str = "en") -> list[str]:
    """The document's chunks: its sections packed up to ``config.max_chars``, an oversized one
    cut where a sentence of its ``language`` ends."""
    config = config or ChunkConfig()
    whole = markdown.strip()
    if whole and len(markdown) <= config.max_chars and len(whole) >= config.min_chars and config.max_chunks:
        # a document that fits one chunk would have its sections packed back together as they
        # are: no parse needed (it was half of reading short READMEs)
        return [whole]
    chunks: list[str] = []
    current = ""
    for section in split_sections(markdown):
        # an oversized section is truncated where a sentence ends, not split mid-way
        section = sentence_cut(section, config.max_chars, language)
        if not current:
            current = section
        elif len(current) + len(section) <= config.max_chars:
            current += section
        elif len(current) < config.min_chars:
            current = sentence_cut(current + section, config.max_chars, language)  # too short: fill it up
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


def packed(text: str, max_chars: int) -> list[str]:
    """``text`` in chunks of at most ``max_chars``, paragraphs kept whole where they fit (a longer
    one is cut where its last sentence before the limit ends): every character is in a chunk,
    none is dropped, as a row's whole context must be (the custom source)."""
    pieces: list[str] = []
    for paragraph in (p.strip() for p in text.split("\n\n")):
        while len(paragraph) > max_chars:
            cut = len(sentence_cut(paragraph, max_chars))
            pieces.append(paragraph[:cut].strip())
            paragraph = paragraph[cut:].strip()
        if paragraph:
            pieces.append(paragraph)
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + 2 + len(piece) <= max_chars:
            chunks[-1] += "\n\n" + piece
        else:
            chunks.append(piece)
    return chunks
