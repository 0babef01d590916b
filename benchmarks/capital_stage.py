"""A one-field JSON stage the embedded model answers, shared by the engine benchmarks."""

from __future__ import annotations

from typing import Any

from datasets import Value
from pydantic import BaseModel

from lettuce_build.engine.stage import Stage
from lettuce_build.llm.protocol import ChatRequest

COUNTRIES = [
    "France",
    "Italy",
    "Spain",
    "Japan",
    "Kenya",
    "Peru",
    "Chile",
    "Egypt",
    "India",
    "Canada",
    "Norway",
    "Ghana",
    "Nepal",
    "Cuba",
    "Fiji",
    "Laos",
]


class Description(BaseModel):
    capital: str
    summary: str


class CapitalStage(Stage):
    name = "capital"
    prompt_version = "capital-bench-v1"
    response_model = Description

    outputs = {"capital": Value("string"), "summary": Value("string")}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        return ChatRequest.of(
            "Answer with JSON.",
            f"Name the capital of {item['country']} and describe it "
            f"in two sentences (variant {item['variant']}).",
            temperature=0.7,
            max_tokens=160,
        )

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        return {"capital": response.capital, "summary": response.summary}


def work_items(n: int) -> list[dict[str, Any]]:
    return [{"key": f"q{i}", "country": COUNTRIES[i % len(COUNTRIES)], "variant": i} for i in range(n)]
