"""Packaging for Scrapyd eggs and pip installs of linkspider and postprocess."""

from setuptools import find_packages, setup

setup(
    name="linkspider",
    version="0.1.0",
    packages=find_packages(include=["linkspider", "linkspider.*", "postprocess", "postprocess.*"]),
    include_package_data=True,
    package_data={"linkspider": ["*.json", "*.txt"], "postprocess.apps.report": ["templates/*"],
                  "postprocess.apps.review": ["templates/*.html", "static/*.js", "static/*.css"]},
    entry_points={"scrapy": ["settings = linkspider.settings"]},
    python_requires=">=3.11",
)
