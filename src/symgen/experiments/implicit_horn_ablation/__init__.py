"""Beyond both papers, ablation: what the implicit-Horn recipes change beyond SPEC C.1."""
