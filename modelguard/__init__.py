"""The `modelguard` command line: composes the services and libraries, holds no domain logic."""
