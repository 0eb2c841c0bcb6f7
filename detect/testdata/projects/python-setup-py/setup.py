from setuptools import setup

setup(name="calc")
