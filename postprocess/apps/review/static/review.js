// The review page's keyboard and fetch() flow. Without this script every button is a plain
// form that posts and comes back to the same page; with it, a decision updates its row in
// place, the focus moves to the next row, and u undoes the last decision of this visit.
(function () {
  "use strict";
  var token = document.querySelector('meta[name="csrf-token"]').content;
  var statusLine = document.getElementById("status");
  var undoStack = [];
  var current = 0;

  function rows() { return Array.prototype.slice.call(document.querySelectorAll("article.row")); }

  function say(message, bad) {
    statusLine.textContent = message;
    statusLine.className = bad ? "error" : "";
  }

  function focusRow(index) {
    var all = rows();
    if (!all.length) { return; }
    current = Math.max(0, Math.min(index, all.length - 1));
    all.forEach(function (row) { row.classList.remove("current"); });
    all[current].classList.add("current");
    all[current].focus({preventScroll: true});
    all[current].scrollIntoView({block: "nearest"});
  }

  function showRow(data) {
    var row = document.getElementById(data.id);
    if (!row) { return; }
    row.dataset.state = data.state;
    row.className = row.className.replace(/\bstate-\w+/, "state-" + data.state);
    row.querySelector('[data-field="state"]').textContent = data.state;
    row.querySelector('[data-field="reason"]').textContent = data.reason ? " — " + data.reason : "";
    row.querySelector('form.approve input[name="anchor"]').value = data.anchor;
    if (data.context[1]) {
      var context = row.querySelector("p.context");
      var mark = document.createElement("mark");
      mark.textContent = data.context[1];
      context.replaceChildren(document.createTextNode(data.context[0]), mark,
                              document.createTextNode(data.context[2]));
    }
  }

  function showCounts(counts) {
    Object.keys(counts).forEach(function (state) {
      var cell = document.querySelector('[data-count="' + state + '"]');
      if (cell) { cell.textContent = counts[state]; }
    });
  }

  // Post a form (with some fields replaced) and show the answer; resolves to the JSON or null.
  function send(form, replaced) {
    var body = new URLSearchParams(new FormData(form));
    Object.keys(replaced || {}).forEach(function (name) { body.set(name, replaced[name]); });
    // form.action is the hidden input named "action": read the attribute
    return fetch(form.getAttribute("action"), {
      method: "POST", body: body, credentials: "same-origin",
      headers: {"Accept": "application/json", "X-CSRF-Token": token}
    }).then(function (response) {
      return response.json().catch(function () { return {error: response.statusText}; })
        .then(function (data) {
          if (!response.ok) { say(data.error || ("error " + response.status), true); return null; }
          showRow(data.row);
          showCounts(data.counts);
          say(data.row.state + ": " + data.row.anchor + " → " + data.row.target_url, false);
          return data;
        });
    }).catch(function (error) { say("not saved: " + error, true); return null; });
  }

  function rowForm(row, kind) { return row.querySelector("form." + kind); }

  // Words selected with the mouse inside the row's sentence: e takes them as the new anchor.
  function selectedWords(row) {
    var selection = window.getSelection();
    var context = row.querySelector("p.context");
    if (!selection || selection.isCollapsed || !context.contains(selection.anchorNode) ||
        !context.contains(selection.focusNode)) { return ""; }
    return selection.toString().replace(/\s+/g, " ").trim();
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList.contains("decide")) { return; }
    event.preventDefault();
    var row = form.closest("article.row");
    var index = rows().indexOf(row);
    send(form).then(function (data) {
      if (!data) { return; }
      undoStack.push({id: row.id, before: data.before});
      if (document.activeElement && document.activeElement.tagName === "INPUT") {
        document.activeElement.blur();
      }
      focusRow(form.classList.contains("reset") ? index : index + 1);
    });
  });

  function undo() {
    var last = undoStack.pop();
    if (!last) { say("nothing to undo", false); return; }
    var row = document.getElementById(last.id);
    var before = last.before;
    var send_ = before.state === "approved" ? send(rowForm(row, "approve"), {anchor: before.anchor || ""})
      : before.state === "rejected" ? send(rowForm(row, "reject"), {reason: before.reason || ""})
        : send(rowForm(row, "reset"));
    send_.then(function (data) { if (data) { focusRow(rows().indexOf(row)); } });
  }

  document.addEventListener("click", function (event) {
    var row = event.target.closest && event.target.closest("article.row");
    if (row) { current = rows().indexOf(row); rows().forEach(function (r) { r.classList.toggle("current", r === row); }); }
  });

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA") {
      if (event.key === "Escape") { target.blur(); focusRow(current); }
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var row = rows()[current];
    var field;
    switch (event.key) {
      case "j": focusRow(current + 1); break;
      case "k": focusRow(current - 1); break;
      case "a": if (row) { rowForm(row, "approve").requestSubmit(); } break;
      case "r": if (row) { rowForm(row, "reject").requestSubmit(); } break;
      case "R":
        if (row) { field = rowForm(row, "reject").querySelector('input[name="reason"]'); field.focus(); }
        break;
      case "e":
        if (row) {
          field = rowForm(row, "approve").querySelector('input[name="anchor"]');
          var chosen = selectedWords(row);
          if (chosen && !field.readOnly) { field.value = chosen; }
          field.focus();
          field.select();
        }
        break;
      case "u": undo(); break;
      default: return;
    }
    event.preventDefault();
  });

  var start = location.hash ? rows().indexOf(document.getElementById(location.hash.slice(1))) : 0;
  focusRow(start < 0 ? 0 : start);
}());
