#!/usr/bin/env bash
# my-domain: your own rows (a JSONL of {passage, query} here; any file, folder or Hub id works),
# questions and answers generated where a row lacks them, two numerical or claim errors per
# hallucinated answer, checked by a judge; then the export LettuceDetect's trainer reads
# (check it first: lettuce-build audit out/my-domain --strict).
set -euo pipefail
INPUT=${INPUT:-my_rows.jsonl}
lettuce-build build --source custom --input "$INPUT" --columns context=passage,question=query \
  --out out/my-domain --model Qwen/Qwen2.5-7B-Instruct --seed 42 --ratio 0.5 \
  --error-types contradiction/numerical --error-types unsupported_addition/claim --intensity 2 --verify
lettuce-build export out/my-domain --format lettucedetect --out out/my-domain.json
