#!/usr/bin/env python3
"""A Flickr-compatible REST server for tests, on 127.0.0.1, serving a SampleData directory
(as written by SampleData/generate.py) and injecting faults on request.

    python3 flickr_server.py --data SampleData [--port 0] [--api-key KEY]

Prints "PORT <n>" on stdout once it listens. Endpoints:

    GET  /services/rest/?method=flickr.photos.search|flickr.places.getInfo&format=json|rest…
    GET  /<server>/<id>_<secret>_<size>.jpg          image files (any path ending in a file
                                                     name found in the data's images/)
    POST /_control/faults        add faults: a JSON object or list of objects
    DELETE /_control/faults      clear faults
    POST /_control/rate_limit    {"calls": N, "window": seconds}: 429 + Retry-After past N
    GET  /_control/requests      the requests served so far (JSON list)
    GET  /_control/stats         {"max_in_flight": most requests served at once}
    DELETE /_control/requests    forget them

A fault matches requests by "method", "page", "place_id", "path_contains" (all optional),
applies "times" times (default 1, -1 for ever), and does one or more of:
    "status": HTTP status     "retry_after": seconds (header)    "delay": seconds
    "truncate": keep only this fraction of the body (0..1), the connection closing early;
                a negative fraction cuts the body but sends a matching Content-Length
    "malformed": true
    "fail_code": Flickr error code (with "fail_message")         "body_bytes": a body this big
    "dtd": an XML body that declares entities (billion laughs)
    "deep": N, elements (XML) or arrays (JSON) nested N deep inside the photos
    "utf16_dtd": true, a UTF-16 XML body that declares and uses an entity
    "patch": [{"index": i, "set": {field: value}, "remove": [field]}], applied to the photos
                of a photos.search answer (no "index": every photo)
    "extra_photos": [photo objects], appended to a photos.search page
    "place_patch": {"region": name, "country": name, "locality": name}, applied to a
                places.getInfo answer, in either format
    "body_text": a body to send as it is, with "content_type" (default text/html)
    "body_hex": the same for bytes, written in hex
"""
import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape, quoteattr


class Data:
    def __init__(self, directory):
        self.directory = directory
        self.photos = []
        search = os.path.join(directory, "json", "flickr.photos.search")
        for name in sorted(os.listdir(search)):
            with open(os.path.join(search, name), encoding="utf-8") as handle:
                self.photos += json.load(handle)["photos"]["photo"]

    def place(self, place_id, fmt):
        if not place_id or "/" in place_id or place_id.strip(".") == "":
            return None
        ext = "json" if fmt == "json" else "xml"
        path = os.path.join(self.directory, fmt if fmt == "json" else "xml", "flickr.places.getInfo", f"{place_id}.{ext}")
        if not os.path.exists(path):
            return None
        with open(path, "rb") as handle:
            return handle.read()

    def image(self, name):
        if "/" in name or name.strip(".") == "":
            return None
        path = os.path.join(self.directory, "images", name)
        if not os.path.exists(path):
            return None
        with open(path, "rb") as handle:
            return handle.read()


