"""Dataset cards: one file per published dataset, and the template that adds the statistics.

``<dataset>.md`` holds what a person writes about a dataset: YAML front matter (name, a
one-line description, upstream data, license, languages, source datasets) and prose (what it
is, intended use, limitations, how the spans were made). At push, the package's template
(``dataset_card.md.j2``) renders this prose together with the build's statistics.

This folder sits at the top of the repository, where people look for cards; the package
reaches it as ``lettuce_build.publish.cards`` through a symbolic link.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

import yaml
from pydantic import BaseModel, Field


class DatasetCardText(BaseModel):
    pretty_name: str
    description: str
    upstream: str
    license: str = Field(description="a Hub license id; `other` where upstream licenses vary")
    license_note: str = ""
    languages: list[str]
    task_types: list[str]
    source_datasets: list[str]
    prose: str = ""


@cache
def card_text(dataset_name: str) -> DatasetCardText:
    """The card of a published dataset: its front matter and its prose."""
    resource = files(__package__) / f"{dataset_name}.md"
    if not resource.is_file():
        raise FileNotFoundError(f"no card cards/{dataset_name}.md")
    _, front, prose = resource.read_text(encoding="utf-8").split("---\n", 2)
    return DatasetCardText.model_validate({**yaml.safe_load(front), "prose": prose.strip()})
