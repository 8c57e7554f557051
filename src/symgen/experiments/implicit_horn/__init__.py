"""Beyond both papers (SPEC C.1): Horn problems without a chain of thought, looped and vanilla."""
