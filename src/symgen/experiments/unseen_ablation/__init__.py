"""Paper A ablation: which piece of symgen's same-symbol variant solves unseen symbols."""
