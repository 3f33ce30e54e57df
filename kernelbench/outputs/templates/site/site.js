// kernelbench results site: draws the Plotly figures of a page from their JSON, and wires
// the method toggles, SVG downloads, sortable (mouse and keyboard), filterable and
// selectable tables, long ones filled from their JSON when opened. No network.
"use strict";

function kbPlots() {
  return Array.from(document.querySelectorAll(".kb-plot")).filter((el) => el.data);
}

function kbUntab(gd) {
  // the toolbar's buttons stay usable with the mouse but out of the Tab order
  gd.querySelectorAll(".modebar-btn, .modebar a").forEach((b) => b.setAttribute("tabindex", "-1"));
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
    }).then(kbUntab);
    target.addEventListener("mouseover", () => kbUntab(target));
  });
}

function kbApplyToggles() {
  const off = new Set();
  document.querySelectorAll("input.kb-toggle").forEach((box) => {
    if (!box.checked) off.add(box.value);
  });
  kbPlots().forEach((gd) => {
    const visible = gd.data.map((t) => !off.has((t.meta || {}).method));
    Plotly.restyle(gd, { visible: visible });
    kbUntab(gd);
  });
}

function kbSortKey(td) {
  const v = td.dataset.v !== undefined ? td.dataset.v : td.textContent;
  const x = Number(v);
  return v !== "" && !Number.isNaN(x) ? { n: x } : { s: td.textContent };
}

function kbSort(th) {
  const table = th.closest("table");
  kbFill(table);
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

function kbFill(table) {
  // a long table's rows: from its JSON script, the first time it is needed
  if (!table || table.dataset.lazy !== "1") return;
  const script = document.querySelector(`script.kb-rows[data-table="${table.id}"]`);
  const body = table.tBodies[0];
  const frag = document.createDocumentFragment();
  JSON.parse(script.textContent).forEach((row) => {
    const tr = document.createElement("tr");
    row.forEach((cell) => {
      const td = document.createElement("td");
      const [text, sort, cls] = Array.isArray(cell) ? cell : [cell, "", ""];
      td.textContent = text;
      if (sort) td.dataset.v = sort;
      if (cls) td.className = cls;
      tr.appendChild(td);
    });
    frag.appendChild(tr);
  });
  body.appendChild(frag);
  table.dataset.lazy = "0";
}

function kbFilter(key) {
  const table = document.getElementById(key);
  kbFill(table);
  const input = document.querySelector(`input.kb-filter[data-table="${key}"]`);
  const words = input ? input.value.toLowerCase().split(/\s+/).filter(Boolean) : [];
  const picks = Array.from(document.querySelectorAll(`select.kb-select[data-table="${key}"]`))
    .filter((s) => s.value !== "")
    .map((s) => [Number(s.dataset.col), s.value]);
  let shown = 0;
  Array.from(table.tBodies[0].rows).forEach((row) => {
    const text = row.textContent.toLowerCase();
    const ok =
      words.every((w) => text.includes(w)) &&
      picks.every(([col, v]) => row.cells[col].textContent === v);
    row.hidden = !ok;
    if (ok) shown += 1;
  });
  const count = document.querySelector(`.kb-count[data-table="${key}"]`);
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
  document.querySelectorAll("table.kb-table thead th[tabindex]").forEach((th) => {
    th.addEventListener("click", () => kbSort(th));
    th.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        kbSort(th);
      }
    });
  });
  document.querySelectorAll("details.kb-box").forEach((box) => {
    box.addEventListener("toggle", () => {
      if (box.open) kbFill(document.getElementById(box.dataset.table));
    });
  });
  document.querySelectorAll("input.kb-filter").forEach((input) => {
    input.addEventListener("input", () => kbFilter(input.dataset.table));
  });
  document.querySelectorAll("select.kb-select").forEach((select) => {
    select.addEventListener("change", () => kbFilter(select.dataset.table));
  });
});
