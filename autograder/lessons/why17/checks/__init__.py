"""The hidden checks, one module per concept; importing this package registers them all."""
