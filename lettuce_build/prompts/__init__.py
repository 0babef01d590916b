"""Versioned prompt templates: one YAML file per prompt, `version` part of every cache key.

Change a prompt's text and you must bump its version, so cached responses of
the old prompt are never served for the new one. Shared instructions sit in
the system message, first, so vLLM's prefix cache reuses them across a batch.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Any

import jinja2
import yaml
from pydantic import BaseModel, ConfigDict

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


class PromptTemplate(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    system: str
    user: str

    def render(self, **variables: Any) -> tuple[str, str]:
        """(system, user) with the variables filled in; a missing variable raises."""
        return (
            _ENV.from_string(self.system).render(**variables).strip(),
            _ENV.from_string(self.user).render(**variables).strip(),
        )


@cache
def load_prompt(name: str) -> PromptTemplate:
    resource = files(__package__) / f"{name}.yaml"
    if not resource.is_file():
        raise FileNotFoundError(f"no prompt template {name!r} in lettuce_build/prompts")
    data = yaml.safe_load(resource.read_text(encoding="utf-8"))
    template = PromptTemplate.model_validate({"name": name, **data})
    if not template.version.startswith(f"{name}-v"):
        raise ValueError(f"prompt {name}: version {template.version!r} must look like '{name}-vN'")
    return template
