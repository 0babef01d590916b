"""Markdown document sources: GitHub READMEs and Wikipedia articles.

Both chunk documents with the shared chunker, draw a question type per chunk
from their own subset (seeded), generate a question and a grounded answer, and
inject with the generic factual menu into a seeded share of the items.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from pathlib import Path, PurePath
from typing import Any

from lettuce_build.core.characters import displayable
from lettuce_build.core.errors import SourceError
from lettuce_build.core.files import read_ahead, sorted_names
from lettuce_build.core.seeding import fraction
from lettuce_build.core.seen_keys import SeenKeys
from lettuce_build.core.tables import read_table
from lettuce_build.engine.stage import Stage
from lettuce_build.sources.base import DEFAULT_SETTINGS, LoadOptions, Pipeline, Source, StageSettings, Tally
from lettuce_build.sources.chunking import ChunkConfig, chunk_markdown, hash_split
from lettuce_build.stages.answers import answer_stage, evidence_sentences
from lettuce_build.stages.generation import GenerateStage
from lettuce_build.stages.prose_edits import Editable, prose_inject_stage, rule_edits
from lettuce_build.stages.question_choice import ChosenQuestionStage
from lettuce_build.stages.questions import DEFAULT_CHUNK_CHARS, QuestionStage

MAX_DOCUMENT_BYTES = 2_000_000
MARKDOWN_SUFFIXES = {".md", ".markdown", ".mdx", ".rst", ".txt"}


def decode_document(raw: bytes, max_bytes: int = MAX_DOCUMENT_BYTES) -> tuple[str | None, str | None]:
    """(text, None) for a usable document, else (None, why it was skipped)."""
    if len(raw) > max_bytes:
        return None, "too_large"
    if b"\x00" in raw:
        return None, "binary"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not_utf8"
    if not text.strip():
        return None, "empty"
    return text, None


#: what a document skipped for each of `decode_document`'s reasons was expected to be
_SKIPPED_DOCUMENT = {
    "too_large": f"expected at most {MAX_DOCUMENT_BYTES:,} bytes",
    "binary": "holds NUL bytes: expected text",
    "not_utf8": "expected UTF-8 text",
    "empty": "expected some text",
}


def _is_utf8(name: str) -> bool:
    """Whether a file name as Python decoded it was UTF-8 on disk (else it holds the lone
    surrogates that stand for its undecodable bytes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_markdown(name: str) -> bool:
    """A file name a document folder is read for: markdown or text, or any README."""
    file = PurePath(name)
    return file.suffix.lower() in MARKDOWN_SUFFIXES or file.name.upper().startswith("README")


class DocumentSource(Source):
    """Shared behaviour of the markdown document sources."""

    modality = "markdown"
    donors = True
    question_types: tuple[str, ...]
    min_document_chars = 0
    chunking = ChunkConfig()

    def documents(
        self, input_path: str | None, options: LoadOptions, tally: Tally
    ) -> Iterator[tuple[str, str]]:
        """(document id, markdown) per usable document; unusable ones are counted in ``tally``."""
        raise NotImplementedError

    def items(self, input_path: str | None, options: LoadOptions, tally: Tally) -> Iterator[dict[str, Any]]:
        documents = self.documents(input_path, options, tally)
        return self._chunked(documents, options.language, options.seed, tally)

    def _chunked(
        self, documents: Iterator[tuple[str, str]], language: str, seed: int, tally: Tally
    ) -> Iterator[dict[str, Any]]:
        """Each document's chunks as work items, the same text read twice once."""
        seen = SeenKeys()  # digests of the documents read: only the same text is a duplicate
        for doc_id, text in documents:
            digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            if not seen.add(digest):
                tally.skip(
                    "duplicate_document",
                    f"{self.name} document {doc_id!r}",
                    "the same text as an earlier one",
                )
                continue
            if len(text) < self.min_document_chars:
                tally.skipped["too_short"] += 1
                continue
            chunks = chunk_markdown(text, self.chunking, language)
            if not chunks:
                tally.skipped["no_chunk"] += 1
                continue
            tally.documents += 1
            split = hash_split(doc_id)
            for index, chunk in enumerate(chunks):
                key = f"{self.name}::{doc_id}::{index}"
                if not evidence_sentences(chunk[:DEFAULT_CHUNK_CHARS], language):
                    # badges, a link list, a table of contents, code alone: nothing to ask about
                    where = f"{self.name} chunk {index} of {doc_id!r}"
                    tally.skip("no_prose", where, "expected a prose sentence to ask about")
                    continue
                pick = int(fraction(seed, key, "question_type") * len(self.question_types))
                yield {
                    "key": key,
                    "split": split,
                    "chunk": chunk,
                    "context": chunk,
                    "question_type": self.question_types[pick],
                    "language": language,
                    "metadata": {
                        "doc_id": doc_id,
                        "chunk_index": index,
                        "question_type": self.question_types[pick],
                    },
                }

    def pipeline(self, settings: StageSettings = DEFAULT_SETTINGS) -> Pipeline:
        extractive = settings.answers == "extractive"
        inject = prose_inject_stage(
            settings.edit_anchors, "markdown", allowed=settings.error_types, seed=settings.seed
        )

        def asked(editable: Editable | None) -> list[Stage]:
            """The question and its answer; ``editable``: what the answer must offer the edit rules."""
            # the embedded model's questions are turned from a sentence (see ChosenQuestionStage)
            chosen = ChosenQuestionStage(seed=settings.seed, editable=editable)
            question = chosen if extractive else QuestionStage()
            return [question, answer_stage(settings.answers, focused=extractive, editable=editable)]

        return Pipeline(
            inject=[*asked(rule_edits(inject, asked=settings.edits_asked)), inject],
            generate=[*asked(None), GenerateStage(seed=settings.seed)],
        )

    def document_of(self, item: dict[str, Any]) -> str:
        return str(item["key"]).rsplit("::", 1)[0]  # {source}::{doc_id}::{chunk}


class ReadmeSource(DocumentSource):
    name = "readme"
    dataset_name = "lettucedetect-readme"
    question_types = (
        "Instrumental/Procedural",
        "Feature Specification",
        "Definition",
        "Verification",
        "Quantification",
    )

    def documents(
        self, input_path: str | None, options: LoadOptions, tally: Tally
    ) -> Iterator[tuple[str, str]]:
        if input_path is None:
            raise SourceError(
                "readme: --input is required (a folder of markdown files or a JSONL of {repo, readme})"
            )
        path = Path(input_path)
        if path.is_dir():
            names = sorted_names(path, is_markdown)
            if not len(names):
                raise SourceError(f"{path}: no markdown files inside")
            # one pass over the names, shared: the reads run at most `READ_AHEAD` names ahead
            listed, to_read = itertools.tee(names)
            for name, raw in zip(listed, read_ahead(path, to_read), strict=True):
                if not _is_utf8(name):
                    tally.skip("name_not_utf8", f"{path}/{displayable(name)}", "a file name must be UTF-8")
                    continue
                text, why = decode_document(raw)
                if text is None:  # decode_document always says why
                    why = why or "empty"
                    tally.skip(why, f"{path}/{name}", _SKIPPED_DOCUMENT[why])
                    continue
                # the whole name is the document's identity: tool.md and tool.txt are two documents
                yield name, text
        elif path.exists():
            for number, row in read_table(path, ("repo", "readme"), tally.skip):
                where = f"{path}:{number}"
                readme, repo = row["readme"], row["repo"]
                if not isinstance(readme, str):
                    tally.skip(
                        "not_a_string", where, f"readme: expected a string, got {type(readme).__name__}"
                    )
                    continue
                if repo is not None and not isinstance(repo, str):
                    tally.skip("not_a_string", where, f"repo: expected a string, got {type(repo).__name__}")
                    continue
                text, why = decode_document(readme.encode("utf-8", "surrogatepass"))
                if text is None:  # decode_document always says why
                    why = why or "empty"
                    tally.skip(why, where, f"readme: {_SKIPPED_DOCUMENT[why]}")
                    continue
                yield repo or f"line-{number}", text
        else:
            raise SourceError(f"{path}: no such file or folder")


class WikipediaSource(DocumentSource):
    name = "wikipedia"
    dataset_name = "lettucedetect-wikipedia"
    hub_id = "open-index/open-wikipedia-markdown"
    min_document_chars = 1500
    chunking = ChunkConfig(min_chars=1500, max_chars=6000)  # article sections, as LettuceDetect sizes them
    question_types = (
        "Concept Completion",
        "Quantification",
        "Definition",
        "Feature Specification",
        "Comparison",
        "Causal Antecedent",
        "Causal Consequence",
        "Verification",
        "Interpretation",
    )

    def documents(
        self, input_path: str | None, options: LoadOptions, tally: Tally
    ) -> Iterator[tuple[str, str]]:
        for row in self.rows(
            input_path, ("id", "markdown"), tally, hub_config=options.language, hub_splits=("train",)
        ):
            text, doc_id = row["markdown"], row["id"]
            if not isinstance(doc_id, str | int) or isinstance(doc_id, bool):
                tally.skip("not_a_string", f"wikipedia id {doc_id!r}", "id: expected a string or a number")
                continue
            if not isinstance(text, str):
                tally.skip(
                    "not_a_string",
                    f"wikipedia {doc_id}",
                    f"markdown: expected a string, got {type(text).__name__}",
                )
                continue
            if not text.strip():
                tally.skipped["empty"] += 1
                continue
            yield str(doc_id), text
