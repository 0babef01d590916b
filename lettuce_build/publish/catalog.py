"""What lettuce-build publishes: the collections and the sources each holds.

Kept free of heavy imports, so that the command line's ``--help`` can list them.
"""

from __future__ import annotations

COLLECTIONS: dict[str, tuple[str, ...]] = {
    "lettucedetect-code-hallucination": ("code", "tool_output", "acl", "readme", "wikipedia"),
    "lettucedetect-prose-hallucination": ("ragtruth", "psiloqa"),
}
