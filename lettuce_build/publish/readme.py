"""A published repository's README: its YAML (configs and ``dataset_info``, kept as they are)
with our metadata set, and its body rendered from ``cards/dataset_card.md.j2`` over the stats
of every config."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from huggingface_hub import DatasetCard

from lettuce_build.publish.statistics import ConfigStats


def _size_category(rows: int) -> str:
    for limit, name in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if rows < limit:
            return name
    return "1M<n<10M"


def _license(stats: list[ConfigStats]) -> tuple[str, str | None]:
    """The repository's license id: the configs' one, or `other` (named) when they differ."""
    licenses = sorted({s.card.license for s in stats})
    if len(licenses) == 1:
        return licenses[0], None
    return "other", "mixed: " + ", ".join(f"{s.config} {s.card.license}" for s in stats)


def render_card(readme: Path, stats: list[ConfigStats], repo_id: str) -> None:
    """Rewrite README.md: keep its YAML (configs, dataset_info), set our metadata, render the body."""
    card = DatasetCard.load(readme)
    data = card.data
    data.license, license_name = _license(stats)
    if license_name:
        data.license_name = license_name
    data.language = sorted(
        {lang for s in stats for lang in s.card.languages if lang not in ("code", "multilingual")}
    )
    if any("multilingual" in s.card.languages for s in stats):
        data.multilinguality = "multilingual"
    data.annotations_creators = ["machine-generated"]
    data.language_creators = ["found", "machine-generated"]
    data.source_datasets = sorted({d for s in stats for d in s.card.source_datasets})
    data.task_categories = ["token-classification", "text-classification"]
    data.task_ids = ["fact-checking"]
    data.size_categories = [_size_category(sum(s.rows for s in stats))]
    data.pretty_name = stats[0].card.pretty_name if len(stats) == 1 else repo_id.split("/")[-1]
    data.tags = ["hallucination-detection", "span-labelling", "lettuce-build"]
    template = files("lettuce_build.publish.cards") / "dataset_card.md.j2"
    rendered = DatasetCard.from_template(
        data,
        template_str=template.read_text(encoding="utf-8"),
        configs=stats,
        repo_id=repo_id,
        pretty_name=data.pretty_name,
        description="Span-labelled hallucination data built with lettuce-build."
        if len(stats) > 1
        else stats[0].card.description,
    )
    rendered.save(readme)
