"""graph -> te: one tensor expression per graph op."""
