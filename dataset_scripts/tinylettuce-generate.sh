#!/usr/bin/env bash
# tinylettuce-generate: a TinyLettuce-style training set in generator mode: the model writes each
# hallucinated answer itself (natural-looking), spans are recovered by a character diff against
# the clean answer; `lettuce-build report` measures those spans against what the model reported.
set -euo pipefail
: "${INPUT:?a folder of README files or a JSONL of {repo, readme}}"
lettuce-build build --source wikipedia --mode generate --out out/tinylettuce-wikipedia \
  --model Qwen/Qwen2.5-7B-Instruct --seed 42 --ratio 0.5 --limit 10000
lettuce-build build --source readme --input "$INPUT" --mode generate --out out/tinylettuce-readme \
  --model Qwen/Qwen2.5-7B-Instruct --seed 42 --ratio 0.5 --limit 10000
lettuce-build report out/tinylettuce-wikipedia
lettuce-build report out/tinylettuce-readme
