"""What every adapter shares: events, errors, the session interface, the
registry, process handling, SSH, the turn runner and the workflow loader."""
