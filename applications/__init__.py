"""Applications built on the frankwolfe core (they import frankwolfe, never the reverse)."""
