"""The first experiment: sequence reversal; the smallest experiment, and the template the others follow
(docs/architecture.md, "Adding an experiment")."""
