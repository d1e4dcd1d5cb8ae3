"""The page's figures in headless Chromium, for the benchmark harness (web.firstPaint,
web.liveUpdate): one JSON object per line on stdout.

    .build/venv/bin/python Tests/Browser/measure_page.py TOOL FIXTURE [--quick]

TOOL is a built `topregions`, FIXTURE the `gallery-fixture` beside it (it commits from
another process). A store synced from SampleData (63 regions), served on loopback.
"""

import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "HTTP"))
from support import Server, Workspace  # noqa: E402
from test_page import Service, browser_missing, webdriver  # noqa: E402

# Records when the regions list first holds 50 rows, and the time of every change after.
PROBE = """
window.__changes = [];
new MutationObserver(() => {
  const rows = document.querySelectorAll("[data-list='regions'] > li").length;
  if (rows >= 50 && window.__shown === undefined) window.__shown = performance.now();
}).observe(document, {subtree: true, childList: true});
document.addEventListener('listchange', () => window.__changes.push(performance.timeOrigin + performance.now()));
"""


# Resolves with the page's time when every grid image in the viewport has decoded (null after 10 s).
VISIBLE_THUMBNAILS_DECODED = """
const done = arguments[arguments.length - 1];
const started = performance.now();
function check() {
  const images = [...document.querySelectorAll('main img')].filter((image) => {
    const box = image.getBoundingClientRect();
    return box.bottom > 0 && box.top < innerHeight && box.width > 0;
  });
  if (images.length > 0 && images.every((image) => image.complete && image.naturalWidth > 0)) return done(performance.now());
  if (performance.now() - started > 10000) return done(null);
  requestAnimationFrame(check);
}
check();
"""


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def main():
    tool, fixture = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv
    missing = browser_missing()
    if missing:
        raise SystemExit(f"measure_page: {missing}: scripts/install-dependencies --bench && scripts/python-tools")
    os.environ["TOPREGIONS_BIN"] = tool
    workspace = Workspace(pages=12)
    server = Server(workspace)
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    try:
        base = f"http://127.0.0.1:{server.port}"
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
        paints, shown = [], []
        for _ in range(3 if quick else 11):
            driver.get("about:blank")
            driver.get(base + "/")
            deadline = time.monotonic() + 10
            while driver.execute_script("return window.__shown") is None and time.monotonic() < deadline:
                time.sleep(0.01)
            paint = driver.execute_script(
                "return performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null")
            paints.append(paint)
            shown.append(driver.execute_script("return window.__shown"))
        # A region's grid: the time until every thumbnail in view has decoded (a first visit
        # draws SampleData's pictures; later ones come from the caches, as for a user).
        region = json.loads(server.request("GET", "/api/regions?limit=1")[2])[0]["id"]
        decoded = []
        driver.set_script_timeout(15)
        for _ in range(3 if quick else 11):
            driver.get("about:blank")
            driver.get(f"{base}/regions/{region}")
            decoded.append(driver.execute_async_script(VISIBLE_THUMBNAILS_DECODED))
        print(json.dumps({"scenario": "web.firstPaint", "n": 50, "seconds": statistics.median(paints) / 1000,
                          "regionsShownSeconds": statistics.median(shown) / 1000,
                          "thumbnailsDecodedSeconds": statistics.median(decoded) / 1000 if all(decoded) else None,
                          "runs": len(paints)}))
        latencies = []
        for run in range(5 if quick else 30):
            before = len(driver.execute_script("return window.__changes"))
            # Another process moves a region: the 20th gains photographers enough to lead.
            subprocess.run([fixture, "sql", workspace.store, """
                UPDATE Region SET photographerCount = (SELECT max(photographerCount) + 1 FROM Region)
                WHERE id = (SELECT id FROM Region WHERE photoCount > 0 AND name <> ''
                            ORDER BY photographerCount DESC, name, placeID LIMIT 1 OFFSET 19)"""],
                           check=True, capture_output=True)
            committed = time.time() * 1000
            deadline = time.monotonic() + 10
            while len(driver.execute_script("return window.__changes")) <= before and time.monotonic() < deadline:
                time.sleep(0.002)
            changes = driver.execute_script("return window.__changes")
            if len(changes) <= before:
                raise SystemExit(f"measure_page: the page did not change after commit {run}")
            latencies.append(max(0.0, changes[before] - committed))
        ids = driver.execute_script("return [...document.querySelectorAll(\"[data-list='regions'] > li\")].map((li) => li.dataset.id)")
        if ids != [row["id"] for row in server.get_json("/api/regions")]:
            raise SystemExit("measure_page: the page's order is not the API's after the commits")
        print(json.dumps({"scenario": "web.liveUpdate", "n": len(latencies), "seconds": percentile(latencies, 0.99) / 1000,
                          "p50ms": statistics.median(latencies), "p99ms": percentile(latencies, 0.99), "maxms": max(latencies)}))
    finally:
        driver.quit()
        server.stop()
        workspace.close()


if __name__ == "__main__":
    main()
