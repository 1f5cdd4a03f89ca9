"""Adapters between afteraction and agent frameworks; one module per framework, each an optional extra."""
