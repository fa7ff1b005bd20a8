"""From-scratch transformer models with real weights: see `attnviz.load_model`."""

from attnviz.engine.models.config import ModelConfig
from attnviz.engine.models.loading import DEFAULT_MODEL, load_model
from attnviz.engine.models.model import Model, RunResult

__all__ = ["DEFAULT_MODEL", "Model", "ModelConfig", "RunResult", "load_model"]
