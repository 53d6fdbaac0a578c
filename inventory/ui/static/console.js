// The fleet console's script: the overview's latest changes, live, over
// the change feed's own stream (GET /events, Server-Sent Events), signed in
// by the session cookie. One stream for all the tabs of a browser, held by
// a shared worker (live.js); where there is none, one stream per tab. The
// browser reconnects with Last-Event-ID when the server ends it.
"use strict";
(function () {
  function start() {
    var list = document.getElementById("live-changes");
    if (!list || !window.EventSource) { return; }
    var status = document.getElementById("live-status");
    var url = list.getAttribute("data-stream");
    var after = list.getAttribute("data-after");
    if (after) { url += "?after=" + encodeURIComponent(after); }
    var types = (list.getAttribute("data-types") || "").split(" ").filter(Boolean);
    function show(message) {
      var event;
      try { event = JSON.parse(message.data); } catch (e) { return; }
      var empty = list.querySelector("li.empty");
      if (empty) { empty.remove(); }
      var item = document.createElement("li");
      item.className = "fresh";
      var type = document.createElement("span");
      type.className = "type";
      type.textContent = event.type;
      var subject = document.createElement("span");
      subject.className = "subject";
      subject.textContent = event.subject;
      var actor = document.createElement("span");
      actor.className = "actor";
      actor.textContent = event.actor;
      var when = document.createElement("time");
      when.setAttribute("datetime", event.occurred_on);
      when.textContent = event.occurred_on.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, " UTC");
      item.append(type, " ", subject, " by ", actor, ", ", when, " (just now)");
      list.insertBefore(item, list.firstChild);
      while (list.children.length > 20) { list.removeChild(list.lastChild); }
      if (status) { status.textContent = "New change: " + event.type + " " + event.subject; }
    }
    function stopped() {
      if (status) { status.textContent = "Live updates stopped; reload the page to resume."; }
    }
    var worker = null;
    if (window.SharedWorker && list.getAttribute("data-worker")) {
      try {
        worker = new SharedWorker(list.getAttribute("data-worker"), {name: "inventory-live"});
      } catch (e) {
        worker = null;  // not allowed here: a stream of its own
      }
    }
    if (worker) {
      worker.port.onmessage = function (message) {
        if (message.data.error) {
          if (message.data.closed) { stopped(); }
        } else {
          show(message.data);
        }
      };
      worker.port.postMessage({url: url, types: types});
      window.addEventListener("pagehide", function () { worker.port.postMessage({bye: true}); });
      return;
    }
    var stream = new EventSource(url);
    types.forEach(function (type) { stream.addEventListener(type, show); });
    stream.addEventListener("error", function () {
      if (stream.readyState === EventSource.CLOSED) { stopped(); }
    });
    window.addEventListener("pagehide", function () { stream.close(); });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
