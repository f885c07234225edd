"""Services: the only code that opens and commits transactions on behalf of views and the CLI."""
