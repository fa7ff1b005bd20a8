"""One module or sub-package per page: its computations, figure payloads and LaTeX (pages/<x>.py over lessons/<x>)."""
