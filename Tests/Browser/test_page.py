"""The page of `topregions serve` in a real, headless Chromium (Debian's chromium and
chromedriver, driven by Selenium from .build/venv; nothing is downloaded at run time).

    scripts/install-dependencies --test && scripts/python-tools
    TOPREGIONS_BIN=.build/debug/topregions .build/venv/bin/python -m unittest discover -s Tests/Browser

Screenshots at phone and desktop widths go to .build/test-artifacts/.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "HTTP"))
from support import ROOT, Server, Workspace  # noqa: E402

ENABLE = "scripts/install-dependencies --test && scripts/python-tools, then run with .build/venv/bin/python"
ARTIFACTS = os.path.join(ROOT, ".build", "test-artifacts")
FIXTURE_TOOL = os.path.join(ROOT, ".build", "debug", "gallery-fixture")

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    webdriver = None


def browser_missing():
    if webdriver is None:
        return "selenium is not installed"
    for program in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not os.access(program, os.X_OK):
            return f"{program} is missing"
    return None


def trimmed_sample_data(directory):
    """SampleData without its newest page of photos: a later sync from the real SampleData
    brings new photos, as a server with new uploads would."""
    copy = os.path.join(directory, "SampleData-old")
    shutil.copytree(os.path.join(ROOT, "SampleData"), copy, ignore=shutil.ignore_patterns("xml"))
    folder = os.path.join(copy, "json", "flickr.photos.search")
    names = sorted(os.listdir(folder))
    pages = []
    for name in names:
        with open(os.path.join(folder, name)) as file:
            pages.append(json.load(file))
        os.remove(os.path.join(folder, name))
    kept = pages[1:]
    total = sum(len(page["photos"]["photo"]) for page in kept)
    for number, page in enumerate(kept, start=1):
        page["photos"].update(page=number, pages=len(kept), total=str(total))
        with open(os.path.join(folder, f"page-{number:04d}.json"), "w") as file:
            json.dump(page, file)
    manifest_path = os.path.join(copy, "manifest.json")
    with open(manifest_path) as file:
        manifest = json.load(file)
    manifest.update(photos=total, pages=len(kept), formats=["json"],
                    newestUpload=max(int(photo["dateupload"]) for photo in kept[0]["photos"]["photo"]))
    with open(manifest_path, "w") as file:
        json.dump(manifest, file)
    return copy


@unittest.skipIf(browser_missing() and not os.environ.get("TOPREGIONS_REQUIRE_BROWSER"), f"{browser_missing()}: {ENABLE}")
class PageTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = browser_missing()
        if missing:
            raise AssertionError(f"{missing}; CI never skips the browser tests: {ENABLE}")
        cls.scratch = tempfile.mkdtemp(prefix="topregions-page-")
        cls.addClassCleanup(shutil.rmtree, cls.scratch, True)
        old = trimmed_sample_data(cls.scratch)
        os.environ["TOPREGIONS_SAMPLEDATA"] = old
        try:
            cls.workspace = Workspace(pages=20)
        finally:
            del os.environ["TOPREGIONS_SAMPLEDATA"]
        cls.workspace.environment.pop("TOPREGIONS_SAMPLEDATA", None)  # later syncs read all of SampleData
        cls.addClassCleanup(cls.workspace.close)
        cls.token = cls.workspace.add_user("viewer")
        cls.server = Server(cls.workspace)
        cls.addClassCleanup(cls.server.stop)
        cls.base = f"http://127.0.0.1:{cls.server.port}"
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--disable-gpu"):
            options.add_argument(argument)
        cls.driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
        cls.addClassCleanup(cls.driver.quit)
        os.makedirs(ARTIFACTS, exist_ok=True)

    # MARK: Helpers

    def open(self, path):
        self.driver.get(self.base + path)
        self.wait(lambda driver: driver.execute_script("return document.readyState") == "complete")

    def wait(self, condition, timeout=15, message=""):
        # A live list redraws rows: an element found a moment ago may be gone.
        return WebDriverWait(self.driver, timeout, poll_frequency=0.05,
                             ignored_exceptions=(StaleElementReferenceException,)).until(condition, message)

    def dom_ids(self, list_name):
        return self.driver.execute_script(
            "return [...document.querySelectorAll(`[data-list='${arguments[0]}'] > li`)].map((li) => li.dataset.id)", list_name)

    def wait_for_list(self, list_name, ids, timeout=15):
        try:
            self.wait(lambda driver: self.dom_ids(list_name) == ids, timeout)
        except Exception:
            log = "\n".join(self.server.log_text().splitlines()[-15:])
            self.fail(f"the page's {list_name} {self.dom_ids(list_name)} are not the API's {ids}; the server's log ends:\n{log}")

    def sign_in(self):
        if self.driver.execute_script("return localStorage.getItem('topregions.token')") == self.token:
            return
        field = self.driver.find_element(By.ID, "token")
        if not field.is_displayed():
            self.driver.find_element(By.ID, "sign-in-button").click()  # the token form opens from the header
        field.send_keys(self.token)
        field.submit()
        self.wait(lambda driver: driver.find_element(By.ID, "signed-in").is_displayed())
        self.assertFalse(self.driver.find_element(By.ID, "sign-in").is_displayed(), "signed in: no sign-in form")

    def api(self, path):
        return self.server.get_json(path, token=self.token)

    def screenshot(self, name, width, height):
        self.driver.set_window_size(width, height)
        time.sleep(0.3)
        self.driver.save_screenshot(os.path.join(ARTIFACTS, f"{name}-{width}.png"))

    # MARK: Tests

    def test_0_a_refused_token_is_forgotten_and_the_public_catalogue_shows(self):
        stale = self.workspace.add_user("stale")
        self.open("/")
        self.driver.execute_script("localStorage.setItem('topregions.token', arguments[0])", stale)
        self.workspace.run("users", "remove", "stale", check=True)
        self.open("/")
        regions = [region["id"] for region in self.server.get_json("/api/regions")]
        self.wait_for_list("regions", regions)
        self.wait(lambda driver: driver.find_element(By.ID, "sign-in-button").is_displayed(), message="the sign-in button is back")
        self.assertIsNone(self.driver.execute_script("return localStorage.getItem('topregions.token')"))
        self.assertIn("no longer valid", self.driver.find_element(By.ID, "notice").text)

    def test_0_a_token_that_cannot_be_one_is_refused_and_never_kept(self):
        self.open("/")
        self.driver.execute_script("localStorage.setItem('topregions.token', 'trk_\u2603snow')")
        self.open("/")
        regions = [region["id"] for region in self.server.get_json("/api/regions")]
        self.wait_for_list("regions", regions)
        self.assertIsNone(self.driver.execute_script("return localStorage.getItem('topregions.token')"))
        self.driver.find_element(By.ID, "sign-in-button").click()
        field = self.driver.find_element(By.ID, "token")
        field.send_keys("trk_\u4e2d\u6587")
        field.submit()
        self.wait(lambda driver: "not an API token" in driver.find_element(By.ID, "notice").text)
        self.assertIsNone(self.driver.execute_script("return localStorage.getItem('topregions.token')"))

    def test_1_the_user_story(self):
        self.open("/")
        regions = [row["id"] for row in self.api("/api/regions")]
        self.wait_for_list("regions", regions)
        self.sign_in()
        self.screenshot("regions", 1280, 900)
        self.driver.find_element(By.CSS_SELECTOR, "[data-list='regions'] > li a").click()
        self.wait(lambda driver: driver.current_url.endswith(f"/regions/{regions[0]}"))
        photos = self.api(f"/api/regions/{regions[0]}/photos")
        self.wait_for_list("photos", [photo["id"] for photo in photos])
        # The first tile: its image (lazy, its title as alt text), or the placeholder that
        # names it when the photo has no image.
        first = self.driver.execute_script("""
            const frame = document.querySelector("[data-list='photos'] > li .frame");
            const image = frame.querySelector('img'), missing = frame.querySelector('.image-missing');
            return image ? {alt: image.alt, loading: image.loading} : {label: missing.getAttribute('aria-label')}""")
        if "label" in first:
            self.assertEqual(first["label"], f"No image: {photos[0]['title']}")
        else:
            self.assertEqual(first, {"alt": photos[0]["title"], "loading": "lazy"})
        self.driver.find_element(By.CSS_SELECTOR, "[data-list='photos'] > li a").click()
        self.wait(lambda driver: driver.current_url.endswith(f"/photos/{photos[0]['id']}"))
        self.wait(lambda driver: driver.find_element(By.ID, "viewer-title").text == photos[0]["title"])
        self.screenshot("photo", 1280, 900)
        self.screenshot("photo", 390, 844)
        self.driver.set_window_size(1280, 900)
        # The viewer covers the page: Escape goes back to the region.
        ActionChains(self.driver).send_keys(Keys.ESCAPE).perform()
        self.wait(lambda driver: driver.current_url.endswith(f"/regions/{regions[0]}"))
        # The view went to this user's Recents: first there.
        self.driver.find_element(By.CSS_SELECTOR, "nav a[data-list='recents']").click()
        self.wait(lambda driver: driver.current_url.endswith("/recents"))
        self.wait(lambda driver: self.dom_ids("recents")[:1] == [photos[0]["id"]])
        self.assertEqual(self.dom_ids("recents"), [row["id"] for row in self.api("/api/recents")])

    def test_2_favorites_reorder_with_the_keyboard_one_move_per_move(self):
        self.open("/")
        self.sign_in()
        region = self.api("/api/regions?limit=1")[0]
        ids = [photo["id"] for photo in self.api(f"/api/regions/{region['id']}/photos")][:3]
        for photo in ids:
            self.open(f"/photos/{photo}")
            button = self.wait(lambda driver: driver.find_element(By.ID, "favorite"))
            self.wait(lambda driver: button.is_displayed())
            button.click()
            self.wait(lambda driver: driver.find_element(By.ID, "favorite").text == "Remove from Favorites")
        self.open("/favorites")
        self.wait_for_list("favorites", ids)
        time.sleep(0.5)  # the adds' batches may still be arriving: keys go to the row as it is then
        self.driver.find_element(By.CSS_SELECTOR, "[data-list='favorites'] > li a").send_keys(Keys.ALT, Keys.ARROW_DOWN)
        expected = [ids[1], ids[0], ids[2]]
        self.wait_for_list("favorites", expected)
        self.assertEqual([row["id"] for row in self.api("/api/favorites")], expected, "exactly one move")
        focused = self.driver.execute_script("return document.activeElement.closest('li')?.dataset.id")
        self.assertEqual(focused, ids[0], "focus stays on the row that moved")
        self.screenshot("favorites", 390, 844)
        self.driver.set_window_size(1280, 900)
        # Removing: the row's ✕, then the photo's own button.
        self.driver.find_element(By.CSS_SELECTOR, "[data-list='favorites'] > li button.remove").click()
        self.wait_for_list("favorites", [ids[0], ids[2]])
        self.assertEqual([row["id"] for row in self.api("/api/favorites")], [ids[0], ids[2]])
        self.open(f"/photos/{ids[0]}")
        self.wait(lambda driver: driver.find_element(By.ID, "favorite").text == "Remove from Favorites")
        self.driver.find_element(By.ID, "favorite").click()
        self.wait(lambda driver: driver.find_element(By.ID, "favorite").text == "Add to Favorites")
        self.assertEqual([row["id"] for row in self.api("/api/favorites")], [ids[2]])

    def test_3_deep_links_and_the_back_button(self):
        region = self.api("/api/regions?limit=1")[0]
        photo = self.api(f"/api/regions/{region['id']}/photos")[1]
        self.open(f"/regions/{region['id']}")
        self.wait_for_list("photos", [row["id"] for row in self.api(f"/api/regions/{region['id']}/photos")])
        self.driver.find_element(By.CSS_SELECTOR, f"[data-list='photos'] > li[data-id='{photo['id']}'] a").click()
        self.wait(lambda driver: driver.find_element(By.ID, "viewer-title").text == photo["title"])
        self.driver.back()
        self.wait(lambda driver: driver.current_url.endswith(f"/regions/{region['id']}"))
        self.wait(lambda driver: len(self.dom_ids("photos")) > 0)
        self.open(f"/photos/{photo['id']}")
        self.wait(lambda driver: driver.find_element(By.ID, "viewer-title").text == photo["title"])
        self.open("/recents")
        self.wait(lambda driver: driver.find_element(By.ID, "list-heading").text == "Recents")
        # A phone's width: a navigation stack with a back button; the photo opens over the
        # whole screen (nothing under the header), over the photo's region.
        self.driver.set_window_size(390, 844)
        self.open(f"/photos/{photo['id']}")
        back = self.wait(lambda driver: driver.find_element(By.ID, "viewer-back"))
        self.wait(lambda driver: back.is_displayed())
        self.assertEqual(self.driver.execute_script("return document.getElementById('viewer').getBoundingClientRect().top"), 0)
        self.assertFalse(self.driver.find_element(By.ID, "list-pane").is_displayed())
        back.click()
        self.wait(lambda driver: driver.current_url.endswith(f"/regions/{region['id']}"))
        back = self.driver.find_element(By.CSS_SELECTOR, "#detail-pane .back")
        self.assertTrue(back.is_displayed())
        self.driver.set_window_size(1280, 900)

    def test_4_a_title_with_markup_is_text(self):
        region = self.api("/api/regions?limit=1")[0]
        photo = self.api(f"/api/regions/{region['id']}/photos")[-1]
        title = '<img src=x onerror="window.__ran=1"><script>window.__ran=2</script>'
        subprocess.run([FIXTURE_TOOL, "sql", self.workspace.store,
                        "UPDATE Photo SET title = '%s' WHERE flickrID = '%s'" % (title.replace("'", "''"), photo["id"])], check=True)
        self.open(f"/regions/{region['id']}")
        self.wait(lambda driver: title in [element.text for element in driver.find_elements(By.CSS_SELECTOR, "[data-list='photos'] .title")])
        self.open(f"/photos/{photo['id']}")
        self.wait(lambda driver: driver.find_element(By.ID, "viewer-title").text == title)
        self.assertIsNone(self.driver.execute_script("return window.__ran ?? null"))
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#viewer-title img, #viewer-title script, .tile img[src='x']"), [])
        headers = self.server.request("GET", "/")[1]
        self.assertIn("script-src 'self'", headers["content-security-policy"])

    def test_5_a_sync_in_another_process_shows_without_a_reload(self):
        self.open("/")
        self.wait_for_list("regions", [row["id"] for row in self.api("/api/regions")])
        region = self.api("/api/regions?limit=1")[0]
        self.driver.find_element(By.CSS_SELECTOR, f"[data-list='regions'] > li[data-id='{region['id']}'] a").click()
        self.wait(lambda driver: len(self.dom_ids("photos")) > 0)
        self.driver.execute_script("window.__sameDocument = true")
        before = self.api("/api/status")["photos"]
        self.workspace.run("sync", check=True)  # the full SampleData: its newest page is new here
        self.assertGreater(self.api("/api/status")["photos"], before, "the sync brought new photos")
        self.wait_for_list("regions", [row["id"] for row in self.api("/api/regions")])
        self.wait_for_list("photos", [row["id"] for row in self.api(f"/api/regions/{region['id']}/photos")])
        self.assertTrue(self.driver.execute_script("return window.__sameDocument === true"), "no reload")

    def test_6_a_lost_connection_reconnects_and_loses_no_batch(self):
        self.open("/recents")
        self.sign_in()
        self.open("/recents")
        self.wait_for_list("recents", [row["id"] for row in self.api("/api/recents")])
        # The server goes away and comes back on the same port: the page says so, and resumes.
        port = self.server.port
        self.server.stop()
        self.wait(lambda driver: driver.execute_script("return document.body.classList.contains('reconnecting')"))
        type(self).server = Server(self.workspace, listen=f"127.0.0.1:{port}")
        self.addCleanup(self.server.stop)
        region = self.api("/api/regions?limit=1")[0]["id"]
        photo = self.api(f"/api/regions/{region}/photos")[2]["id"]
        self.server.request("POST", f"/api/photos/{photo}/view", token=self.token)
        self.wait_for_list("recents", [row["id"] for row in self.api("/api/recents")], timeout=20)
        self.assertEqual(self.dom_ids("recents")[0], photo)
        self.assertFalse(self.driver.execute_script("return document.body.classList.contains('reconnecting')"))


    def test_7_a_private_server_s_images_load_with_the_token(self):
        # An <img> sends no token: on a private server the page fetches the image with it.
        port = self.server.port
        self.server.stop()
        type(self).server = Server(self.workspace, "--private", listen=f"127.0.0.1:{port}")
        self.addCleanup(self.server.stop)
        with_image = {name.split("_")[0] for name in os.listdir(os.path.join(ROOT, "SampleData", "images")) if name.endswith("_b.jpg")}
        synced = [photo["id"] for region in self.api("/api/regions?limit=1000") for photo in self.api(f"/api/regions/{region['id']}/photos")]
        photo = next((photo for photo in synced if photo in with_image), None)
        if photo is None:
            self.skipTest("no synced photo has a SampleData image")
        self.open(f"/photos/{photo}")
        self.sign_in()
        self.open(f"/photos/{photo}")
        self.wait(lambda driver: driver.execute_script("const image = document.querySelector('img.large'); return image && image.naturalWidth > 0"),
                  message="the large image loads on a private server")
        # The image answered, in whichever size the page asked for (the log quotes a path with a query).
        self.assertRegex(self.server.log_text(), rf'path="?/api/photos/{photo}/image(\?size=[a-z])?"? status=(200|304)')

if __name__ == "__main__":
    unittest.main()
