// Threadflow dashboard: live updates and the chat form, in plain JavaScript with no build step.
// Every HTML fragment inserted here was rendered and escaped by the server's html/template.
(function () {
  "use strict";

  // An element with data-live="URL" shows a server-sent event stream: each "update" event carries
  // the element's new HTML. EventSource reconnects by itself when the connection drops.
  document.querySelectorAll("[data-live]").forEach(function (el) {
    var source = new EventSource(el.getAttribute("data-live"));
    source.addEventListener("update", function (e) {
      // A note being typed next to Approve/Reject survives the update (a reminder, someone else's
      // approval), as does the focus in it.
      var note = el.querySelector("#gate-note");
      var typed = note ? note.value : "", focused = note && document.activeElement === note;
      el.innerHTML = e.data;
      var again = el.querySelector("#gate-note");
      if (again && typed) { again.value = typed; }
      if (again && focused) { again.focus(); }
      if (el.id === "chat-log") {
        el.scrollTop = el.scrollHeight;
      }
    });
  });

  var log = document.getElementById("chat-log");
  if (log) {
    log.scrollTop = log.scrollHeight;
  }

  // Forms marked data-async post in the background, so the page and its live view stay put.
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.hasAttribute("data-async")) {
      return;
    }
    e.preventDefault();
    var problem = document.getElementById("chat-error");
    fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      headers: { "X-Requested-With": "threadflow" },
      credentials: "same-origin"
    }).then(function (resp) {
      if (resp.ok) {
        if (problem) { problem.textContent = ""; }
        if (form.id === "chat-form") { form.reset(); }
        return;
      }
      return resp.text().then(function (text) {
        if (problem) { problem.textContent = text; }
      });
    }).catch(function () {
      if (problem) { problem.textContent = "The bot did not answer; check that it is running."; }
    });
  });
})();
