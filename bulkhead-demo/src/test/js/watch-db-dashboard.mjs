// Watches the live dashboard of `demo db --dashboard` in headless Chromium, the way a person would.
//
//   node watch-db-dashboard.mjs <dashboard url> <output dir>
//
// Opens the page, waits until a card shows a pool's connections, prints READY, then reads every card
// every 100 ms: its numbers, its pool figures (active, idle, total, awaiting), its Little's-law line.
// Once a line arrives on stdin (the command has finished both runs) it goes on reading until the page
// lists no compartment (the pools are closed), then stops. Screenshots, in the output directory:
//   dashboard-db-shared.png  the shared run at its height (most connections active, most queued)
//   dashboard-db-split.png   the split run at its height (reports' pool full and turning reports
//                            away while checkout shows its Little's-law line)
//   dashboard-db-end.png     the last reading
// Every reading goes to observations-db.json for the Java test to judge. Exits non-zero only if the
// browser or the page fails.
import { chromium } from "playwright-core";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

const [url, outDir] = process.argv.slice(2);
mkdirSync(outDir, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
let runsOver = false;
const stdin = createInterface({ input: process.stdin })
    .on("line", () => { runsOver = true; })
    .on("close", () => { runsOver = true; });

const count = (text) => parseInt(text, 10);

try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(url);
  await page.waitForSelector('[data-compartment] .resource:not([hidden]) .fig .n:not(:empty)',
      { timeout: 120_000 });
  console.log("READY");

  const readings = [];
  const best = { shared: -1, split: -1 };
  const started = Date.now();
  for (;;) {
    const cards = await page.$$eval("[data-compartment]", (els) => els.map((el) => {
      const field = (f) => el.querySelector(`[data-field="${f}"]`).textContent;
      const row = el.querySelector(".resource");
      return {
        name: el.dataset.compartment,
        inFlight: field("inFlight"),
        waiting: field("waiting"),
        totals: field("totals"),
        state: el.querySelector(".badge").dataset.state,
        advice: field("adviceText"),
        verdict: el.querySelector(".advice").dataset.verdict,
        resource: row.hidden ? null : Object.fromEntries([...row.querySelectorAll(".fig")].map(
            (f) => [f.dataset.figure, f.querySelector(".n").textContent])),
      };
    }));
    const atMs = Date.now() - started;
    readings.push({ atMs, cards });

    const byPool = (suffix) => cards.find((c) => c.name.endsWith("." + suffix) && c.resource);
    const shared = byPool("shared");
    const checkout = byPool("checkout");
    const reports = byPool("reports");
    if (shared) {
      const score = count(shared.resource.active) * 100_000 + count(shared.waiting);
      if (score > best.shared) {
        best.shared = score;
        await page.screenshot({ path: join(outDir, "dashboard-db-shared.png") });
      }
    }
    if (checkout && reports) {
      const rejected = count(reports.totals.split("·")[1]);
      const score = count(reports.resource.active) * 1_000_000
          + (checkout.verdict !== "none" ? 100_000 : 0) + rejected;
      if (score > best.split) {
        best.split = score;
        await page.screenshot({ path: join(outDir, "dashboard-db-split.png") });
      }
    }
    if ((runsOver && cards.length === 0) || atMs > 300_000) break;
    await page.waitForTimeout(100);
  }
  await page.screenshot({ path: join(outDir, "dashboard-db-end.png") });
  writeFileSync(join(outDir, "observations-db.json"), JSON.stringify({ url, readings }, null, 1));
  console.log(`DONE ${readings.length} readings`);
} finally {
  await browser.close();
  stdin.close(); // an open stdin would keep node running
  process.stdin.destroy();
}
