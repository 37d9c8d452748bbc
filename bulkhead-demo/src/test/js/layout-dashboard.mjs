// Measures whether the dashboard is readable at a given window size, in headless Chromium.
//
//   node layout-dashboard.mjs <dashboard url> <screenshot.png> <width> <height> <cards expected>
//       [<cards with sizing advice expected> [<cards with a resource expected>]]
//
// Waits until the expected number of cards show their numbers (and, if asked, until that many show
// a Little's-law recommendation and that many a resource such as a pool's connections), saves a
// screenshot of the window, and prints one JSON line: how many cards, whether the compact layout is
// on, which cards are cut off by the window, which texts do not fit their box (a name, a number, a
// pool figure or the advice line clipped by an ellipsis), and what each card shows.
import { chromium } from "playwright-core";

const [url, png, width, height, expected, advised = "0", resources = "0"] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
try {
  const page = await browser.newPage({ viewport: { width: +width, height: +height } });
  await page.goto(url);
  await page.waitForFunction((n) => {
    const cards = document.querySelectorAll('[data-compartment] [data-field="inFlight"]');
    return cards.length === n && [...cards].every((c) => c.textContent.length > 0);
  }, +expected, { timeout: 30_000 });
  await page.waitForFunction(([a, r]) =>
    document.querySelectorAll('[data-compartment] .advice:not([data-verdict="none"])').length >= a
        && document.querySelectorAll('[data-compartment] .resource:not([hidden])').length >= r,
  [+advised, +resources], { timeout: 30_000 });
  await page.waitForTimeout(1200); // two more polls: rates and sparklines have something to show
  await page.screenshot({ path: png });
  const layout = await page.evaluate(() => {
    const clipped = (el) => el.scrollWidth > el.clientWidth + 1;
    const cards = [...document.querySelectorAll("[data-compartment]")];
    return {
      cards: cards.length,
      dense: document.getElementById("grid").classList.contains("dense"),
      narrowestCard: Math.min(...cards.map((c) => c.getBoundingClientRect().width)),
      outsideWindow: cards.filter((c) => c.getBoundingClientRect().right > window.innerWidth
          || c.getBoundingClientRect().bottom > window.innerHeight).map((c) => c.dataset.compartment),
      clippedTexts: cards.flatMap((c) => [...c.querySelectorAll(
          ".name, .value, .badge, .advice, .resource:not([hidden]) .fig .n, .resource:not([hidden]) .fig .k")]
          .filter(clipped).map((el) => c.dataset.compartment + ": " + el.textContent)),
      names: cards.map((c) => c.querySelector(".name").textContent),
      inFlight: cards.map((c) => c.querySelector('[data-field="inFlight"]').textContent),
      advice: cards.map((c) => c.querySelector('[data-field="adviceText"]').textContent),
      adviceVisible: cards.map((c) => {
        const r = c.querySelector(".advice").getBoundingClientRect();
        return r.height > 0 && r.width > 0;
      }),
      resources: cards.map((c) => {
        const row = c.querySelector(".resource");
        if (row.hidden) return null;
        return {
          kind: row.querySelector('[data-field="resourceKind"]').textContent,
          figures: Object.fromEntries([...row.querySelectorAll(".fig")].map(
              (f) => [f.dataset.figure, f.querySelector(".n").textContent])),
        };
      }),
    };
  });
  console.log(JSON.stringify(layout));
} finally {
  await browser.close();
}
