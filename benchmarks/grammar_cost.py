"""What the structured outputs of each stage cost to compile, next to what the model costs.

vLLM compiles every request's JSON schema with xgrammar before the request may decode (in a
pool of (cores+1)/2 threads, with a cache keyed by the schema's text). A per-item schema is a
compile per request; a constant one compiles once. This measures the schemas the stages really
build for real items: READMEs (both answer modes: free answers send no schema; both edit modes;
generation), SWE-bench gold fixes for the code injection, and the judges', each compiled as
vLLM compiles it (``compile_json_schema``, any whitespace) on one thread with no cache, with the
embedded model's tokenizer and with a ~150k vocabulary (the embedded vocabulary grown with
dictionary words, a stand-in for a Qwen-sized tokenizer; needs /usr/share/dict/words).

Printed per stage: p50 / p90 / max milliseconds per request, beside the embedded model's own
seconds per request for the stage on this machine (from the manifest of a build given with
``--build``, e.g. `make demo`'s) and a GPU reference: about 4 ms of an H100 for a 40-token
question and 15 ms for a 150-token edit with a 7B model.

    python benchmarks/grammar_cost.py [--readmes DIR] [--swebench FILE] [--items N] [--build OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import xgrammar as xgr

from lettuce_build.builds.storage.folder import BuildDir
from lettuce_build.llm.embedded import embedded_model_path
from lettuce_build.sources.base import LoadOptions
from lettuce_build.sources.code import RepositoryNames, build_answer
from lettuce_build.sources.documents import ReadmeSource
from lettuce_build.stages.answers import ExtractiveAnswerStage, evidence_sentences, neighbourhood
from lettuce_build.stages.code_edits import STRUCTURAL, InjectCodeStage
from lettuce_build.stages.generation import GenerateStage
from lettuce_build.stages.injection import InjectMenuStage
from lettuce_build.stages.judge import AnswerJudgeStage, SpanJudgeStage
from lettuce_build.stages.questions import FocusedQuestionStage
from lettuce_build.swebench.patches import parse_patch

ROOT = Path(__file__).resolve().parent.parent
WORDS = Path("/usr/share/dict/words")
#: a request's grammar may take at most this long at p90 (the issue's bound)
P90_BOUND_MS = 20.0
GPU_MS = {"question": 4.0, "edit": 15.0}


def schema_of(stage: Any, item: dict[str, Any]) -> dict[str, Any] | None:
    """The schema the runner sends for ``item`` (see `engine.runner.seeded_request`)."""
    if stage.response_model is None:
        return None
    return stage.item_schema(item) or stage.response_model.model_json_schema()


def readme_schemas(folder: Path, count: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(stage, schema) of each stage of a README build, for ``count`` real items, fed what the
    stage before would give (the focus sentence, an answer of it and its neighbours)."""
    items = ReadmeSource().load(str(folder), LoadOptions(limit=count, seed=1)).items
    question = FocusedQuestionStage(seed=1)
    answer = ExtractiveAnswerStage(focused=True)
    constrained = InjectMenuStage("markdown", anchors="constrained", seed=1)
    free = InjectMenuStage("markdown", anchors="free", seed=1)
    generate = GenerateStage(seed=1)
    judge, span_judge = AnswerJudgeStage(), SpanJudgeStage()
    for item in items:
        focus = question.focus(item)
        yield "focused question", schema_of(question, item)
        asked = {**item, "question": "What is it?", "focus": focus}
        yield "extractive answer", schema_of(answer, asked)
        sentences = evidence_sentences(item["chunk"])
        text = " ".join(neighbourhood(sentences, focus, 1)) or focus
        answered = {**asked, "answer": text, "inject": True}
        yield "inject, constrained anchors", schema_of(constrained, answered)
        yield "inject, free edits", schema_of(free, answered)
        yield "generate", schema_of(generate, answered)
        yield "judge answer", schema_of(judge, answered)
        span = {"start": 0, "end": min(len(text), 8), "text": text[:8]}
        yield "judge spans", schema_of(span_judge, {**answered, "labels": [span]})


