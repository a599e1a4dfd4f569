"""Agents that issue calls: the built-in scripted agent (and, later, model loops)."""
