// The live dashboard: polls /bulkheads twice a second and draws one card per compartment.
// Plain browser JavaScript, no build step. Rejections per second are computed here from the
// cumulative counter between two snapshots (server clock), and the last minute is kept per card.
"use strict";

(function () {
  const POLL_MS = 500;
  const HISTORY_MS = 60_000;
  const DENSE_FROM = 7; // this many compartments or more: compact cards

  const grid = document.getElementById("grid");
  const empty = document.getElementById("empty");
  const status = document.getElementById("status");
  const template = document.getElementById("card");
  const cards = new Map(); // name -> {el, last: {atMs, rejected}, history: [{atMs, rate}]}

  function fmtMs(ms) {
    if (ms === null || ms === undefined) return "–";
    if (ms < 1) return (ms * 1000).toFixed(0) + " µs";
    if (ms < 1000) return ms.toFixed(ms < 10 ? 1 : 0) + " ms";
    return (ms / 1000).toFixed(ms < 10_000 ? 2 : 1) + " s";
  }

  const LABELS = {
    HEALTHY: ["HEALTHY", "HEALTHY"],
    SATURATED: ["SATURATED", "SATURATED"],
    LIMIT_TOO_LOW: ["LIMIT TOO LOW", "LIMIT TOO LOW"],
    DEPENDENCY_DEGRADING: ["DEPENDENCY DEGRADING", "DEGRADING"],
  };

  function fmtRate(r) {
    return r >= 100 ? r.toFixed(0) + "/s" : r.toFixed(1) + "/s";
  }

  function fmtNeed(n) {
    if (n >= 10) return n.toFixed(0);
    if (n >= 1) return n.toFixed(1);
    return n >= 0.01 ? n.toFixed(2) : "< 0.01";
  }

  // The advisor's Little's-law arithmetic in one short line: "need 12 → limit 36 (now 10)", or why
  // there is none yet. The full summary is the tooltip.
  function adviceLine(a, limit) {
    if (!a) return ["–", "none"];
    if (a.recommendedLimit !== null && a.need !== null) {
      return ["need " + fmtNeed(a.need) + " → limit " + a.recommendedLimit + " (now " + limit + ")",
          a.recommendedLimit > limit ? "low" : "fits"];
    }
    if (a.spanMs === null) return ["measuring…", "none"];
    if (a.arrivalRate === 0) return ["no calls lately", "none"];
    return ["latency not known yet", "none"];
  }

  // What the compartment guards (a pool's connections): one cell per figure, in the server's order.
  function drawResource(row, r) {
    row.hidden = !r;
    if (!r) return;
    row.querySelector('[data-field="resourceKind"]').textContent = r.kind;
    row.title = r.summary;
    const figs = row.querySelector(".figs");
    const keys = Object.keys(r.figures);
    if (figs.dataset.keys !== keys.join(",")) {
      figs.replaceChildren(...keys.map((k) => {
        const cell = document.createElement("span");
        cell.className = "fig";
        cell.dataset.figure = k;
        const n = document.createElement("b");
        n.className = "n";
        const word = document.createElement("span");
        word.className = "k";
        word.textContent = k;
        cell.append(n, word);
        return cell;
      }));
      figs.dataset.keys = keys.join(",");
    }
    for (const k of keys) {
      figs.querySelector(`[data-figure="${k}"] .n`).textContent = String(r.figures[k]);
    }
  }

  function cardFor(name) {
    let c = cards.get(name);
    if (!c) {
      const el = template.content.firstElementChild.cloneNode(true);
      el.dataset.compartment = name;
      el.querySelector(".name").textContent = name;
      el.querySelector(".name").title = name;
      grid.appendChild(el);
      c = { el, last: null, history: [] };
      cards.set(name, c);
    }
    return c;
  }

  function setBar(bar, value, max) {
    const share = max === null ? 0 : max === 0 ? (value > 0 ? 1 : 0) : Math.min(1, value / max);
    bar.querySelector(".fill").style.width = (share * 100).toFixed(1) + "%";
    bar.dataset.full = String(max !== null && value >= max && max > 0);
  }

  function drawSpark(svg, history, nowMs) {
    const max = Math.max(1, ...history.map((p) => p.rate));
    const points = history.map((p) => {
      const x = 120 - ((nowMs - p.atMs) / HISTORY_MS) * 120;
      const y = 23 - (p.rate / max) * 21;
      return x.toFixed(1) + "," + y.toFixed(1);
    });
    svg.querySelector("polyline").setAttribute("points", points.join(" "));
    svg.dataset.max = String(max);
  }

  function update(c, b, nowMs) {
    const el = c.el;
    const d = b.diagnosis || { state: "HEALTHY", judged: false, explanation: "not sampled yet" };
    el.dataset.state = d.state;
    const badge = el.querySelector(".badge");
    const dense = grid.classList.contains("dense");
    const warmingUp = !d.judged && d.state === "HEALTHY";
    badge.textContent = warmingUp ? "WARMING UP" : (LABELS[d.state] || [d.state, d.state])[dense ? 1 : 0];
    badge.dataset.state = d.state;
    badge.dataset.judged = String(d.judged);
    badge.title = d.explanation;

    const bars = el.querySelectorAll(".bar");
    setBar(bars[0], b.inFlight, b.limit);
    setBar(bars[1], b.waiting, b.maxQueue);
    el.querySelector('[data-field="inFlight"]').textContent = b.inFlight + " / " + b.limit;
    el.querySelector('[data-field="waiting"]').textContent =
        b.waiting + " / " + (b.maxQueue === null ? "∞" : b.maxQueue);

    if (c.last && nowMs > c.last.atMs) {
      const rate = Math.max(0, b.rejected - c.last.rejected) / ((nowMs - c.last.atMs) / 1000);
      c.history.push({ atMs: nowMs, rate });
    }
    c.last = { atMs: nowMs, rejected: b.rejected };
    while (c.history.length && nowMs - c.history[0].atMs > HISTORY_MS) c.history.shift();
    const current = c.history.length ? c.history[c.history.length - 1].rate : 0;
    el.querySelector('[data-field="rejectionRate"]').textContent = fmtRate(current);
    drawSpark(el.querySelector(".spark"), c.history, nowMs);

    el.querySelector('[data-field="p99"]').textContent = fmtMs(b.latency.p99Ms);
    el.querySelector('[data-field="totals"]').textContent =
        b.admitted + " adm · " + b.rejected + " rej";
    drawResource(el.querySelector('[data-field="resource"]'), b.resource);
    const [text, verdict] = adviceLine(b.advice, b.limit);
    const advice = el.querySelector('[data-field="advice"]');
    advice.querySelector('[data-field="adviceText"]').textContent = text;
    advice.dataset.verdict = verdict;
    advice.title = b.advice ? b.advice.summary : "";
    const why = el.querySelector('[data-field="explanation"]');
    why.textContent = d.explanation;
    why.title = d.explanation;
  }

  function render(snapshot) {
    const nowMs = snapshot.uptimeMs;
    grid.classList.toggle("dense", snapshot.compartments.length >= DENSE_FROM);
    const seen = new Set();
    for (const b of snapshot.compartments) {
      seen.add(b.name);
      update(cardFor(b.name), b, nowMs);
    }
    for (const [name, c] of cards) {
      if (!seen.has(name)) {
        c.el.remove();
        cards.delete(name);
      }
    }
    empty.hidden = cards.size > 0;
    status.dataset.state = "live";
    status.textContent = "live · " + new Date().toLocaleTimeString();
  }

  async function poll() {
    try {
      const response = await fetch("/bulkheads", { cache: "no-store" });
      if (!response.ok) throw new Error("HTTP " + response.status);
      render(await response.json());
    } catch (e) {
      status.dataset.state = "error";
      status.textContent = "no data: " + e.message;
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }

  poll();
})();
