"""Other tools' layouts of our samples (`lettuce-build export`): each format writes samples and
reads its files back as our rows, so that `validate` and `audit` check an export as they check
a build.

Imports only core. A new format: an `ExportFormat` in a module of its own, listed in `FORMATS`.
"""

from __future__ import annotations

from pathlib import Path

from lettuce_build.core.tables import iter_records
from lettuce_build.formats.base import ExportCounts, ExportFormat, Foreign
from lettuce_build.formats.jsonl import JsonlFormat
from lettuce_build.formats.lettucedetect import LettuceDetectFormat
from lettuce_build.formats.ragtruth import RagTruthFormat
from lettuce_build.formats.sft import SftFormat
from lettuce_build.formats.spans import SpansFormat

__all__ = ["FORMATS", "ExportCounts", "ExportFormat", "Foreign", "format_of"]

FORMATS: dict[str, ExportFormat] = {
    f.name: f for f in (LettuceDetectFormat(), RagTruthFormat(), SftFormat(), SpansFormat(), JsonlFormat())
}


def format_of(path: Path) -> ExportFormat | None:
    """The format of the export at ``path``, told by its shape: a RAGTruth folder, or a JSON or
    JSONL file by its first record (None: neither, or an empty file)."""
    if RagTruthFormat.is_export(path):
        return FORMATS["ragtruth"]
    if not (path.is_file() and path.suffix in {".json", ".jsonl"}):
        return None
    first = next((line.row for line in iter_records(path) if line.row is not None), None)
    if first is None:
        return None
    # ours first: our rows have every field LettuceDetect's have
    for name in ("jsonl", "sft", "spans", "lettucedetect"):
        if FORMATS[name].recognises(first):
            return FORMATS[name]
    return None
