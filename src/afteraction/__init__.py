"""afteraction: verified experience for AI agents."""
