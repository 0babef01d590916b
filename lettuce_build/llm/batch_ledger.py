"""The build folder's record of its batches (``OUT/batches.json``): what a build sent through a
provider's Batch API and has not yet read back.

A batch file's id is written down once it is uploaded, and the batch's id once it is made, each
before the build waits on anything: a killed or restarted build reads this file, re-attaches to
every batch it lists as not collected (or finds the batch made of an uploaded file whose id it
never wrote down) and reads back what it answered, so it never sends a request twice. The file
is rewritten whole and atomically on every change; it holds ids and counts, never a request.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from lettuce_build.core.errors import CacheError
from lettuce_build.core.tables import write_atomic

BATCHES_FILE = "batches.json"


class BatchRecord(BaseModel):
    file_id: str
    #: none while the batch is being made (or when a build was killed before it could say)
    batch_id: str | None = None
    model: str
    #: the stage's cache version, under which its answers are cached
    prompt_version: str
    requests: int
    submitted: float = Field(default_factory=time.time)
    #: as the provider last said: validating, in_progress, finalizing, completed, failed,
    #: expired, cancelling, cancelled (``uploaded``: no batch made yet)
    status: str = "uploaded"
    completed: int = 0
    failed: int = 0
    #: its answers are in the request cache: nothing more to do with it
    collected: bool = False


_RECORDS = TypeAdapter(list[BatchRecord])


class BatchLedger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def records(self) -> list[BatchRecord]:
        if not self.path.exists():
            return []
        try:
            return _RECORDS.validate_json(self.path.read_bytes())
        except ValidationError as err:
            raise CacheError(
                f"{self.path} is not a record of batches ({err.errors()[0]['msg']}); the batches it "
                "listed are still at the provider: move it aside only if you mean to ask again"
            ) from None

    def open(self) -> list[BatchRecord]:
        """The batches whose answers have not been read back yet."""
        return [record for record in self.records() if not record.collected]

    def add(self, record: BatchRecord) -> None:
        self._write([*self.records(), record])

    def update(self, file_id: str, **changes: object) -> None:
        self._write([r.model_copy(update=changes) if r.file_id == file_id else r for r in self.records()])

    def _write(self, records: list[BatchRecord]) -> None:
        write_atomic(self.path, _RECORDS.dump_json(records, indent=2).decode())
