"""`topregions serve` on a PostgreSQL store: two servers (as on two hosts) on one database,
their change streams hearing each other's writes and the command line's. A throwaway
PostgreSQL server is started for the module (initdb into a temporary folder, pg_ctl on a
free loopback port) and stopped after it, whatever happens.
"""

import glob
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest

from support import EventStream, Server, Workspace, assert_streams_reach, tool_path

ENABLING = "scripts/install-dependencies --test (installs Debian's postgresql), or scripts/test"


class ThrowawayPostgres:
    """A PostgreSQL server of the tests' own, on 127.0.0.1 and a free port."""

    def __init__(self):
        programs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not programs:
            if os.environ.get("TOPREGIONS_REQUIRE_POSTGRES") == "1":
                raise AssertionError(f"PostgreSQL is required but not installed: {ENABLING}")
            raise unittest.SkipTest(f"PostgreSQL is not installed: {ENABLING}")
        self.programs = os.path.dirname(programs[-1])
        self.directory = tempfile.mkdtemp(prefix="topregions-http-postgres-")
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres")
        self._as_server_user(["initdb", "-D", self.directory + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8",
                              "--locale=C", "--no-sync"])
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        options = f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._as_server_user(["pg_ctl", "-D", self.directory + "/data", "-l", self.directory + "/server.log", "-o", options,
                              "-w", "-t", "60", "start"])
        self.databases = 0

    def _as_server_user(self, arguments):
        command = [os.path.join(self.programs, arguments[0]), *arguments[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        subprocess.run(command, check=True, capture_output=True, timeout=120)

    def make_database(self):
        self.databases += 1
        name = f"http_{self.databases}"
        subprocess.run([os.path.join(self.programs, "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                        "--template=template0", name], check=True, capture_output=True, timeout=60)
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self):
        try:
            self._as_server_user(["pg_ctl", "-D", self.directory + "/data", "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)


server = None


def setUpModule():
    global server
    server = ThrowawayPostgres()


def tearDownModule():
    if server is not None:
        server.stop()


class PostgresWorkspace(Workspace):
    """A workspace whose gallery, synced into a file, is copied into a new database: the
    tool and the servers then run on the database."""

    def __init__(self):
        super().__init__()
        url = server.make_database()
        self.run("copy", "--to", url, check=True)
        self.sqlite = self.store
        self.store = url


class TwoServersOnOneDatabase(unittest.TestCase):
    def setUp(self):
        self.workspace = PostgresWorkspace()
        self.addCleanup(self.workspace.close)
        self.first = Server(self.workspace)
        self.addCleanup(self.first.stop)
        self.second = Server(self.workspace)
        self.addCleanup(self.second.stop)

    def test_catalogue_equals_the_file_served(self):
        sqlite = Workspace.__new__(Workspace)
        sqlite.__dict__.update(self.workspace.__dict__)
        sqlite.store = self.workspace.sqlite
        on_file = Server(sqlite)
        self.addCleanup(on_file.stop)
        regions = on_file.get_json("/api/regions?limit=100")
        self.assertEqual(self.first.get_json("/api/regions?limit=100"), regions)
        self.assertEqual(self.second.get_json("/api/regions?limit=100"), regions)
        for region in regions[:3]:
            path = f"/api/regions/{region['id']}/photos"
            self.assertEqual(self.first.get_json(path), on_file.get_json(path), path)
        status = self.first.get_json("/api/status")
        self.assertEqual(status["photos"], on_file.get_json("/api/status")["photos"])
        self.assertNotIn("postgres@", status["store"], "the status names the database, not its URL")

    def test_status_shows_a_daemon_of_the_database_without_its_host(self):
        daemon = subprocess.Popen([tool_path(), "--store", self.workspace.store, "daemon", "--interval", "1h",
                                   "--endpoint", "http://127.0.0.1:9/services/rest/", "--rate-limit", "none"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=self.workspace.environment)
        self.addCleanup(daemon.wait)
        self.addCleanup(daemon.kill)
        deadline = time.monotonic() + 30
        while self.workspace.json("status")["daemon"] is None and time.monotonic() < deadline:
            time.sleep(0.1)
        on_command_line = self.workspace.json("status")["daemon"]
        self.assertEqual(on_command_line["pid"], daemon.pid)
        self.assertTrue(on_command_line["host"], "the command line names the daemon's host")
        self.assertEqual(self.second.get_json("/api/status")["daemon"], {"pid": daemon.pid, "host": None},
                         "the API shows the daemon, not its host's name")

    def test_streams_on_one_server_hear_writes_through_the_other_and_the_command_line(self):
        token = self.workspace.add_user("gus")
        region = self.first.get_json("/api/regions?limit=1")[0]
        photos = [photo["id"] for photo in self.first.get_json(f"/api/regions/{region['id']}/photos")]
        self.assertGreaterEqual(len(photos), 9)
        streams = {
            "recents": EventStream(self.first, "/api/recents/changes", token=token),
            "favorites": EventStream(self.first, "/api/favorites/changes", token=token),
            "regions": EventStream(self.first, "/api/regions/changes?limit=30"),
        }
        for name, stream in streams.items():
            self.addCleanup(stream.close)
            self.assertEqual(stream.status, 200, name)
            self.assertTrue(stream.wait_for(lambda events: len(events) >= 1), name)
        for photo in photos[:4]:
            status, _, body = self.second.request("POST", "/api/favorites", body={"id": photo}, token=token)
            self.assertEqual(status, 200, body)
        for photo in photos[4:8]:
            self.second.request("POST", f"/api/photos/{photo}/view", token=token)
        self.workspace.run("view", photos[8], "--user", "gus", check=True)
        self.workspace.run("favorites", "move", "1", "4", "--user", "gus", check=True)
        time.sleep(1.1)
        self.workspace.run("prune", "--older-than", "1s", check=True)  # every photo but Recents and Favorites
        expected = {
            "recents": lambda: self.second.get_json("/api/recents", token=token),
            "favorites": lambda: self.second.get_json("/api/favorites", token=token),
            "regions": lambda: self.second.get_json("/api/regions?limit=30"),
        }
        assert_streams_reach(self, streams, expected)
        self.assertEqual(len(expected["recents"]()), 5)
        self.assertEqual(len(expected["favorites"]()), 4)


class SyncAndLocksOnOneDatabase(unittest.TestCase):
    def setUp(self):
        self.workspace = PostgresWorkspace()
        self.addCleanup(self.workspace.close)

    def test_two_servers_asked_to_sync_at_once_start_one_pass(self):
        servers = [Server(self.workspace), Server(self.workspace)]
        for running in servers:
            self.addCleanup(running.stop)
        answers = [None, None]

        def ask(index):
            answers[index] = servers[index].request("POST", "/api/sync")[0]

        threads = [threading.Thread(target=ask, args=(index,)) for index in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(sorted(answers), [202, 409], "one pass starts, the other server says one runs")

    def test_a_write_that_waits_out_a_lock_is_503_to_try_again(self):
        self.workspace.environment["TOPREGIONS_BUSY_TIMEOUT"] = "1s"
        served = Server(self.workspace)
        self.addCleanup(served.stop)
        token = self.workspace.add_user("ida")
        region = served.get_json("/api/regions?limit=1")[0]
        photo = served.get_json(f"/api/regions/{region['id']}/photos")[0]["id"]
        holder = subprocess.Popen([os.path.join(server.programs, "psql"), "-X", "-q", self.workspace.store, "-c",
                                   "BEGIN; LOCK TABLE recent IN EXCLUSIVE MODE; SELECT pg_sleep(4); COMMIT"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(holder.wait)
        time.sleep(0.5)
        status, headers, body = served.request("POST", f"/api/photos/{photo}/view", token=token)
        self.assertEqual(status, 503, body)
        self.assertEqual(json.loads(body)["error"]["code"], "store_unavailable")
        self.assertIn("retry-after", headers)
        self.assertNotIn(b"postgresql", body, "the answer does not say where the store is")


class StalledDatabase(unittest.TestCase):
    """A table locked from psql: what does not need it goes on, what does is answered 503
    within --store-wait, and everything resumes when the lock goes, without a restart."""

    def setUp(self):
        self.workspace = PostgresWorkspace()
        self.addCleanup(self.workspace.close)
        self.served = Server(self.workspace, "--store-wait", "1s")
        self.addCleanup(self.served.stop)

    def hold_lock(self, table, seconds):
        """Locks `table` from psql for `seconds`; returns once the lock is held."""
        holder = subprocess.Popen([os.path.join(server.programs, "psql"), "-X", "-q", self.workspace.store, "-c",
                                   f"BEGIN; LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep({seconds}); COMMIT"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(holder.wait)
        query = f"SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = '{table}' AND l.granted"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            out = subprocess.run([os.path.join(server.programs, "psql"), "-X", "-q", "-t", "-A", self.workspace.store, "-c", query],
                                 capture_output=True, text=True, timeout=10).stdout.strip()
            if out not in ("", "0"):
                return holder
            time.sleep(0.05)
        raise AssertionError(f"the lock on {table} was not taken")

    def timed(self, method, path, token=None):
        started = time.monotonic()
        status, headers, body = self.served.request(method, path, token=token)
        return status, headers, body, time.monotonic() - started

    def test_a_locked_table_stalls_only_what_reads_it(self):
        token = self.workspace.add_user("ida")
        self.served.get_json("/api/regions")
        self.served.get_json("/api/recents", token=token)
        holder = self.hold_lock("recent", 6)
        status, headers, body, seconds = self.timed("GET", "/api/recents", token=token)
        self.assertEqual(status, 503, body)
        self.assertEqual(json.loads(body)["error"]["code"], "store_unavailable")
        self.assertIn("retry-after", headers)
        self.assertLess(seconds, 2.5, "a read of the locked table is answered within --store-wait")
        # Meanwhile, what memory has is answered at once, and a list that does not read
        # the locked table opens.
        slowest = max(self.timed("GET", "/api/regions")[3] for _ in range(50))
        self.assertLess(slowest, 0.5, "cached reads go on")
        stream = EventStream(self.served, "/api/regions/changes?limit=3")
        self.addCleanup(stream.close)
        self.assertEqual(stream.status, 200)
        self.assertTrue(stream.wait_for(lambda events: events, timeout=2), "another list opens while the table is locked")
        holder.wait(30)
        deadline = time.monotonic() + 10
        while self.timed("GET", "/api/recents", token=token)[0] != 200:
            self.assertLess(time.monotonic(), deadline, "the server resumes when the lock goes")
            time.sleep(0.1)

    def test_a_slow_new_list_delays_no_other_list_or_read(self):
        region = self.served.get_json("/api/regions?limit=1")[0]
        holder = self.hold_lock("photo", 5)
        opened = {}

        def open_slow_list():
            started = time.monotonic()
            slow = EventStream(self.served, f"/api/regions/{region['id']}/photos/changes")
            opened["status"], opened["seconds"] = slow.status, time.monotonic() - started
            slow.close()

        thread = threading.Thread(target=open_slow_list)
        thread.start()
        time.sleep(0.3)  # the slow list is being made
        started = time.monotonic()
        other = EventStream(self.served, "/api/regions/changes?limit=4")
        self.addCleanup(other.close)
        self.assertTrue(other.wait_for(lambda events: events, timeout=2))
        self.assertLess(time.monotonic() - started, 1.5, "another new list opens while the slow one is made")
        self.assertLess(self.timed("GET", "/api/regions?limit=2")[3], 1.0)
        thread.join(30)
        self.assertEqual(opened.get("status"), 503, "the slow list's open is answered within --store-wait")
        self.assertLess(opened["seconds"], 2.5)
        holder.wait(30)
        deadline = time.monotonic() + 10
        while True:
            stream = EventStream(self.served, f"/api/regions/{region['id']}/photos/changes")
            if stream.status == 200:
                self.addCleanup(stream.close)
                self.assertTrue(stream.wait_for(lambda events: events, timeout=5))
                break
            stream.close()
            self.assertLess(time.monotonic() - deadline, 0, "the list opens once the lock goes")
            time.sleep(0.2)


if __name__ == "__main__":
    unittest.main()
