#!/usr/bin/env bash
# lettucedetect-acl: retrieved ACL Anthology excerpts per question, the paper injection menu.
set -euo pipefail
lettuce-build build --source acl --input KRLabsOrg/acl-verbatim-spans --out out/acl \
  --model Qwen/Qwen2.5-32B-Instruct --seed 42 --ratio 0.5
lettuce-build push --source acl --build out/acl --repo-id KRLabsOrg/lettucedetect-acl
