#!/usr/bin/env bash
# lettucedetect-wikipedia: questions over English Wikipedia articles (1,500+ characters).
set -euo pipefail
lettuce-build build --source wikipedia --input open-index/open-wikipedia-markdown --language en \
  --out out/wikipedia --model Qwen/Qwen2.5-32B-Instruct --seed 42 --ratio 0.5 --limit 20000
lettuce-build push --source wikipedia --build out/wikipedia --repo-id KRLabsOrg/lettucedetect-wikipedia
