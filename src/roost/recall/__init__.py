"""Recall (issue 39): search every conversation of every agent (docs/RECALL.md)."""
