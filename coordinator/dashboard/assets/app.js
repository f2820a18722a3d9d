// The trigrid dashboard: polls /api/v1/ and redraws. Every value from the
// coordinator reaches the page as a text node or a property, never as
// markup, so a graph named <script> shows as text.
"use strict";

const POLL_MS = 1000;
const TOKEN_KEY = "trigrid-token";
let selected = null; // the job whose detail shows; null: the latest running or last job
let pinned = false;  // a person picked it

function el(tag, opts, ...children) {
  const e = document.createElement(tag);
  if (opts) {
    if (opts.cls) e.className = opts.cls;
    if (opts.title) e.title = opts.title;
    if (opts.data) for (const [k, v] of Object.entries(opts.data)) e.dataset[k] = v;
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function td(text, cls) { return el("td", cls ? { cls } : null, text); }

function fill(tbody, rows) { tbody.replaceChildren(...rows); }

function secs(s) {
  if (s === null || s === undefined) return "–";
  if (s < 60) return s.toFixed(1) + " s";
  const m = Math.floor(s / 60), h = Math.floor(m / 60);
  if (h > 0) return h + " h " + (m % 60) + " min";
  return m + " min " + Math.round(s % 60) + " s";
}

function num(n) { return n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US", { maximumFractionDigits: 0 }); }

function bytes(n) {
  if (!n) return "";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return " " + n.toFixed(n < 10 && i > 0 ? 1 : 0) + " " + u[i];
}

async function get(path) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  const r = await fetch(path, { headers, cache: "no-store" });
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (r.status === 401) {
    const err = new Error(body && body.error ? body.error : "a token is required");
    err.auth = true;
    throw err;
  }
  if (!r.ok) throw new Error((body && body.error) || ("HTTP " + r.status));
  return body;
}

function progress(done, total) {
  const pct = total > 0 ? Math.floor(100 * done / total) : 0;
  const bar = el("span", { cls: "bar" }, el("span"));
  bar.firstChild.style.width = pct + "%";
  return el("td", { cls: "l progress" }, bar, done + "/" + total + " (" + pct + "%)");
}

function jobRow(j) {
  const tri = j.triangles !== undefined ? j.triangles : j.triangles_so_far + " so far";
  const tr = el("tr", { cls: "job" + (j.id === selected ? " selected" : ""), data: { job: j.id, state: j.state } },
    td(j.id, "l"), td(j.state, "l state-" + j.state), td(j.graph, "l path"), td(j.p), td(j.scheme, "l"), td(j.kernel || "default", "l"),
    progress(j.done, j.subtasks), td(tri, "triangles"), td(secs(j.elapsed_seconds)), td(secs(j.remaining_seconds)),
    td(j.attempts), td(j.requeued), td(j.speculated), td(j.recounts), td(j.failures));
  tr.addEventListener("click", () => { selected = j.id; pinned = true; tick(); });
  const rows = [tr];
  const errs = [];
  if (j.error) errs.push(j.error);
  for (const f of j.faulty || []) errs.push("faulty worker " + f.worker + ": " + f.reason);
  if (errs.length) {
    const c = el("td", { cls: "l wrap" }, errs.join("; "));
    c.colSpan = 15;
    rows.push(el("tr", { cls: "error" }, c));
  }
  return rows;
}

function workerRow(w) {
  const devices = (w.devices || []).map(d => d.kind + (d.name && d.name !== d.kind ? " " + d.name : "") + bytes(d.memory)).join(", ");
  const eps = w.edges_per_second === null ? "–" : num(w.edges_per_second);
  const busy = w.busy_share === null ? "–" : Math.round(100 * w.busy_share) + "%";
  const note = [w.faulty ? "faulty: " + w.faulty : "", w.left || ""].filter(Boolean).join("; ");
  return el("tr", { data: { worker: w.id, state: w.state } },
    td(w.id, "l"), td(w.host, "l"), td(devices, "l wrap"), td(w.state, "l state-" + w.state), td(w.running), td(w.done), td(w.failed),
    td(secs(w.kernel_seconds)), td(secs(w.fetch_seconds)), td(secs(w.decode_seconds)), td(eps), td(busy),
    td(secs(w.heartbeat_age_seconds)), td(note, "l wrap"));
}

const MARK_COLORS = { failed: "#c62828", recounted: "#00838f", speculative: "#8e24aa", retried: "#ef6c00" };

function drawGrid(g) {
  const box = document.getElementById("grid");
  const px = Math.max(6, Math.min(36, Math.floor(360 / g.size)));
  box.style.gridTemplateColumns = "repeat(" + g.size + ", " + px + "px)";
  box.style.gridAutoRows = px + "px";
  const cells = [];
  for (let c = 0; c < g.size * g.size; c++) {
    const i = Math.floor(c / g.size) * g.group, j = (c % g.size) * g.group;
    const total = g.total[c], done = g.done[c];
    const cell = el("div", { cls: "cell", data: { i: i, j: j } });
    if (total === 0) {
      cell.classList.add("empty");
      cell.title = blockName(g, i, j) + ": no subtasks";
    } else {
      const f = done / total;
      cell.style.background = "hsl(" + (210 - 70 * Math.min(1, f * 4)) + ", " + (20 + 40 * f) + "%, " + (94 - 62 * f) + "%)";
      const marks = [];
      for (const k of ["failed", "recounted", "speculative", "retried"]) if (g[k][c] > 0) marks.push(g[k][c] + " " + k);
      if (g.running[c] > 0) cell.classList.add("run");
      if (marks.length) {
        cell.classList.add("mark");
        cell.style.setProperty("--mark", MARK_COLORS[marks[0].split(" ")[1]]);
      }
      cell.title = blockName(g, i, j) + ": " + done + "/" + total + " done, " + g.running[c] + " running" + (marks.length ? "; " + marks.join(", ") : "");
    }
    cells.push(cell);
  }
  box.replaceChildren(...cells);
}

function blockName(g, i, j) {
  if (g.group === 1) return "I=" + i + " J=" + j;
  return "I=" + i + "–" + (Math.min(g.p, i + g.group) - 1) + " J=" + j + "–" + (Math.min(g.p, j + g.group) - 1);
}

function drawDetail(d) {
  const sec = document.getElementById("detail");
  sec.hidden = false;
  const j = d.job;
  document.getElementById("detail-title").replaceChildren("Job " + j.id + ": " + j.state + ", P = " + j.p + " (" + j.scheme + ")");
  const note = document.getElementById("detail-note");
  if (!d.grid) {
    note.replaceChildren("The coordinator no longer holds this job's subtasks.");
    document.getElementById("grid").replaceChildren();
  } else {
    note.replaceChildren(d.grid.group > 1 ? "Each cell covers " + d.grid.group + " x " + d.grid.group + " blocks." : "");
    drawGrid(d.grid);
  }
  const shown = (n, total) => total > n ? "(" + n + " of " + total + " shown)" : "(" + total + ")";
  document.getElementById("inflight-count").replaceChildren(shown(d.in_flight.length, d.in_flight_total));
  fill(document.querySelector("#inflight tbody"), d.in_flight.map(f => el("tr", null,
    td(f.subtask), td(f.i), td(f.j), td(f.k), td(f.worker, "l"), td(f.attempt), td(secs(f.running_seconds)), td(f.speculative ? "speculative" : "", "l"))));
  document.getElementById("marked-count").replaceChildren(shown(d.marked.length, d.marked_total));
  fill(document.querySelector("#marked tbody"), d.marked.map(m => el("tr", null,
    td(m.subtask), td(m.i), td(m.j), td(m.k), td(m.state, "l"), td(m.marks.join(", "), "l"),
    td(m.tries.map(t => t.attempt + " " + t.worker + (t.speculative ? " (copy)" : "") + ": " + t.outcome).join("; "), "l wrap"))));
}

function pick(jobs) {
  if (pinned && jobs.some(j => j.id === selected)) return selected;
  const running = jobs.filter(j => j.state === "running");
  if (running.length) return running[running.length - 1].id;
  return jobs.length ? jobs[jobs.length - 1].id : null;
}

function setLive(ok, text) {
  const live = document.getElementById("live");
  live.className = ok ? "live" : "live down";
  live.replaceChildren(text);
}

async function tick() {
  try {
    const o = await get("api/v1/overview");
    document.getElementById("login").hidden = true;
    document.getElementById("main").hidden = false;
    selected = pick(o.jobs);
    fill(document.querySelector("#jobs tbody"), o.jobs.flatMap(jobRow));
    document.getElementById("no-jobs").hidden = o.jobs.length > 0;
    fill(document.querySelector("#workers tbody"), o.workers.map(workerRow));
    document.getElementById("no-workers").hidden = o.workers.length > 0;
    if (selected) drawDetail(await get("api/v1/jobs/" + encodeURIComponent(selected)));
    else document.getElementById("detail").hidden = true;
    setLive(true, "live · updated " + new Date(o.time).toLocaleTimeString());
  } catch (e) {
    if (e.auth) {
      document.getElementById("main").hidden = true;
      document.getElementById("login").hidden = false;
      document.getElementById("login-why").replaceChildren(e.message);
    }
    setLive(false, "not updating: " + e.message);
  }
}

async function loop() {
  await tick();
  setTimeout(loop, POLL_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("login").addEventListener("submit", ev => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById("token").value);
    document.getElementById("token").value = "";
    tick();
  });
  loop();
});
