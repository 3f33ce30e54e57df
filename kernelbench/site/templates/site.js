// kernelbench results site: draws the Plotly figures of a page from their JSON, and wires
// the method/kernel toggles, SVG downloads, sortable and filterable tables. No network.
"use strict";

function kbPlots() {
  return Array.from(document.querySelectorAll(".kb-plot")).filter((el) => el.data);
}

function kbDraw() {
  if (typeof Plotly === "undefined") return;
  document.querySelectorAll("script.kb-fig").forEach((script) => {
    const fig = JSON.parse(script.textContent);
    const target = document.getElementById(script.dataset.target);
    const name = script.dataset.target;
    Plotly.newPlot(target, fig.data, fig.layout, {
      responsive: true,
      displaylogo: false,
      toImageButtonOptions: { format: "svg", filename: name },
    });
  });
}

function kbApplyToggles() {
  const off = { method: new Set(), kernel: new Set() };
  document.querySelectorAll("input.kb-toggle").forEach((box) => {
    if (!box.checked) off[box.dataset.kind].add(box.value);
  });
  kbPlots().forEach((gd) => {
    const visible = gd.data.map((t) => {
      const meta = t.meta || {};
      return !(off.method.has(meta.method) || (meta.kernel && off.kernel.has(meta.kernel)));
    });
    Plotly.restyle(gd, { visible: visible });
  });
}

function kbSortKey(td) {
  const v = td.dataset.v;
  const x = Number(v);
  return v !== "" && v !== undefined && !Number.isNaN(x) ? { n: x } : { s: td.textContent };
}

function kbSort(th) {
  const table = th.closest("table");
  const col = th.cellIndex;
  const asc = th.getAttribute("aria-sort") !== "ascending";
  table.querySelectorAll("thead th").forEach((h) => h.removeAttribute("aria-sort"));
  th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  const body = table.tBodies[0];
  const rows = Array.from(body.rows);
  const sign = asc ? 1 : -1;
  rows.sort((a, b) => {
    const x = kbSortKey(a.cells[col]);
    const y = kbSortKey(b.cells[col]);
    if (x.n !== undefined && y.n !== undefined) return sign * (x.n - y.n);
    if (x.n !== undefined) return -1; // numbers before text and blanks
    if (y.n !== undefined) return 1;
    return sign * x.s.localeCompare(y.s);
  });
  rows.forEach((r) => body.appendChild(r));
}

function kbFilter(input) {
  const table = document.getElementById(input.dataset.table);
  const words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  Array.from(table.tBodies[0].rows).forEach((row) => {
    const text = row.textContent.toLowerCase();
    const ok = words.every((w) => text.includes(w));
    row.hidden = !ok;
    if (ok) shown += 1;
  });
  const count = document.querySelector(`.kb-count[data-table="${input.dataset.table}"]`);
  if (count) count.textContent = `${shown} rows`;
}

document.addEventListener("DOMContentLoaded", () => {
  kbDraw();
  document.querySelectorAll("input.kb-toggle").forEach((box) => {
    box.addEventListener("change", kbApplyToggles);
  });
  document.querySelectorAll("a.kb-svg").forEach((a) => {
    a.addEventListener("click", (event) => {
      event.preventDefault();
      const gd = document.getElementById(a.dataset.target);
      Plotly.downloadImage(gd, { format: "svg", filename: a.dataset.target });
    });
  });
  document.querySelectorAll("table.kb-table thead th").forEach((th) => {
    th.addEventListener("click", () => kbSort(th));
  });
  document.querySelectorAll("input.kb-filter").forEach((input) => {
    input.addEventListener("input", () => kbFilter(input));
  });
});
