"""`topregions serve` end to end: the built binary on a free loopback port, driven over real
HTTP. Run by scripts/test; alone: python3 -m unittest discover -s Tests/HTTP -v
"""

import fcntl
import http.client
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import unittest

from support import ROOT, EventStream, Server, Workspace, assert_streams_reach, table_from, tool_path, without


class ServedGallery(unittest.TestCase):
    """One SampleData store and one server for the tests of a class."""

    server_arguments = ()

    @classmethod
    def setUpClass(cls):
        cls.workspace = Workspace()
        cls.addClassCleanup(cls.workspace.close)
        cls.server = Server(cls.workspace, *cls.server_arguments)
        cls.addClassCleanup(cls.server.stop)

    def assertError(self, response, status, code=None):
        got, headers, body = response
        self.assertEqual(got, status, body[:300])
        self.assertTrue(headers.get("content-type", "").startswith("application/json"), headers)
        error = json.loads(body)["error"]
        self.assertIsInstance(error["message"], str)
        self.assertTrue(error["message"])
        if code:
            self.assertEqual(error["code"], code)
        return error


class CatalogueTests(ServedGallery):
    def test_regions_are_the_cli_rows(self):
        self.assertEqual(self.server.get_json("/api/regions"), self.workspace.json("regions"))
        self.assertEqual(self.server.get_json("/api/regions?limit=5"), self.workspace.json("regions", "--limit", "5"))
        self.assertEqual(self.server.get_json("/api/regions?limit=20&byCountry=true"),
                         self.workspace.json("regions", "--limit", "20", "--by-country"))

    def test_a_regions_photos_and_a_photo_are_the_cli_rows(self):
        region = self.server.get_json("/api/regions?limit=1")[0]
        photos = self.server.get_json(f"/api/regions/{region['id']}/photos")
        self.assertEqual(photos, self.workspace.json("photos", "--region", region["id"]))
        self.assertEqual(len(photos), region["photos"])
        self.assertEqual(self.server.get_json(f"/api/regions/{region['id']}/photos?byPhotographer=1"),
                         self.workspace.json("photos", "--region", region["id"], "--by-photographer"))
        photo = self.server.get_json(f"/api/photos/{photos[0]['id']}")
        self.assertEqual(photo, self.workspace.json("photo", photos[0]["id"]))

    def test_status_has_the_cli_fields(self):
        status = self.server.get_json("/api/status")
        self.assertEqual(set(status), set(self.workspace.json("status")))
        self.assertEqual(status["photos"], self.workspace.json("status")["photos"])
        self.assertNotIn("/", status["store"], "the store's path is not disclosed")

    def test_unknown_things_are_404(self):
        self.assertError(self.server.request("GET", "/api/photos/1"), 404, "not_found")
        self.assertError(self.server.request("GET", "/api/regions/nope/photos"), 404, "not_found")
        self.assertError(self.server.request("GET", "/api/nothing"), 404, "not_found")
        self.assertError(self.server.request("GET", "/api/photos/12ab"), 404)
        for path in ["/api/photos/..%2F..%2F..%2Fetc%2Fpasswd/image", "/api/photos/%2e%2e/thumbnail", "/api/../etc/passwd",
                     "/api/photos/1%00/image"]:
            status, _, body = self.server.request("GET", path)
            self.assertIn(status, (400, 404), path)
            self.assertNotIn(b"root:", body)

    def test_bad_query_parameters_are_400_and_named(self):
        for query, named in [("limt=5", "limt"), ("limit=0", "limit"), ("limit=1001", "limit"), ("limit=abc", "limit"),
                             ("limit=5&limit=6", "limit"), ("byCountry=maybe", "byCountry"), ("limit=%2B3", "limit"),
                             ("limit=", "limit"), ("byCountry=TRUE", "byCountry")]:
            error = self.assertError(self.server.request("GET", f"/api/regions?{query}"), 400, "bad_request")
            self.assertIn(named, error["message"], query)
        self.assertError(self.server.request("GET", "/api/status?x=1"), 400)
        error = self.assertError(self.server.request("GET", "/api/regions/changes?byCountry=true&limit=4"), 400, "bad_request")
        self.assertIn("byCountry", error["message"], "a live list has no byCountry form (docs/openapi.yaml)")

    def test_wrong_methods_are_405_with_allow(self):
        status, headers, _ = self.server.request("DELETE", "/api/regions")
        self.assertEqual(status, 405)
        self.assertEqual(headers["allow"], "GET, HEAD")
        self.assertError(self.server.request("GET", "/api/sync"), 405, "method_not_allowed")
        self.assertError(self.server.request("PUT", "/api/favorites"), 405)

    def test_the_page_has_an_icon(self):
        status, headers, body = self.server.request("GET", "/app/icon.svg")
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "image/svg+xml")
        self.assertTrue(body.startswith(b"<svg"))
        _, _, page = self.server.request("GET", "/")
        self.assertIn(b'rel="icon" href="/app/icon.svg"', page)

    def test_a_shared_link_with_tracking_parameters_opens_the_page(self):
        for path in ("/?fbclid=1", "/recents?utm_source=x", "/app/app.js?v=2"):
            status, headers, _ = self.server.request("GET", path)
            self.assertEqual(status, 200, path)
            self.assertFalse(headers["content-type"].startswith("application/json"), path)

    def test_head_has_no_body(self):
        status, headers, body = self.server.request("HEAD", "/api/regions")
        self.assertEqual((status, body), (200, b""))
        _, get_headers, get_body = self.server.request("GET", "/api/regions")
        self.assertEqual(headers.get("content-length"), str(len(get_body)), "HEAD tells the length GET sends")

    def test_a_body_too_large_is_413(self):
        token = self.workspace.add_user("big")
        self.assertError(self.server.request("POST", "/api/favorites", body=b"{" + b" " * 70_000 + b"}", token=token,
                                             headers={"Content-Type": "application/json"}), 413)

    def test_a_body_declared_too_large_is_413_before_it_is_sent(self):
        token = self.workspace.add_user("declared")
        connection = self.server.connection(timeout=10)
        connection.putrequest("POST", "/api/favorites")
        connection.putheader("Authorization", f"Bearer {token}")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", "999999999")
        connection.endheaders(b"{}")
        started = time.monotonic()
        response = connection.getresponse()
        self.assertEqual(response.status, 413)
        self.assertLess(time.monotonic() - started, 5, "answered at once, not after the idle timeout")
        self.assertEqual(json.loads(response.read())["error"]["code"], "too_large")
        connection.close()

    def test_an_encoded_nul_is_never_cut_off(self):
        region = self.server.get_json("/api/regions?limit=1")[0]
        photo = self.server.get_json(f"/api/regions/{region['id']}/photos")[0]["id"]
        for path in (f"/api/photos/{photo}%00/thumbnail", "/api/status%00", f"/api/photos/{photo}%00"):
            status, _, _ = self.server.request("GET", path)
            self.assertEqual(status, 404, path)
        self.assertError(self.server.request("GET", "/api/regions?limit=1%00abc"), 400)

    def test_secret_looking_query_values_are_not_logged(self):
        self.server.request("GET", "/api/status?apikey=S4&api-key=S3&auth=S6&sig=S2&session=S8&access_token=S9")
        deadline = time.monotonic() + 5
        while "apikey=" not in self.server.log_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        log = self.server.log_text()
        self.assertIn("apikey=REDACTED", log)
        for secret in ("S4", "S3", "S6", "S2", "S8", "S9"):
            self.assertNotIn(f"={secret}", log)

    def test_a_token_pasted_into_a_path_or_a_value_is_not_logged(self):
        token = self.workspace.add_user("paster")
        self.server.request("GET", f"/api/photos/{token}")
        self.server.request("GET", f"/api/status?q={token}")
        deadline = time.monotonic() + 5
        while self.server.log_text().count("trk_REDACTED") < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        log = self.server.log_text()
        self.assertNotIn(token[4:], log)
        self.assertGreaterEqual(log.count("trk_REDACTED"), 2, log[-600:])

    def test_headers_too_large_are_refused_and_the_server_lives_on(self):
        error = self.assertError(self.server.request("GET", "/api/regions", headers={"X-Filler": "x" * 12_000}), 413, "too_large")
        self.assertIn("line and headers", error["message"])
        self.assertError(self.server.request("GET", "/api/regions?limit=" + "1" * 12_000), 413, "too_large")
        status, _, _ = self.server.request("GET", "/api/regions", headers={"X-Filler": "x" * 200_000})
        self.assertIn(status, (413, 431), "past what libmicrohttpd can hold it answers itself")
        self.assertEqual(self.server.request("GET", "/api/status")[0], 200)

    def raw_exchange(self, request):
        """Sends bytes as they are and reads until the server closes or 2 s pass."""
        with socket.create_connection(("127.0.0.1", self.server.port), timeout=2) as connection:
            connection.sendall(request)
            answer = b""
            try:
                while chunk := connection.recv(65536):
                    answer += chunk
            except socket.timeout:
                pass
            return answer

    def test_requests_framed_ambiguously_are_400_and_the_connection_closes(self):
        cases = {
            "no Host": b"GET /api/status HTTP/1.1\r\n\r\n",
            "two Hosts": b"GET /api/status HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "length and chunked": b"POST /api/sync HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
                                  b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /api/status HTTP/1.1\r\nHost: a\r\n\r\n",
            "lengths that disagree": b"POST /api/sync HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\n",
            "two Authorizations": b"GET /api/recents HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x\r\nAuthorization: Bearer y\r\n\r\n",
            "a port that is no number": b"GET /api/status HTTP/1.1\r\nHost: localhost:abc\r\n\r\n",
            "a port past 65535": b"GET /api/status HTTP/1.1\r\nHost: localhost:99999\r\n\r\n",
            "a method with a control byte": b"G\x1b[31mET /api/status HTTP/1.1\r\nHost: a\r\n\r\n",
        }
        for name, request in cases.items():
            answer = self.raw_exchange(request)
            self.assertTrue(answer.startswith(b"HTTP/1.1 400 "), f"{name}: {answer[:200]!r}")
            self.assertEqual(len(re.findall(rb"(?:^|\r\n)HTTP/1\.1 \d{3} ", answer)), 1, f"{name}: nothing after it is read as a request")
            body = answer.split(b"\r\n\r\n", 1)[1]
            self.assertEqual(json.loads(body)["error"]["code"], "bad_request", name)
        self.assertTrue(self.raw_exchange(b"GET /api/status HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.1 200 "),
                        "HTTP/1.0 needs no Host")
        for host in (b"localhost:", b"[::1]:8080", b"127.0.0.1:65535"):
            self.assertTrue(self.raw_exchange(b"GET /api/status HTTP/1.1\r\nHost: " + host + b"\r\n\r\n").startswith(b"HTTP/1.1 200 "), host)

    def test_header_names_with_space_before_the_colon_and_unknown_codings_are_refused(self):
        # RFC 9112 5.1 and 6.1: a name with whitespace before its colon is refused, not read
        # as another header; a transfer coding other than chunked is not implemented.
        cases = {
            b"GET /api/status HTTP/1.1\r\nHost : a\r\n\r\n": 400,
            b"GET /api/status HTTP/1.1\r\nHost: a\r\nContent-Length : 2\r\n\r\nab": 400,
            b"POST /api/sync HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\n0\r\n": 400,
            b"POST /api/sync HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n": 501,
            b"GET /api/status HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: identity\r\n\r\n": 501,
            # A folded Content-Length (obs-fold): the body must not become a second request.
            b"GET /api/status HTTP/1.1\r\nHost: localhost\r\nContent-Length:\r\n 5\r\n\r\n"
            b"helloGET /api/status HTTP/1.1\r\nHost: localhost\r\n\r\n": 400,
            b"GET /api/status HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n 5\r\n\r\nhello": 400,
            b"POST /api/sync HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n": 400,
        }
        for request, status in cases.items():
            answer = self.raw_exchange(request)
            self.assertTrue(answer.startswith(f"HTTP/1.1 {status} ".encode()), f"{request!r}: {answer[:200]!r}")
            self.assertIn(b"Connection: close", answer.split(b"\r\n\r\n", 1)[0])
            json.loads(answer.split(b"\r\n\r\n", 1)[1])
            self.assertEqual(len(re.findall(rb"(?:^|\r\n)HTTP/1\.1 \d{3} ", answer)), 1, f"{request!r}: one answer, nothing smuggled")

    def test_a_loopback_server_answers_only_loopback_host_names(self):
        # DNS rebinding: a page at evil.example whose name now resolves to 127.0.0.1.
        error = self.assertError(self.server.request("GET", "/api/regions", headers={"Host": "evil.example"}), 421, "misdirected_request")
        self.assertIn("--allowed-host", error["message"])
        for host in ("localhost", f"localhost:{self.server.port}", "127.0.0.1", "[::1]", "LOCALHOST.", "127.0.0.2",
                     "[::ffff:127.0.0.1]:80", "[0:0:0:0:0:0:0:1]"):
            self.assertEqual(self.server.request("GET", "/api/status", headers={"Host": host})[0], 200, host)
        # A target in absolute form: its authority stands for Host (RFC 9112 3.2.2).
        answer = self.raw_exchange(b"GET http://localhost/api/status HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        self.assertTrue(answer.startswith(b"HTTP/1.1 200 "), answer[:100])
        answer = self.raw_exchange(b"GET http://evil.example/api/status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        self.assertTrue(answer.startswith(b"HTTP/1.1 421 "), answer[:100])
        proxied = Server(self.workspace, "--allowed-host", "gallery.example")
        self.addCleanup(proxied.stop)
        self.assertEqual(proxied.request("GET", "/api/status", headers={"Host": "gallery.example"})[0], 200, "a proxy's public name")
        self.assertEqual(proxied.request("GET", "/api/status", headers={"Host": "other.example"})[0], 421)

    def test_a_second_server_cannot_take_a_port_in_use(self):
        result = self.workspace.run("serve", "--listen", f"127.0.0.1:{self.server.port}")
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("in use", result.stderr)
        self.assertEqual(self.server.request("GET", "/api/status")[0], 200, "the first server still answers")

    def test_each_request_logs_one_escaped_line(self):
        self.server.request("GET", "/api/regions?limit=%1b[31m")
        deadline = time.monotonic() + 5
        while "limit=\\x1b" not in self.server.log_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        log = self.server.log_text()
        self.assertNotIn("\x1b", log, "a client's bytes reach the log escaped")
        line = [line for line in log.splitlines() if "limit=\\x1b" in line][0]
        for field in ("method=GET", "status=400", "bytes=", "ms=", "client=127.0.0.1"):
            self.assertIn(field, line)


class ImageTests(ServedGallery):
    def sample_images(self, suffix):
        names = os.listdir(os.path.join(ROOT, "SampleData", "images"))
        return {name.split("_")[0] for name in names if name.endswith(suffix)}

    def synced_photos(self):
        return [photo["id"] for region in self.server.get_json("/api/regions?limit=1000")
                for photo in self.server.get_json(f"/api/regions/{region['id']}/photos")]

    def photo_with_image(self):
        ids = self.sample_images("_s.jpg") & self.sample_images("_b.jpg")
        for photo in self.synced_photos():
            if photo in ids:
                return photo
        self.skipTest("SampleData has no image for the synced photos")

    def test_a_thumbnail_has_a_tag_that_caches_revalidate(self):
        photo = self.photo_with_image()
        status, headers, body = self.server.request("GET", f"/api/photos/{photo}/thumbnail")
        self.assertEqual(status, 200)
        self.assertEqual(headers["content-type"], "image/jpeg")
        self.assertTrue(body.startswith(b"\xff\xd8"))
        self.assertEqual(headers["cache-control"], "public, no-cache", "a replaced photo has new bytes under the same URL")
        tag = headers["etag"]
        self.assertRegex(tag, r'^"[0-9a-f]{32}"$')
        status, headers, not_modified = self.server.request("GET", f"/api/photos/{photo}/thumbnail", headers={"If-None-Match": tag})
        self.assertEqual((status, not_modified), (304, b""))
        self.assertEqual(headers["etag"], tag)
        self.assertIn(headers.get("content-length"), (None, str(len(body))), "a 304 tells no length but the 200's (RFC 9110 8.6)")
        status, _, _ = self.server.request("GET", f"/api/photos/{photo}/thumbnail", headers={"If-None-Match": '"other"'})
        self.assertEqual(status, 200)

    def test_every_photo_has_an_image_and_an_unknown_one_is_not_found(self):
        photo = self.photo_with_image()
        status, headers, body = self.server.request("GET", f"/api/photos/{photo}/image")
        self.assertEqual(status, 200)
        self.assertTrue(body.startswith(b"\xff\xd8"))
        with open(os.path.join(ROOT, "SampleData", "images", [name for name in os.listdir(os.path.join(ROOT, "SampleData", "images"))
                                                               if name.startswith(photo + "_") and name.endswith("_b.jpg")][0]), "rb") as file:
            self.assertEqual(body, file.read(), "a committed large image is served as it is")
        drawn = [photo for photo in self.synced_photos() if photo not in self.sample_images("_b.jpg")][0]
        status, headers, body = self.server.request("GET", f"/api/photos/{drawn}/image")
        self.assertEqual((status, headers["content-type"]), (200, "image/jpeg"))
        self.assertEqual(jpeg_size(body), (1024, 768), "SampleData draws the photos it has no file of")
        self.assertError(self.server.request("GET", "/api/photos/1/image"), 404, "not_found")

    def test_image_sizes(self):
        drawn = [photo for photo in self.synced_photos() if photo not in self.sample_images("_b.jpg")][1]
        for size, expected in (("s", (75, 75)), ("q", (150, 150)), ("n", (320, 240)), ("z", (640, 480)), ("c", (800, 600)), ("b", (1024, 768))):
            status, headers, body = self.server.request("GET", f"/api/photos/{drawn}/image?size={size}")
            self.assertEqual((status, headers["content-type"]), (200, "image/jpeg"), size)
            self.assertEqual(jpeg_size(body), expected, size)
            self.assertRegex(headers["etag"], r'^"[0-9a-f]{32}"$')
        self.assertEqual(self.server.request("GET", f"/api/photos/{drawn}/image")[2], self.server.request("GET", f"/api/photos/{drawn}/image?size=b")[2],
                         "b is the default")
        self.assertEqual(self.server.request("GET", f"/api/photos/{drawn}/image?size=s")[2], self.server.request("GET", f"/api/photos/{drawn}/thumbnail")[2],
                         "s is the thumbnail")
        for bad in ("x", "o", "B", "", "640"):
            error = self.assertError(self.server.request("GET", f"/api/photos/{drawn}/image?size={bad}"), 400, "bad_request")
            self.assertIn("size must be one of s, q, n, z, c, b", error["message"])
        self.assertError(self.server.request("GET", f"/api/photos/{drawn}/image?size=z&size=b"), 400, "bad_request")
        self.assertError(self.server.request("GET", f"/api/photos/{drawn}/image?width=640"), 400, "bad_request")
        error = self.assertError(self.server.request("GET", f"/api/photos/{drawn}/thumbnail?size=q"), 400, "bad_request")
        self.assertIn("takes none", error["message"])


def jpeg_size(data):
    """(width, height) from a JPEG's frame header, read here without an imaging library."""
    index = 2
    while index + 9 < len(data):
        if data[index] != 0xFF:
            raise AssertionError(f"not a JPEG marker at {index}")
        marker = data[index + 1]
        length = int.from_bytes(data[index + 2:index + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2):
            return int.from_bytes(data[index + 7:index + 9], "big"), int.from_bytes(data[index + 5:index + 7], "big")
        index += 2 + length
    raise AssertionError("no frame header")


class ImageDownloadTests(unittest.TestCase):
    """Images fetched from an image server (the Flickr test server) by `serve`."""

    assertError = ServedGallery.assertError

    def test_ten_concurrent_requests_for_one_uncached_image_make_one_download(self):
        workspace = Workspace()
        self.addCleanup(workspace.close)
        flickr = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Fixtures", "FlickrServer", "flickr_server.py"),
                                   "--data", os.path.join(ROOT, "SampleData")], stdout=subprocess.PIPE, text=True)
        self.addCleanup(flickr.stdout.close)
        self.addCleanup(flickr.wait, 10)
        self.addCleanup(flickr.terminate)
        port = int(flickr.stdout.readline().split()[1])
        names = os.listdir(os.path.join(ROOT, "SampleData", "images"))
        shown = {photo["id"] for region in workspace.json("regions", "--limit", "1000")
                 for photo in workspace.json("photos", "--region", region["id"])}
        large = next(name for name in sorted(names) if name.endswith("_b.jpg") and name.split("_")[0] in shown)
        photo = large.split("_")[0]

        def control(method, path, body=None):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                               headers={"Content-Type": "application/json"})
            answer = connection.getresponse()
            data = answer.read()
            connection.close()
            return json.loads(data or b"null")

        # Slow, so that the ten overlap.
        control("POST", "/_control/faults", {"path_contains": large, "delay": 0.5, "times": -1})
        server = Server(workspace, "--image-base", f"http://127.0.0.1:{port}")
        self.addCleanup(server.stop)
        answers = [None] * 10

        def get(index):
            answers[index] = server.request("GET", f"/api/photos/{photo}/image?size=b")

        threads = [threading.Thread(target=get, args=(index,)) for index in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        with open(os.path.join(ROOT, "SampleData", "images", large), "rb") as file:
            expected = file.read()
        self.assertEqual([answer[0] for answer in answers], [200] * 10)
        self.assertTrue(all(answer[2] == expected for answer in answers))
        downloads = [request for request in control("GET", "/_control/requests") if request["path"].endswith(large)]
        self.assertEqual(len(downloads), 1, downloads)

        # An HTML page said to be a JPEG is refused, and not kept: the next request asks again.
        thumbnail = large.replace("_b.jpg", "_s.jpg")
        control("POST", "/_control/faults", {"path_contains": thumbnail, "body_text": "<html>busy</html>", "content_type": "image/jpeg"})
        error = self.assertError(server.request("GET", f"/api/photos/{photo}/thumbnail"), 502)
        self.assertIn("not an image", error["message"])
        status, _, body = server.request("GET", f"/api/photos/{photo}/thumbnail")
        self.assertEqual((status, body[:2]), (200, b"\xff\xd8"))


class UserTests(ServedGallery):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.alice = cls.workspace.add_user("alice")
        cls.bob = cls.workspace.add_user("bob")
        regions = cls.server.get_json("/api/regions?limit=1000")
        cls.photos = [photo["id"] for region in regions[:6] for photo in cls.server.get_json(f"/api/regions/{region['id']}/photos")][:30]

    def test_per_user_lists_need_a_valid_token(self):
        self.assertError(self.server.request("GET", "/api/recents"), 401, "unauthorized")
        status, headers, _ = self.server.request("GET", "/api/favorites")
        self.assertEqual(status, 401)
        self.assertIn("Bearer", headers["www-authenticate"])
        self.assertError(self.server.request("GET", "/api/recents", token="trk_" + "A" * 43), 401)
        self.assertError(self.server.request("GET", "/api/recents", headers={"Authorization": "Basic YTpi"}), 401)
        self.assertError(self.server.request("POST", f"/api/photos/{self.photos[0]}/view"), 401)

    def test_a_body_an_endpoint_does_not_take_is_refused_and_nothing_changes(self):
        token = self.workspace.add_user("bodyless")
        photo = self.photos[0]
        self.assertError(self.server.request("POST", f"/api/photos/{photo}/view", body={"x": 1}, token=token), 400, "bad_request")
        self.assertEqual(self.server.get_json("/api/recents", token=token), [], "the refused view added nothing")
        self.assertEqual(self.server.request("POST", f"/api/photos/{photo}/view", body={}, token=token)[0], 200, "{} is no settings")
        self.server.request("POST", "/api/favorites", body={"id": photo}, token=token)
        self.assertError(self.server.request("DELETE", f"/api/favorites/{photo}", body={"id": "1"}, token=token), 400)
        self.assertEqual([row["id"] for row in self.server.get_json("/api/favorites", token=token)], [photo])
        self.assertError(self.server.request("POST", "/api/favorites", body=f'id={photo}', token=token,
                                             headers={"Content-Type": "application/x-www-form-urlencoded"}), 415)
        self.assertError(self.server.request("POST", "/api/favorites", body=json.dumps({"id": photo}), token=token), 415,
                         "unsupported_media_type")
        self.assertError(self.server.request("POST", "/api/favorites", body=json.dumps({"id": photo}), token=token,
                                             headers={"Content-Type": "application/jsonx"}), 415)
        self.assertEqual(self.server.request("POST", "/api/favorites", body=json.dumps({"id": photo}), token=token,
                                             headers={"Content-Type": "Application/JSON; charset=utf-8"})[0], 200)

    def test_a_rotated_token_stops_working(self):
        token = self.workspace.add_user("carol")
        self.assertEqual(self.server.get_json("/api/recents", token=token), [])
        new = self.workspace.json("users", "token", "carol", "--rotate")["token"]
        self.assertError(self.server.request("GET", "/api/recents", token=token), 401)
        self.assertEqual(self.server.get_json("/api/recents", token=new), [])

    def test_two_users_recents_are_independent_and_capped_at_20(self):
        for photo in self.photos[:25]:
            status, _, body = self.server.request("POST", f"/api/photos/{photo}/view", token=self.alice)
            self.assertEqual(status, 200, body)
        for photo in self.photos[25:28]:
            self.server.request("POST", f"/api/photos/{photo}/view", token=self.bob)
        self.server.request("POST", f"/api/photos/{self.photos[10]}/view", token=self.alice)  # again: to the top, once
        alice = [row["id"] for row in self.server.get_json("/api/recents", token=self.alice)]
        bob = [row["id"] for row in self.server.get_json("/api/recents", token=self.bob)]
        expected = [self.photos[10]] + [photo for photo in reversed(self.photos[5:25]) if photo != self.photos[10]]
        self.assertEqual(alice, expected[:20])
        self.assertEqual(bob, list(reversed(self.photos[25:28])))
        self.assertEqual([row["id"] for row in self.workspace.json("recents", "--user", "alice")], alice)
        self.assertError(self.server.request("POST", "/api/photos/999/view", token=self.alice), 404)

    def test_favorites_add_move_remove_per_user(self):
        token = self.workspace.add_user("dora")
        for photo in self.photos[:4]:
            status, _, body = self.server.request("POST", "/api/favorites", body={"id": photo}, token=token)
            self.assertEqual(status, 200, body)
        rows = json.loads(self.server.request("POST", "/api/favorites", body={"id": self.photos[0]}, token=token)[2])
        self.assertEqual([row["id"] for row in rows], self.photos[:4], "adding again changes nothing")
        rows = json.loads(self.server.request("POST", "/api/favorites/move", body={"from": 1, "to": 3}, token=token)[2])
        self.assertEqual([row["id"] for row in rows], [self.photos[1], self.photos[2], self.photos[0], self.photos[3]])
        self.assertEqual([row["position"] for row in rows], [1, 2, 3, 4])
        self.assertError(self.server.request("POST", "/api/favorites/move", body={"from": 1, "to": 9}, token=token), 400)
        self.assertError(self.server.request("POST", "/api/favorites/move", body={"from": 0, "to": 1}, token=token), 400)
        self.assertError(self.server.request("POST", "/api/favorites/move", body={"from": True, "to": 1}, token=token), 400)
        self.assertError(self.server.request("POST", "/api/favorites/move", body={"from": 1, "to": 2, "x": 1}, token=token), 400)
        self.assertError(self.server.request("POST", "/api/favorites", body={"id": int(self.photos[0])}, token=token), 400,
                         "bad_request")  # an id is a string, as openapi.yaml says
        self.assertError(self.server.request("POST", "/api/favorites", body=b"not json", token=token,
                                             headers={"Content-Type": "application/json"}), 400)
        self.assertError(self.server.request("POST", "/api/favorites", body=b'{"id":"1"}', token=token,
                                             headers={"Content-Type": "text/plain"}), 415)
        status, _, body = self.server.request("DELETE", f"/api/favorites/{self.photos[2]}", token=token)
        self.assertEqual(status, 200)
        self.assertEqual([row["id"] for row in json.loads(body)], [self.photos[1], self.photos[0], self.photos[3]])
        status, _, body = self.server.request("DELETE", "/api/favorites", body={"id": self.photos[1]}, token=token)
        self.assertEqual([row["id"] for row in json.loads(body)], [self.photos[0], self.photos[3]])
        self.assertError(self.server.request("DELETE", f"/api/favorites/{self.photos[2]}", token=token), 404, "not_a_favorite")
        self.assertEqual(self.server.get_json("/api/favorites", token=self.bob), [], "another user's list is untouched")

    def test_a_cross_origin_write_is_refused_without_cors(self):
        status, headers, _ = self.server.request("GET", "/api/regions", headers={"Origin": "https://evil.example"})
        self.assertEqual(status, 200)
        self.assertNotIn("access-control-allow-origin", headers)
        self.assertError(self.server.request("POST", f"/api/photos/{self.photos[0]}/view", token=self.alice,
                                             headers={"Origin": "https://evil.example"}), 403, "origin_not_allowed")


class PrivateAndCORSTests(ServedGallery):
    server_arguments = ("--private", "--cors-origin", "https://gallery.example")

    def test_a_private_catalogue_needs_a_token(self):
        self.assertError(self.server.request("GET", "/api/regions"), 401)
        token = self.workspace.add_user("erin")
        self.assertEqual(self.server.get_json("/api/regions?limit=3", token=token), self.workspace.json("regions", "--limit", "3"))

    def test_a_private_image_is_never_kept_by_a_shared_cache(self):
        token = self.workspace.add_user("frank")
        images = {name.split("_")[0] for name in os.listdir(os.path.join(ROOT, "SampleData", "images")) if name.endswith("_s.jpg")}
        photos = [photo["id"] for region in self.server.get_json("/api/regions?limit=1000", token=token)
                  for photo in self.server.get_json(f"/api/regions/{region['id']}/photos", token=token)]
        photo = next((photo for photo in photos if photo in images), None)
        if photo is None:
            self.skipTest("SampleData has no thumbnail for the synced photos")
        status, headers, _ = self.server.request("GET", f"/api/photos/{photo}/thumbnail", token=token)
        self.assertEqual(status, 200)
        self.assertTrue(headers["cache-control"].startswith("private"), headers["cache-control"])
        self.assertNotIn("public", headers["cache-control"])
        self.assertIn("Authorization", headers.get("vary", ""))

    def test_cors_answers_the_allowed_origin_only(self):
        token = self.workspace.add_user("finn")
        status, headers, _ = self.server.request("GET", "/api/status", token=token, headers={"Origin": "https://gallery.example"})
        self.assertEqual(headers.get("access-control-allow-origin"), "https://gallery.example")
        status, headers, _ = self.server.request("GET", "/api/status", token=token, headers={"Origin": "https://other.example"})
        self.assertNotIn("access-control-allow-origin", headers)
        status, headers, _ = self.server.request("OPTIONS", "/api/favorites", headers={
            "Origin": "https://gallery.example", "Access-Control-Request-Method": "POST"})
        self.assertEqual(status, 204)
        self.assertIn("Authorization", headers["access-control-allow-headers"])


class SyncTests(ServedGallery):
    def test_a_sync_with_a_body_it_cannot_use_is_400(self):
        for body in (b'{"pages": 1}', b"garbage"):
            self.assertError(self.server.request("POST", "/api/sync", body=body, headers={"Content-Type": "application/json"}), 400)

    def test_a_sync_starts_once_and_a_running_one_is_409(self):
        lock_path = self.workspace.store + ".sync-lock"
        with open(lock_path, "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            lock.seek(0)
            lock.truncate()
            lock.write("4242\n")
            lock.flush()
            error = self.assertError(self.server.request("POST", "/api/sync"), 409, "sync_running")
            self.assertIn("4242", error["message"])
            fcntl.flock(lock, fcntl.LOCK_UN)
        before = self.server.get_json("/api/status")["lastSync"]["startedAt"]
        time.sleep(1.1)  # startedAt is in whole seconds
        status, _, body = self.server.request("POST", "/api/sync")
        self.assertEqual(status, 202, body)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            last = self.server.get_json("/api/status")["lastSync"]
            if last["startedAt"] != before and last["finishedAt"]:
                break
            time.sleep(0.2)
        else:
            self.fail("the sync pass did not finish")


class LiveListTests(ServedGallery):
    def test_every_list_replayed_equals_the_list_fetched_afterwards(self):
        token = self.workspace.add_user("gus")
        region = self.server.get_json("/api/regions?limit=1")[0]
        photos = [photo["id"] for photo in self.server.get_json(f"/api/regions/{region['id']}/photos")]
        for photo in photos[:3]:
            self.server.request("POST", "/api/favorites", body={"id": photo}, token=token)
        streams = {
            "regions": EventStream(self.server, "/api/regions/changes?limit=30"),
            "photos": EventStream(self.server, f"/api/regions/{region['id']}/photos/changes"),
            "recents": EventStream(self.server, "/api/recents/changes", token=token),
            "favorites": EventStream(self.server, "/api/favorites/changes", token=token),
        }
        for name, stream in streams.items():
            self.addCleanup(stream.close)
            self.assertEqual(stream.status, 200, name)
            self.assertTrue(stream.headers["content-type"].startswith("text/event-stream"))
            self.assertTrue(stream.wait_for(lambda events: len(events) >= 1), name)
            self.assertEqual(stream.events[0]["event"], "snapshot", name)
            self.assertEqual(int(stream.events[0]["id"]), stream.events[0]["data"]["token"])
        # Other processes change every list: a sync that adds regions and photos, views and
        # moves through the CLI, and the API itself.
        for photo in photos[3:9]:
            self.workspace.run("view", photo, "--user", "gus", check=True)
        self.workspace.run("favorites", "move", "1", "3", "--user", "gus", check=True)
        self.server.request("POST", f"/api/photos/{photos[4]}/view", token=token)
        self.server.request("POST", "/api/favorites", body={"id": photos[8]}, token=token)
        time.sleep(1.1)
        self.workspace.run("prune", "--older-than", "1s", check=True)  # every photo but Recents and Favorites
        expected = {
            "regions": lambda: self.server.get_json("/api/regions?limit=30"),
            "photos": lambda: self.server.get_json(f"/api/regions/{region['id']}/photos"),
            "recents": lambda: self.server.get_json("/api/recents", token=token),
            "favorites": lambda: self.server.get_json("/api/favorites", token=token),
        }
        assert_streams_reach(self, streams, expected)
        for name, stream in streams.items():
            self.assertTrue([event for event in stream.events if event["event"] == "batch"], f"{name} had no batch")

    def test_last_event_id_resumes_with_exactly_the_missed_batches(self):
        token = self.workspace.add_user("hana")
        region = self.server.get_json("/api/regions?limit=1")[0]
        photos = [photo["id"] for photo in self.server.get_json(f"/api/regions/{region['id']}/photos")]
        first = EventStream(self.server, "/api/recents/changes", token=token)
        self.assertTrue(first.wait_for(lambda events: len(events) >= 1))
        self.server.request("POST", f"/api/photos/{photos[0]}/view", token=token)
        self.assertTrue(first.wait_for(lambda events: len(events) >= 2))
        first.close()
        seen = first.events[:2]
        last_id = int(seen[-1]["id"])
        for photo in photos[1:11]:  # a burst while disconnected
            self.workspace.run("view", photo, "--user", "hana", check=True)
        again = EventStream(self.server, "/api/recents/changes", token=token, last_event_id=last_id)
        self.addCleanup(again.close)
        wanted = without(self.server.get_json("/api/recents", token=token), "position")
        self.assertTrue(again.wait_for(lambda events: table_from(seen + events).rows() == wanted))
        self.assertTrue(all(event["event"] == "batch" for event in again.events), "no snapshot: the batches were kept")
        self.assertTrue(all(int(event["id"]) > last_id for event in again.events))
        stale = EventStream(self.server, "/api/recents/changes", token=token, last_event_id=1)
        self.addCleanup(stale.close)
        self.assertTrue(stale.wait_for(lambda events: len(events) >= 1))
        self.assertEqual(stale.events[0]["event"], "snapshot", "a token from before the list's history: a fresh snapshot")
        self.assertError(self.server.request("GET", "/api/recents/changes", token=token, headers={"Last-Event-ID": "x"}), 400)

    def test_a_rotated_token_ends_its_open_stream_before_any_new_row(self):
        token = self.workspace.add_user("ivan")
        photos = self._photos()
        stream = EventStream(self.server, "/api/favorites/changes", token=token)
        self.addCleanup(stream.close)
        self.assertTrue(stream.wait_for(lambda events: len(events) >= 1))
        new = self.workspace.json("users", "token", "ivan", "--rotate")["token"]
        status, _, body = self.server.request("POST", "/api/favorites", body={"id": photos[0]}, token=new)
        self.assertIn(status, (200, 201), body)
        self.assertTrue(stream.ended.wait(20), "the stream opened with the old token ends")
        self.assertEqual([event["event"] for event in stream.events], ["snapshot"], "it carried nothing after the rotation")

    def test_a_rotated_token_ends_an_idle_stream_at_once(self):
        token = self.workspace.add_user("idle-ivy")
        stream = EventStream(self.server, "/api/recents/changes", token=token)
        self.addCleanup(stream.close)
        self.assertTrue(stream.wait_for(lambda events: len(events) >= 1))
        self.workspace.json("users", "token", "idle-ivy", "--rotate")
        self.assertTrue(stream.ended.wait(5), "ended by the rotation itself, not at the next heartbeat (15 s)")

    def test_a_removed_users_streams_and_history_never_reach_a_new_user(self):
        carol = self.workspace.add_user("carol2")
        photos = self._photos()
        stream = EventStream(self.server, "/api/recents/changes", token=carol)
        self.addCleanup(stream.close)
        self.assertTrue(stream.wait_for(lambda events: len(events) >= 1))
        self.server.request("POST", f"/api/photos/{photos[1]}/view", token=carol)
        self.assertTrue(stream.wait_for(lambda events: len(events) >= 2))
        last_id = int(stream.events[-1]["id"])
        self.workspace.run("users", "remove", "carol2", check=True)
        dave = self.workspace.add_user("dave2")
        self.server.request("POST", f"/api/photos/{photos[2]}/view", token=dave)
        self.assertTrue(stream.ended.wait(20), "the removed user's stream ends")
        seen = [row["id"] for event in stream.events for row in self._rows(event["data"])]
        self.assertNotIn(photos[2], seen, "the new user's view never reached the removed user's stream")
        resumed = EventStream(self.server, "/api/recents/changes", token=dave, last_event_id=last_id)
        self.addCleanup(resumed.close)
        self.assertTrue(resumed.wait_for(lambda events: len(events) >= 1))
        self.assertEqual(resumed.events[0]["event"], "snapshot", "another user's event id resumes nothing")
        self.assertEqual([row["id"] for row in self._rows(resumed.events[0]["data"])], [photos[2]])

    def _photos(self):
        region = self.server.get_json("/api/regions?limit=1")[0]
        return [photo["id"] for photo in self.server.get_json(f"/api/regions/{region['id']}/photos")]

    @staticmethod
    def _rows(data):
        """Every row an event carries, wherever it sits in the event."""
        found = []
        def walk(value):
            if isinstance(value, dict):
                if "id" in value and "title" in value:
                    found.append(value)
                for item in value.values():
                    walk(item)
            elif isinstance(value, list):
                for item in value:
                    walk(item)
        walk(data)
        return found

    def test_streams_per_client_address_are_limited(self):
        server = Server(self.workspace, "--max-streams-per-address", "2")
        self.addCleanup(server.stop)
        streams = [EventStream(server, "/api/regions/changes") for _ in range(2)]
        for stream in streams:
            self.addCleanup(stream.close)
            self.assertEqual(stream.status, 200)
        third = EventStream(server, "/api/regions/changes")
        self.assertEqual(third.status, 429)
        self.assertEqual(json.loads(third.body)["error"]["code"], "too_many_streams")
        # A client that hangs up gives its slot back within seconds, not at the next heartbeat.
        streams[0].close()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            again = EventStream(server, "/api/regions/changes")
            self.addCleanup(again.close)
            if again.status == 200:
                break
            time.sleep(0.25)
        self.assertEqual(again.status, 200, "the closed stream's slot was given back")


class LargeListTests(unittest.TestCase):
    """A list whose snapshot, or one batch, is larger than a stream's 1 MiB of backlog."""

    def test_a_list_of_megabytes_streams_whole_to_a_client_that_reads(self):
        workspace = Workspace()
        self.addCleanup(workspace.close)
        flickr = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "Fixtures", "FlickrServer", "flickr_server.py"),
                                   "--data", os.path.join(ROOT, "SampleData")], stdout=subprocess.PIPE, text=True)
        self.addCleanup(flickr.wait, 10)
        self.addCleanup(flickr.terminate)
        port = int(flickr.stdout.readline().split()[1])
        with open(os.path.join(ROOT, "SampleData", "json", "flickr.photos.search", "page-0001.json")) as file:
            base = next(photo for photo in json.load(file)["photos"]["photo"] if photo.get("place_id"))
        region = workspace.json("photo", base["id"])["regionID"]
        # 4,500 photos at that photo's place, about 1.8 MB as a list.
        extra = [dict(base, id=str(73_000_000_000 + index), title=f"Sunset over the old harbour, evening walk {index} " + "·" * 40,
                      owner=f"{index}@N11", ownername=f"Photographer {index}", dateupload=str(int(time.time()) - 60))
                 for index in range(4_500)]
        fault = json.dumps({"method": "flickr.photos.search", "page": "1", "extra_photos": extra, "times": -1}).encode()
        control = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        control.request("POST", "/_control/faults", body=fault, headers={"Content-Type": "application/json"})
        answer = control.getresponse()
        answer.read()
        control.close()
        self.assertLess(answer.status, 300, "the test server took the extra photos")

        server = Server(workspace)
        self.addCleanup(server.stop)
        before = EventStream(server, f"/api/regions/{region}/photos/changes")
        self.addCleanup(before.close)
        self.assertTrue(before.wait_for(lambda events: len(events) >= 1))
        synced = workspace.run("sync", "--endpoint", f"http://127.0.0.1:{port}/services/rest/", "--api-key", "k",
                               "--rate-limit", "none", "--pages", "1", "--per-page", "500", "--json", check=True)
        self.assertEqual(json.loads(synced.stdout)["photos"]["new"], 4_500, synced.stdout[:300])
        status, _, body = server.request("GET", f"/api/regions/{region}/photos")
        self.assertEqual(status, 200)
        self.assertGreater(len(body), 1 << 20, "the list is larger than a stream's backlog")
        wanted = json.loads(body)
        reached = before.wait_for(lambda events: table_from(events).rows() == wanted, timeout=30)
        self.assertTrue(reached, f"a batch of more than 1 MiB reaches a client that reads: {len(before.events)} events, "
                                 f"ended {before.ended.is_set()}, {len(table_from(before.events).rows())} rows of {len(wanted)}; "
                                 f"{server.log_text()[-800:]}")
        fresh = EventStream(server, f"/api/regions/{region}/photos/changes")
        self.addCleanup(fresh.close)
        self.assertTrue(fresh.wait_for(lambda events: len(events) >= 1, timeout=30), "a snapshot of more than 1 MiB is sent")
        self.assertEqual(table_from(fresh.events).rows(), wanted)


