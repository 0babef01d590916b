"""What the plausibility check measures and costs: every hallucinated span of a finished build
(made with ``--no-plausibility``, so none was refused) scored by the build's model against the
text it replaced, printed one per line from the most to the least plausible, with the drop
quantiles; beside them, as a reference, false but plausible edits made by rule on the same
clean answers (a number doubled, a negation added, a capitalised name of the context swapped
in); then the scoring's model time per span next to the build's own model time per sample (the
check is a prefill, the stages generate).

Read the lines and mark which of the model's spans are false but plausible and which are
garbage: the threshold (`stages.plausibility.MAX_DROP`) belongs between the two groups.

    python benchmarks/plausibility.py BUILD_DIR [--model PATH]   # default: the embedded model
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import regex

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.core.schema import HallucinationSample, row_to_sample
from lettuce_build.engine.runner import check_response, seeded_request
from lettuce_build.llm.embedded import embedded_model_path
from lettuce_build.llm.factory import make_backend
from lettuce_build.stages.plausibility import MAX_DROP, PlausibilityCheck, implausible
from lettuce_build.view.validate import read_rows


def clean_answer(sample: HallucinationSample) -> str | None:
    """The answer before its edits, from the edits the row records (None: not recoverable)."""
    applied = (sample.metadata.get("injection") or {}).get("applied", [])
    text = sample.answer
    for span in sorted(sample.labels, key=lambda s: s.start, reverse=True):
        edit = next((e for e in applied if e["hallucinated"] == span.text), None)
        if edit is not None:
            text = text[: span.start] + edit["original"] + text[span.end :]
            continue
        inserted = next((e for e in applied if e["hallucinated"].endswith(span.text)), None)
        if inserted is None or not inserted["hallucinated"].startswith(inserted["original"]):
            return None
        text = text[: span.start] + text[span.end :]  # a narrowed insertion: only the addition
    return text


_NEGATIONS = {"is": "is not", "are": "are not", "can": "cannot", "will": "will not", "does": "does not"}


def rule_edits(item: dict[str, Any]) -> list[dict[str, Any]]:
    """False but plausible edits of the item's clean answer, one item each (see the module)."""
    answer, made = item["answer"], []

    def edit(match: regex.Match[str], new: str, kind: str) -> None:
        hallucinated = answer[: match.start()] + new + answer[match.end() :]
        label = {"start": match.start(), "end": match.start() + len(new), "text": new}
        made.append(
            {**item, "key": f"{item['key']}-{kind}", "hallucinated_answer": hallucinated, "labels": [label]}
        )

    if number := regex.search(r"(?<![\w.])\d+(?![\w.])", answer):
        edit(number, str(int(number.group()) * 2 or 3), "number")
    if verb := regex.search(r"\b(?:is|are|can|will|does)\b", answer):
        edit(verb, _NEGATIONS[verb.group()], "negation")
    names = list(dict.fromkeys(regex.findall(r"\b[A-Z][a-z]+[A-Z0-9]\w*\b", item["context"])))
    for name in regex.finditer(r"\b[A-Z][a-z]+[A-Z0-9]\w*\b", answer):  # CamelCase: names, not words
        other = next((n for n in names if n != name.group() and n not in answer), None)
        if other:
            edit(name, other, "name")
            break
    return made


def drops(backend: Any, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every span of ``items`` as the check's verdicts record it, least dropped first."""
    check = PlausibilityCheck()
    completions = backend.generate(
        [seeded_request(check, item, build_seed=0, attempt=0, schema=None) for item in items]
    )
    scored = []
    for item, completion in zip(items, completions, strict=True):
        scored += json.loads(check.parse(item, check_response(check, completion))["judgement"])["edits"]
    return sorted(scored, key=lambda edit: edit["drop"])


def spread(edits: list[dict[str, Any]]) -> str:
    values = [edit["drop"] for edit in edits]
    quantiles = [values[min(len(values) - 1, int(q * len(values)))] for q in (0.1, 0.25, 0.5, 0.75, 0.9)]
    refused = sum(implausible(edit, MAX_DROP) for edit in edits)
    shown = ", ".join(f"p{p} {v:.1f}" for p, v in zip((10, 25, 50, 75, 90), quantiles, strict=True))
    return f"{shown}, max {values[-1]:.1f}; refused: {refused} of {len(values)}"


def shown(edit: dict[str, Any]) -> str:
    """One scored span: its drop, whether it is refused, and for an insertion its nats a token."""
    flag = "REFUSED" if implausible(edit, MAX_DROP) else "       "
    added = edit["edited_tokens"] - edit["original_tokens"]
    rate = f" ({edit['drop'] / added:.1f} a token)" if not edit["original"].strip() and added > 0 else ""
    return f"{edit['drop']:7.1f} {flag} {edit['original'][:50]!r} -> {edit['edited'][:60]!r}{rate}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("build", type=Path)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    manifest = BuildDir(args.build).read_manifest()
    samples = [row_to_sample(raw.data) for raw in read_rows(args.build / "dataset") if raw.data]
    items = []
    for number, sample in enumerate(s for s in samples if s.labels):
        if (clean := clean_answer(sample)) is None:
            continue
        labels = [span.model_dump() for span in sample.labels]
        items.append(
            {
                "key": str(number),
                "context": sample.context,
                "question": sample.question,
                "answer": clean,
                "hallucinated_answer": sample.answer,
                "labels": labels,
            }
        )
    if not items:
        raise SystemExit(f"{args.build}: no hallucinated sample to score")
    backend = make_backend("vllm", args.model or str(embedded_model_path()))
    drops(backend, items[:1])  # the engine's start and first compile are no scoring's cost
    started = time.perf_counter()
    scored = drops(backend, items)
    seconds = time.perf_counter() - started
    for edit in scored:
        print(shown(edit))
    reference = drops(backend, [edit for item in items for edit in rule_edits(item)])
    print(f"\nthe build's {len(scored)} spans, likelihood drop (nats): {spread(scored)}")
    print(f"{len(reference)} rule-made plausible edits: {spread(reference)}")
    for edit in reference:
        if implausible(edit, MAX_DROP):
            print(f"  refused rule-made edit: {shown(edit)}")
    made = len(samples) or 1
    model_seconds = sum(s.backend_seconds for s in manifest.stages if s.name != "plausibility")
    per_span = seconds / len(scored)
    per_sample = model_seconds / made
    print(
        f"cost: {per_span * 1000:.0f} ms of model time per span scored, against {per_sample * 1000:.0f} ms "
        f"per sample the build's stages took (ratio {per_span / per_sample:.2f})"
    )


if __name__ == "__main__":
    main()
