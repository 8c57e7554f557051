"""Paper B, depth extrapolation (§6): learnable depth against the number of training iterations R."""
