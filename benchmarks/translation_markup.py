"""Which way of sending spans to a translator keeps more of them: numbered tags inside the answer
(what `translate` ships), or a JSON schema with the answer and each span's translation as
fields, whose spans are then looked for in the translated answer (the alternative).

    python benchmarks/translation_markup.py SAMPLES --to de [--to fr ...] [--base-url URL --model M]

SAMPLES: any of our layouts (a build folder, a JSONL of our rows). Without --base-url, vLLM's
OpenAI-compatible server is started on loopback with the embedded model. Per language, the
share of hallucinated samples whose every span came back (exactly once, non-empty), each way,
and their ratio (tags over fields); the same requests are sent both ways, one attempt each.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import nullcontext
from pathlib import Path

from pydantic import BaseModel

from lettuce_build.core.errors import MarkupError
from lettuce_build.core.languages import name_of
from lettuce_build.core.span_markup import mark, unmark
from lettuce_build.llm.openai_backend import OpenAIBackend, OpenAIOptions
from lettuce_build.llm.protocol import ChatRequest
from lettuce_build.stages.translation import TranslateAnswerStage
from lettuce_build.translate.report import TranslationOptions, TranslationReport
from lettuce_build.translate.run import work_items

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the suite's server, below
from tests.support.vllm_server import vllm_openai_server  # noqa: E402

FIELDS_SYSTEM = (
    "You are a professional translator. Translate the text into the language asked, keeping its "
    "meaning exactly. Also give, in order, the translation of each marked phrase exactly as it "
    "appears in your translated text. Numbers, names, versions and commands stay as they are."
)


class WithSpans(BaseModel):
    text: str
    spans: list[str]


def fields_request(item: dict, target: str) -> ChatRequest:
    phrases = "\n".join(f"{n}. {label['text']}" for n, label in enumerate(item["labels"], start=1))
    user = f"Translate into {name_of(target)}:\n\n{item['answer']}\n\nMarked phrases:\n{phrases}"
    return ChatRequest.of(
        FIELDS_SYSTEM, user, temperature=0.3, max_tokens=1024, json_schema=WithSpans.model_json_schema()
    )


def kept_by_fields(text: str) -> bool:
    try:
        answer = WithSpans.model_validate_json(text)
    except ValueError:
        return False
    return bool(answer.spans) and all(s.strip() and answer.text.count(s) == 1 for s in answer.spans)


def kept_by_tags(item: dict, text: str) -> bool:
    try:
        translated = json.loads(text)["text"]
        unmark(translated, mark(item["answer"], [(s["start"], s["end"]) for s in item["labels"]]))
    except (ValueError, KeyError, TypeError, MarkupError):
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("samples", type=Path)
    parser.add_argument("--to", action="append", required=True)
    parser.add_argument("--base-url")
    parser.add_argument("--model", default="smollm2-135m")
    args = parser.parse_args()
    serving = nullcontext(args.base_url) if args.base_url else vllm_openai_server()
    with serving as url:
        os.environ.setdefault("OPENAI_API_KEY", "unused")  # the loopback server asks for none
        backend = OpenAIBackend(args.model, OpenAIOptions(base_url=url))
        options = TranslationOptions(source=args.samples, languages=args.to, out=Path("unused"))
        report = TranslationReport.empty(options, args.model)
        items = [i for i in work_items(options, report) if i["labels"]]
        stage = TranslateAnswerStage()
        schema = stage.response_model.model_json_schema()
        tagged = [stage.render(i).with_params(seed=0, json_schema=schema) for i in items]
        fielded = [fields_request(i, i["language"]).with_params(seed=0) for i in items]
        tags = backend.generate(tagged)
        fields = backend.generate(fielded)
    print(f"{len(items)} hallucinated samples x languages, model {args.model}, one attempt each")
    for language in args.to:
        mine = [n for n, item in enumerate(items) if item["language"] == language]
        by_tags = sum(kept_by_tags(items[n], tags[n].text) for n in mine)
        by_fields = sum(kept_by_fields(fields[n].text) for n in mine)
        ratio = f"{by_tags / by_fields:.2f}x" if by_fields else "n/a (fields kept none)"
        print(
            f"  {language}: every span back: tags {by_tags}/{len(mine)}, fields {by_fields}/{len(mine)}; "
            f"tags/fields {ratio}"
        )


if __name__ == "__main__":
    main()
