"""What computes: attention, masks, devices, the from-scratch models and the truth check against transformers."""
