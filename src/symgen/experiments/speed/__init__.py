"""Training speed: symgen against looped GPT2Blocks and plain PyTorch, and stacked seeds (`symgen bench`)."""
