"""LACA: LLM Agnostic Core Architecture, a terminal AI agent."""

__version__ = "0.1.0"
