"""lettuce-build beside LettuceDetect's own document pipeline on the same READMEs, the same server
and the same model.

One vLLM OpenAI-compatible server on loopback serves the embedded model (smollm2-135m); both
pipelines send it their requests with the same concurrency. The peer is
``lettucedetect.generation.doc_source`` (chunk by heading, a typed question, a grounded answer, a
model-written injection for the hallucinated share); lettuce-build is a default ``readme`` build
over the OpenAI backend. Inputs are the 16 real READMEs of ``prose_quality.py`` (the long
descriptions of packages installed here). Per pipeline it prints: seconds, samples, hallucinated,
and how well each clean answer is supported by its context: the share of the answer's content
words its context holds (p10 / p50 / p90).

    python benchmarks/peer_doc_source.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the suite's server, below
sys.path.insert(0, str(Path(__file__).resolve().parent))
from prose_quality import READMES, sixteen_readmes  # noqa: E402

from lettuce_build.core.words import content_words  # noqa: E402
from tests.support.vllm_server import vllm_openai_server  # noqa: E402

MODEL = "smollm2-135m"
CONCURRENCY = 8
RATIO = 0.5


def support(answer: str, context: str) -> float:
    """The share of the answer's content words that its context holds."""
    said = content_words(answer)
    if not said:
        return 1.0
    held = content_words(context)
    return sum(word in held for word in said) / len(said)


def quantiles(values: list[float]) -> str:
    if len(values) < 2:
        return "n/a"
    tenths = statistics.quantiles(values, n=10)
    return f"{tenths[0]:.2f} / {statistics.median(values):.2f} / {tenths[-1]:.2f}"


def run_peer(readmes: Path, url: str, out: Path) -> dict[str, Any]:
    from lettucedetect.generation.doc_source import DocSourceConfig, generate_doc_source
    from openai import AsyncOpenAI

    docs = [
        {"id": path.stem, "text": path.read_text(), "split": "train"} for path in sorted(readmes.glob("*.md"))
    ]
    out.mkdir(parents=True, exist_ok=True)
    samples_path = out / "samples.jsonl"
    samples_path.unlink(missing_ok=True)
    client = AsyncOpenAI(base_url=url, api_key="unused")
    started = time.perf_counter()
    # one chunk per README, as a default readme build takes one work item per document
    config = DocSourceConfig(dataset_name="peer-readme", max_chunks_per_doc=1)
    generate_doc_source(
        docs,
        config,
        aclient=client,
        model=MODEL,
        out_path=samples_path,
        failures_path=out / "failures.jsonl",
        ratio=RATIO,
        batch_size=CONCURRENCY,
    )
    seconds = time.perf_counter() - started
    rows = [json.loads(line) for line in samples_path.read_text().splitlines() if line.strip()]
    return figures(seconds, [(row["context"], row["answer"], bool(row["labels"])) for row in rows])


def run_ours(readmes: Path, url: str, out: Path) -> dict[str, Any]:
    import lettuce_build
    from lettuce_build.builds.settings.recipe import Recipe
    from lettuce_build.view.samples import load_samples

    recipe = Recipe.checked(
        {
            "source": "readme",
            "input": str(readmes),
            "out": out,
            "backend": "openai",
            "base_url": url,
            "model": MODEL,
            "concurrency": CONCURRENCY,
            "limit": READMES,
            "ratio": RATIO,
        }
    )
    started = time.perf_counter()
    lettuce_build.build(recipe=recipe)
    seconds = time.perf_counter() - started
    rows = load_samples(out)
    return figures(seconds, [(row.context, row.answer, bool(row.labels)) for row in rows])


def figures(seconds: float, rows: list[tuple[str, str, bool]]) -> dict[str, Any]:
    clean = [support(answer, context) for context, answer, hallucinated in rows if not hallucinated]
    return {
        "seconds": seconds,
        "samples": len(rows),
        "hallucinated": sum(hallucinated for _, _, hallucinated in rows),
        "support": quantiles(clean),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/peer-doc-source"))
    args = parser.parse_args()
    readmes = sixteen_readmes(args.out / "readmes")
    with vllm_openai_server() as url:
        peer = run_peer(readmes, url, args.out / "peer")
        ours = run_ours(readmes, url, args.out / "ours")
    print(f"{len(list(readmes.glob('*.md')))} READMEs, {MODEL} on one vLLM server, concurrency {CONCURRENCY}")
    print(f"{'':24}{'seconds':>9}{'samples':>9}{'halluc.':>9}   clean answers' support p10 / p50 / p90")
    for name, result in (("lettucedetect doc_source", peer), ("lettuce-build readme", ours)):
        print(
            f"{name:24}{result['seconds']:>9.0f}{result['samples']:>9}{result['hallucinated']:>9}"
            f"   {result['support']}"
        )
    per_sample = [result["seconds"] / max(result["samples"], 1) for result in (peer, ours)]
    print(f"seconds per sample, peer / ours: {per_sample[0] / per_sample[1]:.2f}x")


if __name__ == "__main__":
    main()
