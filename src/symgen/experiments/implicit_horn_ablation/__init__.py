"""Beyond both papers, ablation: what the implicit-Horn recipes change beyond claim C1."""
