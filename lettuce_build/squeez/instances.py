"""Phase 1: load SWE-bench instances (Hub or local JSONL/parquet) and normalise them."""

from __future__ import annotations

import json
from typing import Any

import regex
from pydantic import BaseModel, Field, ValidationError, field_validator

from lettuce_build.core.errors import InstanceLoadError, PatchError
from lettuce_build.swebench.instances import load_instance_rows
from lettuce_build.swebench.patches import parse_patch

REQUIRED = ("instance_id", "repo", "base_commit", "patch", "problem_statement")
_COMMIT = regex.compile(r"[0-9a-fA-F]{7,40}")


class SqueezInstance(BaseModel):
    instance_id: str
    repo: str
    base_commit: str
    patch: str
    problem_statement: str
    hints_text: str = ""
    test_patch: str = ""
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    version: str | None = None

    @property
    def test_files(self) -> list[str]:
        """The files of its test patch and of its FAIL_TO_PASS tests given as pytest ids."""
        files = dict.fromkeys(parse_patch(self.test_patch).paths)
        files.update((t.split("::")[0], None) for t in self.FAIL_TO_PASS if t.split("::")[0].endswith(".py"))
        return list(files)

    @field_validator("patch", "test_patch")
    @classmethod
    def _unified_diff(cls, value: str) -> str:
        try:
            parse_patch(value)
        except PatchError as err:
            raise ValueError(str(err)) from err
        return value

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        # upstream stores these as JSON-encoded list strings
        if value is None or value == "":
            return []
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError as err:
                raise ValueError(f"expected a JSON list of test ids, got {value[:60]!r}") from err
        return value

    @field_validator("base_commit")
    @classmethod
    def _commit(cls, value: str) -> str:
        # it becomes a git argument and a folder name: a hash, nothing else
        if not _COMMIT.fullmatch(value):
            raise ValueError(f"expected a commit hash (7-40 hex digits), got {value[:60]!r}")
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return None if value is None else str(value)


def load_instances(source: str, limit: int | None = None, split: str = "test") -> list[SqueezInstance]:
    """The first ``limit`` instances; a row that cannot be used stops the load, naming row and field."""
    rows = load_instance_rows(source, REQUIRED, splits=(split,))
    known = set(SqueezInstance.model_fields)
    instances = []
    for index, row in enumerate(rows[:limit] if limit is not None else rows):
        try:
            instances.append(SqueezInstance.model_validate({k: v for k, v in row.items() if k in known}))
        except ValidationError as err:
            first = err.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise InstanceLoadError(
                f"{source}: row {index} ({row.get('instance_id')}): {field}: {first['msg']}"
            ) from err
    return instances
