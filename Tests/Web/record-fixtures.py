#!/usr/bin/env python3
"""Records change streams from a real `topregions serve` for the page's batch applier
tests (Tests/Web/batch.test.mjs): each fixture is the events a client received, and the
list the API answered afterwards. Run it again after a change to the streams' shape:

    python3 Tests/Web/record-fixtures.py    (needs .build/debug/topregions and gallery-fixture)
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "HTTP"))
from support import ROOT, EventStream, Server, Workspace  # noqa: E402

FIXTURE_TOOL = os.path.join(ROOT, ".build", "debug", "gallery-fixture")


def sql(workspace, *statements):
    import subprocess
    subprocess.run([FIXTURE_TOOL, "sql", workspace.store, *statements], check=True, capture_output=True)


def sections_of(rows, key):
    sections = []
    for row in rows:
        name = row.get(key) or ""
        if not sections or sections[-1]["name"] != name:
            sections.append({"name": name, "ids": []})
        sections[-1]["ids"].append(row["id"])
    return sections


def settle(stream, count, timeout=20):
    """Waits until `count` events arrived and then no more for half a second."""
    stream.wait_for(lambda events: len(events) >= count, timeout)
    seen = -1
    while seen != len(stream.events):
        seen = len(stream.events)
        time.sleep(0.5)


def write(name, description, events, final):
    with open(os.path.join(HERE, "fixtures", f"{name}.json"), "w") as file:
        json.dump({"description": description, "events": [{"event": e["event"], "data": e["data"]} for e in events],
                   "final": final}, file, indent=1, sort_keys=True, ensure_ascii=False)
        file.write("\n")


def main():
    workspace = Workspace(pages=1)
    server = Server(workspace)
    try:
        token = workspace.add_user("web")
        # Regions by country: moves across sections, a new first section, the first and the
        # last sections emptied.
        stream = EventStream(server, "/api/regions/changes?byCountry=true")
        settle(stream, 1)
        def countries():
            sections = stream.events[0]["data"]["sections"]
            return [section["name"] for section in sections]
        names = countries()
        quote = lambda text: text.replace("'", "''")
        first, last, middle = names[0], names[-1], names[len(names) // 2]
        # All but one of the first section's regions move into the last: moves across
        # sections; then the last one: the first section deleted (a row leaving a deleted
        # section arrives as an insert).
        keep = f"(SELECT min(id) FROM Region WHERE country = '{quote(first)}')"
        sql(workspace, f"UPDATE Region SET country = '{quote(last)}' WHERE country = '{quote(first)}' AND id <> {keep}")
        settle(stream, 2)  # one commit, one batch: each step seen on its own
        sql(workspace, f"UPDATE Region SET country = '{quote(last)}' WHERE country = '{quote(first)}'")
        settle(stream, 3)
        # The last is renamed past every other: the last section deleted, a new one inserted.
        sql(workspace, f"UPDATE Region SET country = 'Zzzland' WHERE country = '{quote(last)}'")
        settle(stream, 4)
        # One region of the middle gets a country before every other: a new first section.
        sql(workspace, f"UPDATE Region SET country = 'Aaaland' WHERE id = (SELECT min(id) FROM Region WHERE country = '{quote(middle)}')")
        settle(stream, 5)
        sql(workspace, "UPDATE Region SET photographerCount = photographerCount + 5 WHERE id IN (SELECT id FROM Region ORDER BY id LIMIT 3)")
        settle(stream, 6)
        final = sections_of(server.get_json("/api/regions?byCountry=true&limit=1000"), "country")
        write("regions-by-country", "regions by country: moves from the first section into the last, the first emptied (deleted), "
              "the last renamed (deleted and inserted), a new first section, photographer counts changed", stream.events, final)
        stream.close()

        # Recents and Favorites of one user: views move rows to the top, moves reorder.
        photos = [row["id"] for region in server.get_json("/api/regions?limit=5")
                  for row in server.get_json(f"/api/regions/{region['id']}/photos")][:8]
        recents = EventStream(server, "/api/recents/changes", token=token)
        favorites = EventStream(server, "/api/favorites/changes", token=token)
        settle(recents, 1)
        settle(favorites, 1)
        for photo in photos[:6]:
            server.request("POST", f"/api/photos/{photo}/view", token=token)
            server.request("POST", "/api/favorites", body={"id": photo}, token=token)
        server.request("POST", f"/api/photos/{photos[0]}/view", token=token)
        for move in [{"from": 1, "to": 6}, {"from": 6, "to": 1}, {"from": 2, "to": 4}, {"from": 5, "to": 2}]:
            server.request("POST", "/api/favorites/move", body=move, token=token)
        server.request("DELETE", f"/api/favorites/{photos[3]}", token=token)
        settle(recents, 8)
        settle(favorites, 12)
        write("recents", "one user's Recents: six views, then the first again (to the top)", recents.events,
              sections_of(server.get_json("/api/recents", token=token), None))
        write("favorites", "one user's Favorites: six added, four moves, one removed", favorites.events,
              sections_of(server.get_json("/api/favorites", token=token), None))
        recents.close()
        favorites.close()
    finally:
        server.stop()
        workspace.close()


if __name__ == "__main__":
    main()