def code_schemas(path: Path, count: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """(stage, schema) of the code injection for the gold fixes of ``count`` SWE-bench tasks."""
    stage = InjectCodeStage(RepositoryNames(), anchors="constrained", seed=1)
    with path.open() as handle:
        for index, line in zip(range(count), handle, strict=False):
            row = json.loads(line)
            answer, _ = build_answer("replace", parse_patch(row["patch"]), {})
            error = STRUCTURAL if index % 5 == 0 else "wrong_implementation"
            item = {"key": row["instance_id"], "answer": answer, "code_error": error, "inject": True}
            yield "inject code, constrained", schema_of(stage, item)


def compiler(vocabulary: str) -> xgr.GrammarCompiler:
    """A compiler as vLLM makes one, on one thread and without a cache (every compile counted)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(embedded_model_path()))
    info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer))
    if vocabulary == "150k":
        vocab = list(info.decoded_vocab)
        words = [w.strip() for w in WORDS.read_text(encoding="utf-8", errors="ignore").split() if w.strip()]
        grown = [v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in vocab]
        grown += [f"Ġ{w}" for w in words] + words
        grown = grown[:151_000]
        info = xgr.TokenizerInfo(grown, xgr.VocabType.BYTE_LEVEL, vocab_size=len(grown))
    return xgr.GrammarCompiler(info, max_threads=1, cache_enabled=False)


def compile_ms(compiler: xgr.GrammarCompiler, schema: dict[str, Any]) -> float:
    started = time.perf_counter()
    compiler.compile_json_schema(json.dumps(schema), any_whitespace=True)
    return (time.perf_counter() - started) * 1000


def quantiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) == 1:
        return values[0], values[0], values[0]
    cuts = statistics.quantiles(values, n=10, method="inclusive")
    return statistics.median(values), cuts[8], max(values)


def model_seconds(build: Path | None) -> dict[str, float]:
    """Per stage of a build on this machine, the model's seconds per request it sent."""
    if build is None:
        return {}
    manifest = BuildDir(build).read_manifest()
    return {s.name: s.backend_seconds / s.cache_misses for s in manifest.stages if s.cache_misses}


MODEL_STAGE = {
    "focused question": "question",
    "extractive answer": "answer",
    "inject, constrained anchors": "inject",
    "inject, free edits": "inject",
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--readmes", type=Path, default=ROOT / "examples" / "readmes")
    parser.add_argument(
        "--swebench", type=Path, default=ROOT.parent / "shared" / "data" / "swebench_lite.jsonl"
    )
    parser.add_argument("--items", type=int, default=30, help="items per stage")
    parser.add_argument("--build", type=Path, help="a build on this machine: the model's time per request")
    parser.add_argument("--no-150k", action="store_true", help="skip the ~150k vocabulary")
    args = parser.parse_args()

    schemas: dict[str, list[dict[str, Any]]] = {}
    found = list(readme_schemas(args.readmes, args.items))
    if args.swebench.exists():
        found += list(code_schemas(args.swebench, args.items))
    for stage, schema in found:
        if schema is not None:
            schemas.setdefault(stage, []).append(schema)
    vocabularies = ["49k"] + ([] if args.no_150k or not WORDS.exists() else ["150k"])
    seconds = model_seconds(args.build)
    print(
        f"{'stage':<30} {'schemas':>7} {'unique':>6}  "
        + "  ".join(f"{v + ' p50/p90/max ms':>26}" for v in vocabularies)
        + f"  {'model s/req (here)':>18}  GPU ms/req  grammar p90 / GPU"
    )
    worst = 0.0
    for stage, listed in schemas.items():
        unique = {json.dumps(s, sort_keys=True) for s in listed}
        row = f"{stage:<30} {len(listed):>7} {len(unique):>6}  "
        embedded_p90 = 0.0
        for vocabulary in vocabularies:
            made = compiler(vocabulary)
            times = [compile_ms(made, json.loads(text)) for text in unique]
            p50, p90, top = quantiles(times)
            if vocabulary == "49k":
                worst, embedded_p90 = max(worst, p90), p90
            row += f"{p50:>9.1f} /{p90:>7.1f} /{top:>7.1f}  "
        model = seconds.get(MODEL_STAGE.get(stage, ""), 0.0)
        gpu = GPU_MS["question"] if "question" in stage or "answer" in stage else GPU_MS["edit"]
        # a constant schema compiles once per build: per request it costs nothing
        per_request = embedded_p90 if len(unique) > 1 else 0.0
        row += f"{model:>18.2f}  {gpu:>9.0f}  {per_request / gpu:>16.2f}x"
        print(row)
    verdict = "within" if worst <= P90_BOUND_MS else "OVER"
    print(f"worst p90 on the embedded tokenizer: {worst:.1f} ms ({verdict} the {P90_BOUND_MS:.0f} ms bound)")


if __name__ == "__main__":
    main()
