"""Generators for sci's test data (see testdata/README.md)."""
