"""The stage engine: the Stage API, the runner (batched, cached, retried), exact-ratio
balancing, progress bars.

Imports only core, llm and prompts; knows nothing of sources, build folders, shards, Ray or the Hub."""
