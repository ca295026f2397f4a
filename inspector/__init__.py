"""Hermes Session Inspector: read, audit and safely repair Hermes WebUI sessions."""

__version__ = "0.1.0"
