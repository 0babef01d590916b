"""Model backends (vLLM offline, OpenAI-compatible), the request cache and the embedded model."""
