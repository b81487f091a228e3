// tablectl station: draws the screen model from /stream and posts the dealer's actions.
// Text goes into text nodes only (never innerHTML): what the broker says cannot run here.
"use strict";
const $ = (id) => document.getElementById(id);
let screen = null;
const KINDS = { card: "the card", number: "the number", beads: "the bead count", dice: "the dice",
  segment: "the segment", ball: "the ball" };
let lastInput = null;

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function clock() {
  const now = new Date();
  $("clock").textContent = now.toLocaleTimeString("en-GB", { hour12: false });
}

function card(code) {
  if (code === null) return el("span", "??", "card back");
  const red = /[HD]$/.test(code);
  return el("span", code, red ? "card red" : "card");
}

function render(model) {
  screen = model;
  $("table").textContent = model.table;
  $("game").textContent = model.game;
  $("lab").hidden = !model.lab;
  const link = $("link");
  link.textContent = model.link === "connected" ? (model.online ? "table online" : "table offline")
    : model.link === "lost" ? "table link lost" : "connecting…";
  link.className = model.link === "lost" || !model.online ? "link lost" : "link";
  const prompt = $("prompt");
  prompt.className = "tone-" + model.prompt.tone;
  prompt.dataset.keyIn = model.prompt.key_in || "";
  $("prompt-text").textContent = model.prompt.text;
  $("prompt-detail").textContent = model.prompt.detail || "";
  $("phase").textContent = model.phase;
  $("round").textContent = model.round || "";
  const hands = $("hands");
  hands.replaceChildren();
  for (const hand of model.hands) {
    const box = el("div", null, "hand");
    box.append(el("h3", hand.name));
    for (const c of hand.cards || []) box.append(card(c));
    for (const v of hand.values || []) box.append(el("span", v, "card"));
    hands.append(box);
  }
  const staff = model.staff;
  const duty = [];
  if (staff.dealer) duty.push("Dealer " + staff.dealer.name + " (" + staff.dealer.person + ")");
  for (const s of staff.supervisors) duty.push("Supervisor " + s.name);
  for (const t of staff.technicians) duty.push("Technician " + t.name);
  $("on-duty").textContent = duty.length ? duty.join(" · ") : "nobody on duty";
  const here = model.at_station;
  $("at-station").textContent = here ? "At this station: " + here.name + " (" + here.role + ")"
    : "Nobody signed on at this station";
  const faults = $("faults");
  faults.replaceChildren();
  for (const f of model.faults) {
    const item = el("li", (f.device ? f.device + ": " : "") + f.code, "fault");
    item.append(el("span", "Stop the game and call a supervisor", "what"));
    const clear = el("button", "Clear fault", "clear");
    clear.type = "button";
    clear.dataset.device = f.device;
    clear.dataset.code = f.code;
    clear.addEventListener("click", () => clearFault(f.device, f.code));
    item.append(clear);
    faults.append(item);
  }
  if (!model.faults.length) faults.append(el("li", "none", "none"));
  const devices = $("devices");
  const tech = $("tech-devices");
  devices.replaceChildren();
  tech.replaceChildren();
  for (const d of model.devices) {
    const text = d.id + (d.available ? " online" : " offline") + (d.faults.length ? ": " + d.faults.join(", ") : "");
    devices.append(el("li", text, d.available && !d.faults.length ? "dev-ok" : "dev-down"));
    tech.append(el("li", text, d.available && !d.faults.length ? "dev-ok" : "dev-down"));
  }
  const results = $("results");
  results.replaceChildren();
  for (const r of model.results) {
    const item = el("li", r.text, r.status === "void" ? "void" : "");
    item.dataset.round = r.round;
    results.append(item);
  }
  $("btn-open").hidden = !model.dealer_betting;
  $("btn-close").hidden = !model.dealer_betting;
  $("btn-confirm").hidden = !model.decisions;
  $("btn-deal-error").hidden = !model.decisions; // only a dealer-screen game takes deal_error
  $("called").hidden = !model.supervisor_called;
  document.body.dataset.ready = "1";
}

