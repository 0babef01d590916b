"""The base of stages whose prompt is a versioned template file (prompts/<name>.yaml)."""

from __future__ import annotations

from lettuce_build.engine.stage import Stage
from lettuce_build.prompts import PromptTemplate, load_prompt


class PromptedStage(Stage):
    """A stage that renders the template named by ``prompt``. The template is looked up when
    used, not when the stage is made: `--prompts` (`prompts_from`) may swap it for a build."""

    prompt: str

    @property
    def template(self) -> PromptTemplate:
        return load_prompt(self.prompt)

    @property
    def prompt_version(self) -> str:
        return self.template.version
