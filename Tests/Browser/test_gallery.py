"""The gallery's page in headless Chromium, at a desktop's width (1280 px) and a phone's
(390 px, 3 device pixels per CSS pixel, touch): image sizes, the photo viewer (fit, zoom,
pan, previous and next, full screen, back to the list where it was), search, paging as one
scrolls, credit, Recents and Favorites, not found and who is signed in.

    TOPREGIONS_BIN=.build/debug/topregions .build/venv/bin/python -m unittest discover -s Tests/Browser

Screenshots of each state go to .build/test-artifacts/ (NAME-1280.png, NAME-390.png). A
test that needs an endpoint the server does not have (404) is skipped, saying which.
"""

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "HTTP"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from support import ROOT, Server, Workspace  # noqa: E402
from test_page import ARTIFACTS, ENABLE, browser_missing, webdriver  # noqa: E402

if webdriver is not None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

WIDTHS = (1280, 390)
FLICKR_PEOPLE = re.compile(r"^https://www\.flickr\.com/photos/[^/]+/$")


def with_sample_image():
    """Ids of the photos SampleData has an image of."""
    return {name.split("_")[0] for name in os.listdir(os.path.join(ROOT, "SampleData", "images")) if name.endswith("_b.jpg")}


@unittest.skipIf(browser_missing() and not os.environ.get("TOPREGIONS_REQUIRE_BROWSER"), f"{browser_missing()}: {ENABLE}")
class GalleryTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = browser_missing()
        if missing:
            raise AssertionError(f"{missing}; CI never skips the browser tests: {ENABLE}")
        cls.workspace = Workspace(pages=20)
        cls.addClassCleanup(cls.workspace.close)
        cls.token = cls.workspace.add_user("viewer")
        cls.server = Server(cls.workspace)
        cls.addClassCleanup(cls.server.stop)
        cls.base = f"http://127.0.0.1:{cls.server.port}"
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--disable-gpu",
                         "--hide-scrollbars"):
            options.add_argument(argument)
        cls.driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
        cls.addClassCleanup(cls.driver.quit)
        os.makedirs(ARTIFACTS, exist_ok=True)

    def setUp(self):
        self.desktop()

    # MARK: Helpers

    def desktop(self):
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": False})
        self.driver.set_window_size(1280, 900)
        self.width = 1280

    def phone(self):
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": 390, "height": 844, "deviceScaleFactor": 3, "mobile": True})
        self.driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        self.width = 390

    @contextlib.contextmanager
    def at(self, width):
        self.phone() if width == 390 else self.desktop()
        try:
            yield
        finally:
            self.desktop()

    def open(self, path):
        self.driver.get(self.base + path)
        self.wait(lambda driver: driver.execute_script("return document.readyState") == "complete")

    def wait(self, condition, timeout=15, message=""):
        return WebDriverWait(self.driver, timeout, poll_frequency=0.05,
                             ignored_exceptions=(StaleElementReferenceException,)).until(condition, message)

    def js(self, script, *arguments):
        return self.driver.execute_script(script, *arguments)

    def ids(self, list_name):
        return self.js("return [...document.querySelectorAll(`[data-list='${arguments[0]}'] > li`)].map((li) => li.dataset.id)", list_name)

    def api(self, path, token=None):
        return self.server.get_json(path, token=token)

    def status(self, path, token=None):
        return self.server.request("GET", path, token=token)[0]

    def screenshot(self, name):
        time.sleep(0.3)
        self.driver.save_screenshot(os.path.join(ARTIFACTS, f"{name}-{self.width}.png"))

    def sign_in(self):
        self.open("/")
        self.js("localStorage.setItem('topregions.token', arguments[0])", self.token)

    def sign_out(self):
        self.open("/")
        self.js("localStorage.removeItem('topregions.token')")

    def scroller(self, pane):
        """The element that scrolls a pane: the pane on a wide screen, the document on a phone."""
        return f"document.getElementById('{pane}')" if self.width > 700 else "document.scrollingElement"

    def viewer_state(self):
        return self.js("""
            const viewer = document.getElementById('viewer');
            return {open: viewer.open, fitted: viewer.dataset.fitted, zoom: Number(viewer.dataset.zoom || 0),
                    title: document.getElementById('viewer-title')?.textContent, count: document.getElementById('viewer-count').textContent,
                    stage: document.getElementById('viewer-stage').dataset.state,
                    transform: document.querySelector('#viewer-stage img.large')?.style.transform ?? null}""")

    def region_with_an_image(self):
        """(region id, its photos in order, the index of a photo with an image and neighbours)."""
        images = with_sample_image()
        best = None
        for region in self.api("/api/regions?limit=1000"):
            photos = self.api(f"/api/regions/{region['id']}/photos?limit=1000")
            for index, photo in enumerate(photos):
                if photo["id"] in images and 0 < index < len(photos) - 2:
                    candidate = (region["id"], photos, index)
                    if best is None or len(photos) > len(best[1]):
                        best = candidate
        if best is None:
            self.skipTest("no synced photo with a SampleData image has neighbours")
        return best

    # MARK: Grids

    def test_a_a_region_grid_loads_images_that_fit_and_all_decode(self):
        region = self.api("/api/regions?limit=1")[0]
        photos = self.api(f"/api/regions/{region['id']}/photos?limit=1000")
        sized = self.status("/api/photos/0/image?size=q") != 400
        undecoded = {}
        for width in WIDTHS:
            with self.at(width):
                self.open(f"/regions/{region['id']}")
                self.wait(lambda driver: len(self.ids("photos")) == len(photos), message="the region's photos show")
                self.assertEqual(self.ids("photos"), [photo["id"] for photo in photos])
                # Scroll through the grid so that every lazy image loads.
                scroller = self.scroller("detail-pane")
                for _ in range(40):
                    done = self.js(f"const s = {scroller}; s.scrollTop += s.clientHeight * 0.8; return s.scrollTop + s.clientHeight >= s.scrollHeight - 2")
                    time.sleep(0.1)
                    if done:
                        break
                self.wait(lambda driver: self.js("""return [...document.querySelectorAll("[data-list='photos'] .frame")]
                    .every((frame) => frame.dataset.missing || frame.querySelector('img').complete)"""), message="every image loaded or failed")
                time.sleep(0.3)
                tiles = self.js("""return [...document.querySelectorAll("[data-list='photos'] > li")].map((li) => {
                    const image = li.querySelector('.frame img'), frame = li.querySelector('.frame').getBoundingClientRect();
                    return {id: li.dataset.id, missing: Boolean(li.querySelector('.image-missing')), natural: image ? image.naturalWidth : 0,
                            source: image ? image.currentSrc : null, width: frame.width, height: frame.height,
                            label: li.querySelector('.image-missing')?.getAttribute('aria-label') ?? null,
                            text: li.querySelector('.image-missing')?.textContent ?? null}})""")
                self.js(f"{scroller}.scrollTop = 0")
                self.screenshot("region-grid")
                for tile in tiles:
                    # Every tile has the same shape, image or not: nothing moves as images arrive.
                    self.assertAlmostEqual(tile["width"] / tile["height"], 4 / 3, delta=0.02)
                    if tile["source"]:
                        self.assertNotRegex(tile["source"], r"size=[cb]\b", "a grid never loads an 800 or 1024 px image")
                        if sized:
                            self.assertRegex(tile["source"], r"/image\?size=[qnz]$")
                        else:
                            self.assertTrue(tile["source"].endswith("/thumbnail"), tile["source"])
                    if tile["missing"]:
                        # A designed placeholder with the title, never a broken image or alt text.
                        title = next(photo["title"] for photo in photos if photo["id"] == tile["id"])
                        self.assertEqual(tile["label"], f"No image: {title}")
                        self.assertEqual(tile["text"], title)
                # No layout shift worth the name while the grid and its images loaded.
                shift = self.js("""return new Promise((resolve) => {
                    new PerformanceObserver((list, observer) => {
                        observer.disconnect();
                        resolve(list.getEntries().filter((entry) => !entry.hadRecentInput).reduce((sum, entry) => sum + entry.value, 0));
                    }).observe({type: 'layout-shift', buffered: true});
                    setTimeout(() => resolve(0), 500);
                })""")
                self.assertLess(shift, 0.05, "cumulative layout shift")
                missing = [tile["id"] for tile in tiles if tile["natural"] == 0]
                if missing:
                    undecoded[width] = f"{len(missing)} of {len(tiles)}"
        self.assertEqual(undecoded, {}, "thumbnails that do not decode, by width: the server has no image for them (404 no_image) "
                         "until the backend synthesises images for SampleData")

    # MARK: The viewer

    def test_b_the_viewer_fits_zooms_pans_goes_through_the_list_and_back(self):
        region, photos, index = self.region_with_an_image()
        photo, after, before = photos[index], photos[index + 1], photos[index - 1]
        for width in WIDTHS:
            with self.at(width):
                self.open(f"/regions/{region}")
                self.wait(lambda driver: photo["id"] in self.ids("photos"))
                tile = self.driver.find_element(By.CSS_SELECTOR, f"[data-list='photos'] > li[data-id='{photo['id']}'] a")
                scroller = self.scroller("detail-pane")
                self.js("arguments[0].scrollIntoView({block: 'center'})", tile)
                time.sleep(0.2)
                scrolled = self.js(f"return {scroller}.scrollTop")
                tile.click()
                self.wait(lambda driver: driver.current_url.endswith(f"/photos/{photo['id']}"))
                self.wait(lambda driver: self.viewer_state()["stage"] == "shown", message="the photo shows")
                state = self.viewer_state()
                self.assertEqual((state["open"], state["fitted"], state["title"]), (True, "true", photo["title"]))
                self.assertTrue(state["count"].startswith(f"{index + 1} of "), state["count"])
                # Fitted: the whole photo, as large as the space allows.
                stage, image = self.js("""return [document.getElementById('viewer-stage').getBoundingClientRect().toJSON(),
                                                  document.querySelector('#viewer-stage img.large').getBoundingClientRect().toJSON()]""")
                self.assertTrue(abs(image["width"] - stage["width"]) < 2 or abs(image["height"] - stage["height"]) < 2, (stage, image))
                self.assertGreaterEqual(image["left"], stage["left"] - 1)
                self.assertLessEqual(image["right"], stage["right"] + 1)
                self.assertGreaterEqual(image["top"], stage["top"] - 1)
                self.assertLessEqual(image["bottom"], stage["bottom"] + 1)
                # Nothing opens under the header: the viewer covers the whole screen.
                self.assertEqual(self.js("return document.getElementById('viewer').getBoundingClientRect().top"), 0)
                self.assertTrue(self.js("return document.getElementById('viewer').contains(document.elementFromPoint(innerWidth / 2, 4))"))
                # The neighbours' images are loading already.
                loaded = self.js("return performance.getEntriesByType('resource').map((entry) => new URL(entry.name).pathname)")
                self.assertIn(f"/api/photos/{after['id']}/image", loaded)
                self.assertIn(f"/api/photos/{before['id']}/image", loaded)
                self.screenshot("viewer-fit")
                stage_element = self.driver.find_element(By.ID, "viewer-stage")
                fit = state["zoom"]
                # Keys: + zooms in, - out, 0 back to fit.
                ActionChains(self.driver).send_keys("+").perform()
                self.wait(lambda driver: self.viewer_state()["zoom"] > fit * 1.2)
                ActionChains(self.driver).send_keys("-").perform()
                self.wait(lambda driver: self.viewer_state()["zoom"] < fit * 1.01)
                ActionChains(self.driver).send_keys("+").send_keys("+").perform()
                self.wait(lambda driver: self.viewer_state()["zoom"] > fit * 1.5)
                ActionChains(self.driver).send_keys("0").perform()
                self.wait(lambda driver: self.viewer_state()["fitted"] == "true")
                # The wheel zooms about the pointer.
                ActionChains(self.driver).scroll_from_origin(ScrollOrigin.from_element(stage_element), 0, -400).perform()
                self.wait(lambda driver: self.viewer_state()["zoom"] > fit * 1.1, message="the wheel zooms in")
                # Dragging pans the zoomed photo.
                moved_from = self.viewer_state()["transform"]
                ActionChains(self.driver).move_to_element(stage_element).click_and_hold().move_by_offset(-60, -40).release().perform()
                self.wait(lambda driver: self.viewer_state()["transform"] != moved_from, message="a drag pans")
                self.screenshot("viewer-zoomed")
                # Double-click: back to fit, and again: 100 %.
                ActionChains(self.driver).double_click(stage_element).perform()
                self.wait(lambda driver: self.viewer_state()["fitted"] == "true")
                ActionChains(self.driver).double_click(stage_element).perform()
                self.wait(lambda driver: self.viewer_state()["fitted"] == "false")
                ActionChains(self.driver).send_keys("0").perform()
                # Next and previous: keys and buttons, through the region's list, in its order.
                ActionChains(self.driver).send_keys(Keys.ARROW_RIGHT).perform()
                self.wait(lambda driver: driver.current_url.endswith(f"/photos/{after['id']}"))
                self.wait(lambda driver: self.viewer_state()["title"] == after["title"])
                self.assertTrue(self.viewer_state()["count"].startswith(f"{index + 2} of "))
                ActionChains(self.driver).send_keys(Keys.ARROW_LEFT).perform()
                self.wait(lambda driver: driver.current_url.endswith(f"/photos/{photo['id']}"))
                self.driver.find_element(By.ID, "viewer-prev").click()
                self.wait(lambda driver: driver.current_url.endswith(f"/photos/{before['id']}"))
                self.driver.find_element(By.ID, "viewer-next").click()
                self.wait(lambda driver: driver.current_url.endswith(f"/photos/{photo['id']}"))
                if width == 390:
                    # A swipe to the left: the next photo.
                    self.wait(lambda driver: self.viewer_state()["stage"] == "shown")
                    box = self.js("return document.getElementById('viewer-stage').getBoundingClientRect().toJSON()")
                    y = int(box["top"] + box["height"] / 2)
                    finger = ActionBuilder(self.driver, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"))
                    finger.pointer_action.move_to_location(300, y).pointer_down().move_to_location(220, y).move_to_location(90, y).pointer_up()
                    finger.perform()
                    self.wait(lambda driver: driver.current_url.endswith(f"/photos/{after['id']}"), message="a swipe goes to the next photo")
                    self.driver.find_element(By.ID, "viewer-prev").click()
                    self.wait(lambda driver: driver.current_url.endswith(f"/photos/{photo['id']}"))
                # Full screen, and back.
                if self.js("return document.fullscreenEnabled"):
                    self.driver.find_element(By.ID, "fullscreen").click()
                    self.wait(lambda driver: self.js("return document.getElementById('viewer').contains(document.fullscreenElement)"), message="full screen")
                    self.driver.find_element(By.ID, "fullscreen").click()
                    self.wait(lambda driver: self.js("return document.fullscreenElement") is None)
                # Escape: back to the list, where it was scrolled, focus on the photo.
                ActionChains(self.driver).send_keys(Keys.ESCAPE).perform()
                self.wait(lambda driver: driver.current_url.endswith(f"/regions/{region}"))
                self.assertFalse(self.viewer_state()["open"])
                self.assertEqual(self.js(f"return {scroller}.scrollTop"), scrolled, "the list kept its scroll position")
                self.assertEqual(self.js("return document.activeElement.closest('li')?.dataset.id"), photo["id"])
                # The browser's back button, and the viewer's own.
                self.driver.find_element(By.CSS_SELECTOR, f"[data-list='photos'] > li[data-id='{photo['id']}'] a").click()
                self.wait(lambda driver: self.viewer_state()["open"])
                self.driver.back()
                self.wait(lambda driver: driver.current_url.endswith(f"/regions/{region}") and not self.viewer_state()["open"])
                self.assertEqual(self.js(f"return {scroller}.scrollTop"), scrolled)
                self.driver.find_element(By.CSS_SELECTOR, f"[data-list='photos'] > li[data-id='{photo['id']}'] a").click()
                self.wait(lambda driver: self.viewer_state()["open"])
                back = self.driver.find_element(By.ID, "viewer-back")
                self.assertTrue(back.is_displayed())
                back.click()
                self.wait(lambda driver: driver.current_url.endswith(f"/regions/{region}") and not self.viewer_state()["open"])
                self.assertEqual(self.js(f"return {scroller}.scrollTop"), scrolled)

    def test_c_a_deep_link_to_a_photo_opens_it_over_its_region(self):
        region, photos, index = self.region_with_an_image()
        for width in WIDTHS:
            with self.at(width):
                self.open(f"/photos/{photos[index]['id']}")
                self.wait(lambda driver: self.viewer_state()["title"] == photos[index]["title"])
                self.wait(lambda driver: self.viewer_state()["count"].startswith(f"{index + 1} of "), message="the region under it")
                ActionChains(self.driver).send_keys(Keys.ARROW_RIGHT).perform()
                self.wait(lambda driver: driver.current_url.endswith(f"/photos/{photos[index + 1]['id']}"))
                self.driver.find_element(By.ID, "viewer-back").click()
                self.wait(lambda driver: driver.current_url.endswith(f"/regions/{region}"))

    # MARK: Credit

    def test_d_credit_links_the_photographer_the_licence_and_the_photo_on_flickr(self):
        region, photos, index = self.region_with_an_image()
        detail = self.api(f"/api/photos/{photos[index]['id']}")
        if "pageURL" not in detail:
            self.skipTest("this server's photos have no credit fields (pageURL, photographerURL, license)")
        for width in WIDTHS:
            with self.at(width):
                self.open(f"/photos/{detail['id']}")
                self.wait(lambda driver: driver.find_elements(By.CSS_SELECTOR, "#viewer-info [data-credit='license']"))
                links = self.js("""return Object.fromEntries([...document.querySelectorAll('#viewer-info [data-credit]')].map((node) =>
                    [node.dataset.credit, {tag: node.tagName, href: node.getAttribute('href'), target: node.getAttribute('target'),
                                           rel: node.getAttribute('rel'), text: node.textContent}]))""")
                for name in ("photographer", "page"):
                    self.assertEqual(links[name]["target"], "_blank")
                    self.assertIn("noopener", links[name]["rel"].split())
                    self.assertIn("noreferrer", links[name]["rel"].split())
                self.assertEqual(links["photographer"]["href"], detail["photographerURL"])
                self.assertRegex(links["photographer"]["href"], FLICKR_PEOPLE)
                self.assertEqual(links["photographer"]["text"], detail["photographer"])
                self.assertEqual(links["page"]["href"], detail["pageURL"])
                self.assertRegex(links["page"]["href"], rf"^https://www\.flickr\.com/photos/[^/]+/{detail['id']}/$")
                licence = detail["license"]
                if licence["id"] is None:
                    self.assertEqual(links["license"]["text"], "Licence unknown")
                else:
                    self.assertEqual(links["license"]["text"], licence["name"])
                    if licence["url"]:
                        self.assertEqual((links["license"]["tag"], links["license"]["href"]), ("A", licence["url"]))
                        self.assertIn("noopener", links["license"]["rel"].split())
                self.screenshot("viewer-credit")

    # MARK: Search

    def test_e_search_as_one_types_finds_accented_titles_without_accents(self):
        if self.status("/api/search?q=cafe") == 404:
            self.skipTest("this server has no /api/search (404)")
        answer = self.api("/api/search?q=angstrom&limit=40")
        titles = [photo["title"] for photo in answer["photos"]]
        self.assertTrue(any("Ångström" in title for title in titles), f"the API finds the accented title: {titles}")
        for width in WIDTHS:
            with self.at(width):
                self.open("/")
                field = self.driver.find_element(By.ID, "search")
                for letter in "angstrom":
                    field.send_keys(letter)
                self.wait(lambda driver: driver.current_url.endswith("/search?q=angstrom"))
                self.wait(lambda driver: self.ids("search-photos")[:len(titles)] == [photo["id"] for photo in answer["photos"]],
                          message="the results are the API's, in its order")
                shown = self.js("return [...document.querySelectorAll(\"[data-list='search-photos'] .title\")].map((node) => node.textContent)")
                self.assertTrue(any("Ångström" in title for title in shown))
                self.screenshot("search")
                # A result opens the viewer; → goes to the next result.
                self.driver.find_element(By.CSS_SELECTOR, "[data-list='search-photos'] > li a").click()
                self.wait(lambda driver: self.viewer_state()["title"] == answer["photos"][0]["title"])
                ActionChains(self.driver).send_keys(Keys.ARROW_RIGHT).perform()
                self.wait(lambda driver: driver.current_url.endswith(f"/photos/{answer['photos'][1]['id']}"))
                ActionChains(self.driver).send_keys(Keys.ESCAPE).perform()
                self.wait(lambda driver: driver.current_url.endswith("/search?q=angstrom"))
        # A deep link, and a region hit.
        quebec = self.api("/api/search?q=quebec")
        self.open("/search?q=quebec")
        self.wait(lambda driver: self.ids("search-regions") == [region["id"] for region in quebec["regions"]])
        if quebec["regions"]:
            self.driver.find_element(By.CSS_SELECTOR, "[data-list='search-regions'] a").click()
            self.wait(lambda driver: driver.current_url.endswith(f"/regions/{quebec['regions'][0]['id']}"))

    # MARK: Paging

    def test_f_scrolling_loads_the_next_page(self):
        status, headers, _ = self.server.request("GET", "/api/regions?limit=50")
        if "link" not in headers:
            self.skipTest("this server does not page /api/regions (no Link header)")
        regions = [region["id"] for region in self.api("/api/regions?limit=1000")]
        self.assertGreater(len(regions), 50)
        for width in WIDTHS:
            with self.at(width):
                self.open("/")
                self.wait(lambda driver: self.ids("regions") == regions[:50], message="the top 50 first")
                self.screenshot("top-regions")
                scroller = self.scroller("list-pane")
                self.js(f"{scroller}.scrollTop = {scroller}.scrollHeight")
                self.wait(lambda driver: self.ids("regions") == regions, message="the next page, past 50")
                self.js(f"{scroller}.scrollTop = {scroller}.scrollHeight")
                self.screenshot("top-regions-paged")
        self.assertIn("path=\"/api/regions?limit=50&after=", self.server.log_text())
        self.assertIn("path=\"/api/regions/changes?limit=100\"", self.server.log_text(), "the live list covers what is loaded")
        # A region's photos, eight at a time.
        region = self.api("/api/regions?limit=1")[0]["id"]
        photos = [photo["id"] for photo in self.api(f"/api/regions/{region}/photos?limit=1000")]
        script = self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": "window.topRegionsPageSizes = {photos: 8}"})
        try:
            self.open(f"/regions/{region}")
            self.wait(lambda driver: len(self.ids("photos")) >= 8)
            first = self.ids("photos")
            self.assertEqual(first, photos[:len(first)])
            for _ in range(20):
                self.js("const pane = document.getElementById('detail-pane'); pane.scrollTop = pane.scrollHeight")
                time.sleep(0.2)
                if len(self.ids("photos")) == len(photos):
                    break
            self.assertEqual(self.ids("photos"), photos)
            self.assertIn(f"path=\"/api/regions/{region}/photos?limit=8&after=", self.server.log_text())
        finally:
            self.driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})

    # MARK: Recents and Favorites

    def test_g_recents_and_favorites_show_thumbnails_positions_and_open_the_viewer(self):
        region, photos, index = self.region_with_an_image()
        viewed = [photos[index - 1]["id"], photos[index]["id"], photos[index + 1]["id"]]
        for photo in viewed:
            self.server.request("POST", f"/api/photos/{photo}/view", token=self.token)
        for photo in viewed:
            self.server.request("DELETE", "/api/favorites", body={"id": photo}, token=self.token)
            self.server.request("POST", "/api/favorites", body={"id": photo}, token=self.token)
        recents = [row["id"] for row in self.api("/api/recents", token=self.token)]
        favorites = [row["id"] for row in self.api("/api/favorites", token=self.token)]
        self.sign_in()
        for width in WIDTHS:
            with self.at(width):
                for name, ids in (("recents", recents), ("favorites", favorites)):
                    self.open(f"/{name}")
                    self.wait(lambda driver: self.ids(name) == ids)
                    rows = self.js(f"""return [...document.querySelectorAll("[data-list='{name}'] > li")].map((li) => ({{
                        position: getComputedStyle(li, '::before').content, frame: Boolean(li.querySelector('.frame img, .frame .image-missing')),
                        width: li.querySelector('.frame').getBoundingClientRect().width}}))""")
                    self.assertEqual([row["position"] for row in rows], [f'"{number}"' for number in range(1, len(ids) + 1)])
                    self.assertTrue(all(row["frame"] and row["width"] >= 60 for row in rows), rows)
                    self.screenshot(f"{name}-list")
                    self.driver.find_elements(By.CSS_SELECTOR, f"[data-list='{name}'] > li a")[1].click()
                    self.wait(lambda driver: self.viewer_state()["count"] == f"2 of {len(ids)}")
                    ActionChains(self.driver).send_keys(Keys.ARROW_RIGHT).perform()
                    self.wait(lambda driver: driver.current_url.endswith(f"/photos/{ids[2]}"), message=f"→ goes through {name} as it was")
                    ActionChains(self.driver).send_keys(Keys.ESCAPE).perform()
                    self.wait(lambda driver: driver.current_url.endswith(f"/{name}"))
        self.sign_out()

    # MARK: The rest

    def test_h_not_found_who_is_signed_in_and_places(self):
        for width in WIDTHS:
            with self.at(width):
                if self.server.request("GET", "/nosuchpage")[1].get("content-type", "").startswith("text/html"):
                    self.open("/nosuchpage")
                    self.wait(lambda driver: driver.find_element(By.ID, "detail-heading").text == "Page not found")
                    self.screenshot("not-found")
                self.open("/regions/nosuchregion")
                self.wait(lambda driver: driver.find_element(By.ID, "detail-heading").text == "No region with id “nosuchregion”")
                self.assertNotIn("This list is gone", self.driver.find_element(By.TAG_NAME, "body").text)
                link = self.driver.find_element(By.CSS_SELECTOR, ".not-found a.button")
                self.screenshot("no-region")
                link.click()
                self.wait(lambda driver: driver.current_url == self.base + "/")
                self.open("/photos/1")
                self.wait(lambda driver: driver.find_element(By.ID, "detail-heading").text == "No photo with id “1”")
                self.assertFalse(self.viewer_state()["open"])
        # Who is signed in; signing out forgets the token.
        self.sign_in()
        self.open("/")
        signed = self.wait(lambda driver: driver.find_element(By.ID, "signed-in"))
        if self.status("/api/me", token=self.token) == 404:
            self.wait(lambda driver: "Signed in" in signed.text)
        else:
            self.wait(lambda driver: "Signed in as viewer" in driver.find_element(By.ID, "signed-in").get_attribute("textContent"))
        self.screenshot("signed-in")
        self.driver.find_element(By.ID, "sign-out").click()
        self.wait(lambda driver: driver.find_element(By.ID, "sign-in-button").is_displayed())
        self.assertIsNone(self.js("return localStorage.getItem('topregions.token')"))
        # A place names each name once ("Giza, Egypt", never "Giza, Egypt, Egypt").
        regions = self.api("/api/regions?limit=1000")
        doubled = next((region for region in regions if region["country"] and region["name"].endswith(f", {region['country']}")), None)
        if doubled:
            photo = self.api(f"/api/regions/{doubled['id']}/photos?limit=1")[0]
            self.open(f"/photos/{photo['id']}")
            self.wait(lambda driver: driver.find_elements(By.CSS_SELECTOR, "#viewer-info .place"))
            place = self.driver.find_element(By.CSS_SELECTOR, "#viewer-info .place").text
            self.assertEqual(place, doubled["name"])
            self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "#viewer-info .place a").get_attribute("href"),
                             f"{self.base}/regions/{doubled['id']}")
        # The API's description, unobtrusively.
        self.open("/")
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "footer a[href='/api/openapi.yaml']").get_attribute("textContent"), "API (OpenAPI)")


if __name__ == "__main__":
    unittest.main()
