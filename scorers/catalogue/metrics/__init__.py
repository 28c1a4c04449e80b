"""The rest of Mastra's scorer catalogue (MASTRA_SCORERS.md): one module per metric.

Each module exposes ``create_<name>_scorer`` and a ``SPECS`` tuple of
:class:`~scorers.catalogue.spec.ScorerSpec` entries that :mod:`scorers.catalogue.registry` collects.
"""
