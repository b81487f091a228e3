// tablectl dashboard: swap in the fragments the server streams (server-sent events), and show
// times in local time. No framework, no build step: the server renders every fragment's HTML
// (escaped there); this only puts it in place.
"use strict";

function localTimes(root) {
  for (const el of root.querySelectorAll("time[datetime]")) {
    const when = new Date(el.getAttribute("datetime"));
    if (!Number.isNaN(when.getTime())) {
      el.textContent = when.toLocaleTimeString([], { hour12: false });
      el.title = el.getAttribute("datetime");
    }
  }
}

function place(fragment) {
  if (!fragment.html) {  // gone (a table whose retained topics were cleared)
    const old = document.getElementById(fragment.id);
    if (old) old.remove();
    return;
  }
  const holder = document.createElement("template");
  holder.innerHTML = fragment.html;
  const fresh = holder.content.firstElementChild;
  if (!fresh) return;
  localTimes(holder.content);
  const old = document.getElementById(fragment.id);
  if (old) {
    old.replaceWith(fresh);
  } else if (fragment.parent) {
    const parent = document.getElementById(fragment.parent);
    if (parent) {
      parent.appendChild(fresh);
      for (const waiting of document.querySelectorAll("main > p.waiting")) waiting.remove();
    }
  }
}

function follow() {
  const source = document.body.dataset.stream;
  if (!source || !window.EventSource) return;
  const live = document.getElementById("live");
  const stream = new EventSource(source);
  stream.addEventListener("fragment", (event) => place(JSON.parse(event.data)));
  stream.addEventListener("open", () => { if (live) live.hidden = true; });
  stream.addEventListener("error", () => { if (live) live.hidden = false; });
}

document.addEventListener("DOMContentLoaded", () => {
  localTimes(document);
  follow();
});
