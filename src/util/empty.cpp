// Placeholder so yoke_torch has a source before the torch modules exist.