function toast(said) {
  const box = $("toast");
  box.hidden = false;
  box.className = said.ok ? "ok" : "refused";
  box.dataset.code = said.code || "";
  $("toast-msg").textContent = said.message;
  $("toast-detail").textContent = said.detail && said.code !== "need_signer" ? said.detail : "";
}

async function post(path, body) {
  let said;
  try {
    const response = await fetch(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    said = await response.json();
  } catch (err) {
    said = { ok: false, message: "The station did not answer", detail: String(err) };
  }
  toast(said);
  return said;
}

// -- dialogs -----------------------------------------------------------------------------------
function open(id) {
  for (const d of document.querySelectorAll(".dialog")) d.hidden = d.id !== id;
  const first = $(id).querySelector("input");
  if (first) { first.focus(); lastInput = first; }
}
function closeAll() {
  for (const d of document.querySelectorAll(".dialog")) d.hidden = true;
  for (const i of document.querySelectorAll(".dialog input")) i.value = "";
}
function creds(prefix) {
  const out = {};
  for (const key of ["badge", "person", "pin"]) {
    const value = $(prefix + "-" + key).value.trim();
    if (value) out[key] = value;
  }
  return out;
}

let signerDone = null;
function askSigner(roles, title) {
  const box = $("signer-roles");
  box.replaceChildren();
  roles.forEach((role, i) => {
    const b = el("button", role[0].toUpperCase() + role.slice(1), i === 0 ? "role chosen" : "role");
    b.type = "button";
    b.dataset.role = role;
    b.addEventListener("click", () => choose(box, b));
    box.append(b);
  });
  const who = roles.map((r) => r[0].toUpperCase() + r.slice(1)).join(" or ");
  $("signer-title").textContent = title || who + ": badge and PIN";
  open("dlg-signer");
  return new Promise((resolve) => { signerDone = resolve; });
}
function chosen(box) {
  const b = box.querySelector(".chosen");
  return b ? b.dataset.role : null;
}
function choose(box, button) {
  for (const b of box.querySelectorAll("button")) b.classList.remove("chosen");
  button.classList.add("chosen");
}

async function act(action, fields, roles, title) {
  let signer = null;
  if (roles) {
    signer = await askSigner(roles, title);
    if (!signer) return null;
  }
  let said = await post("/api/act", signer ? { action, fields, signer } : { action, fields });
  if (!signer && said.code === "need_signer" && said.detail) {
    signer = await askSigner(said.detail.split(","), said.message);
    if (signer) said = await post("/api/act", { action, fields, signer });
  }
  return said;
}

function clearFault(device, code) {
  act("clear_fault", { device, code }, ["technician", "supervisor"], "Clear " + code + ": badge and PIN");
}

let signOnWithSupervisor = false;
async function signOn() {
  const body = { role: chosen($("dlg-sign-on").querySelector(".roles")), ...creds("sign-on") };
  closeAll();
  if (signOnWithSupervisor) {
    signOnWithSupervisor = false;
    const supervisor = await askSigner(["supervisor"], "Supervisor: sign off the dealer change");
    if (!supervisor) return;
    body.supervisor = supervisor;
  }
  let said = await post("/api/sign-on", body);
  if (said.code === "dealer_change_mid_round") {
    const supervisor = await askSigner(["supervisor"], said.message);
    if (supervisor) said = await post("/api/sign-on", { ...body, supervisor });
  }
}

function keypad(pad) {
  const keys = "1234567890".split("");
  if (pad.dataset.letters) keys.push(..."ATJQK".split(""), ..."SHDC".split(""));
  keys.push("⌫");
  for (const key of keys) {
    const b = el("button", key, /[0-9⌫]/.test(key) ? "" : "letter");
    b.type = "button";
    b.dataset.key = key;
    b.addEventListener("click", () => {
      const input = lastInput && pad.parentElement.contains(lastInput) ? lastInput : $(pad.dataset.target);
      input.value = key === "⌫" ? input.value.slice(0, -1) : input.value + key;
    });
    pad.append(b);
  }
}

function wire() {
  for (const pad of document.querySelectorAll(".keypad")) keypad(pad);
  for (const input of document.querySelectorAll(".dialog input")) {
    input.addEventListener("focus", () => { lastInput = input; });
  }
  for (const c of document.querySelectorAll(".dialog .cancel")) {
    c.addEventListener("click", () => {
      if (signerDone && !$("dlg-signer").hidden) { const done = signerDone; signerDone = null; done(null); }
      closeAll();
    });
  }
  for (const b of $("dlg-sign-on").querySelectorAll(".role")) {
    b.addEventListener("click", () => choose($("dlg-sign-on").querySelector(".roles"), b));
  }
  // A HID badge reader types the badge and Enter into the focused field.
  $("sign-on-badge").addEventListener("keydown", (e) => { if (e.key === "Enter") signOn(); });
  $("signer-badge").addEventListener("keydown", (e) => {
    if (e.key === "Enter") $("signer-pin").focus();
  });
  $("sign-on-go").addEventListener("click", signOn);
  $("signer-go").addEventListener("click", () => {
    const signer = { role: chosen($("signer-roles")), ...creds("signer") };
    const done = signerDone;
    signerDone = null;
    closeAll();
    if (done) done(signer);
  });
  $("btn-sign-on").addEventListener("click", () => {
    $("sign-on-title").textContent = "Sign on";
    open("dlg-sign-on");
  });
  $("btn-sign-off").addEventListener("click", () => post("/api/sign-off", { reason: "break" }));
  $("btn-open").addEventListener("click", () => act("open_betting", {}));
  $("btn-close").addEventListener("click", () => act("close_betting", {}));
  $("btn-confirm").addEventListener("click", () => act("confirm", {}));
  $("btn-key-in").addEventListener("click", () => {
    const kind = (screen && screen.prompt.key_in) || "card";
    $("key-in-kind").textContent = KINDS[kind] || kind;
    $("dlg-key-in").dataset.kind = kind;
    open("dlg-key-in");
  });
  $("key-in-go").addEventListener("click", () => {
    const fields = { kind: $("dlg-key-in").dataset.kind, value: $("key-in-value").value, again: $("key-in-again").value };
    closeAll();
    act("key_in", fields);
  });
  $("btn-deal-error").addEventListener("click", () => open("dlg-deal-error"));
  for (const b of document.querySelectorAll("#dlg-deal-error .kind")) {
    b.addEventListener("click", () => {
      const fields = { kind: b.dataset.kind, position: $("deal-error-position").value };
      closeAll();
      act("deal_error", fields);
    });
  }
  $("btn-call").addEventListener("click", () => post("/api/call", {}));
  $("btn-uncall").addEventListener("click", () => post("/api/call", { cancel: true }));
  $("btn-supervisor").addEventListener("click", () => open("dlg-supervisor"));
  for (const b of document.querySelectorAll("#dlg-supervisor .reason")) {
    b.addEventListener("click", () => { closeAll(); act("void", { reason: b.dataset.reason }, ["supervisor"], "Void the round (" + b.textContent + "): supervisor's badge and PIN"); });
  }
  $("sup-approve").addEventListener("click", () => { closeAll(); act("approve", {}, ["supervisor"], "Approve: supervisor's badge and PIN"); });
  $("sup-dealer-change").addEventListener("click", () => {
    closeAll();
    signOnWithSupervisor = true;
    $("sign-on-title").textContent = "Dealer change: the new dealer";
    open("dlg-sign-on");
  });
  $("btn-tech").addEventListener("click", () => open("dlg-tech"));
  $("tech-run").addEventListener("click", async () => {
    const said = await act("status", {});
    $("tech-status").textContent = said && said.state ? JSON.stringify(said.state, null, 1) : "";
  });
}

function connect() {
  const source = new EventSource("/stream");
  source.addEventListener("screen", (e) => render(JSON.parse(e.data)));
}

wire();
clock();
setInterval(clock, 1000);
connect();
