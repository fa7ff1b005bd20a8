"""The explorer's own logic: which cell is selected, and the numbers of 'why this weight'."""
