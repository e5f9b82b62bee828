"""The diagnosis's finer counterfactuals: run the code with part of the change, or the data with one column
repaired, and see what carries (or recovers) the drop. Run, don't guess."""
