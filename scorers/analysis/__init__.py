"""Analysis over stored runs: comparisons, response generation, human labels, agreement, HTML reports."""
