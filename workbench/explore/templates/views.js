// Compaction Workbench explorer: the entries and compactions views. Their rows come from data files loaded as
// <script> elements (a browser does not fetch from file://): the entries in shards, the search index in shards by
// a prefix of their terms (two characters, more where a shard grew past its size). Plain DOM, no library, no
// network; every value is set as text, never as HTML.
(function () {
  "use strict";
  var PAGE = 100;
  var table = document.getElementById("view");
  var kind = table ? table.getAttribute("data-view") : "";
  var status = document.getElementById("status");
  var state = {manifest: null, entries: [], loaded: 0, asked: {}, askedCount: 0, compactions: null, compShards: [],
               index: {}, steps: {}, pending: {},
               shown: [], page: 0, sort: null, asc: true, hits: null, stepHits: []};
  // a shard of rows as the build packs it (explore.pack_rows): each row starts with its run's index in the
  // shard's runs ([run id, the run's pages]); columns in values hold an index into their values. Unpacked into
  // [link, run id, ...]: the link made from the run's pages as the build names them.
  var LINK = {
    entries: function (pages, r) { return pages + "/b" + r[2] + ".html#entry-" + r[3]; },
    compactions: function (pages, r) { return pages + "/b" + r[2] + ".html"; },
    steps: function (pages, r) { return pages + ".html#step-" + r[2]; }
  };
  function unpack(what, shard) {
    return shard.rows.map(function (packed) {
      var run = shard.runs[packed[0]], r = [null, run[0]].concat(packed.slice(1));
      Object.keys(shard.values).forEach(function (col) { r[col] = shard.values[col][r[col]]; });
      r[0] = LINK[what](run[1], r);
      return r;
    });
  }
  var WB = window.WB = {
    load: function (what, key, value) {
      if (LINK[what]) { value = unpack(what, value); }
      if (what === "manifest") { state.manifest = value; start(); }
      else if (what === "entries") { state.entries[key] = value; state.loaded += 1; entriesArrived(); }
      else if (what === "compactions") {
        state.compShards[key] = value; state.loaded += 1;
        state.compactions = [].concat.apply([], state.compShards.filter(function (x) { return x; }));
        if (kind === "compactions") { refresh(); }
      }
      else if (what === "index") { state.index[key] = value; settle("index:" + key); }
      else if (what === "steps") { state.steps[key] = value; settle("steps:" + key); }
    }
  };
  function script(src) {
    var s = document.createElement("script");
    s.src = src;
    document.body.appendChild(s);
  }
  // a data file asked for once; callbacks wait for it
  function need(name, src, done) {
    var have = name.indexOf("index:") === 0 ? state.index[name.slice(6)] : state.steps[name.slice(6)];
    if (have !== undefined) { done(); return; }
    if (!state.pending[name]) { state.pending[name] = []; script(src); }
    state.pending[name].push(done);
  }
  function settle(name) {
    var waiting = state.pending[name] || [];
    state.pending[name] = [];
    waiting.forEach(function (f) { f(); });
  }
  // a site of up to LOAD_ALL shards of a view's rows loads them all at once; a larger one loads its first shard,
  // (entries) the shards a search's matches are in, and the rest when asked: opening a view reads bounded bytes
  var LOAD_ALL = 8;
  function shards() { return kind === "entries" ? state.manifest.entry_shards : state.manifest.compaction_shards; }
  function total() { return kind === "entries" ? state.manifest.entries : state.manifest.compactions; }
  function start() {
    if (kind !== "entries" && kind !== "compactions") { return; }
    var n = shards();
    for (var k = 0; k < (n <= LOAD_ALL ? n : 1); k++) { loadShard(k); }
    if (!n) { if (kind === "entries") { entriesArrived(); } else { state.compactions = []; refresh(); } }
  }
  function loadShard(k) {
    if (state.asked[k]) { return; }
    state.asked[k] = true; state.askedCount += 1;
    script("data/" + kind + "-" + pad(k) + ".js");
  }
  function loadAll() { for (var k = 0; k < shards(); k++) { loadShard(k); } say(); }
  function pad(k) { return ("000" + k).slice(-4); }
  function allEntries() { return [].concat.apply([], state.entries.filter(function (x) { return x; })); }
  function entriesArrived() {
    if (state.loaded >= state.askedCount) { fillChoices(allEntries()); }
    refresh();
  }
  // the status line: shards still loading, a site shown in part, a search whose matches are partial
  var PARTIAL = "Partial: a short or common word shows the first matches the index lists; type more of it to see all.";
  function say() {
    if (!status || !state.manifest || (kind !== "entries" && kind !== "compactions")) { return; }
    status.textContent = "";
    var have = kind === "entries" ? allEntries().length : (state.compactions || []).length;
    if (state.loaded < state.askedCount) { status.textContent = "loaded " + have + " of " + total() + " " + kind + "…"; return; }
    if (!total()) { status.textContent = "no " + kind + " in this site"; return; }
    if (state.hits && state.partial) { status.textContent = PARTIAL; return; }
    if (state.loaded < shards() && !state.hits) {
      status.textContent = "Showing " + have + " of " + total() + " " + kind + ": sorting and filters apply to these"
        + (kind === "entries" ? "; a search looks through all of them. " : ". ");
      var all = document.createElement("button");
      all.id = "load-all"; all.textContent = "load all " + total();
      all.onclick = loadAll;
      status.appendChild(all);
    }
  }
  function fillChoices(rows) {
    [["f-section", 4], ["f-role", 5], ["f-label", 7]].forEach(function (pair) {
      var select = document.getElementById(pair[0]);
      if (!select) { return; }
      var chosen = select.value;  // (more shards arrived: the choices grow, the choice stays)
      while (select.options.length > 1) { select.remove(1); }
      var seen = {};
      rows.forEach(function (r) { if (r[pair[1]]) { seen[r[pair[1]]] = true; } });
      Object.keys(seen).sort().forEach(function (v) {
        var o = document.createElement("option"); o.value = v; o.textContent = v; select.appendChild(o);
      });
      if (chosen && !seen[chosen]) {
        var o = document.createElement("option"); o.value = chosen; o.textContent = chosen; select.appendChild(o);
      }
      select.value = chosen;
    });
  }
  // search: every term (two characters or more) must match the start of an indexed term of the entry
  function terms(q) { return (q.toLowerCase().match(/[a-z0-9][a-z0-9_.$\/-]*[a-z0-9]|[a-z0-9]/g) || []).filter(function (t) { return t.length >= 2; }); }
  function hex(s) {
    var out = "", bytes = unescape(encodeURIComponent(s));
    for (var i = 0; i < bytes.length; i++) { out += ("0" + bytes.charCodeAt(i).toString(16)).slice(-2); }
    return out;
  }
  // a word's index shards: from its first two characters down its prefix while a shard says it was split; where
  // the word ends at a split prefix, the shards below it, at most BELOW of them (a shorter word reads fewer
  // terms: the status says the result may be partial). Each shard is bounded in bytes, so one query reads at
  // most a few hundred kilobytes whatever the log's size.
  var BELOW = 24;
  function search(q, done) {
    var words = terms(q);
    if (!words.length) { done(null, []); return; }
    var found = {}, left = words.length;
    state.partial = false;
    words.forEach(function (w) {
      found[w] = [];
      if (state.manifest.index_shards.indexOf(hex(w.slice(0, 2))) < 0) { arrived(); return; }
      walk(w, w.slice(0, 2), arrived);
    });
    function arrived() { left -= 1; if (!left) { finish(); } }
    function walk(w, prefix, then) {
      var key = hex(prefix);
      need("index:" + key, "data/search/" + key + ".js", function () {
        found[w].push(key);
        var split = state.index[key].split || [];
        if (!split.length) { then(); return; }
        if (prefix.length < w.length) {
          var next = w.slice(0, prefix.length + 1);
          if (split.indexOf(next) < 0) { then(); return; }  // no indexed term goes on with this character
          walk(w, next, then);
          return;
        }
        below(w, split.slice(), then);
      });
    }
    function below(w, queue, then) {
      if (!queue.length) { then(); return; }
      if (found[w].length > BELOW) { state.partial = true; then(); return; }
      var key = hex(queue.shift());
      need("index:" + key, "data/search/" + key + ".js", function () {
        found[w].push(key);
        (state.index[key].split || []).forEach(function (c) { queue.push(c); });
        below(w, queue, then);
      });
    }
    function finish() {
      var entries = null, steps = null;
      words.forEach(function (w) {
        var e = {}, s = {};
        found[w].forEach(function (key) {
          var shard = state.index[key].t || {};
          Object.keys(shard).forEach(function (t) {
            if (t.indexOf(w) !== 0) { return; }
            if (shard[t].more) { state.partial = true; }  // a term in more rows than the index lists
            (shard[t].e || []).forEach(function (i) { e[i] = true; });
            (shard[t].s || []).forEach(function (i) { s[i] = true; });
          });
        });
        entries = entries === null ? e : keep(entries, e);
        steps = steps === null ? s : keep(steps, s);
      });
      done(entries, Object.keys(steps || {}).map(Number).sort(function (a, b) { return a - b; }));
    }
    function keep(a, b) { var out = {}; Object.keys(a).forEach(function (k) { if (b[k]) { out[k] = true; } }); return out; }
  }
  function value(row, col) { var v = row[col]; return v === null || v === undefined ? "" : v; }
  function refresh() {
    var q = document.getElementById("q");
    if (kind === "compactions") {
      if (!state.compactions) { return; }
      var text = q ? q.value.trim().toLowerCase() : "";
      state.shown = state.compactions.filter(function (r) {
        return !text || (r[1] + " " + (r[3] || "")).toLowerCase().indexOf(text) !== -1;
      });
      order(); state.page = 0; render(); say(); return;
    }
    var filters = {4: val("f-section"), 5: val("f-role"), 7: val("f-label")};
    var verdict = val("f-verdict");
    state.shown = [];
    var base = 0;
    state.entries.forEach(function (shard, k) {
      if (!shard) { return; }
      base = k * state.manifest.shard;
      shard.forEach(function (r, i) {
        if (state.hits && !state.hits[base + i]) { return; }
        for (var c in filters) { if (filters[c] && r[c] !== filters[c]) { return; } }
        if (verdict && (verdict === "-" ? r[9] !== "" : r[9] !== verdict)) { return; }
        state.shown.push(r);
      });
    });
    order(); state.page = 0; render(); renderSteps(); say();
  }
  function val(id) { var el = document.getElementById(id); return el ? el.value : ""; }
  function order() {
    if (state.sort === null) { return; }
    var col = state.sort, asc = state.asc;
    state.shown.sort(function (a, b) {
      var x = value(a, col), y = value(b, col);
      if (x === "" && y !== "") { return 1; }  // missing values last, whichever way
      if (y === "" && x !== "") { return -1; }
      return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
    });
  }
  function cell(tr, text, cls) { var td = document.createElement("td"); td.textContent = text; if (cls) { td.className = cls; } tr.appendChild(td); return td; }
  function render() {
    var body = table.tBodies[0];
    body.textContent = "";
    var pages = Math.max(1, Math.ceil(state.shown.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    state.shown.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (r) {
      var tr = document.createElement("tr");
      var cols = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) { return Number(th.getAttribute("data-col")); });
      cols.forEach(function (c, j) {
        var text = value(r, c);
        if (typeof text === "number" && c === 6 && kind === "entries") { text = text.toFixed(2); }
        var td = cell(tr, String(text), table.tHead.rows[0].cells[j].className);
        if (j === 0) {
          td.textContent = "";
          var a = document.createElement("a"); a.href = r[0]; a.textContent = String(text); td.appendChild(a);
        }
        if (kind === "entries" && c === 9 && text) { td.className = "verdict-" + text; }
      });
      body.appendChild(tr);
    });
    var pager = document.getElementById("pager");
    if (!pager) { return; }
    pager.textContent = "";
    var prev = document.createElement("button"); prev.textContent = "‹"; prev.disabled = state.page === 0;
    prev.onclick = function () { state.page -= 1; render(); };
    var next = document.createElement("button"); next.textContent = "›"; next.disabled = state.page >= pages - 1;
    next.onclick = function () { state.page += 1; render(); };
    var label = document.createElement("span");
    label.id = "count";
    label.textContent = " page " + (state.page + 1) + " of " + pages + " (" + state.shown.length + " " + kind + ") ";
    pager.appendChild(prev); pager.appendChild(label); pager.appendChild(next);
  }
  function renderSteps() {
    var list = document.getElementById("steps"), head = document.getElementById("steps-head");
    if (!list) { return; }
    list.textContent = "";
    head.hidden = !state.stepHits.length;
    state.stepHits.slice(0, PAGE).forEach(function (i) {
      var k = Math.floor(i / state.manifest.shard), j = i % state.manifest.shard;
      need("steps:" + k, "data/steps-" + pad(k) + ".js", function () {
        var r = state.steps[k][j], li = document.createElement("li"), a = document.createElement("a");
        a.href = r[0]; a.textContent = r[1] + " step " + r[2] + (r[3] ? " · " + r[3] : "");
        li.appendChild(a); li.appendChild(document.createTextNode(" " + r[4])); list.appendChild(li);
      });
    });
  }
  function csv() {
    var heads = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) { return th.textContent; });
    var cols = Array.prototype.map.call(table.tHead.rows[0].cells, function (th) { return Number(th.getAttribute("data-col")); });
    // a text cell that starts like a formula (= + - @ tab CR) gets a leading apostrophe, as OWASP recommends for
    // CSV that people open in a spreadsheet; numbers stay numbers, and the table on the page is unchanged
    var quote = function (v) {
      var s = String(v === null || v === undefined ? "" : v);
      if (typeof v === "string" && /^[=+\-@\t\r]/.test(s)) { s = "'" + s; }
      return /[",\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
    };
    var lines = [heads.concat(["link"]).map(quote).join(",")];
    state.shown.forEach(function (r) { lines.push(cols.map(function (c) { return quote(r[c]); }).concat([quote(r[0])]).join(",")); });
    var blob = new Blob([lines.join("\n") + "\n"], {type: "text/csv"});
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob); a.download = kind + ".csv";
    document.body.appendChild(a); a.click(); a.remove();
  }
  if (!table) { return; }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
    th.addEventListener("click", function () {
      var col = Number(th.getAttribute("data-col"));
      state.asc = state.sort === col ? !state.asc : true;
      state.sort = col;
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
      th.classList.add(state.asc ? "sorted-asc" : "sorted-desc");
      order(); state.page = 0; render();
    });
  });
  ["f-section", "f-role", "f-verdict", "f-label"].forEach(function (id) {
    var el = document.getElementById(id);
    if (el) { el.addEventListener("change", refresh); }
  });
  var q = document.getElementById("q");
  if (q) {
    var timer = null;
    q.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        if (kind !== "entries") { refresh(); return; }
        search(q.value, function (entries, steps) {
          state.hits = entries; state.stepHits = steps;
          Object.keys(entries || {}).forEach(function (i) { loadShard(Math.floor(Number(i) / state.manifest.shard)); });
          refresh();
        });
      }, 150);
    });
    var rawHash = (location.hash || "").replace(/^#q=/, ""), fromHash = rawHash;
    try { fromHash = decodeURIComponent(rawHash); } catch (e) { fromHash = rawHash; }  // "%E0": not UTF-8; as typed
    if (location.hash.indexOf("#q=") === 0 && fromHash) { q.value = fromHash; }
  }
  var button = document.getElementById("csv");
  if (button) { button.addEventListener("click", csv); }
  WB.ready = function () { if (q && q.value) { q.dispatchEvent(new Event("input")); } };
  setTimeout(WB.ready, 0);
})();
