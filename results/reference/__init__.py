# The papers' reference tables as package data: kernelbench.reference_data (pyproject.toml).
