"""The main job (``python -m ember.demo``): trains a network end to end."""
