"""`lettuce-build export`: the samples of a build (its folder), of a Hub-style folder (or any
output `validate` reads) or of a Hub dataset, written in another tool's layout (see
lettuce_build.formats). A row that cannot be read is skipped, counted and named; the export
holds every other one, in split order."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lettuce_build.core.errors import OutputError, TableError
from lettuce_build.core.paths import check_writable
from lettuce_build.core.schema import HallucinationSample, Violation, read_sample
from lettuce_build.core.tables import is_hub_id, read_input
from lettuce_build.formats import FORMATS, ExportCounts, format_of
from lettuce_build.view.validate import read_rows

#: skipped rows named in the counts' notes (all are counted)
SHOWN_SKIPS = 5


def export(source: str | Path, format: str, out: str | Path, *, config: str | None = None) -> ExportCounts:
    """Write the samples of ``source`` (a build folder, an output folder or file, or a Hub dataset
    id; ``config``: its config, default all of them) as ``format`` to ``out``."""
    if format not in FORMATS:
        raise OutputError(f"--format {format}: expected one of {', '.join(FORMATS)}")
    layout, out = FORMATS[format], Path(out)
    check_writable(out, "--out")
    if not layout.folder and out.is_dir():
        raise OutputError(f"--out {out}: a folder; {format} writes one file (name it, e.g. {out}/data.json)")
    if layout.folder and out.exists() and any(out.iterdir()) and format_of(out) is not layout:
        raise OutputError(f"--out {out}: a folder that holds other files; name a new or empty one")
    skipped: list[str] = []
    # written beside, then moved into place: a failed export never leaves half a file
    staged = out.with_name(f".{out.name}.partial")
    _remove(staged)
    try:
        counts = layout.write(_samples(str(source), config, skipped), staged)
    except BaseException:
        _remove(staged)
        raise
    _remove(out)
    staged.rename(out)
    if skipped:
        counts.notes.append(f"{len(skipped)} row(s) of {source} could not be read and are not in the export:")
        counts.notes += [f"  {line}" for line in skipped[:SHOWN_SKIPS]]
    return counts


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def _samples(source: str, config: str | None, skipped: list[str]) -> Iterator[HallucinationSample]:
    path = Path(source)
    if path.exists():
        rows = read_rows(path / "dataset" if (path / "dataset").is_dir() else path)
        for raw in rows:
            if raw.error is not None:
                skipped.append(f"{raw.where}: {raw.error.field}: {raw.error.message}")
            elif (sample := _sample(raw.data or {}, raw.where, skipped)) is not None:
                yield sample
        return
    if not is_hub_id(source):
        raise OutputError(
            f"{source}: no such build, file or folder (nor a Hugging Face dataset id, org/name)"
        )
    try:
        for index, row in enumerate(read_input(source, hub_config=config)):
            if (sample := _sample(row, f"{source} row {index}", skipped)) is not None:
                yield sample
    except TableError as err:
        raise OutputError(str(err)) from err


def _sample(row: dict[str, Any], where: str, skipped: list[str]) -> HallucinationSample | None:
    sample = read_sample(row)
    if isinstance(sample, Violation):
        skipped.append(f"{where}: {sample.field}: {sample.message}")
        return None
    return sample
