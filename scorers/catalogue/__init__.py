"""The scorer catalogue: every scorer (seeds' scorers, Mastra's metrics, custom and saved judges) and the registry."""
