# The committed baselines as package data: kernelbench.baseline_data (pyproject.toml).
