"""Test helpers shared by several test folders (on pytest's `pythonpath`)."""
