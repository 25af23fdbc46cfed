// A table wider than its column (a comparison table on a phone) is shown as stacked
// rows: each cell on a line of its own, labelled with its column's header. Tables
// that fit are left alone. scripts/check_docs_browser.sh measures the result.
(function () {
  "use strict";

  function label(table) {
    const heads = Array.from(table.querySelectorAll("thead th"), (th) => th.textContent.trim());
    for (const row of table.querySelectorAll("tbody tr")) {
      Array.from(row.children).forEach((cell, i) => {
        if (heads[i]) cell.setAttribute("data-label", heads[i]);
      });
    }
  }

  function fit() {
    for (const table of document.querySelectorAll('article[role="main"] table.docutils')) {
      table.classList.remove("stacked");
      const column = table.parentElement.clientWidth;
      if (table.scrollWidth > column + 1) {
        label(table);
        table.classList.add("stacked");
      }
    }
  }

  let pending = null;
  function refit() {
    if (pending !== null) cancelAnimationFrame(pending);
    pending = requestAnimationFrame(() => {
      pending = null;
      fit();
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", fit);
  } else {
    fit();
  }
  window.addEventListener("load", fit);
  window.addEventListener("resize", refit);
})();
