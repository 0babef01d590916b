"""The squeez pipeline's settings, declared once: the `squeez` command's options are made from
these fields (cli/fields.py), and `Squeez` reads them."""

from __future__ import annotations

from pydantic import Field

from lettuce_build.builds.settings.shards import Shard
from lettuce_build.core.flags import flag
from lettuce_build.squeez.env_specs import EnvOptions
from lettuce_build.swebench.repos import DEFAULT_URL_TEMPLATE, RepoUrl


class SqueezOptions(EnvOptions):
    """How a squeez run picks instances, clones, calls tools and keeps rows, with how phase 4
    builds its environments."""

    repo_url: RepoUrl = DEFAULT_URL_TEMPLATE
    workers: int = Field(default=2, ge=1)
    """Parallel clones and instances in phase 2 and 4."""
    limit: int | None = Field(default=None, ge=1)
    """Phase 1: keep the first N instances."""
    seed: int = 0
    """Seeds tool-call generation and teacher sampling."""
    allow_network: bool = False
    """Run curl calls (with network); otherwise they are skipped."""
    max_decoy_share: float = Field(default=0.10, ge=0.0, lt=1.0)
    """Phase 7: decoy files (read_file of a file the fix does not touch, all lines irrelevant) make
    up at most this share of the rows."""
    shard: Shard | None = Field(default=None, json_schema_extra=flag(metavar="I/N"))
    """Phase 1 keeps shard I of N (0-based) of the instances; run phases 1-6 per shard, then
    `lettuce-build merge` joins the shards and runs 5, 7 and 8 over all of them."""
