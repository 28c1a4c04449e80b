"""The Review page's views, one module each.

- :mod:`.context`: what every view needs (:class:`~.context.ReviewContext`), the pickers and number formats;
- :mod:`.labelling`: label a run's results row by row (the review queue, keyboard shortcuts, the label form);
- :mod:`.agreement`: how the judge agrees with people;
- :mod:`.consistency`: re-judge a sample and measure the spread;
- :mod:`.import_export`: import labels made elsewhere, export the results with their labels.

Pages call :func:`~.context.pick_run`, :func:`~.context.pick_scorer` and :func:`~.context.pick_threshold`,
build a :class:`~.context.ReviewContext` with :func:`~.context.load_context`, then one of the ``render_*`` views.
"""
