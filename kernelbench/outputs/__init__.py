"""The output side: from the rows of the results to figures, tables, the report, the site,
the baselines and the leaderboard, one package split by layer (docs/architecture.md):

* what every output shares, no protocol, verify or renderer in it: :mod:`.style` (styles,
  display names, orders, per-cell summaries, Markdown tables), :mod:`.spec` (a figure
  declared once), :mod:`.tables` (the baseline tables' format), :mod:`.verdicts` (the
  verdict words and rules: ``VerifyConfig``), :mod:`.sections` (a report section, its
  claims, its template);
* outputs of any experiment from its rows and its protocol's declarations
  (:mod:`.generic`), and one module per paper (:mod:`.papers`: its figures, the figure
  functions its protocols name, its baseline tables, claims, report sections and verify
  configs);
* the renderers: :mod:`.render` (matplotlib) and :mod:`.plotly_render` (Plotly), and the
  leaderboard's statistics (:mod:`.leaderboard`);
* the site (:mod:`.site`, :mod:`.site_board`) and the commands ``plot`` (:mod:`.plot`),
  ``baseline`` (:mod:`.baseline`), ``report`` (:mod:`.report`) and ``leaderboard``.
"""
