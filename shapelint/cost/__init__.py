"""The cost face below the command line: the report of FLOPs and bytes per call
and function (report.py) and the review diff against a git revision (diff.py)."""
