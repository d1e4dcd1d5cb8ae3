"""`topregions serve` under the load of many lists and other processes' commits, on a
SQLite store: an answer never older than a commit that returned, from any process."""

import os
import subprocess
import unittest

from support import EventStream, Server, Workspace, tool_path


class Committer:
    """Another process that commits each statement it is given through the store (the
    test fixture `gallery-fixture sql-lines`), and says when the commit has returned."""

    def __init__(self, store):
        fixture = os.path.join(os.path.dirname(tool_path()), "gallery-fixture")
        self.process = subprocess.Popen([fixture, "sql-lines", store], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)

    def commit(self, statement):
        self.process.stdin.write(statement + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if line.strip() != "committed":
            raise AssertionError(f"the committer failed: {line!r} {self.process.stderr.read() if self.process.poll() is not None else ''}")

    def close(self):
        self.process.stdin.close()
        self.process.wait(30)
        self.process.stdout.close()
        self.process.stderr.close()


class ReadAfterCommit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.workspace = Workspace()
        cls.addClassCleanup(cls.workspace.close)
        cls.server = Server(cls.workspace)
        cls.addClassCleanup(cls.server.stop)

    def test_a_commit_by_another_process_is_in_every_later_answer(self):
        # 1,000 rounds: another process commits a
        # new photographer count for a region, which puts it at the top; the GET that
        # follows the commit's return must show it, though the server's cache held the
        # list just before.
        regions = self.server.get_json("/api/regions?limit=1000")
        ids = [region["id"] for region in regions[:20]]
        top = regions[0]["photographers"]
        committer = Committer(self.workspace.store)
        self.addCleanup(committer.close)
        stale = []
        for round in range(1000):
            place = ids[round % len(ids)]
            count = top + 1 + round
            self.server.get_json("/api/regions?limit=1")  # the cache holds the list now
            committer.commit(f"UPDATE Region SET photographerCount = {count} WHERE placeID = '{place}'")
            answer = self.server.get_json("/api/regions?limit=1")[0]
            if (answer["id"], answer["photographers"]) != (place, count):
                stale.append((round, answer["id"], answer["photographers"], place, count))
        self.assertEqual(stale, [], f"{len(stale)} of 1000 answers were older than the commit before them")

    def test_a_stream_open_on_a_new_list_hears_the_commit_before_it(self):
        # The list is made after the commit returned: its snapshot has the commit.
        regions = self.server.get_json("/api/regions?limit=1000")
        place, count = regions[-1]["id"], regions[0]["photographers"] + 5_000
        committer = Committer(self.workspace.store)
        self.addCleanup(committer.close)
        committer.commit(f"UPDATE Region SET photographerCount = {count} WHERE placeID = '{place}'")
        stream = EventStream(self.server, "/api/regions/changes?limit=3")
        self.addCleanup(stream.close)
        self.assertTrue(stream.wait_for(lambda events: events))
        first = stream.events[0]["data"]["sections"][0]["rows"][0]
        self.assertEqual((first["id"], first["photographers"]), (place, count))


if __name__ == "__main__":
    unittest.main()