def search_body(photos, page, per_page, total, fmt):
    pages = max(1, (total + per_page - 1) // per_page)
    if fmt == "json":
        return json.dumps({"photos": {"page": page, "pages": pages, "perpage": per_page, "total": str(total),
                                      "photo": photos}, "stat": "ok"}, ensure_ascii=False).encode()
    lines = ['<?xml version="1.0" encoding="utf-8" ?>', '<rsp stat="ok">',
             f'<photos page="{page}" pages="{pages}" perpage="{per_page}" total="{total}">']
    for photo in photos:
        attributes = " ".join(f"{key}={quoteattr(str(value))}" for key, value in photo.items() if key != "description")
        description = photo.get("description", {})
        text = description.get("_content", "") if isinstance(description, dict) else str(description)
        lines.append(f"\t<photo {attributes}>\n\t\t<description>{escape(text)}</description>\n\t</photo>")
    lines += ["</photos>", "</rsp>", ""]
    return "\n".join(lines).encode()


def failure_body(code, message, fmt):
    if fmt == "json":
        return json.dumps({"stat": "fail", "code": code, "message": message}).encode()
    return (f'<?xml version="1.0" encoding="utf-8" ?>\n<rsp stat="fail">\n\t<err code="{code}" msg={quoteattr(message)} />\n'
            f"</rsp>\n").encode()


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<rsp stat="ok"><photos page="1" pages="1" perpage="1" total="1"><photo id="1" owner="x" title="&lol3;"/></photos></rsp>
"""


def deep_body(depth, fmt):
    if fmt == "json":
        return ('{"stat": "ok", "photos": {"page": 1, "pages": 1, "perpage": 1, "total": "1", "photo": '
                + "[" * depth + "]" * depth + "}}").encode()
    return ('<?xml version="1.0" encoding="utf-8" ?><rsp stat="ok"><photos page="1" pages="1" perpage="1" total="1">'
            + "<a>" * depth + "</a>" * depth + "</photos></rsp>").encode()


UTF16_DTD = ('<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE rsp [<!ENTITY title "entity text">]>\n'
             '<rsp stat="ok"><photos page="1" pages="1" perpage="1" total="1">'
             '<photo id="1" owner="x" title="&title;"/></photos></rsp>\n').encode("utf-16")


def patch_photos(photos, patches):
    photos = [dict(photo) for photo in photos]
    for patch in patches or []:
        indexes = [patch["index"]] if "index" in patch else range(len(photos))
        for index in indexes:
            if 0 <= index < len(photos):
                photos[index].update(patch.get("set", {}))
                for field in patch.get("remove", []):
                    photos[index].pop(field, None)
    return photos


def place_xml(place):
    """A places.getInfo answer in XML from its JSON form."""
    def attributes(level):
        return " ".join(f"{key}={quoteattr(str(value))}" for key, value in level.items()
                        if not isinstance(value, dict) and key != "_content")
    parts = []
    for name in ("locality", "county", "region", "country"):
        level = place.get(name)
        if isinstance(level, dict):
            parts.append(f"<{name} {attributes(level)}>{escape(str(level.get('_content', '')))}</{name}>")
    return (f'<?xml version="1.0" encoding="utf-8" ?>\n<rsp stat="ok">\n<place {attributes(place)}>'
            + "".join(parts) + "</place>\n</rsp>\n").encode()


def patched_place(raw_json, patch, fmt):
    document = json.loads(raw_json)
    place = document["place"]
    for name, value in patch.items():
        if isinstance(place.get(name), dict):
            place[name]["_content"] = value
    if fmt == "json":
        return json.dumps(document, ensure_ascii=False).encode()
    return place_xml(place)


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.faults = []
        self.requests = []
        self.rate_limit = None
        self.rate_calls = []
        self.in_flight = 0
        self.max_in_flight = 0

    def take_fault(self, method, query, path):
        with self.lock:
            for fault in self.faults:
                if fault.get("method") and fault["method"] != method:
                    continue
                if "page" in fault and str(fault["page"]) != query.get("page", "1"):
                    continue
                if fault.get("place_id") and fault["place_id"] != query.get("place_id"):
                    continue
                if fault.get("path_contains") and fault["path_contains"] not in path:
                    continue
                if fault.get("times", 1) == 0:
                    continue
                if fault.get("times", 1) > 0:
                    fault["times"] = fault.get("times", 1) - 1
                return dict(fault)
        return None

    def rate_limited(self):
        """Seconds to wait, or None when the call is allowed (and counted)."""
        with self.lock:
            if not self.rate_limit:
                return None
            now = time.time()
            window = self.rate_limit["window"]
            self.rate_calls = [t for t in self.rate_calls if t > now - window]
            if len(self.rate_calls) >= self.rate_limit["calls"]:
                return max(1, int(self.rate_calls[0] + window - now + 0.999))
            self.rate_calls.append(now)
            return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FlickrTestServer/1.0"

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type, headers=None, delay=0, truncate=None):
        if delay:
            time.sleep(delay)
        # A request stops being in flight once its answer is ready: the client may start the
        # next one as soon as it has read this one, before this thread runs on.
        self.leave_flight()
        full_length = len(body)
        quietly = truncate is not None and truncate < 0
        if truncate is not None:
            body = body[:int(len(body) * abs(truncate))]
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        # A truncated body is announced at full length, as a dropped connection would be;
        # truncated "quietly" (a negative fraction), the HTTP exchange itself looks complete.
        self.send_header("Content-Length", str(len(body) if truncate is None or quietly else full_length))
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        try:
            self.wfile.write(body)
            if truncate is not None and not quietly:
                self.close_connection = True
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        state = self.server.state
        if self.path.startswith("/_control/"):
            return self.control_get()
        with state.lock:
            state.in_flight += 1
            state.max_in_flight = max(state.max_in_flight, state.in_flight)
        self.in_flight = True
        try:
            self.serve()
        finally:
            self.leave_flight()

    def leave_flight(self):
        if getattr(self, "in_flight", False):
            self.in_flight = False
            with self.server.state.lock:
                self.server.state.in_flight -= 1

    def control_get(self):
        state = self.server.state
        with state.lock:
            if self.path == "/_control/requests":
                body = json.dumps(state.requests).encode()
            elif self.path == "/_control/stats":
                body = json.dumps({"max_in_flight": state.max_in_flight}).encode()
            else:
                body = None
        if body is None:
            return self.send(404, b"no such control", "text/plain")
        return self.send(200, body, "application/json")

    def serve(self):
        parsed = urlparse(self.path)
        query = {key: values[-1] for key, values in parse_qs(parsed.query).items()}
        state = self.server.state
        with state.lock:
            state.requests.append({"path": parsed.path, "query": query, "time": time.time()})
        method = query.get("method")
        fmt = "json" if query.get("format") == "json" else "rest"
        content_type = "application/json" if fmt == "json" else "text/xml; charset=utf-8"
        fault = state.take_fault(method, query, parsed.path) or {}
        headers = {}
        if "retry_after" in fault:
            headers["Retry-After"] = fault["retry_after"]
        delay = fault.get("delay", 0)
        truncate = fault.get("truncate")
        if method:
            wait = state.rate_limited()
            if wait is not None:
                return self.send(429, b"rate limited", "text/plain", {"Retry-After": wait})
        if "status" in fault:
            return self.send(fault["status"], b"injected failure", "text/plain", headers, delay)
        if fault.get("body_bytes"):
            return self.send(200, b" " * fault["body_bytes"], content_type, headers, delay)
        if fault.get("malformed"):
            body = b'{"photos": {"page": 1, "photo": [' if fmt == "json" else b"<rsp stat=\"ok\"><photos><photo id=\"1\"</photos>"
            return self.send(200, body, content_type, headers, delay)
        if fault.get("dtd"):
            return self.send(200, BILLION_LAUGHS, "text/xml", headers, delay)
        if fault.get("deep"):
            return self.send(200, deep_body(int(fault["deep"]), fmt), content_type, headers, delay)
        if fault.get("utf16_dtd"):
            return self.send(200, UTF16_DTD, "text/xml; charset=utf-16", headers, delay)
        if "body_text" in fault:
            return self.send(200, fault["body_text"].encode(), fault.get("content_type", "text/html"), headers, delay)
        if "body_hex" in fault:
            return self.send(200, bytes.fromhex(fault["body_hex"]), fault.get("content_type", "text/html"), headers, delay)
        if "fail_code" in fault:
            body = failure_body(fault["fail_code"], fault.get("fail_message", "Injected failure"), fmt)
            return self.send(200, body, content_type, headers, delay, truncate)
        if method is None:
            image = self.server.data.image(os.path.basename(parsed.path))
            if image is None:
                return self.send(404, b"not found", "text/plain", headers, delay)
            return self.send(200, image, "image/jpeg", headers, delay, truncate)
        api_key = self.server.api_key
        if api_key is not None and query.get("api_key") != api_key:
            return self.send(200, failure_body(100, "Invalid API Key (Key has invalid format)", fmt), content_type, headers, delay)
        if method == "flickr.photos.search":
            body = self.search(query, fmt, fault)
        elif method == "flickr.places.getInfo":
            if fault.get("place_patch"):
                raw = self.server.data.place(query.get("place_id", ""), "json")
                body = patched_place(raw, fault["place_patch"], fmt) if raw is not None else None
            else:
                body = self.server.data.place(query.get("place_id", ""), fmt)
            if body is None:
                body = failure_body(2, "Not a valid place id", fmt)
        else:
            body = failure_body(112, f'Method "{method}" not found', fmt)
        return self.send(200, body, content_type, headers, delay, truncate)

    def search(self, query, fmt, fault):
        page = max(1, int(query.get("page", "1") or 1))
        per_page = min(500, max(1, int(query.get("per_page", "100") or 100)))
        photos = self.server.data.photos
        if "min_upload_date" in query:
            minimum = float(query["min_upload_date"])
            photos = [p for p in photos if float(p.get("dateupload", 0)) >= minimum]
        start = (page - 1) * per_page
        chosen = patch_photos(photos[start:start + per_page], fault.get("patch"))
        chosen += fault.get("extra_photos", [])
        return search_body(chosen, page, per_page, len(photos), fmt)

    def read_json(self):
        length = int(self.headers.get("Content-Length", "0"))
        return json.loads(self.rfile.read(length) or b"null")

    def do_POST(self):
        state = self.server.state
        payload = self.read_json()
        if self.path == "/_control/faults":
            with state.lock:
                state.faults += payload if isinstance(payload, list) else [payload]
        elif self.path == "/_control/rate_limit":
            with state.lock:
                state.rate_limit = payload
                state.rate_calls = []
        else:
            return self.send(404, b"no such control", "text/plain")
        self.send(200, b"{}", "application/json")

    def do_DELETE(self):
        state = self.server.state
        with state.lock:
            if self.path == "/_control/faults":
                state.faults = []
            elif self.path == "/_control/requests":
                state.requests = []
            else:
                return self.send(404, b"no such control", "text/plain")
        self.send(200, b"{}", "application/json")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.data = Data(args.data)
    server.state = State()
    server.api_key = args.api_key
    # Foundation's Process starts children with the spawning thread's signal mask (almost
    # everything blocked), and a test runner may start us with SIGTERM ignored: take SIGTERM
    # back, and also leave when the test process that started us is gone.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    parent = os.getppid()

    def watch_parent():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
