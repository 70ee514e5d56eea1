"""What every adapter shares: the domain events, errors, the session
interface, the turn skeleton, the registry and its specs, process handling,
SSH, the turn runner and the workflow loader."""
