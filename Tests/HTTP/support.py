"""What the HTTP end-to-end tests share: the built tool, a server it runs on a free loopback
port (always stopped), an HTTP client on http.client, an SSE reader, and a table model that
applies change batches as UIKit would (written here, independently of the server's code).
"""

import http.client
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def tool_path():
    path = os.environ.get("TOPREGIONS_BIN") or os.path.join(ROOT, ".build", "debug", "topregions")
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest(f"no built tool at {path}: run swift build first (or set TOPREGIONS_BIN)")
    return path


class Workspace:
    """A temporary folder with a store synced from SampleData."""

    _template = None

    def __init__(self, pages=2):
        self.directory = tempfile.mkdtemp(prefix="topregions-http-")
        self.store = os.path.join(self.directory, "store.sqlite")
        self.environment = dict(os.environ)
        for name in ("FLICKR_API_KEY", "FLICKR_ENDPOINT", "FLICKR_API_KEY_FILE", "TOPREGIONS_STORE"):
            self.environment.pop(name, None)
        self.environment["XDG_CACHE_HOME"] = self.directory
        result = self.run("sync", "--pages", str(pages), "--per-page", "200")
        if result.returncode != 0:
            raise AssertionError(f"sync failed: {result.stderr}")

    def run(self, *arguments, check=False):
        result = subprocess.run([tool_path(), "--store", self.store, *arguments], capture_output=True, text=True,
                                env=self.environment, timeout=120)
        if check and result.returncode != 0:
            raise AssertionError(f"topregions {' '.join(arguments)} exited {result.returncode}: {result.stderr}")
        return result

    def json(self, *arguments):
        return json.loads(self.run(*arguments, "--json", check=True).stdout)

    def add_user(self, name):
        return self.json("users", "add", name)["token"]

    def close(self):
        shutil.rmtree(self.directory, ignore_errors=True)


