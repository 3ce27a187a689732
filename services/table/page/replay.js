// Support's hand replay page. It renders what the table service computed for every step
// (GET /replay/v1/tables/{id}/hands/{n}, the engine's fold of the hand) and decides nothing
// itself: no rule of the game lives here. The token stays in this tab's sessionStorage and is
// sent only in the Authorization header; the URL fragment (#table=…&hand=…&step=…) carries the
// place, so a link can be shared and a reload keeps it.
"use strict";

const TOKEN_KEY = "okey.replay.token";
const $ = (id) => document.getElementById(id);

let replay = null; // the loaded HandReplay
let loadedKey = ""; // "table/hand" of the loaded replay
let step = 0;

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

function tableId(text) {
  return text.trim().replace(/^tables\//, "");
}

function readFragment() {
  const params = new URLSearchParams(location.hash.replace(/^#/, ""));
  return {
    table: params.get("table") || "",
    hand: params.get("hand") || "",
    step: params.get("step"),
  };
}

function writeFragment() {
  if (!replay) return;
  const params = new URLSearchParams();
  params.set("table", tableId(replay.table));
  params.set("hand", String(replay.hand_number));
  params.set("step", String(step));
  const hash = "#" + params.toString();
  if (location.hash !== hash) history.replaceState(null, "", hash);
}

function showError(text) {
  const box = $("error");
  box.textContent = text;
  box.hidden = !text;
}

function setStatus(text) {
  $("status").textContent = text;
}

function showTokenBox() {
  const kept = token() !== "";
  $("token-kept").hidden = !kept;
  $("token").placeholder = kept ? "(kept for this tab)" : "eyJ…";
}

function tile(text) {
  const span = document.createElement("span");
  span.className = "tile " + text.charAt(0);
  span.textContent = text;
  return span;
}

function tiles(parent, list) {
  parent.replaceChildren(...list.map(tile));
  if (list.length === 0) parent.textContent = "—";
}

async function load(table, hand, wantedStep) {
  showError("");
  const id = tableId(table);
  if (!token()) {
    showError("Paste an access token first.");
    $("token").focus();
    return;
  }
  if (!id || !hand) {
    showError("Enter a table and a hand number.");
    return;
  }
  setStatus("Loading…");
  let response;
  try {
    response = await fetch(
      "v1/tables/" + encodeURIComponent(id) + "/hands/" + encodeURIComponent(hand),
      { headers: { Authorization: "Bearer " + token() }, cache: "no-store" },
    );
  } catch (e) {
    setStatus("");
    showError("The table service did not answer: " + e);
    return;
  }
  let body = null;
  try {
    body = await response.json();
  } catch (e) {
    body = null;
  }
  if (!response.ok) {
    setStatus("");
    const err = (body && body.error) || {};
    showError(
      "Refused (" + response.status + " " + (err.status || "") + (err.reason ? ", " + err.reason : "") +
        "): " + (err.message || response.statusText),
    );
    if (response.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      showTokenBox();
      $("token").focus();
    }
    return;
  }
  replay = body;
  loadedKey = id + "/" + hand;
  $("table").value = replay.table;
  $("hand").value = String(replay.hand_number);
  setStatus(
    replay.table + ", hand " + replay.hand_number + ": " + replay.steps.length + " steps" +
      (replay.ended ? "" : " (still being played: as far as it has gone)"),
  );
  renderEvents();
  $("replay").hidden = false;
  const n = parseInt(wantedStep, 10);
  go(Number.isFinite(n) ? n : 0);
}

function renderEvents() {
  const list = $("events");
  list.replaceChildren(
    ...replay.steps.map((s) => {
      const li = document.createElement("li");
      li.dataset.step = String(s.step);
      li.dataset.event = s.event;
      if (s.penalty) li.classList.add("penalty");
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = "v" + s.version + " " + s.event + (s.seat === null ? "" : " (seat " + s.seat + ")") +
        (s.penalty ? " +" + s.penalty.points + " " + s.penalty.rule : "");
      button.addEventListener("click", () => go(s.step));
      li.append(button);
      return li;
    }),
  );
}

function go(n) {
  if (!replay || replay.steps.length === 0) return;
  step = Math.max(0, Math.min(replay.steps.length - 1, n));
  render(replay.steps[step]);
  writeFragment();
}

function render(s) {
  const st = s.state;
  $("step-index").textContent = String(s.step);
  $("step-count").textContent = String(replay.steps.length - 1);
  $("step-version").textContent = String(s.version);
  $("step-event").textContent = s.event;
  $("told").textContent = s.told;
  const penalty = $("penalty");
  if (s.penalty) {
    penalty.textContent = "Penalty #" + s.penalty.id + ": seat " + s.penalty.seat + " +" + s.penalty.points +
      " (" + s.penalty.rule + ")";
    penalty.hidden = false;
  } else {
    penalty.textContent = "";
    penalty.hidden = true;
  }
  $("deal").textContent = String(st.deal);
  $("indicator").textContent = st.indicator;
  $("okey").textContent = st.okey;
  $("turn").textContent = String(st.turn);
  $("pile").textContent = String(st.pile);
  $("side").replaceChildren(
    ...(st.side_discard ? [tile(st.side_discard.tile), " from seat " + st.side_discard.seat] : ["none"]),
  );
  $("melds").replaceChildren(
    ...st.melds.map((m) => {
      const li = document.createElement("li");
      li.textContent = m.text + " (laid by seat " + m.owner + ")";
      return li;
    }),
  );
  if (st.melds.length === 0) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = "no melds on the table";
    $("melds").replaceChildren(li);
  }
  $("seats").replaceChildren(
    ...st.seats.map((seat) => {
      const box = document.createElement("article");
      box.className = "seat";
      box.id = "seat-" + seat.seat;
      if (seat.seat === st.turn) box.classList.add("turn");
      if (s.seat === seat.seat) box.classList.add("acted");
      const h = document.createElement("h3");
      h.textContent = "Seat " + seat.seat + ": " + (seat.occupant || "empty") +
        (seat.bot_playing ? " (a bot plays for them)" : "") +
        (seat.opened ? " · opened with " + seat.opened : " · not opened") +
        (seat.penalty_points ? " · penalties " + seat.penalty_points : "");
      const rack = document.createElement("div");
      rack.className = "rack";
      rack.id = "rack-" + seat.seat;
      rack.dataset.count = String(seat.rack.length);
      tiles(rack, seat.rack);
      const label = document.createElement("div");
      label.className = "note";
      label.textContent = "Rack (" + seat.rack.length + "), then discards (" + seat.discards.length + "):";
      const discards = document.createElement("div");
      discards.className = "discards";
      discards.id = "discards-" + seat.seat;
      tiles(discards, seat.discards);
      box.append(h, label, rack, discards);
      return box;
    }),
  );
  $("penalties").replaceChildren(
    ...st.penalties.map((p) => {
      const li = document.createElement("li");
      li.textContent = "#" + p.id + ": seat " + p.seat + " +" + p.points + " (" + p.rule + ")" +
        (p.voided ? " — voided" : "");
      return li;
    }),
  );
  if (st.penalties.length === 0) {
    const li = document.createElement("li");
    li.textContent = "none so far";
    $("penalties").replaceChildren(li);
  }
  const scores = $("scores-box");
  if (st.scores) {
    $("outcome").textContent = "Outcome: " + st.scores.outcome +
      (st.scores.winner === null ? "" : ", seat " + st.scores.winner + " went out") +
      " (multiplier " + st.scores.multiplier + ")";
    const row = (id, cells) => {
      const tr = document.createElement("tr");
      tr.id = id;
      for (const v of cells) {
        const td = document.createElement("td");
        td.textContent = String(v);
        tr.append(td);
      }
      return tr;
    };
    $("scores").tBodies[0].replaceChildren(
      ...st.scores.seats.map((sc) =>
        row("score-" + sc.seat, [sc.seat, sc.basis, sc.hand_score, sc.penalties, sc.total])),
      // With partners, each team's seats added: the totals that decide the match.
      ...(st.scores.teams || []).map((t) =>
        row("team-score-" + t.team, ["team " + t.team, "seats " + t.seats.join(" + "),
          t.hand_score, t.penalties, t.total])),
    );
    scores.hidden = false;
  } else {
    scores.hidden = true;
  }
  for (const li of $("events").children) {
    li.classList.toggle("current", li.dataset.step === String(s.step));
  }
  const current = $("events").children[s.step];
  if (current && current.scrollIntoView) current.scrollIntoView({ block: "nearest" });
}

function fromFragment() {
  const f = readFragment();
  if (!f.table || !f.hand) return;
  $("table").value = f.table;
  $("hand").value = f.hand;
  if (replay && loadedKey === tableId(f.table) + "/" + f.hand) {
    const n = parseInt(f.step, 10);
    if (Number.isFinite(n) && n !== step) go(n);
    return;
  }
  if (token()) {
    load(f.table, f.hand, f.step);
  } else {
    showError("Paste an access token to open this link.");
    $("token").focus();
  }
}

function start() {
  showTokenBox();
  $("ask").addEventListener("submit", (e) => {
    e.preventDefault();
    const pasted = $("token").value.trim();
    if (pasted) {
      sessionStorage.setItem(TOKEN_KEY, pasted.replace(/^Bearer\s+/i, ""));
      $("token").value = "";
      showTokenBox();
    }
    const f = readFragment();
    const same = f.table && tableId(f.table) === tableId($("table").value) && f.hand === $("hand").value.trim();
    load($("table").value, $("hand").value.trim(), same ? f.step : 0);
  });
  $("forget").addEventListener("click", () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showTokenBox();
  });
  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(step - 1));
  $("next").addEventListener("click", () => go(step + 1));
  $("last").addEventListener("click", () => go(replay ? replay.steps.length - 1 : 0));
  document.addEventListener("keydown", (e) => {
    const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement;
    if (!replay || typing || e.altKey || e.ctrlKey || e.metaKey) return;
    const moves = { ArrowLeft: step - 1, ArrowRight: step + 1, Home: 0, End: replay.steps.length - 1 };
    if (e.key in moves) {
      e.preventDefault();
      go(moves[e.key]);
    }
  });
  window.addEventListener("hashchange", fromFragment);
  fromFragment();
}

start();
