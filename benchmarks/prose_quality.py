"""Prose samples worth training on: the same real inputs built with the model writing its edits
(``--edits constrained``, the default before rule-made edits) and with rules making them
(``--edits auto``: rules for the embedded model), side by side, with the quality figures the
label-truth issue asks for.

Inputs nobody here wrote: the markdown long descriptions of the packages installed in this
environment (16 READMEs, as the readme source reads them) and 24 passages of the documentation
installed with them (scikit-learn's dataset descriptions, NumPy's and pip's READMEs), as custom
rows. Per build it prints: samples, hallucinated and the ratio, spans per subcategory, failure
reasons, model tokens and seconds per published sample, and these checks:

- ``odd words``: spans holding a lowercase word that is neither English nor in their context;
- ``type misfits``: spans whose text does not fit their type (a literal or a common word typed as
  a named entity, a numerical span with no number);
- ``cut answers``: answers that end inside a sentence;
- ``questions on target``: questions whose best-matching context sentence lies inside their answer,
  as written (`on_target`) and as read (`on_target_read`: prose sentences, stems, the answer's
  rewording undone).

    python benchmarks/prose_quality.py [--out DIR] [--only rules|constrained]
    python benchmarks/prose_quality.py --folders BUILD_DIR [BUILD_DIR ...]   # measure finished builds
"""

from __future__ import annotations

import argparse
import glob
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from lettuce_build.core import english
from lettuce_build.core.sentences import is_complete, split_sentences
from lettuce_build.core.words import content_stems, content_words, has_number, has_time, in_context, words
from lettuce_build.rules.rewording import reworded
from lettuce_build.stages.answers import evidence_sentences
from lettuce_build.view.samples import load_samples

sys.path.insert(0, str(Path(__file__).parent))
from edit_anchors import installed_readmes  # noqa: E402

READMES = 16
DOCS = 24
LITERALS = {"true", "false", "none", "null", "nan"}


def documentation_rows(path: Path) -> Path:
    """Passages of the documentation installed with the packages here, one custom row each."""
    site = Path(sys.prefix).glob("lib/python*/site-packages").__next__()
    files = sorted(glob.glob(str(site / "sklearn/datasets/descr/*.rst")))
    files += [str(site / "numpy/ma/README.rst"), str(site / "pip/_vendor/README.rst")]
    rows = []
    for name in files:
        if not Path(name).exists():
            continue
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", Path(name).read_text())]
        prose = [
            p
            for p in paragraphs
            if len(p) > 150 and not p.startswith(("..", ":", "=", "-", "*", "|", "`" * 3, "    ", ">>>"))
            and p.count("|") < 2 and "def " not in p
        ]  # fmt: skip
        chunk, taken = "", 0
        for paragraph in prose:
            chunk = f"{chunk}\n\n{paragraph}".strip()
            if len(chunk) > 500:
                rows.append({"id": f"{Path(name).parent.name}/{Path(name).name}#{taken}", "context": chunk})
                chunk, taken = "", taken + 1
                if taken == 3:
                    break
    path.write_text("".join(json.dumps(row) + "\n" for row in rows[:DOCS]))
    return path


def sixteen_readmes(folder: Path) -> Path:
    """Every sixth of the installed packages' markdown READMEs, 16 of them."""
    everything = installed_readmes(folder.parent / "all-readmes")
    folder.mkdir(parents=True, exist_ok=True)
    for index, readme in enumerate(sorted(everything.glob("*.md"))):
        if index % 6 == 0 and len(list(folder.glob("*.md"))) < READMES:
            (folder / readme.name).write_text(readme.read_text())
    return folder


def odd_words(span: str, context: str) -> list[str]:
    return [
        w for w in re.findall(r"(?<![\w.-])[a-z][a-z'-]*[a-z](?![\w.-])", span)
        if english.is_english(w) is False and not in_context(w, context)
    ]  # fmt: skip


def misfit(span: dict[str, Any]) -> bool:
    text, subcategory = span["text"].strip(), span["subcategory"]
    if subcategory == "entity":
        plain = [w for w in text.split() if w.isalpha()]
        literal = text.lower() in LITERALS
        common = bool(plain) and all(w.islower() and english.is_english(w) for w in plain)
        return literal or common
    if subcategory == "numerical":
        return not has_number(text)
    if subcategory == "temporal":
        return not has_time(text)
    return False


def on_target(question: str, context: str, answer: str) -> bool:
    """Whether the question's best-matching context sentence is what the answer says, by the
    words as written: the first sentence sharing most of the question's words, 80% of its words
    in the answer. Markup blocks count as sentences and a faithful rewording as a miss (see
    `on_target_read`)."""
    asked = set(content_words(question))
    sentences = split_sentences(context)
    if not sentences or not asked:
        return False
    best = max(sentences, key=lambda s: len(asked & set(content_words(s))))
    said = set(content_words(best))
    return bool(said) and len(said & set(words(answer))) >= 0.8 * len(said)


#: words by which an answer stands for the subject its question names ("It's distributed under
#: the MIT license" to "How is Alembic distributed?")
PRONOUNS = frozenset({"it", "it's", "its", "they", "they're", "their"})


