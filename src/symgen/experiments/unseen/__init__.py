"""Paper A: reasoning over unseen symbols, with the paper's architecture and symgen's same-symbol variant."""
