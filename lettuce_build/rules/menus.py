"""The menus injection offers the model, one per source kind: its native hallucination types with
their definitions, the rules and the examples the prompt shows; and how each modality's edits
are described."""

from __future__ import annotations

from pydantic import BaseModel, Field


class MenuExample(BaseModel):
    type: str
    original: str
    hallucinated: str


class Menu(BaseModel):
    """A source's native hallucination types with the definitions, rules and examples the prompt shows."""

    types: dict[str, str]
    rules: list[str] = Field(default_factory=list)
    examples: list[MenuExample] = Field(default_factory=list)


MENUS: dict[str, Menu] = {
    "markdown": Menu(
        types={
            "NUMERICAL": "change a number, version, size or count",
            "TEMPORAL": "change a date, duration or the order of steps",
            "ENTITY": "swap a named thing (tool, library, person, place) for another",
            "RELATIONAL": "change how two things relate (what depends on, calls or contains what)",
            "FABRICATED": "mention a plausible thing (option, file, project) that the context never names",
            "CLAIM": "add a plausible statement the context does not support",
        },
        examples=[
            MenuExample(type="NUMERICAL", original="Python 3.10", hallucinated="Python 3.8"),
            MenuExample(type="ENTITY", original="PostgreSQL", hallucinated="MySQL"),
            MenuExample(
                type="CLAIM",
                original="It reads posts written in markdown.",
                hallucinated="It reads posts written in markdown and publishes them to Medium.",
            ),
        ],
    ),
    "paper": Menu(
        types={
            "NUMERICAL": "change a reported number, score, size or count",
            "ENTITY": "swap a dataset, model, metric or author for another",
            "RELATIONAL": "change a comparison or relation between methods or results",
            "METHODOLOGICAL": "change a setting, procedure or experimental condition",
            "CITATIONAL": "attribute a finding or method to the wrong work",
        },
        rules=[
            "Do not invent names: a swapped dataset, model, metric or work must be one the context "
            "names elsewhere, or a real, well-known one of the same kind.",
            "Keep numbers in the same format and precision (a score stays a score with two decimals).",
        ],
        examples=[
            MenuExample(type="NUMERICAL", original="an F1 of 71.3", hallucinated="an F1 of 76.8"),
            MenuExample(type="RELATIONAL", original="outperforms BERT", hallucinated="underperforms BERT"),
            MenuExample(
                type="METHODOLOGICAL", original="trained for 3 epochs", hallucinated="trained for 10 epochs"
            ),
        ],
    ),
}

MODALITY_NOTES: dict[str, str] = {
    "code": "source code; edit identifiers, values, conditions or calls inside the code",
    "tool_output": "output of a developer tool; edit values, names, line numbers or outcomes",
    "markdown": "technical documentation in markdown; keep markdown tokens where they were",
    "prose": "natural-language prose",
}
