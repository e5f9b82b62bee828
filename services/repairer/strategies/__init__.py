"""The repair catalogue: each strategy makes one narrow, explainable kind of source edit."""
