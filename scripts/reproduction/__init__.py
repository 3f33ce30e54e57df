"""The sections of REPRODUCTION.md, one module per paper experiment (see make_reproduction.py)."""
