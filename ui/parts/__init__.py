"""Parts of a page that grew past one script: each is imported by its one page in app_pages/ (which stays the page)."""
