"""Inside the looped models of paper B: inference iterations, overthinking, halting, logit lens.

No runs of its own: it reads the runs of kg_systematic and kg_depth, trained once however many
experiments read them."""
