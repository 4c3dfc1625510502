"""Spiders of the linkspider project."""
