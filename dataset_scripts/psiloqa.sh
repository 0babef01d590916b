#!/usr/bin/env bash
# psiloqa: PsiloQA's natural spans, each classified into the unified taxonomy.
set -euo pipefail
lettuce-build build --source psiloqa --input s-nlp/PsiloQA --out out/psiloqa \
  --model Qwen/Qwen2.5-32B-Instruct --seed 42
lettuce-build push --source psiloqa --build out/psiloqa --repo-id KRLabsOrg/psiloqa-unified
