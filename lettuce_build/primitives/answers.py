"""Generate an answer that is correct by construction: grounded strictly in the evidence."""

from __future__ import annotations

from typing import Any

from datasets import Value

from lettuce_build.llm.protocol import Backend, ChatRequest
from lettuce_build.prompts import load_prompt
from lettuce_build.runner import ParseFailure, Sampling, Stage, call_stage

MIN_ANSWER_CHARS = 40
DEFAULT_EVIDENCE_CHARS = 6000


class AnswerStage(Stage):
    """A grounded answer to the item's question from its evidence column (default ``context``)."""

    name = "answer"
    prompt_version = load_prompt("answer").version

    outputs = {"answer": Value("string")}
    sampling = Sampling(temperature=0.7, max_tokens=400)

    def __init__(self, evidence_chars: int = DEFAULT_EVIDENCE_CHARS, evidence_field: str = "context") -> None:
        self.evidence_field = evidence_field  # what the answer is grounded in (tool_output: the gold lines)
        self.requires = ("question", evidence_field)
        self.evidence_chars = evidence_chars

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = load_prompt("answer").render(
            evidence=item[self.evidence_field][: self.evidence_chars], question=item["question"]
        )
        return self.request(system, user)

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        answer = response.strip()
        if len(answer) < MIN_ANSWER_CHARS:
            raise ParseFailure("answer_too_short", f"{len(answer)} characters (< {MIN_ANSWER_CHARS})")
        return {"answer": answer}


def generate_grounded_answer(question: str, evidence: str, backend: Backend, *, seed: int = 0) -> str:
    """One grounded answer (uncached)."""
    item = {"key": question[:64], "question": question, "context": evidence}
    return call_stage(AnswerStage(), item, backend, seed=seed)["answer"]
