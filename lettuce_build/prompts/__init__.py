"""Versioned prompt templates: one YAML file per prompt, `version` part of every cache key.

Change a prompt's text and you must bump its version, so cached responses of
the old prompt are never served for the new one. Shared instructions sit in
the system message, first, so vLLM's prefix cache reuses them across a batch.

Imports only core.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2
import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from lettuce_build.core.errors import PromptError

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


class PromptTemplate(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    version: str
    system: str
    user: str

    @property
    def instructions(self) -> str:
        """The template's own text (both messages, unrendered): what an output must not echo."""
        return f"{self.system}\n{self.user}"

    def render(self, **variables: Any) -> tuple[str, str]:
        """(system, user) with the variables filled in; a missing variable raises."""
        return _rendered(self.system, variables), _rendered(self.user, variables)


def _rendered(text: str, variables: dict[str, Any]) -> str:
    template = _compiled(text)
    # no template syntax: the text is its rendering (most system messages)
    return text.strip() if template is None else template.render(**variables).strip()


@functools.lru_cache(maxsize=256)
def _compiled(text: str) -> jinja2.Template | None:
    """A template's text compiled once: compiling is most of a render's cost (measured: 74% of
    a cached rerun's driver time when every request compiled its two messages again); None for
    a text without template syntax."""
    if not any(mark in text for mark in ("{{", "{%", "{#")):
        return None
    return _ENV.from_string(text)


#: a folder of the user's templates, searched before the package's (see `prompts_from`)
_folder: Path | None = None


@contextmanager
def prompts_from(folder: Path | None) -> Iterator[None]:
    """Within the block, a template in ``folder`` (``<name>.yaml``) replaces the package's.

    Its version is its own: a changed text with a new version never meets the old one's
    cached responses (the rendered request is part of every cache key as well).
    """
    global _folder
    previous, _folder = _folder, folder
    load_prompt.cache_clear()
    try:
        yield
    finally:
        _folder = previous
        load_prompt.cache_clear()


@cache
def load_prompt(name: str) -> PromptTemplate:
    own = _folder / f"{name}.yaml" if _folder is not None else None
    resource = own if own is not None and own.is_file() else files(__package__) / f"{name}.yaml"
    if not resource.is_file():
        raise PromptError(f"no prompt template {name!r} in lettuce_build/prompts")
    try:
        data = yaml.safe_load(resource.read_text(encoding="utf-8"))
        template = PromptTemplate.model_validate({"name": name, **data})
    except (yaml.YAMLError, UnicodeDecodeError, TypeError, ValidationError) as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise PromptError(f"{resource}: not a prompt template: {first}") from err
    if not template.version.startswith(f"{name}-v"):
        raise PromptError(f"prompt {name}: version {template.version!r} must look like '{name}-vN'")
    return template
