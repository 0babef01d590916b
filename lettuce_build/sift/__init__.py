"""The SWE-bench security-candidate sift (stage 1): repository tiers plus regex categories.

Imports core, swebench and builds (its written outputs)."""
