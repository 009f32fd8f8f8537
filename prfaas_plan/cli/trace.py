"""`trace stats`: what a request trace holds."""
