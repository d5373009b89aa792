"""The package version (one definition: read by fastgen.__version__ and written into model files)."""
__version__ = "0.1.0"
