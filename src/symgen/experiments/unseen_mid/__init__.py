"""Paper A at mid scale (d = 128), and steps to leave the rule-choice plateau against width."""
