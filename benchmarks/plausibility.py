"""What the plausibility check measures and costs: every hallucinated span of a finished build
(made with ``--no-plausibility``, so none was refused) scored by the build's model against the
text it replaced, printed one per line from the most to the least plausible, with the drop
quantiles; then the scoring's model time per span next to the build's own model time per sample
(the check is a prefill, the stages generate).

Read the lines and mark which spans are false but plausible and which are garbage: the threshold
(`stages.plausibility.MAX_DROP`) belongs between the two groups.

    python benchmarks/plausibility.py BUILD_DIR [--model PATH]   # default: the embedded model
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from lettuce_build.builds.folder import BuildDir
from lettuce_build.core.schema import HallucinationSample, row_to_sample
from lettuce_build.engine.runner import check_response, seeded_request
from lettuce_build.llm.embedded import embedded_model_path
from lettuce_build.llm.factory import make_backend
from lettuce_build.stages.plausibility import MAX_DROP, PlausibilityCheck
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
    backend = make_backend("vllm", args.model or str(embedded_model_path()))
    check = PlausibilityCheck()
    requests = [seeded_request(check, item, 0, 0, None) for item in items]
    backend.generate(requests[:1])  # the engine's start and first compile are no scoring's cost
    started = time.perf_counter()
    completions = backend.generate(requests)
    seconds = time.perf_counter() - started
    scored = []
    for item, completion in zip(items, completions, strict=True):
        verdict = json.loads(check.parse(item, check_response(check, completion))["judgement"])
        scored += [(edit["drop"], edit["original"], edit["edited"]) for edit in verdict["edits"]]
    scored.sort()
    for drop, original, edited in scored:
        flag = "REFUSED" if drop > MAX_DROP else "       "
        print(f"{drop:6.2f} {flag} {original[:50]!r} -> {edited[:60]!r}")
    drops = [d for d, _, _ in scored]
    if not drops:
        raise SystemExit("no hallucinated span could be scored")
    quantiles = {q: drops[min(len(drops) - 1, int(q * len(drops)))] for q in (0.1, 0.25, 0.5, 0.75, 0.9)}
    print(f"\n{len(drops)} spans of {len(items)} samples; drop (nats/token) quantiles:", end=" ")
    print(", ".join(f"p{int(q * 100)} {v:.2f}" for q, v in quantiles.items()), f"max {drops[-1]:.2f}")
    print(f"refused at MAX_DROP {MAX_DROP}: {sum(d > MAX_DROP for d in drops)} of {len(drops)}")
    made = len(samples) or 1
    model_seconds = sum(s.backend_seconds for s in manifest.stages)
    per_span = seconds / len(drops)
    per_sample = model_seconds / made
    print(
        f"cost: {per_span * 1000:.0f} ms of model time per span scored, against {per_sample * 1000:.0f} ms "
        f"per sample the build's stages took (ratio {per_span / per_sample:.2f})"
    )


if __name__ == "__main__":
    main()
