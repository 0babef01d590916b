"""The generation primitives: questions, grounded answers, injection (targeted and menu), classify.

Each is a `Stage` for batched runs on the runner, plus a single-item function for notebooks.
"""
