"""The data model and the plain helpers every layer shares: taxonomy, sample schema, spans,
tables, paths, secrets, logging.

Imports nothing of lettuce-build outside this folder."""
