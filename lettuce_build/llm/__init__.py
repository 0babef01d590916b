"""Model backends (vLLM offline, OpenAI-compatible, a Ray pool), the request cache, the engine
settings and the embedded model.

Imports only core."""
