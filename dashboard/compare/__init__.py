"""The Compare page's pieces, one module per tab, plus the background job that generates and scores.

A comparison is always a stored run whose items carry a variant group (``group:variant``)
and the dataset row they answer (``group:row_id``): :func:`~dashboard.compare.job.start_compare_job` generates the
responses of every variant (:func:`scorers.analysis.generate.generate_responses`), turns them into
items (:func:`scorers.analysis.generate.comparison_items`) or takes existing responses as they are
(:func:`scorers.analysis.generate.items_from_responses`), and scores them with
:func:`scorers.run_evals` into the store. The views read the run back from the store, so
a comparison reopened later (or a Batch run with a variant column) shows the same thing.
The statistics are :mod:`scorers.analysis.compare`'s; the charts :mod:`dashboard.compare_charts`'.

Modules: :mod:`.common` (shared names and the run picker), :mod:`.job` (the generate-and-score job),
:mod:`.setup` (tab 1: variants and scoring), :mod:`.comparison` (tab 2: one run's variants),
:mod:`.run_vs_run` (tab 3: two runs row by row) and :mod:`.report` (tab 4: HTML reports).
"""
