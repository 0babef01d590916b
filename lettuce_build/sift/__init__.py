"""The SWE-bench security-candidate sift (stage 1): repository tiers plus regex categories."""
