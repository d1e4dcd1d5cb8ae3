"""Search, paging, credit, /api/me, the API's own description and the page's 404, through
the built `topregions serve` on loopback."""

import json
import os
import re
import unittest
import urllib.parse

from support import ROOT, Server, Workspace


def next_link(headers):
    """The target of a `Link: <…>; rel="next"` header, or None."""
    match = re.match(r'<([^>]+)>;\s*rel="next"', headers.get("link", ""))
    return match.group(1) if match else None


class GalleryFeatureTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workspace = Workspace(pages=12)
        cls.addClassCleanup(cls.workspace.close)
        cls.server = Server(cls.workspace)
        cls.addClassCleanup(cls.server.stop)

    def follow(self, path):
        """Every page of a list, following its next links: the rows, and the pages' count."""
        rows, pages = [], 0
        while path:
            status, headers, body = self.server.request("GET", path)
            self.assertEqual(status, 200, body[:300])
            page = json.loads(body)
            rows += page["photos"] if isinstance(page, dict) else page
            if isinstance(page, dict):
                self.assertEqual(page["next"], next_link(headers), "the body's next and the Link header agree")
            path = next_link(headers)
            pages += 1
            self.assertLess(pages, 500)
        return rows, pages

    def test_regions_page_past_the_top_50_to_every_region(self):
        status, headers, body = self.server.request("GET", "/api/regions")
        self.assertEqual(len(json.loads(body)), 50)
        self.assertIsNotNone(next_link(headers), "the top 50 say where the rest are")
        rows, pages = self.follow("/api/regions?limit=20")
        everything = self.workspace.json("regions", "--all")
        self.assertGreater(len(everything), 50)
        self.assertEqual([row["id"] for row in rows], [row["id"] for row in everything])
        self.assertEqual([row["rank"] for row in rows], list(range(1, len(rows) + 1)))
        self.assertEqual(pages, (len(everything) + 19) // 20)

    def test_a_regions_photos_page_to_the_whole_list(self):
        region = self.server.get_json("/api/regions?limit=1")[0]
        rows, _ = self.follow(f"/api/regions/{region['id']}/photos?limit=9")
        self.assertEqual(rows, self.server.get_json(f"/api/regions/{region['id']}/photos"))

    def test_cursors_are_checked(self):
        for path in ("/api/regions?after=nonsense", "/api/regions?after=", "/api/regions?byCountry=true&after=x",
                     "/api/search?q=sunset&after=%21", "/api/regions/nope/photos?limit=0"):
            status, _, body = self.server.request("GET", path)
            self.assertIn(status, (400, 404), path)
            self.assertIn("message", json.loads(body)["error"])
        _, headers, _ = self.server.request("GET", "/api/regions?limit=5")
        cursor = urllib.parse.parse_qs(urllib.parse.urlparse(next_link(headers)).query)["after"][0]
        region = self.server.get_json("/api/regions?limit=1")[0]
        status, _, body = self.server.request("GET", f"/api/regions/{region['id']}/photos?limit=5&after={cursor}")
        self.assertEqual(status, 400, "a cursor of the regions does not page a region's photos")
        self.assertIn("another list", json.loads(body)["error"]["message"])

    def test_search_finds_accentless_words_in_any_order_title_first_and_pages(self):
        result = self.server.get_json("/api/search?q=eclair")
        titles = [photo["title"] for photo in result["photos"]]
        self.assertTrue(titles, "eclair finds the accented titles")
        self.assertTrue(all("clair" in title.lower() for title in titles[:2]), titles)
        self.assertTrue(any(title != title.lower() for title in titles) and any(title == title.lower() for title in titles),
                        "ÉCLAIR and éclair both")
        one = self.server.get_json("/api/search?q=sunset%20quebec&limit=1000")
        other = self.server.get_json("/api/search?q=QUEBEC%20Sunset&limit=1000")
        self.assertEqual([p["id"] for p in one["photos"]], [p["id"] for p in other["photos"]])
        self.assertTrue(one["photos"] and all(p["region"] == "Quebec" for p in one["photos"]))
        self.assertEqual([r["name"] for r in self.server.get_json("/api/search?q=queb")["regions"]], ["Quebec"])
        paged, _ = self.follow("/api/search?q=sunset&limit=7")
        whole = self.server.get_json("/api/search?q=sunset&limit=1000")["photos"]
        self.assertEqual([p["id"] for p in paged], [p["id"] for p in whole])
        self.assertEqual(len({p["id"] for p in paged}), len(paged))
        cli = self.workspace.json("search", "sunset", "--limit", "1000")
        self.assertEqual([p["id"] for p in cli["photos"]], [p["id"] for p in whole], "the CLI and the API agree")
        self.assertEqual(self.server.request("GET", "/api/search")[0], 400)
        for query in ("a%0Ab", "a%09b", "x" * 201):
            self.assertEqual(self.server.request("GET", f"/api/search?q={query}")[0], 400, query)
        self.assertEqual(self.server.get_json("/api/search?q=%20%21%21")["photos"], [])

    def test_every_photo_carries_credit(self):
        photos = self.server.get_json("/api/search?q=sunset&limit=50")["photos"]
        region = self.server.get_json("/api/regions?limit=1")[0]
        photos += self.server.get_json(f"/api/regions/{region['id']}/photos")
        for photo in photos:
            self.assertRegex(photo["pageURL"], r"^https://www\.flickr\.com/photos/[^/]+/" + photo["id"] + "/$")
            self.assertTrue(photo["pageURL"].startswith(photo["photographerURL"]))
            self.assertIn(photo["license"]["id"], ("1", "2", "4", "7", None))
            if photo["license"]["id"]:
                self.assertTrue(photo["license"]["url"].startswith("https://"))
                self.assertNotEqual(photo["license"]["name"], "Licence unknown")

    def test_me_names_the_tokens_user(self):
        token = self.workspace.add_user("carol")
        self.assertEqual(self.server.get_json("/api/me", token=token), {"name": "carol"})
        self.assertEqual(self.server.request("GET", "/api/me")[0], 401)

    def test_the_api_describes_itself(self):
        index = self.server.get_json("/api")
        self.assertEqual(index["openapi"], "/api/openapi.yaml")
        status, headers, body = self.server.request("GET", "/api/openapi.yaml")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("application/yaml"))
        with open(os.path.join(ROOT, "docs", "openapi.yaml"), "rb") as file:
            self.assertEqual(body, file.read(), "the served document is docs/openapi.yaml")

    def test_an_unknown_page_is_the_pages_own_404(self):
        for path in ("/nosuchpage", "/regions/a/b", "/photos/abc"):
            status, headers, body = self.server.request("GET", path)
            self.assertEqual(status, 404, path)
            self.assertTrue(headers["content-type"].startswith("text/html"), path)
            self.assertIn(b"<script", body)
        for path in ("/search", "/search?q=x", "/", "/recents"):
            self.assertEqual(self.server.request("GET", path)[0], 200, path)


if __name__ == "__main__":
    unittest.main()
