"""The pure rules engine: standard library only, never Django (tests/engine/test_purity.py)."""
