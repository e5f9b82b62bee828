"""Static analysis of Python source shared by the services (which never import each other).

Import the submodules directly (``from libs.python_source.division_guards import divisions``); this package
imports nothing on its own.
"""
