#!/usr/bin/env bash
# lettucedetect-tool-output: squeez tool outputs, answers grounded in their gold lines, targeted injection.
set -euo pipefail
lettuce-build build --source tool_output --input KRLabsOrg/tool-output-extraction-swebench --out out/tool_output \
  --model Qwen/Qwen2.5-Coder-32B-Instruct --seed 42 --ratio 0.5
lettuce-build push --source tool_output --build out/tool_output --repo-id KRLabsOrg/lettucedetect-tool-output
