/* The review queue: rows embedded as JSON, filtered, sorted and paged here (no request, no library). */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("queue-data").textContent);
  var pages = data.pages, rows = data.rows;
  var SRC = 0, TGT = 1, ANCHOR = 2, TYPE = 3, CONTEXT = 4, CONF = 5, SCORE = 6, EVIDENCE = 7;
  var table = document.getElementById("queue");
  var body = table.tBodies[0];
  var status = document.getElementById("queue-status");
  var pageLabel = document.getElementById("queue-page");
  var controls = {
    source: document.getElementById("f-source"), target: document.getElementById("f-target"),
    text: document.getElementById("f-text"), type: document.getElementById("f-type"),
    confidence: document.getElementById("f-confidence"), score: document.getElementById("f-score"),
    size: document.getElementById("f-size")
  };
  var state = { key: "confidence", dir: -1, page: 0, shown: [] };

  // Lower-case haystack of each page (URL and title), and each page's rank by title, made once.
  var hay = pages.map(function (p) { return (p[0] + " " + p[1]).toLowerCase(); });
  var order = pages.map(function (_, i) { return i; });
  order.sort(function (a, b) {
    var x = (pages[a][1] || pages[a][0]).toLowerCase(), y = (pages[b][1] || pages[b][0]).toLowerCase();
    return x < y ? -1 : x > y ? 1 : 0;
  });
  var rank = new Int32Array(pages.length);
  order.forEach(function (p, i) { rank[p] = i; });

  var keys = {
    source: function (r) { return rank[r[SRC]]; },
    target: function (r) { return rank[r[TGT]]; },
    anchor: function (r) { return r[ANCHOR].toLowerCase(); },
    confidence: function (r) { return r[CONF]; },
    score: function (r) { return r[SCORE]; }
  };

  function number(input) {
    var v = parseFloat(input.value);
    return isNaN(v) ? null : v;
  }

  function filtered() {
    var src = controls.source.value.trim().toLowerCase(), tgt = controls.target.value.trim().toLowerCase();
    var text = controls.text.value.trim().toLowerCase(), type = controls.type.value;
    var minConf = number(controls.confidence), minScore = number(controls.score);
    var found = [];
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (src && hay[r[SRC]].indexOf(src) < 0) continue;
      if (tgt && hay[r[TGT]].indexOf(tgt) < 0) continue;
      if (type && r[TYPE] !== type) continue;
      if (minConf !== null && r[CONF] < minConf) continue;
      if (minScore !== null && r[SCORE] < minScore) continue;
      if (text && (r[ANCHOR] + " " + r[CONTEXT]).toLowerCase().indexOf(text) < 0) continue;
      found.push(i);
    }
    var key = keys[state.key], dir = state.dir;
    var values = new Array(rows.length);
    found.forEach(function (i) { values[i] = key(rows[i]); });
    found.sort(function (a, b) {
      var x = values[a], y = values[b];
      return x < y ? -dir : x > y ? dir : a - b;
    });
    return found;
  }

  function link(page) {
    var a = document.createElement("a");
    a.href = pages[page][0];
    a.textContent = pages[page][1] || pages[page][0];
    a.title = pages[page][0];
    return a;
  }

  function cell(tr, content, cls) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    if (typeof content === "string") td.textContent = content; else td.appendChild(content);
    tr.appendChild(td);
    return td;
  }

  function context(r) {
    var span = document.createElement("span"), text = r[CONTEXT], at = r[TYPE] === "text" ? text.indexOf(r[ANCHOR]) : -1;
    if (at < 0 || !r[ANCHOR]) { span.textContent = text; return span; }
    var mark = document.createElement("mark");
    mark.textContent = r[ANCHOR];
    span.appendChild(document.createTextNode(text.slice(0, at)));
    span.appendChild(mark);
    span.appendChild(document.createTextNode(text.slice(at + r[ANCHOR].length)));
    return span;
  }

  function render() {
    var size = parseInt(controls.size.value, 10) || 50;
    var pagesTotal = Math.max(1, Math.ceil(state.shown.length / size));
    state.page = Math.min(Math.max(0, state.page), pagesTotal - 1);
    var first = state.page * size, last = Math.min(state.shown.length, first + size);
    var fragment = document.createDocumentFragment();
    for (var k = first; k < last; k++) {
      var r = rows[state.shown[k]], tr = document.createElement("tr");
      cell(tr, link(r[SRC]));
      cell(tr, link(r[TGT]));
      var anchor = cell(tr, r[ANCHOR]);
      if (r[TYPE] !== "text") anchor.insertAdjacentHTML("beforeend", ' <span class="small">(title)</span>');
      cell(tr, context(r));
      cell(tr, r[CONF].toFixed(2), "n");
      cell(tr, r[SCORE].toFixed(3), "n");
      cell(tr, r[EVIDENCE], "small");
      fragment.appendChild(tr);
    }
    body.replaceChildren(fragment);
    status.textContent = state.shown.length ? "rows " + (first + 1) + "–" + last + " of " + state.shown.length
      + (state.shown.length < rows.length ? " (filtered from " + rows.length + ")" : "") : "no row matches";
    pageLabel.textContent = "page " + (state.page + 1) + " of " + pagesTotal;
    document.getElementById("q-first").disabled = document.getElementById("q-prev").disabled = state.page === 0;
    document.getElementById("q-next").disabled = document.getElementById("q-last").disabled = state.page >= pagesTotal - 1;
    Array.prototype.forEach.call(table.tHead.querySelectorAll("th[data-sort]"), function (th) {
      th.setAttribute("aria-sort", th.dataset.sort === state.key ? (state.dir > 0 ? "ascending" : "descending") : "none");
    });
  }

  function refresh() { state.page = 0; state.shown = filtered(); render(); }

  Array.prototype.forEach.call(table.tHead.querySelectorAll("th[data-sort]"), function (th) {
    th.addEventListener("click", function () {
      var key = th.dataset.sort;
      state.dir = key === state.key ? -state.dir : (key === "confidence" || key === "score" ? -1 : 1);
      state.key = key;
      refresh();
    });
  });
  ["source", "target", "text", "confidence", "score"].forEach(function (name) {
    controls[name].addEventListener("input", refresh);
  });
  controls.type.addEventListener("change", refresh);
  controls.size.addEventListener("change", function () { state.page = 0; render(); });
  document.getElementById("q-first").addEventListener("click", function () { state.page = 0; render(); });
  document.getElementById("q-prev").addEventListener("click", function () { state.page -= 1; render(); });
  document.getElementById("q-next").addEventListener("click", function () { state.page += 1; render(); });
  document.getElementById("q-last").addEventListener("click", function () { state.page = 1e9; render(); });
  refresh();
  document.documentElement.dataset.queueReady = "1";
})();
