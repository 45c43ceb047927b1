"""The ``pcevolve`` command line. Only this package configures logging handlers."""
