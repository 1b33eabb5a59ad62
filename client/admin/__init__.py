"""Admin client and the ``mqadmin`` command line (planned)."""
