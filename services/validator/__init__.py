"""Validator domain logic: apply a proposed patch to a throwaway copy and prove what it does."""
