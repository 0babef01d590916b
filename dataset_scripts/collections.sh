#!/usr/bin/env bash
# The two collections, one config per source, from the builds above (out/<source>).
set -euo pipefail
lettuce-build push --collection lettucedetect-code-hallucination --builds out \
  --repo-id KRLabsOrg/lettucedetect-code-hallucination
lettuce-build push --collection lettucedetect-prose-hallucination --builds out \
  --repo-id KRLabsOrg/lettucedetect-prose-hallucination
