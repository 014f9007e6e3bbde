"""assistant-bridge: lets chat assistants answer from a company's own documents."""

__version__ = "0.1.0"
