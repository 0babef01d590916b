"""The generation stages: questions, grounded answers, injection (targeted and menu),
generation, classification. Each is a `Stage` for batched runs on the engine, plus a
single-item function for notebooks.

Imports core, llm, engine and prompts."""
