"""Collapse in theory: never-used softmax rows against Lemma 4.1 (no training runs)."""
