"""ModelGuard's versioned event contracts: the only thing services share."""
