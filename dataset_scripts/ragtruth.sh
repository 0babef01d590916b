#!/usr/bin/env bash
# ragtruth: RAGTruth's annotated spans mapped mechanically to the unified taxonomy (no model call).
set -euo pipefail
: "${INPUT:?a folder with RAGTruth's response.jsonl and source_info.jsonl}"
lettuce-build build --source ragtruth --input "$INPUT" --out out/ragtruth --seed 42
lettuce-build push --source ragtruth --build out/ragtruth --repo-id KRLabsOrg/ragtruth-unified
