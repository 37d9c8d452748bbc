// Watches the live dashboard in headless Chromium while the experiment runs, the way a person would.
//
//   node watch-dashboard.mjs <dashboard url> <output dir> <compartment,compartment,...>
//
// Opens the page, waits until every named compartment has a card, prints READY, then reads the cards
// every 100 ms. Once a line arrives on stdin (the load is over) it goes on reading until every card
// is idle (nothing in flight or waiting) and its advice has caught up (the advice comes from the
// app's once-a-second sample, so the first idle reading may still show the advice of a sample taken
// before the last calls finished), then stops. Screenshots, in the output directory:
//   dashboard-peak.png       the reading with the most load so far (in flight plus waiting, all cards)
//   dashboard-saturated.png  the first reading where a diagnosis badge is not HEALTHY
//   dashboard-end.png        the last reading
// Every reading goes to observations.json for the Java test to judge. Exits non-zero only if the
// browser or the page fails.
import { chromium } from "playwright-core";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

const [url, outDir, names] = process.argv.slice(2);
const expected = names.split(",");
mkdirSync(outDir, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
let loadOver = false;
const stdin = createInterface({ input: process.stdin })
    .on("line", () => { loadOver = true; })
    .on("close", () => { loadOver = true; });

try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(url);
  for (const name of expected) {
    await page.waitForSelector(`[data-compartment="${name}"] [data-field="inFlight"]:not(:empty)`,
        { timeout: 30_000 });
  }
  console.log("READY");

  const readings = [];
  let peakLoad = -1;
  let peakAt = null;
  let notHealthyAt = null;
  const started = Date.now();
  const idle = (cards) => cards.every((c) => c.inFlight.startsWith("0 /") && c.waiting.startsWith("0 /"));
  const settled = (cards) => cards.every((c) => c.advice !== "measuring…"
      && c.advice !== "latency not known yet");
  for (;;) {
    const cards = await page.$$eval("[data-compartment]", (els) => els.map((el) => {
      const field = (f) => el.querySelector(`[data-field="${f}"]`).textContent;
      return {
        name: el.dataset.compartment,
        inFlight: field("inFlight"),
        waiting: field("waiting"),
        rejectionRate: field("rejectionRate"),
        p99: field("p99"),
        totals: field("totals"),
        state: el.querySelector(".badge").dataset.state,
        badge: el.querySelector(".badge").textContent,
        explanation: field("explanation"),
        advice: field("adviceText"),
      };
    }));
    const atMs = Date.now() - started;
    readings.push({ atMs, cards });
    const load = cards.reduce((sum, c) => sum + parseInt(c.inFlight, 10) + parseInt(c.waiting, 10), 0);
    if (load > peakLoad) {
      peakLoad = load;
      peakAt = atMs;
      await page.screenshot({ path: join(outDir, "dashboard-peak.png") });
    }
    if (notHealthyAt === null && cards.some((c) => c.state && c.state !== "HEALTHY")) {
      notHealthyAt = atMs;
      await page.screenshot({ path: join(outDir, "dashboard-saturated.png") });
    }
    if ((loadOver && idle(cards) && settled(cards)) || atMs > 300_000) break;
    await page.waitForTimeout(100);
  }
  await page.screenshot({ path: join(outDir, "dashboard-end.png") });
  writeFileSync(join(outDir, "observations.json"),
      JSON.stringify({ url, expected, peakLoad, peakAtMs: peakAt, notHealthyAtMs: notHealthyAt,
        readings }, null, 1));
  console.log(`DONE ${readings.length} readings, peak load ${peakLoad} at ${peakAt} ms`);
} finally {
  await browser.close();
  stdin.close(); // an open stdin would keep node running
  process.stdin.destroy();
}
