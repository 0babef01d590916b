#!/usr/bin/env bash
# lettucedetect-code: SWE-bench issues, touched files as context, the gold fix, targeted code injection.
set -euo pipefail
lettuce-build build --source code --input princeton-nlp/SWE-bench --out out/code \
  --repo-url 'https://github.com/{repo}.git' --model Qwen/Qwen2.5-Coder-32B-Instruct --seed 42 --ratio 0.5
lettuce-build push --source code --build out/code --repo-id KRLabsOrg/lettucedetect-code
