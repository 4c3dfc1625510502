"""Approved links written into WordPress through its REST API (``python -m postprocess apply``).

client.py talks to the API (standard library), markup.py decides where an anchor may be
linked in a post's stored markup, apply.py plans, diffs, writes and undoes, changelog.py
keeps what was written in the decisions database, since.py tells posts edited after the crawl.
"""
