"""One module or sub-package per page: its computations, figure payloads and LaTeX (app_pages/<x>.py over lessons/<x>)."""
