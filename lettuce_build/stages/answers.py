"""Generate an answer that is correct by construction: grounded strictly in the evidence."""

from __future__ import annotations

from typing import Any

import regex
from datasets import Value

from lettuce_build.core.gates import DEFAULT_GATES, GateConfig, answer_problem
from lettuce_build.engine.runner import call_stage
from lettuce_build.engine.stage import CutText, ParseFailure, Sampling
from lettuce_build.llm.protocol import Backend, ChatRequest
from lettuce_build.stages.prompted import PromptedStage

MIN_ANSWER_CHARS = 40
_SENTENCE_END = regex.compile(r"[.!?](?=\s)|[.!?]$")
DEFAULT_EVIDENCE_CHARS = 6000


class AnswerStage(PromptedStage):
    """A grounded answer to the item's question from its evidence column (default ``context``)."""

    name = "answer"

    outputs = {"answer": Value("string"), "answer_cut": Value("bool")}
    #: the penalty keeps small models out of loops (measured: see the README's "Labels that are true")
    sampling = Sampling(temperature=0.7, max_tokens=400, repetition_penalty=1.15)

    def __init__(
        self,
        evidence_chars: int = DEFAULT_EVIDENCE_CHARS,
        evidence_field: str = "context",
        prompt: str = "answer",
        prose: bool = True,
        gates: GateConfig = DEFAULT_GATES,
    ) -> None:
        self.prompt = prompt  # "answer", or a source's own style ("answer_tool_output")
        self.evidence_field = evidence_field  # what the answer is grounded in (tool_output: the gold lines)
        self.requires = ("question", evidence_field)
        self.evidence_chars = evidence_chars
        #: the answer should read as prose (markup may not dominate it): not for tool output
        self.prose = prose
        self.gates = gates

    def render(self, item: dict[str, Any]) -> ChatRequest:
        system, user = self.template.render(
            evidence=item[self.evidence_field][: self.evidence_chars], question=item["question"]
        )
        return self.request(system, user)

    def salvage(self, text: str) -> str | None:
        """An answer cut at max_tokens keeps its complete sentences (and no half code block)."""
        ends = [m.end() for m in _SENTENCE_END.finditer(text)]
        kept = text[: ends[-1]] if ends else ""
        if kept.count("```") % 2:
            kept = kept[: kept.rfind("```")]
        return kept.rstrip() or None

    def parse(self, item: dict[str, Any], response: Any) -> dict[str, Any]:
        answer = response.strip()
        if len(answer) < MIN_ANSWER_CHARS:
            raise ParseFailure("answer_too_short", f"{len(answer)} characters (< {MIN_ANSWER_CHARS})")
        evidence = item[self.evidence_field][: self.evidence_chars]
        template = self.template
        instructions = f"{template.system}\n{template.user}"
        if problem := answer_problem(
            answer, evidence, instructions=instructions, prose=self.prose, config=self.gates
        ):
            raise ParseFailure(*problem)
        return {"answer": answer, "answer_cut": isinstance(response, CutText)}


def generate_grounded_answer(question: str, evidence: str, backend: Backend, *, seed: int = 0) -> str:
    """One grounded answer (uncached)."""
    item = {"key": question[:64], "question": question, "context": evidence}
    return call_stage(AnswerStage(), item, backend, seed=seed)["answer"]
