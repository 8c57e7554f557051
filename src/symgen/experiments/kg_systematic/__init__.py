"""Paper B, systematic generalization (§5): looped against vanilla transformers on OOD 2-hop composition."""
