// The page of `python -m training serve`: forms to start a game, the table's picture, the legal
// moves as buttons (the only clickable moves), and the watch and replay controls. The game id
// lives in this tab only, so every tab plays its own game.
"use strict";

const $ = (id) => document.getElementById(id);
let game = null; // the last state the server sent
let timer = null; // the watch mode's play timer

function mode() {
  return document.querySelector('input[name="mode"]:checked').value;
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.detail || response.statusText);
  showError("");
  return data;
}

function viewQuery() {
  if (!game || game.mode !== "replay") return "";
  const seat = `?seat=${Number($("replay-seat").value)}`;
  return $("reveal").checked ? `${seat}&reveal=true` : seat;
}

function draw(state) {
  game = state;
  $("game").hidden = false;
  $("game").dataset.mode = state.mode;
  $("game").dataset.finished = String(state.finished);
  $("watch-controls").hidden = state.mode !== "watch";
  $("replay-controls").hidden = state.mode !== "replay";
  $("table").src = `/api/games/${state.id}/image.png${viewQuery()}${viewQuery() ? "&" : "?"}n=${Date.now()}`;
  $("board").textContent = state.board;
  $("log").replaceChildren(...state.log.map((line) => Object.assign(document.createElement("li"), { textContent: line })));
  const moves = state.legal.map((move) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "move";
    button.dataset.action = move.action;
    button.textContent = move.points ? `${move.text} (+${move.points})` : move.text;
    button.addEventListener("click", () => playMove(move.action));
    return button;
  });
  $("moves").replaceChildren(...moves);
  if (state.mode === "replay") $("replay-step").textContent = `move ${state.step} of ${state.steps}`;
  let status = state.result;
  if (!status) {
    const who = state.names[state.to_move];
    status = state.mode === "play" && state.to_move === state.seat ? "your move" : `${who} to move`;
  }
  $("status").textContent = status;
  if (state.finished && timer) togglePlay();
}

async function playMove(action) {
  try {
    draw(await call("POST", `/api/games/${game.id}/move`, { action }));
  } catch (err) {
    showError(err.message);
  }
}

async function advance() {
  if (!game || game.finished) return;
  try {
    draw(await call("POST", `/api/games/${game.id}/advance`));
  } catch (err) {
    showError(err.message);
    if (timer) togglePlay();
  }
}

function togglePlay() {
  if (timer) {
    clearInterval(timer);
    timer = null;
  } else {
    timer = setInterval(advance, Math.max(50, Number($("delay").value)));
  }
  $("play-pause").textContent = timer ? "pause" : "play";
}

async function stepReplay(delta) {
  const step = game.step + delta;
  try {
    draw(await call("POST", `/api/games/${game.id}/step${viewQuery()}`, { step }));
  } catch (err) {
    showError(err.message);
  }
}

async function redrawReplay() {
  try {
    draw(await call("GET", `/api/games/${game.id}${viewQuery()}`));
  } catch (err) {
    showError(err.message);
  }
}

async function startGame(event) {
  event.preventDefault();
  if (timer) togglePlay();
  let options;
  try {
    options = JSON.parse($("options").value || "{}");
  } catch (err) {
    showError(`the options are not JSON: ${err.message}`);
    return;
  }
  const seed = $("seed").value === "" ? null : Number($("seed").value);
  const body = {
    mode: mode(),
    variant: $("variant").value,
    options,
    agents: $("agents").value.split(/\s+/).filter(Boolean),
    seat: Number($("seat").value),
    seed,
  };
  try {
    draw(await call("POST", "/api/games", body));
  } catch (err) {
    showError(err.message);
  }
}

async function openRecord() {
  const file = $("record-file").files[0];
  if (!file) return;
  try {
    draw(await call("POST", "/api/replays", await file.text()));
  } catch (err) {
    showError(err.message);
  }
}

function switchMode() {
  const current = mode();
  $("new-game").hidden = current === "replay";
  $("open-record").hidden = current !== "replay";
  $("seat-field").hidden = current !== "play";
  $("agents-label").textContent = current === "play" ? "opponents" : "agents (one per seat, or fewer in turn)";
  if ($("agents").value === "random" && current === "watch") $("agents").value = "greedy random";
}

async function init() {
  const catalog = await call("GET", "/api/catalog");
  for (const [name, variant] of Object.entries(catalog.variants)) {
    $("variant").append(new Option(`${variant.title} (${name})`, name));
  }
  $("agent-names").textContent = catalog.agents.join(", ");
  document.querySelectorAll('input[name="mode"]').forEach((radio) => radio.addEventListener("change", switchMode));
  $("new-game").addEventListener("submit", startGame);
  $("record-file").addEventListener("change", openRecord);
  $("play-pause").addEventListener("click", togglePlay);
  $("step-once").addEventListener("click", advance);
  $("back").addEventListener("click", () => stepReplay(-1));
  $("forward").addEventListener("click", () => stepReplay(1));
  $("reveal").addEventListener("change", redrawReplay);
  $("replay-seat").addEventListener("change", redrawReplay);
  switchMode();
}

init().catch((err) => showError(err.message));
