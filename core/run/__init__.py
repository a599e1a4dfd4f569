"""One call's way through the core: validation, policy, approval, limits, cache, applying writes, recording."""
