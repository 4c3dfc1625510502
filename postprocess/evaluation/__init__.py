"""Measuring the pipeline: hidden-link evaluation and the baselines it is compared with.
It calls the pipeline (``postprocess.pipeline``); the pipeline never imports it."""
