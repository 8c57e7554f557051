"""Reserved tokens: collapsed in real models, slow to fine-tune from (claim A7.6)."""
