"""Schedule rules and the `default-schedule` pass that applies them."""
