"""The one error type attnviz raises for things a user did: its message is fit to show on screen."""


class AttnvizError(ValueError):
    """A problem with the user's input or choice (text, model, mask, config), worded for the user."""
