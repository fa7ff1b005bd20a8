"""Masks lab: the gallery of every mask with its cost, and the custom mask editor."""
