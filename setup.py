# All metadata lives in setup.cfg; this shim lets `pip install -e .` and older tools work.
from setuptools import setup

setup()
