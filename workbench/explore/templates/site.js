// Compaction Workbench explorer: sorting, filtering and paging the runs table; showing an entry's evidence.
// Plain DOM, no library, no network. Text is moved between elements as nodes, never parsed as HTML.
(function () {
  "use strict";
  var PAGE = 100;
  function cellValue(row, i) {
    var text = row.cells[i] ? row.cells[i].textContent.trim() : "";
    var n = Number(text);
    return text !== "" && !isNaN(n) ? n : text.toLowerCase();
  }
  function setupTable(table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var shown = rows, page = 0;
    var filter = document.getElementById("filter");
    var pager = document.getElementById("pager");
    var count = document.getElementById("shown");  // the header's count follows the filter
    function render() {
      if (count) { count.textContent = String(shown.length); }
      var pages = Math.max(1, Math.ceil(shown.length / PAGE));
      page = Math.min(page, pages - 1);
      rows.forEach(function (r) { r.hidden = true; });
      shown.slice(page * PAGE, (page + 1) * PAGE).forEach(function (r) { r.hidden = false; });
      if (!pager) { return; }
      pager.textContent = "";
      var prev = document.createElement("button"); prev.textContent = "‹"; prev.disabled = page === 0;
      prev.onclick = function () { page -= 1; render(); };
      var next = document.createElement("button"); next.textContent = "›"; next.disabled = page >= pages - 1;
      next.onclick = function () { page += 1; render(); };
      var label = document.createElement("span");
      label.textContent = " page " + (page + 1) + " of " + pages + " (" + shown.length + " runs) ";
      pager.appendChild(prev); pager.appendChild(label); pager.appendChild(next);
    }
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () {
        var asc = !th.classList.contains("sorted-asc");
        Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(asc ? "sorted-asc" : "sorted-desc");
        rows.sort(function (a, b) {
          var x = cellValue(a, i), y = cellValue(b, i);
          return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
        applyFilter();
      });
    });
    function applyFilter() {
      var q = filter ? filter.value.trim().toLowerCase() : "";
      shown = rows.filter(function (r) { return !q || r.textContent.toLowerCase().indexOf(q) !== -1; });
      page = 0; render();
    }
    if (filter) { filter.addEventListener("input", applyFilter); }
    render();
  }
  // An entry's panel (section, role, score, label, where it was carried from, evidence passages, identifiers) is
  // built on its first click from the page's JSON (compaction_body.html's wb-details), every value as a text node.
  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) { node.textContent = text; }
    return node;
  }
  var LONG = 1500;  // a passage longer than this shows its start and unfolds (as the page's own long texts)
  function longText(text) {
    if (text.length <= LONG) { return el("pre", {}, text); }
    var box = el("details", {"class": "long"}), head = el("summary");
    head.appendChild(el("pre", {}, text.slice(0, LONG)));
    head.appendChild(el("span", {"class": "more"}, "show all " + text.length + " characters"));
    box.appendChild(head); box.appendChild(el("pre", {}, text));
    return box;
  }
  function buildDetail(data, k, quote, pages) {
    var e = data.entries[k];
    var box = el("div", {"class": "entry-detail", id: "detail-" + k});
    box.appendChild(el("p", {"class": "quote"}, quote));
    var facts = el("dl", {"class": "facts"});
    function fact(name, value) { facts.appendChild(el("dt", {}, name)); var dd = el("dd"); dd.appendChild(value); facts.appendChild(dd); }
    function text(t) { return document.createTextNode(t); }
    fact("section", text(e[0]));
    fact("role", text(e[1] || "–"));
    fact("score", text(e[2] !== null ? e[2] + " → " + e[3] + " at tau " + data.tau : "none" + (e[4] ? " (" + e[4] + ")" : "")));
    fact("label", text(e[5] || "none"));
    var where = e[6] ? "compaction " + e[6][0] + ", entry " + e[6][1] : "new in this summary";
    fact("carried from", e[6] && pages ? el("a", {"class": "carried", href: "b" + e[6][0] + ".html#entry-" + e[6][1]}, where) : text(where));
    box.appendChild(facts);
    box.appendChild(el("h3", {}, "Evidence passages"));
    if (e[7].length) {
      var list = el("ol", {"class": "evidence"});
      e[7].forEach(function (j) {
        var p = data.passages[j], item = el("li");
        item.appendChild(el("a", {href: "#" + p[0], "class": "source"}, p[1]));
        item.appendChild(longText(p[2]));
        list.appendChild(item);
      });
      box.appendChild(list);
    } else { box.appendChild(el("p", {"class": "note"}, "No passage shares a word with this entry.")); }
    box.appendChild(el("h3", {}, "Identifiers"));
    if (e[8].length) {
      var ids = el("ul", {"class": "ids"});
      e[8].forEach(function (i) {
        var item = el("li", {"class": i[1] ? "sourced" : "unsourced"});
        item.appendChild(el("code", {}, i[0]));
        item.appendChild(text(i[1] ? " in the replaced history" : " no source in the replaced history"));
        ids.appendChild(item);
      });
      box.appendChild(ids);
    } else { box.appendChild(el("p", {"class": "note"}, "None.")); }
    return box;
  }
  function setupEntries(root) {
    var entries = root.querySelectorAll("li.entry");
    var source = root.querySelector("script.wb-details");
    var panel = root.querySelector("#detail");
    if (!source || !panel) { return; }
    var data = JSON.parse(source.textContent), pages = source.hasAttribute("data-pages"), built = {};
    function select(entry, k) {
      Array.prototype.forEach.call(entries, function (x) { x.classList.remove("selected"); });
      Array.prototype.forEach.call(root.querySelectorAll(".entry-detail"), function (d) { d.hidden = true; });
      entry.classList.add("selected");
      if (!built[k]) {
        // the entry's text: the item's first node; its score and label follow as elements after one space
        var first = entry.firstChild, quote = first && first.nodeType === 3 ? first.data : "";
        if (first && first.nextSibling) { quote = quote.replace(/ $/, ""); }
        built[k] = buildDetail(data, k, quote, pages);
        panel.appendChild(built[k]);
        setupEvidence(built[k], root);
      }
      built[k].hidden = false;
      var empty = root.querySelector("#detail-empty");
      if (empty) { empty.hidden = true; }
    }
    Array.prototype.forEach.call(entries, function (entry, k) {
      entry.addEventListener("click", function () { select(entry, k); });
      entry.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); select(entry, k); } });
    });
    // a stable link to an entry (page.html#entry-3, as the entries view links) opens it
    var wanted = (location.hash || "").slice(1);
    if (wanted.indexOf("entry-") === 0) {
      var k = Array.prototype.indexOf.call(entries, root.querySelector("[id='" + wanted.replace(/'/g, "") + "']"));
      if (k >= 0) { select(entries[k], k); entries[k].scrollIntoView({block: "center"}); }
    }
  }
  // An evidence link opens the step it cites in the replaced history, scrolls to it and marks the passage there
  // (the passage's own text, found in the step's text nodes and wrapped as a node: nothing is parsed as HTML).
  function markPassage(step, passage) {
    var old = step.querySelectorAll("mark.passage");
    Array.prototype.forEach.call(old, function (m) { m.replaceWith(document.createTextNode(m.textContent)); });
    if (!passage) { return null; }
    var pres = step.querySelectorAll("pre");
    for (var i = 0; i < pres.length; i++) {
      var node = pres[i].firstChild;
      if (!node || node.nodeType !== 3) { continue; }
      var at = node.data.indexOf(passage);
      if (at < 0) { continue; }
      var hit = node.splitText(at);
      hit.splitText(passage.length);
      var mark = document.createElement("mark");
      mark.className = "passage";
      hit.parentNode.replaceChild(mark, hit);
      mark.appendChild(hit);
      var long = mark.closest("details.long");
      if (long) { long.open = true; }
      return mark;
    }
    return null;
  }
  function openEvidence(link, scope) {
    var id = (link.getAttribute("href") || "").slice(1);
    var step = id ? scope.querySelector("[id='" + id.replace(/'/g, "") + "']") : null;
    if (!step) { return; }
    var details = step.querySelector("details");
    if (details) { details.open = true; }
    var item = link.parentNode;
    var pre = item ? item.querySelectorAll("pre") : [];
    var passage = pre.length ? pre[pre.length - 1].textContent : "";
    var mark = markPassage(step, passage);
    (mark || step).scrollIntoView({block: "center"});
  }
  function setupEvidence(box, root) {
    Array.prototype.forEach.call(box.querySelectorAll("ol.evidence a.source"), function (link) {
      // after the link's own jump to the step (which :target highlights), so the passage is what stays in view
      link.addEventListener("click", function () { setTimeout(function () { openEvidence(link, root); }, 0); });
    });
  }
  var table = document.getElementById("runs");
  if (table) { setupTable(table); }
  var scripts = document.getElementsByTagName("script");
  var here = scripts[scripts.length - 1];
  var scope = window.WB_SCOPE  // a notebook output that built its page (explore.show) names its own root
    || ((here && here.parentNode && here.parentNode.classList && here.parentNode.classList.contains("wb-explore")) ? here.parentNode : document);
  setupEntries(scope);
})();
