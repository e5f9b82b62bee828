"""The referee: ModelGuard computes a model's gate metric itself.

The workspace's ``predict`` command gets the evaluation rows without their labels (``held_out``), writes one
prediction per row, and ModelGuard reads them strictly (``predictions``) and scores them against the labels
it kept back with scikit-learn (``metrics``). Workspace code can neither see the labels nor print a verdict.
"""
