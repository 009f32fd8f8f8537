"""Outputs: tables, CSV, JSON and figures rendered from the api layer's results (``io`` reads inputs only)."""
