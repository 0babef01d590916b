"""A small JSON stage for runner tests: ask for a number, expect it back doubled."""

from __future__ import annotations

from typing import Any

from datasets import Value
from pydantic import BaseModel

from lettuce_build.engine.stage import ParseFailure, Stage
from lettuce_build.llm.protocol import ChatRequest


class Doubled(BaseModel):
    value: int


class DoubleStage(Stage):
    name = "double"
    prompt_version = "double-v1"
    response_model = Doubled

    outputs = {"doubled": Value("int64")}

    def applies(self, item: dict[str, Any]) -> bool:
        return item.get("skip") is not True

    def render(self, item: dict[str, Any]) -> ChatRequest:
        return ChatRequest.of("Double the number.", f"number {item['n']}", temperature=0.0, max_tokens=16)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        if response.value != 2 * item["n"]:
            raise ParseFailure("wrong_value", f"expected {2 * item['n']}, got {response.value}")
        return {"doubled": response.value}


def number_of(request: ChatRequest) -> int:
    return int(request.messages[-1].content.split()[-1])


def correct(request: ChatRequest) -> str:
    return f'{{"value": {2 * number_of(request)}}}'


class Capital(BaseModel):
    city: str


class CapitalStage(Stage):
    """A one-field JSON question the embedded model can answer, for real-engine tests."""

    name = "capital"
    prompt_version = "capital-v1"
    response_model = Capital

    outputs = {"city": Value("string")}

    def render(self, item: dict[str, Any]) -> ChatRequest:
        return ChatRequest.of(
            "Answer with JSON.", f"What is the capital of {item['country']}?", temperature=0.7, max_tokens=64
        )

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        return {"city": response.city}


COUNTRIES = ["France", "Italy", "Spain", "Japan", "Kenya", "Peru"]
