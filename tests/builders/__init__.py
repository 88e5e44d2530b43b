"""Builders the test modules share: real repositories, the gate's scenario projects,
the hook repository for the real pre-commit program."""
