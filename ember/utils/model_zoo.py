"""ember.utils.model_zoo: the older name of ember.hub's weight download (torchvision imports tqdm from here)."""
from ..hub import load_state_dict_from_url as load_url, tqdm  # noqa: F401

__all__ = ["load_url"]
