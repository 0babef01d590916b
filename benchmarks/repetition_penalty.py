"""What the answer stage's repetition penalty does to the embedded model's free answers: the
same (question, evidence) pairs, read from a finished build, answered with the free answer
prompt at penalty 1.0 (the baseline) and at the stage's default, a few seeds each, in one engine.
It reports the share of answers each gate rejects (loops above all: `answer_repetition`),
which is what the penalty is for, and the tokens generated.

    python benchmarks/repetition_penalty.py BUILD_DIR [SEEDS]     # e.g. a 16-item readme build
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

from lettuce_build.core import gates
from lettuce_build.core.schema import row_to_sample
from lettuce_build.llm.factory import make_backend
from lettuce_build.stages.answers import AnswerStage
from lettuce_build.view.validate import read_rows

BASELINE = 1.0


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    seeds = int(sys.argv[2]) if len(sys.argv) == 3 else 3
    samples = [row_to_sample(raw.data) for raw in read_rows(Path(sys.argv[1]) / "dataset") if raw.data]
    if not samples:
        sys.exit(f"{sys.argv[1]}: a finished build with samples is needed")
    stage = AnswerStage()
    penalties = (BASELINE, stage.sampling.repetition_penalty)
    backend = make_backend("vllm", "smollm2-135m")
    instructions = stage.template.instructions
    print(f"{len(samples)} question/evidence pairs x {seeds} seeds, free answers of smollm2-135m")
    results: dict[float, tuple[Counter[str], int, float]] = {}
    for penalty in penalties:
        requests = [
            stage.render({"question": s.question, "context": s.context}).with_params(
                seed=seed, repetition_penalty=penalty
            )
            for s in samples
            for seed in range(seeds)
        ]
        started = time.perf_counter()
        completions = backend.generate(requests)
        seconds = time.perf_counter() - started
        contexts = [s.context for s in samples for _ in range(seeds)]
        reasons: Counter[str] = Counter()
        for completion, context in zip(completions, contexts, strict=True):
            problem = gates.answer_problem(completion.text.strip(), context, instructions=instructions)
            reasons[problem[0] if problem else "passes every gate"] += 1
        tokens = sum(c.completion_tokens for c in completions)
        results[penalty] = (reasons, tokens, seconds)
        print(f"\npenalty {penalty}: {len(requests)} answers, {tokens} tokens, {seconds:.0f} s")
        for reason, n in reasons.most_common():
            print(f"  {reason:<24} {n:>4}  ({n / len(requests):.0%})")
    base, chosen = (results[p][0]["answer_repetition"] for p in penalties)
    total = len(samples) * seeds
    ratio = f"{chosen / base:.2f}" if base else "n/a (no loop at the baseline)"
    shares = f"{base / total:.0%} at {penalties[0]} -> {chosen / total:.0%} at {penalties[1]}"
    print(f"\nloops: {shares} (ratio {ratio})")


if __name__ == "__main__":
    main()