class Server:
    """`topregions serve` on a free loopback port; `stop` (also on failure, by cleanup)."""

    def __init__(self, workspace, *arguments, listen="127.0.0.1:0"):
        self.log = open(os.path.join(workspace.directory, "serve.log"), "a+")
        self.process = subprocess.Popen([tool_path(), "--store", workspace.store, "serve", "--listen", listen, *arguments],
                                        stdout=subprocess.PIPE, stderr=self.log, env=workspace.environment)
        line = self._first_line(10)
        prefix = "listening on http://127.0.0.1:"
        if not line.startswith(prefix):
            self.stop()
            raise AssertionError(f"serve did not say where it listens: {line!r}; log: {self.log_text()}")
        self.port = int(line[len(prefix):].strip())

    def _first_line(self, timeout):
        deadline = time.monotonic() + timeout
        data = b""
        while b"\n" not in data and time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.1)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 4096)
                if not chunk:
                    break
                data += chunk
        return data.decode("utf-8", "replace").split("\n")[0]

    def connection(self, timeout=10):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, token=None, headers=None):
        """(status, headers as a dict with lowercase names, body bytes)."""
        connection = self.connection()
        try:
            sent = dict(headers or {})
            if token:
                sent["Authorization"] = f"Bearer {token}"
            if body is not None and not isinstance(body, (bytes, str)):
                body = json.dumps(body)
                sent.setdefault("Content-Type", "application/json")
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
            data = response.read()
            return response.status, {name.lower(): value for name, value in response.getheaders()}, data
        finally:
            connection.close()

    def get_json(self, path, token=None, expect=200):
        status, headers, data = self.request("GET", path, token=token)
        if status != expect:
            raise AssertionError(f"GET {path}: {status} {data[:300]!r}, expected {expect}")
        return json.loads(data)

    def log_text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log.name) as log:
            return log.read()

    def stop(self, timeout=10):
        """SIGTERM; the exit status (killed after `timeout`)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        self.log.close()
        return self.process.returncode


class EventStream:
    """Reads a change stream on its own thread: every event, in order."""

    def __init__(self, server, path, token=None, last_event_id=None):
        self.connection = server.connection(timeout=60)
        headers = {"Accept": "text/event-stream"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.connection.request("GET", path, headers=headers)
        # Kept here: with `Connection: close` http.client hands the socket to the response
        # and forgets it, and close() must still be able to shut it.
        self.socket = self.connection.sock
        self.response = self.connection.getresponse()
        self.status = self.response.status
        self.headers = {name.lower(): value for name, value in self.response.getheaders()}
        self.events = []
        self.ended = threading.Event()
        self.lock = threading.Condition()
        if self.status == 200:
            threading.Thread(target=self._read, daemon=True).start()
        else:
            self.body = self.response.read()
            self.ended.set()

    def _read(self):
        fields = {}
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                line = line.decode("utf-8").rstrip("\n")
                if line == "":
                    if "data" in fields:
                        with self.lock:
                            self.events.append({"id": fields.get("id"), "event": fields.get("event"), "data": json.loads(fields["data"])})
                            self.lock.notify_all()
                    fields = {}
                elif line.startswith(":"):
                    continue
                else:
                    name, _, value = line.partition(":")
                    fields[name] = value[1:] if value.startswith(" ") else value
        except (OSError, ValueError, AttributeError):  # AttributeError: closed by close()
            pass
        finally:
            self.ended.set()
            with self.lock:
                self.lock.notify_all()

    def wait_for(self, predicate, timeout=15):
        deadline = time.monotonic() + timeout
        with self.lock:
            while not predicate(self.events):
                remaining = deadline - time.monotonic()
                if remaining <= 0 or (self.ended.is_set() and not predicate(self.events)):
                    return False
                self.lock.wait(min(remaining, 0.2))
            return True

    def close(self):
        # Shut the socket first: the reader thread holds the response's buffer while it
        # waits for a line, and closing the response would wait for it.
        try:
            self.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.ended.wait(5)
        try:
            self.response.close()
            self.connection.close()
        except OSError:
            pass


class TableModel:
    """A table built from a snapshot and kept by applying each batch with UIKit's rules:
    deletes, moves' sources and reloads at old index paths; inserts, moves' destinations and
    reloads at new ones; an inserted section carries its rows."""

    def __init__(self, snapshot):
        self.sections = [{"name": section["name"], "value": section["value"], "rows": list(section["rows"])}
                         for section in snapshot["sections"]]
        self.token = snapshot["token"]

    def apply(self, batch):
        if batch["token"] <= self.token:
            raise AssertionError(f"batch {batch['token']} is not newer than {self.token}")
        removed = {tuple(path) for path in batch["deletes"]}
        removed |= {(move[0], move[1]) for move in batch["moves"]}
        removed |= {(update[0], update[1]) for update in batch["updates"]}
        for section, row in removed:
            if section >= len(self.sections) or row >= len(self.sections[section]["rows"]):
                raise AssertionError(f"old index path {[section, row]} is outside the table")
        deleted = set(batch["sectionDeletes"])
        kept = []
        for index, section in enumerate(self.sections):
            if index in deleted:
                continue
            rows = [row for number, row in enumerate(section["rows"]) if (index, number) not in removed]
            kept.append({"name": section["name"], "value": section["value"], "rows": rows})
        for insert in sorted(batch["sectionInserts"], key=lambda insert: insert["index"]):
            kept.insert(insert["index"], {"name": insert["name"], "value": insert["value"], "rows": list(insert["rows"])})
        arrivals = [(insert[0], insert[1], insert[2]) for insert in batch["inserts"]]
        arrivals += [(move[2], move[3], move[4]) for move in batch["moves"]]
        arrivals += [(update[2], update[3], update[4]) for update in batch["updates"]]
        for section, row, value in sorted(arrivals, key=lambda arrival: (arrival[0], arrival[1])):
            if section >= len(kept) or row > len(kept[section]["rows"]):
                raise AssertionError(f"new index path {[section, row]} is outside the table")
            kept[section]["rows"].insert(row, value)
        self.sections = kept
        self.token = batch["token"]

    def rows(self, ignoring=()):
        return [{key: value for key, value in row.items() if key not in ignoring} for section in self.sections for row in section["rows"]]


def table_from(events):
    """The table the events build: the last snapshot, then every batch after it."""
    model = None
    for event in events:
        if event["event"] == "snapshot":
            model = TableModel(event["data"])
        elif model is not None:
            model.apply(event["data"])
    return model


def without(rows, *keys):
    return [{key: value for key, value in row.items() if key not in keys} for row in rows]


def assert_streams_reach(test, streams, expected, positional=("rank", "position")):
    """Each stream's replayed table reaches its list as `expected[name]()` gives it (rank
    and position, places in the list, left out: a row that only shifts is not resent), and
    its event ids increase, none twice."""
    for name, stream in streams.items():
        wanted = without(expected[name](), *positional)
        reached = stream.wait_for(lambda events: table_from(events).rows(positional) == wanted, timeout=20)
        table = table_from(stream.events)
        test.assertTrue(reached, f"{name}: the replayed table\n{table.rows(positional)}\nis not the list\n{wanted}")
        tokens = [int(event["id"]) for event in stream.events]
        test.assertEqual(tokens, sorted(set(tokens)), f"{name}: ids increase, none twice")
