"""The security sift's settings, declared once: the `sift` command's options are made from these
fields (cli/fields.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lettuce_build.core.flags import flag

#: the pattern sets the sift knows (sift/presets/)
PresetName = Literal["v1", "v2", "v3"]


class SiftOptions(BaseModel):
    """Which patterns sift SWE-bench, against which Verified list, and what is written or shown."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    verified: str = "princeton-nlp/SWE-bench_Verified"
    """SWE-bench Verified, to flag candidates in it: a local file or a Hub dataset id."""
    no_verified: bool = False
    """Do not look up SWE-bench Verified membership."""
    preset: PresetName = "v2"
    """Pattern set; v2 reproduces the published stage 1, v3 fixes its defects."""
    out: Path | None = None
    """Folder for stage1_candidates.json, stage1_funnel.json and the HF dataset."""
    compare: PresetName | None = None
    """Also print the candidates this preset adds and drops against another, with reasons."""
    explain: str | None = Field(default=None, json_schema_extra=flag(metavar="INSTANCE_ID"))
    """Print each added line of one instance's patch that matched, and stop."""
