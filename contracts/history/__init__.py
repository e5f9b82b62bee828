"""Payload models of past major versions, exactly as they were: a reader of today checks the signed bytes of an old
event against the model its writer used, then upcasts it (``contracts/upcasting.py``). Never edited."""
