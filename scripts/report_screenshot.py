"""Open a report in headless Chromium: console messages, every figure's rendered size, the resources
it fetched, and a screenshot.

    python scripts/report_screenshot.py [SCENARIO] [--output docs/report.png]

writes the report of SCENARIO (default: the case study) and its screenshot, the one in docs/ and the
README. ``tests/test_report_browser.py`` calls ``inspect`` on the reports it renders.

Chromium and its driver are Debian's (packages chromium and chromium-driver, which ``.ci/run``
installs when missing), driven by selenium with the driver's path given, so nothing is downloaded.
The flags keep a sandboxed machine's Chromium off the network: with background networking on it
tries Google's hosts at every start.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--force-device-scale-factor=1")

# each figure's rendered box, and every resource the page fetched besides itself
_FIGURES_JS = """return Array.from(document.querySelectorAll('figure')).map(f => {
  const g = f.querySelector('svg, img');
  const r = (g || f).getBoundingClientRect();
  return {caption: (f.querySelector('figcaption') || {}).textContent || '', kind: g ? g.tagName.toLowerCase() : '',
          width: r.width, height: r.height};
});"""
_RESOURCES_JS = "return performance.getEntriesByType('resource').map(e => e.name);"
# the first screen's headline rows (where they are drawn) and every table header, as a reader sees them
_SCREEN_JS = """return {height: window.innerHeight,
  keys: Array.from(document.querySelectorAll('dd[data-key]')).map(e => {
    const r = e.getBoundingClientRect();
    return {key: e.dataset.key, text: e.innerText, top: r.top, bottom: r.bottom};
  }),
  headers: Array.from(document.querySelectorAll('th')).map(e => e.innerText)};"""


def binaries() -> tuple[str, str] | None:
    """(chromium, chromedriver) when both are installed, else None."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@dataclass(frozen=True)
class Inspection:
    console: list[dict]  # the browser log: level, message
    figures: list[dict]  # caption, kind (svg/img), width, height in CSS pixels
    resources: list[str]  # URLs the page fetched besides itself (a self-contained page has none)
    page_height: int
    png: bytes
    screen: dict  # height of the window, the first screen's rows (key, text, top, bottom), the table headers


def inspect(html: Path, *, width: int = 1280, height: int | None = 1000, full_page: bool = False) -> Inspection:
    """Load ``html`` from disk and read what a reader would see (the first ``height`` pixels, or the
    whole page with ``full_page``)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    found = binaries()
    if found is None:
        raise RuntimeError("chromium and chromedriver are not installed (apt-get install chromium chromium-driver)")
    browser, driver_path = found
    with tempfile.TemporaryDirectory(prefix="prfaas-chromium-") as profile:
        opts = webdriver.ChromeOptions()
        opts.binary_location = browser
        for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height or 1000}"):
            opts.add_argument(flag)
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
        try:
            driver.get(html.resolve().as_uri())
            # driver.get waits for the load event; a busy machine once gave a figure without its
            # caption, as if the rest of the page were not parsed yet: wait for it explicitly
            WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.readyState") == "complete")
            figures = driver.execute_script(_FIGURES_JS)
            resources = driver.execute_script(_RESOURCES_JS)
            screen = driver.execute_script(_SCREEN_JS)
            page_height = int(driver.execute_script("return document.documentElement.scrollHeight"))
            if full_page:
                driver.set_window_size(width, page_height)
            png = driver.get_screenshot_as_png()
            console = driver.get_log("browser")
        finally:
            driver.quit()
    return Inspection(console=console, figures=figures, resources=resources, page_height=page_height, png=png,
                      screen=screen)


def blank_fraction(png: bytes) -> float:
    """The share of pixels equal to the most common colour (1.0 for a blank page)."""
    import io

    import matplotlib.image
    import numpy as np

    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3].reshape(-1, 3)
    _, counts = np.unique(pixels, axis=0, return_counts=True)
    return float(counts.max() / counts.sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", nargs="?", default="paper-case-study")
    ap.add_argument("--output", type=Path, default=ROOT / "docs" / "report.png")
    ap.add_argument("--height", type=int, default=1400)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "report.html"
        # written from inside the folder, so that the page's reproduce line names no local path
        subprocess.run([sys.executable, "-m", "prfaas_plan", "report", args.scenario, "-o", html.name], check=True,
                       cwd=tmp)
        seen = inspect(html, height=args.height)
    errors = [m for m in seen.console if m.get("level") == "SEVERE"]
    if errors or seen.resources or any(f["width"] <= 0 or f["height"] <= 0 for f in seen.figures):
        print(f"refusing to write a screenshot: console errors {errors}, resources {seen.resources}, "
              f"figures {seen.figures}", file=sys.stderr)
        return 1
    args.output.write_bytes(seen.png)
    print(f"{args.output}: {len(seen.figures)} figures, page {seen.page_height} px high")
    return 0


if __name__ == "__main__":
    sys.exit(main())
