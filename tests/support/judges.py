"""Scripted judges: test doubles that play `--verify`'s judge (stages/judge.py) by rule."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from lettuce_build.llm.protocol import ChatRequest

from .scripted import ScriptedBackend


def judging(
    answer_unsupported: Callable[[str], bool] = lambda sentence: False,
    span_verdict: Callable[[str], str] = lambda span: "contradicted",
    category: str = "contradiction",
) -> Callable[[ChatRequest], str]:
    """A judge that calls a sentence unsupported when ``answer_unsupported(sentence)``, and gives
    each marked span ``span_verdict(text)`` with ``category``."""

    def respond(request: ChatRequest) -> str:
        system, user = request.messages[0].content, request.messages[-1].content
        if "You check answers against their context" in system:
            listed = user.split("Answer sentences:\n", 1)[1]
            sentences = re.findall(r"^(\d+)\. (.*)$", listed, flags=re.MULTILINE)
            return json.dumps({"unsupported": [int(n) for n, text in sentences if answer_unsupported(text)]})
        if "You check marked passages" in system:
            spans = re.findall(r"\[\[(\d+): (.*?)\]\]", user)
            verdicts = [
                {
                    "span": int(n),
                    "verdict": (v := span_verdict(text)),
                    "category": category if v != "supported" else "supported",
                }
                for n, text in spans
            ]
            return json.dumps({"spans": verdicts})
        raise AssertionError(f"a judge was asked something else: {system[:80]}")

    return respond


def judge(name: str, **rules: Callable[[str], object] | str) -> ScriptedBackend:
    return ScriptedBackend(judging(**rules), model=name)  # type: ignore[arg-type]
