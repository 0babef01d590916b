#!/usr/bin/env bash
# lettucedetect-readme: questions over GitHub READMEs, grounded answers, menu-injected hallucinations.
set -euo pipefail
: "${INPUT:?a folder of README files or a JSONL of {repo, readme}}"
lettuce-build build --source readme --input "$INPUT" --out out/readme \
  --model Qwen/Qwen2.5-32B-Instruct --seed 42 --ratio 0.5 --limit 20000
lettuce-build push --source readme --build out/readme --repo-id KRLabsOrg/lettucedetect-readme
