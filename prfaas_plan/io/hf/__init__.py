"""HuggingFace ``config.json`` reading, one concern per module; the entry point is ``io.hf_import``."""