class LifecycleTests(unittest.TestCase):
    assertError = ServedGallery.assertError

    @classmethod
    def setUpClass(cls):
        cls.workspace = Workspace(pages=1)
        cls.addClassCleanup(cls.workspace.close)

    def test_sigterm_ends_streams_and_exits_0_within_5_seconds(self):
        server = Server(self.workspace)
        self.addCleanup(server.stop)
        stream = EventStream(server, "/api/regions/changes")
        self.addCleanup(stream.close)
        self.assertTrue(stream.wait_for(lambda events: len(events) >= 1))
        started = time.monotonic()
        status = server.stop(timeout=10)
        elapsed = time.monotonic() - started
        self.assertEqual(status, 0, server.log_text())
        self.assertLess(elapsed, 5)
        self.assertTrue(stream.ended.wait(2), "the stream ended")
        with self.assertRaises(OSError):
            socket.create_connection(("127.0.0.1", server.port), timeout=1).close()

    def test_sigterm_answers_a_request_still_waiting_and_exits_0_within_5_seconds(self):
        server = Server(self.workspace)
        self.addCleanup(server.stop)
        token = self.workspace.add_user("waiting")
        region = self.workspace.json("regions", "--limit", "1")[0]["id"]
        photo = self.workspace.json("photos", "--region", region)[0]["id"]
        # Another process holds the store's write lock: the view waits for it, suspended.
        holder = sqlite3.connect(self.workspace.store, isolation_level=None, timeout=1)
        self.addCleanup(holder.close)
        holder.execute("BEGIN IMMEDIATE")
        outcome = {}

        def view():
            try:
                outcome["answer"] = server.request("POST", f"/api/photos/{photo}/view", token=token)
            except OSError as error:
                outcome["answer"] = error

        viewer = threading.Thread(target=view)
        viewer.start()
        time.sleep(1)
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        with self.assertRaises(ConnectionRefusedError, msg="while draining, a new connection is refused at once"):
            socket.create_connection(("127.0.0.1", server.port), timeout=2).close()
        status = server.stop(timeout=10)
        elapsed = time.monotonic() - started
        viewer.join(10)
        holder.execute("ROLLBACK")
        self.assertEqual(status, 0, server.log_text())
        self.assertLess(elapsed, 5)
        answer = outcome.get("answer")
        self.assertIsInstance(answer, tuple, f"the waiting request was answered: {answer!r}")
        self.assertError(answer, 503, "shutting_down")
        self.assertEqual(self.workspace.json("recents", "--user", "waiting"), [], "nothing was half-written")

    def test_sigterm_ends_a_sync_pass_waiting_for_the_store_within_5_seconds(self):
        server = Server(self.workspace)
        self.addCleanup(server.stop)
        holder = sqlite3.connect(self.workspace.store, isolation_level=None, timeout=1)
        self.addCleanup(holder.close)
        holder.execute("BEGIN IMMEDIATE")
        self.assertEqual(server.request("POST", "/api/sync")[0], 202)
        time.sleep(1)  # the pass now waits for the lock (up to a minute)
        started = time.monotonic()
        status = server.stop(timeout=30)
        elapsed = time.monotonic() - started
        holder.execute("ROLLBACK")
        self.assertEqual(status, 0, server.log_text())
        self.assertLess(elapsed, 5, "the pass's wait for the lock ends with the server")

    def test_a_slow_client_is_cut_off(self):
        server = Server(self.workspace, "--request-timeout", "1s")
        self.addCleanup(server.stop)
        client = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        self.addCleanup(client.close)
        client.sendall(b"GET /api/regions HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        received = b""
        try:
            while True:
                chunk = client.recv(4096)
                if not chunk:
                    break
                received += chunk
                client.sendall(b"X-a: b\r\n")
        except OSError:
            pass
        self.assertLess(time.monotonic() - started, 6, "a request's headers may not take forever")
        self.assertEqual(server.request("GET", "/api/status")[0], 200, "others are still served")

    def test_a_slow_body_is_cut_off(self):
        server = Server(self.workspace, "--request-timeout", "1s")
        self.addCleanup(server.stop)
        token = self.workspace.add_user("slowbody")
        client = socket.create_connection(("127.0.0.1", server.port), timeout=1)
        self.addCleanup(client.close)
        client.sendall(f"POST /api/favorites HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
                       "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n".encode())
        started = time.monotonic()
        closed = False
        while not closed and time.monotonic() - started < 8:
            try:
                client.sendall(b" ")  # one byte at a time: never idle, never done
                if client.recv(4096) == b"":
                    closed = True
            except socket.timeout:
                continue
            except OSError:
                closed = True
        self.assertTrue(closed, "a body sent a byte at a time is cut off")
        self.assertLess(time.monotonic() - started, 6)
        self.assertEqual(server.request("GET", "/api/status")[0], 200, "others are still served")

    def test_listen_address_is_checked(self):
        for address in ["localhost:80", "127.0.0.1", "1.2.3.4.5:1", "127.0.0.1:99999"]:
            result = self.workspace.run("serve", "--listen", address)
            self.assertEqual(result.returncode, 64, f"{address}: {result.stderr}")
            self.assertIn("--listen", result.stderr)

    def test_a_missing_store_is_refused(self):
        result = subprocess.run([tool_path(), "--store", os.path.join(self.workspace.directory, "none", "x.sqlite"), "serve",
                                 "--listen", "127.0.0.1:0"], capture_output=True, text=True, env=self.workspace.environment, timeout=30)
        self.assertEqual(result.returncode, 1)
        self.assertIn("no store", result.stderr)


if __name__ == "__main__":
    unittest.main()
