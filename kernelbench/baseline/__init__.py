"""Our committed baselines (results/baseline/): their table format (``format``, read by
``verify``) and ``kernelbench baseline`` (``command``), one module per experiment."""
