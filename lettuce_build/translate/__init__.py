"""`lettuce-build translate`: our samples in other languages, their spans kept or the sample
dropped with the reason (see stages/translation.py).

Imports every layer below the command line's but squeez and the sift.
"""