def on_target_read(question: str, context: str, answer: str) -> bool:
    """`on_target` as a reader checks it: among the context's prose sentences (a badge or a
    logo's HTML is no sentence), by word stems ("require" finds "requires"), the best sentence
    reworded as answers are (links, plain words: rules/rewording.py), and the question's words
    heard in an answer that says "it" for its subject."""
    asked = content_stems(question)
    sentences = list(evidence_sentences(context)) or split_sentences(context)
    if not sentences or not asked:
        return False
    best = max(sentences, key=lambda s: len(asked & content_stems(s)))
    said = content_stems(reworded(best))
    heard = content_stems(answer)
    if PRONOUNS & {w.lower() for w in answer.split()}:
        heard |= asked
    return bool(said) and len(said & heard) >= 0.8 * len(said)


def measure(folder: Path) -> dict[str, Any]:
    samples = load_samples(folder)
    spans = [(s, span) for s in samples for span in s.labels]
    manifest = json.loads((folder / "manifest.json").read_text())
    runs = manifest.get("runs") or [{}]
    tokens = sum(run.get("prompt_tokens", 0) + run.get("completion_tokens", 0) for run in runs)
    seconds = sum(run.get("backend_seconds", 0.0) for run in runs)
    failures: Counter[str] = Counter()
    for stage in manifest.get("stages", []):
        failures.update(
            {f"{stage['name']}:{reason}": n for reason, n in stage.get("failure_reasons", {}).items()}
        )
    hallucinated = sum(bool(s.labels) for s in samples)
    clean_answers = [s for s in samples if not s.labels]
    return {
        "samples": len(samples),
        "hallucinated": hallucinated,
        "ratio": hallucinated / len(samples) if samples else 0.0,
        "subcategories": Counter(f"{span.category}/{span.subcategory}" for _, span in spans),
        "odd words": sum(bool(odd_words(span.text, s.context)) for s, span in spans),
        "type misfits": sum(misfit(span.model_dump()) for _, span in spans),
        "spans": len(spans),
        "cut answers": sum(
            not is_complete(split_sentences(s.answer)[-1]) for s in samples if s.answer.strip()
        ),
        "questions on target": sum(on_target(s.question, s.context, s.answer) for s in samples),
        "questions on target, read": sum(on_target_read(s.question, s.context, s.answer) for s in samples),
        "clean": len(clean_answers),
        "tokens per sample": tokens / len(samples) if samples else 0.0,
        "seconds per sample": seconds / len(samples) if samples else 0.0,
        "failures": dict(failures.most_common()),
        "examples": [
            (s.question, s.answer, [(span.text, f"{span.category}/{span.subcategory}") for span in s.labels])
            for s in samples[:10]
        ],
    }


def show(name: str, figures: dict[str, Any]) -> None:
    print(f"\n== {name}")
    print(
        f"  samples {figures['samples']}, hallucinated {figures['hallucinated']} "
        f"(ratio {figures['ratio']:.2f}); spans {figures['spans']} in {len(figures['subcategories'])} "
        f"subcategories {dict(figures['subcategories'])}"
    )
    print(
        f"  odd words {figures['odd words']}/{figures['spans']}, type misfits {figures['type misfits']}/"
        f"{figures['spans']}, cut answers {figures['cut answers']}/{figures['samples']}, questions on "
        f"target {figures['questions on target']}/{figures['samples']} as written, "
        f"{figures['questions on target, read']}/{figures['samples']} as read"
    )
    print(
        f"  {figures['tokens per sample']:.0f} model tokens and {figures['seconds per sample']:.1f} s "
        f"per published sample; failures {figures['failures']}"
    )


def build(source: str, inputs: Path, out: Path, edits: str) -> Path:
    from lettuce_build.api import build as run

    run(source, input=str(inputs), out=out, edit_anchors=edits, limit=READMES if source == "readme" else None)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/prose-quality"))
    parser.add_argument("--only", choices=["rules", "constrained"])
    parser.add_argument("--folders", nargs="+", type=Path)
    args = parser.parse_args()
    if args.folders:
        for folder in args.folders:
            show(str(folder), measure(folder))
        return
    readmes = sixteen_readmes(args.out / "readmes")
    docs = documentation_rows(args.out / "docs.jsonl")
    results: dict[str, dict[str, Any]] = {}
    for edits in [args.only] if args.only else ["constrained", "auto"]:
        for source, inputs in (("readme", readmes), ("custom", docs)):
            folder = build(source, inputs, args.out / f"{source}-{edits}", edits)
            results[f"{source}, --edits {edits}"] = figures = measure(folder)
            show(f"{source}, --edits {edits}", figures)
    for source in ("readme", "custom"):
        before, after = results.get(f"{source}, --edits constrained"), results.get(f"{source}, --edits auto")
        if before and after and before["hallucinated"]:
            gain = after["hallucinated"] / before["hallucinated"]
            print(f"{source}: hallucinated samples, rules / constrained: {gain:.2f}x")


if __name__ == "__main__":
    main()
