// The console's live list, shared by every tab of the console in a browser
// (a SharedWorker, started by console.js): one stream of the change feed
// (GET /events, Server-Sent Events) for all of them, not one a tab. A
// browser opens at most six HTTP/1.1 connections to a host: six tabs'
// streams would leave none for any page. The stream closes when the last
// tab leaves; it resumes with Last-Event-ID when the server ends it, and is
// opened anew by the next tab that comes when the browser gave it up.
"use strict";
var stream = null;
var ports = [];
var listened = {};

function broadcast(message) {
  ports.forEach(function (port) { port.postMessage(message); });
}

function listen(type) {
  if (!type || listened[type]) { return; }
  listened[type] = true;
  stream.addEventListener(type, function (event) {
    broadcast({type: type, data: event.data, id: event.lastEventId});
  });
}

function open(url) {
  var opened = new EventSource(url);
  opened.addEventListener("error", function () {
    broadcast({error: true, closed: opened.readyState === EventSource.CLOSED});
  });
  return opened;
}

self.addEventListener("connect", function (connection) {
  var port = connection.ports[0];
  port.onmessage = function (message) {
    var asked = message.data || {};
    if (asked.bye) {  // the tab left: the stream goes with the last one
      ports = ports.filter(function (other) { return other !== port; });
      if (!ports.length && stream) {
        stream.close();
        stream = null;
        listened = {};
      }
      return;
    }
    if (ports.indexOf(port) < 0) { ports.push(port); }
    // a stream the browser gave up on (refused at a reconnect: signed out,
    // the service unavailable) is opened anew for a tab that comes (a reload)
    if (!stream || stream.readyState === EventSource.CLOSED) {
      if (stream) { stream.close(); }
      stream = open(asked.url);
      listened = {};
    }
    (asked.types || []).forEach(listen);
  };
});
