"""Scrapy commands of linkspider (COMMANDS_MODULE): ``crawl`` validates spider arguments first."""
