"""Phase 1: load SWE-bench instances (Hub or local JSONL/parquet) and normalise them."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, field_validator

from lettuce_build.swebench import load_instance_rows

REQUIRED = ("instance_id", "repo", "base_commit", "patch", "problem_statement")


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

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _json_list(cls, value: Any) -> Any:
        # upstream stores these as JSON-encoded list strings
        if value is None or value == "":
            return []
        if isinstance(value, str):
            return json.loads(value)
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        return None if value is None else str(value)


def load_instances(source: str, limit: int | None = None, split: str = "test") -> list[SqueezInstance]:
    rows = load_instance_rows(source, REQUIRED, split=split)
    known = set(SqueezInstance.model_fields)
    instances = [SqueezInstance.model_validate({k: v for k, v in row.items() if k in known}) for row in rows]
    return instances[:limit] if limit is not None else instances
