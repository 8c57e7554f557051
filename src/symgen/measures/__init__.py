"""Measures that sit below models, training and analysis: collapse statistics of token rows, fresh
rows matched to trained ones, and reading a run's metrics back."""
