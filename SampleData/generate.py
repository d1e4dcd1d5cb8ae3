#!/usr/bin/env python3
"""Generates TopRegions' SampleData: Flickr API responses in Flickr's own shapes.

Deterministic: the same arguments always write the same bytes. The committed SampleData is
`python3 SampleData/generate.py` (the defaults); benchmarks generate larger sets, e.g.
`python3 SampleData/generate.py --photos 1000000 --per-page 500 --formats json --images 0 --out DIR`.

Layout of the output directory:
  manifest.json                                  what was generated (counts, page size)
  json/flickr.photos.search/page-0001.json       photos.search responses, newest first
  json/flickr.places.getInfo/<place_id>.json     places.getInfo responses (stat=fail too)
  xml/...                                        the same in Flickr's XML (format=rest)
  images/<id>_<secret>_<size>.jpg                a few real JPEG images, sizes s and b

The awkward cases a backend must survive are planted on purpose (see AWKWARD below).
"""
import argparse
import json
import os
import random
import re
import shutil
import sys
import unicodedata
import zlib
from xml.sax.saxutils import escape, quoteattr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jpeg  # noqa: E402

# Countries and their regions (first-level divisions), as Flickr names them. Limburg and
# Punjab appear twice on purpose: same name, different region, different country.
GEOGRAPHY = [
    ("United States", ["California", "New York", "Texas", "Washington", "Hawaii"]),
    ("Canada", ["British Columbia", "Quebec", "Ontario", "Alberta"]),
    ("United Kingdom", ["England", "Scotland", "Wales"]),
    ("France", ["Île-de-France", "Provence-Alpes-Côte d'Azur", "Brittany", "Occitanie"]),
    ("Germany", ["Bavaria", "Berlin", "Hamburg"]),
    ("Netherlands", ["Limburg", "North Holland", "Utrecht"]),
    ("Belgium", ["Limburg", "Antwerp", "Brussels"]),
    ("India", ["Punjab", "Maharashtra", "Karnataka", "Kerala"]),
    ("Pakistan", ["Punjab", "Sindh", "Khyber Pakhtunkhwa"]),
    ("Japan", ["Tokyo Prefecture", "Kyoto Prefecture", "Osaka Prefecture", "Hokkaido Prefecture"]),
    ("China", ["Beijing", "Shanghai", "Guangdong"]),
    ("Australia", ["New South Wales", "Victoria", "Queensland"]),
    ("Brazil", ["São Paulo", "Rio de Janeiro", "Bahia"]),
    ("Mexico", ["Jalisco", "Oaxaca", "Yucatán"]),
    ("Italy", ["Lazio", "Tuscany", "Lombardy"]),
    ("Spain", ["Catalonia", "Andalusia", "Madrid"]),
    ("Israel", ["Tel Aviv", "Jerusalem"]),
    ("Egypt", ["Cairo", "Giza"]),
    ("South Africa", ["Western Cape", "Gauteng"]),
    ("Iceland", ["Capital Region"]),
    ("Norway", ["Oslo", "Vestland"]),
]

# Approximate real bounding boxes of the regions, (south, west, north, east) in degrees, a
# little inside the real ones so the points drawn in them lie in the region's own box.
# Keyed by (country, region) because Limburg and Punjab are each two regions.
REGION_BOXES = {
    ("United States", "California"): (32.6, -124.3, 41.9, -114.2),
    ("United States", "New York"): (40.6, -79.7, 45.0, -71.9),
    ("United States", "Texas"): (25.9, -106.6, 36.4, -93.6),
    ("United States", "Washington"): (45.6, -124.6, 48.9, -117.1),
    ("United States", "Hawaii"): (18.95, -160.2, 22.2, -154.85),
    ("Canada", "British Columbia"): (48.4, -138.9, 59.9, -114.1),
    ("Canada", "Quebec"): (45.0, -79.8, 62.6, -57.1),
    ("Canada", "Ontario"): (41.7, -95.1, 56.8, -74.4),
    ("Canada", "Alberta"): (49.05, -119.9, 59.95, -110.05),
    ("United Kingdom", "England"): (50.0, -5.7, 55.8, 1.7),
    ("United Kingdom", "Scotland"): (54.7, -7.5, 60.8, -0.8),
    ("United Kingdom", "Wales"): (51.4, -5.3, 53.4, -2.7),
    ("France", "Île-de-France"): (48.15, 1.5, 49.2, 3.5),
    ("France", "Provence-Alpes-Côte d'Azur"): (43.0, 4.3, 45.1, 7.7),
    ("France", "Brittany"): (47.3, -5.1, 48.85, -1.05),
    ("France", "Occitanie"): (42.4, -0.3, 45.0, 4.8),
    ("Germany", "Bavaria"): (47.3, 9.0, 50.5, 13.8),
    ("Germany", "Berlin"): (52.35, 13.1, 52.65, 13.75),
    ("Germany", "Hamburg"): (53.4, 9.75, 53.72, 10.3),
    ("Netherlands", "Limburg"): (50.76, 5.6, 51.75, 6.2),
    ("Netherlands", "North Holland"): (52.2, 4.5, 53.1, 5.3),
    ("Netherlands", "Utrecht"): (51.87, 4.8, 52.28, 5.6),
    ("Belgium", "Limburg"): (50.7, 5.0, 51.35, 5.9),
    ("Belgium", "Antwerp"): (51.05, 4.15, 51.45, 5.2),
    ("Belgium", "Brussels"): (50.78, 4.26, 50.9, 4.46),
    ("India", "Punjab"): (29.6, 73.9, 32.5, 76.9),
    ("India", "Maharashtra"): (15.65, 72.7, 22.0, 80.85),
    ("India", "Karnataka"): (11.6, 74.1, 18.4, 78.5),
    ("India", "Kerala"): (8.2, 74.9, 12.75, 77.4),
    ("Pakistan", "Punjab"): (27.75, 69.4, 33.95, 75.35),
    ("Pakistan", "Sindh"): (23.75, 66.75, 28.45, 71.05),
    ("Pakistan", "Khyber Pakhtunkhwa"): (31.3, 69.3, 36.8, 74.0),
    ("Japan", "Tokyo Prefecture"): (35.52, 138.95, 35.88, 139.9),
    ("Japan", "Kyoto Prefecture"): (34.75, 134.9, 35.75, 136.0),
    ("Japan", "Osaka Prefecture"): (34.3, 135.1, 35.0, 135.7),
    ("Japan", "Hokkaido Prefecture"): (41.4, 139.4, 45.5, 145.8),
    ("China", "Beijing"): (39.45, 115.45, 41.05, 117.5),
    ("China", "Shanghai"): (30.7, 120.87, 31.85, 122.0),
    ("China", "Guangdong"): (20.25, 109.7, 25.5, 117.3),
    ("Australia", "New South Wales"): (-37.5, 141.0, -28.2, 153.6),
    ("Australia", "Victoria"): (-39.1, 141.0, -34.0, 149.9),
    ("Australia", "Queensland"): (-29.1, 138.0, -10.7, 153.5),
    ("Brazil", "São Paulo"): (-25.3, -53.1, -19.8, -44.2),
    ("Brazil", "Rio de Janeiro"): (-23.35, -44.85, -20.8, -41.0),
    ("Brazil", "Bahia"): (-18.3, -46.6, -8.55, -37.35),
    ("Mexico", "Jalisco"): (18.95, -105.65, 22.7, -101.55),
    ("Mexico", "Oaxaca"): (15.7, -98.5, 18.65, -93.9),
    ("Mexico", "Yucatán"): (19.5, -90.4, 21.6, -87.5),
    ("Italy", "Lazio"): (41.2, 11.5, 42.8, 14.0),
    ("Italy", "Tuscany"): (42.4, 10.0, 44.45, 12.35),
    ("Italy", "Lombardy"): (44.7, 8.5, 46.6, 11.4),
    ("Spain", "Catalonia"): (40.55, 0.2, 42.85, 3.3),
    ("Spain", "Andalusia"): (36.05, -7.5, 38.7, -1.65),
    ("Spain", "Madrid"): (39.9, -4.55, 41.15, -3.07),
    ("Israel", "Tel Aviv"): (32.0, 34.77, 32.15, 34.93),
    ("Israel", "Jerusalem"): (31.7, 35.0, 31.87, 35.24),
    ("Egypt", "Cairo"): (29.85, 31.22, 30.15, 31.7),
    ("Egypt", "Giza"): (29.5, 30.95, 30.1, 31.3),
    ("South Africa", "Western Cape"): (-34.8, 17.8, -30.5, 24.2),
    ("South Africa", "Gauteng"): (-26.85, 27.2, -25.15, 28.95),
    ("Iceland", "Capital Region"): (64.0, -22.0, 64.28, -21.4),
    ("Norway", "Oslo"): (59.82, 10.5, 60.12, 10.93),
    ("Norway", "Vestland"): (59.5, 4.6, 61.9, 8.2),
}

# Rough boxes of the countries, for a photo at a country-level place (no region).
COUNTRY_BOXES = {
    "United States": (25.0, -124.0, 48.9, -67.5), "Canada": (42.5, -140.0, 70.0, -53.0),
    "United Kingdom": (50.0, -7.5, 58.6, 1.7), "France": (42.4, -4.7, 51.0, 8.1),
    "Germany": (47.3, 5.9, 55.0, 15.0), "Netherlands": (50.8, 3.4, 53.5, 7.2),
    "Belgium": (49.5, 2.6, 51.5, 6.4), "India": (8.1, 68.2, 35.5, 97.3),
    "Pakistan": (23.7, 60.9, 37.0, 77.8), "Japan": (31.0, 129.5, 45.5, 145.8),
    "China": (18.2, 73.6, 53.5, 134.7), "Australia": (-39.1, 113.2, -10.7, 153.6),
    "Brazil": (-33.7, -73.9, 5.2, -34.8), "Mexico": (14.6, -117.1, 32.7, -86.8),
    "Italy": (36.7, 6.7, 47.0, 18.5), "Spain": (36.0, -9.3, 43.8, 3.3),
    "Israel": (29.5, 34.3, 33.3, 35.9), "Egypt": (22.0, 25.0, 31.6, 35.0),
    "South Africa": (-34.8, 16.5, -22.2, 32.9), "Iceland": (63.5, -22.5, 66.2, -14.0),
    "Norway": (58.1, 5.0, 70.9, 30.9),
}

# Localities keep this share of their region's box on each side of its centre (the rest is
# margin, so a place near the edge still has room for its photos).
LOCALITY_SPREAD = 0.8

SYLLABLES = ["san", "ta", "mo", "ri", "ka", "lo", "ven", "dor", "el", "bu", "ra", "shi", "no",
             "ber", "gen", "ville", "ha", "mi", "sto", "ke", "ro", "la", "vi", "ton"]

TITLE_TEMPLATES = [
    "IMG {n}", "IMG_{n:04d}", "DSC{n:05d}", "Sunset over {place}", "Morning in {place}",
    "{place} skyline", "Street food, {place}", "Café à {place}", "Été à {place}", "Ñandú",
    "東京の夜 {n}", "京都の秋", "서울 야경", "🌅 sunrise #{n}", "🐱 on the roof", "שקיעה בים",
    "غروب الشمس", "Photo {n}", "photo {n}", "Zebra crossing", "apple orchard", "Ångström light",
    "Straße in {place}", "ÉCLAIR", "éclair", "Item 2", "Item 10", "Item 1",
]

DESCRIPTIONS = [
    "From the headlands", "Taken on a walk", "Shot with a 35mm lens", "Long exposure, tripod",
    "Vue depuis le pont", "雨の日", "Με θέα στη θάλασσα", "ממרפסת המלון", "",
]

NAMES = ["Alex", "Sam", "Jordan", "Priya", "Chen", "Yuki", "Fatima", "Lars", "Ana", "Omar",
         "Noor", "Mateo", "Ingrid", "Kwame", "Sofia", "Ravi", "Mei", "Hugo", "Zara", "Tomás"]
SURNAMES = ["Lee", "García", "Okafor", "Müller", "Sato", "Kim", "Novak", "Silva", "Haddad",
            "Larsen", "Dubois", "Rossi", "Nguyen", "Cohen", "Patel", "Ivanova", "O'Brien"]

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz._"

# Fixed moment the newest sample photo was uploaded (2026-11-30 12:00 UTC), so output is
# the same every time.
NEWEST_UPLOAD = 1796040000


# The licences the course's search asks for (Flickr ids).
LICENSES = ["1", "2", "4", "7"]


def stable_hash(text):
    """A hash of text that is the same in every run (unlike hash()), for values chosen
    without drawing from the seeded generator (so every drawn value stays where it was)."""
    return zlib.crc32(text.encode("utf-8"))


def license_for(photo_id):
    return LICENSES[stable_hash("license:" + photo_id) % len(LICENSES)]


def path_alias(owner, name):
    """The owner's URL alias, from their owner id and name: about two thirds have one (a
    lower-case form of their name, sometimes with digits, as Flickr users choose), the rest
    "" (what Flickr sends for none)."""
    digest = stable_hash("pathalias:" + owner)
    if digest % 3 == 0:
        return ""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    words = re.findall(r"[a-z0-9]+", plain.replace("'", ""))
    style = digest // 3 % 4
    alias = words[0][0] + words[-1] if style == 3 else ("-", "", "_")[style].join(words)
    if digest // 12 % 2:
        alias += ("-" if style == 0 else "") + str(digest // 24 % 100)
    return alias


def box_point(box, fraction_lat, fraction_lon):
    """A point of box from fractions in [-1, 1]: -1 is the south/west edge, 1 the north/east."""
    south, west, north, east = box
    return ((south + north) / 2 + fraction_lat * (north - south) / 2,
            (west + east) / 2 + fraction_lon * (east - west) / 2)


def clamp(value, low, high):
    return low if value < low else high if value > high else value


def place_id(rng):
    return "".join(rng.choice(ALPHABET[:-2]) for _ in range(3)) + "." + "".join(
        rng.choice(ALPHABET) for _ in range(rng.choice([11, 12, 13])))


def locality_name(rng):
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


class World:
    """Countries, regions, places and photographers, all seeded."""

    def __init__(self, rng, photographers):
        self.countries = []
        self.regions = []
        self.places = []
        woeid = 2_000_000
        for country_name, region_names in GEOGRAPHY:
            woeid += 1
            country = {"place_id": place_id(rng), "woeid": str(woeid), "name": country_name,
                       "url": "/" + country_name.replace(" ", "+")}
            self.countries.append(country)
            for region_name in region_names:
                woeid += 1
                # Flickr sometimes qualifies a region's name with its country, sometimes not.
                qualified = rng.random() < 0.5
                region = {"place_id": place_id(rng), "woeid": str(woeid), "country": country,
                          "name": f"{region_name}, {country_name}" if qualified else region_name,
                          "url": country["url"] + "/" + region_name.replace(" ", "+"),
                          "box": REGION_BOXES[(country_name, region_name)]}
                # Drawn as before (so every later value stays the same), but the centre is
                # the centre of the region's real box.
                rng.uniform(-60, 70), rng.uniform(-170, 170)
                centre = box_point(region["box"], 0, 0)
                region["latitude"], region["longitude"] = round(centre[0], 3), round(centre[1], 3)
                self.regions.append(region)
                for _ in range(rng.randint(2, 3)):
                    woeid += 1
                    self.places.append(self._locality(rng, region, woeid))
                if rng.random() < 0.15:
                    # A photo can be placed at the region itself: the place *is* the region.
                    self.places.append({"kind": "region", "place_id": region["place_id"], "woeid": region["woeid"],
                                        "region": region, "name": region["name"], "place_type": "region",
                                        "place_type_id": 8, "url": region["url"]})
        # A place that is a whole country has no region: its photos stay invisible.
        self.country_place = {"kind": "country", "place_id": self.countries[19]["place_id"],
                              "woeid": self.countries[19]["woeid"], "country": self.countries[19],
                              "name": self.countries[19]["name"], "place_type": "country", "place_type_id": 12,
                              "url": self.countries[19]["url"]}
        self.places.append(self.country_place)
        # A place Flickr no longer knows: places.getInfo answers stat=fail, code 2.
        self.failing_place = {"kind": "failing", "place_id": place_id(rng)}
        self.places.append(self.failing_place)
        self.photographers = self._photographers(rng, photographers)

    @staticmethod
    def _locality(rng, region, woeid):
        name = locality_name(rng)
        neighbourhood = rng.random() < 0.2
        country = region["country"]
        locality = {"place_id": place_id(rng), "woeid": str(woeid), "name": name,
                    "url": region["url"] + "/" + name}
        place = {"kind": "neighbourhood" if neighbourhood else "locality", "region": region, "locality": locality,
                 "place_type": "neighbourhood" if neighbourhood else "locality",
                 "place_type_id": 22 if neighbourhood else 7}
        # The same draws in [-1, 1] as ever, scaled into the region's box.
        latitude, longitude = box_point(region["box"], rng.uniform(-1, 1) * LOCALITY_SPREAD,
                                        rng.uniform(-1, 1) * LOCALITY_SPREAD)
        place["latitude"], place["longitude"] = round(latitude, 3), round(longitude, 3)
        if neighbourhood:
            place.update({"place_id": place_id(rng), "woeid": str(woeid + 500_000),
                          "name": f"{locality_name(rng)}, {name}, {region['name'].split(',')[0]}, {country['name']}"})
        else:
            place.update({"place_id": locality["place_id"], "woeid": locality["woeid"],
                          "name": f"{name}, {region['name'].split(',')[0]}, {country['name']}"})
        place["url"] = locality["url"]
        return place

    @staticmethod
    def _photographers(rng, count):
        people = []
        for index in range(count):
            name = f"{rng.choice(NAMES)} {rng.choice(SURNAMES)}"
            if index % 17 == 0:
                name = f"{name} 📷"
            owner = f"{rng.randint(10_000_000, 199_999_999)}@N{rng.randint(0, 9):02d}"
            # Each photographer favours a few places, so regions differ in how many distinct
            # photographers they have.
            people.append({"owner": owner, "name": name, "home": None})
        # URL aliases are unique on Flickr: a second Ana Silva gets digits from her owner id.
        taken = set()
        for person in people:
            alias = path_alias(person["owner"], person["name"])
            while alias in taken:
                alias += person["owner"][len(alias) % 5]
            if alias:
                taken.add(alias)
            person["pathalias"] = alias
        return people


def zipf_weights(count, exponent=1.1):
    return [1 / (rank ** exponent) for rank in range(1, count + 1)]


def make_photos(rng, world, count):
    """Photos, newest first, with the awkward cases planted."""
    visible_places = [p for p in world.places if p["kind"] not in ("country", "failing")]
    weights = zipf_weights(len(world.photographers))
    for person in world.photographers:
        person["home"] = rng.sample(visible_places, k=min(3, len(visible_places)))
    # Everyone has at least one photo; the rest follow a Zipf-like skew (a few prolific
    # photographers, a long tail).
    owners = list(world.photographers[:count])
    owners += rng.choices(world.photographers, weights=weights, k=count - len(owners))
    rng.shuffle(owners)
    photos = []
    upload = NEWEST_UPLOAD
    for index in range(count):
        person = owners[index]
        place = rng.choice(person["home"]) if rng.random() < 0.85 else rng.choice(visible_places)
        upload -= rng.randint(1, 40)
        template = rng.choice(TITLE_TEMPLATES)
        place_name = place.get("locality", place)["name"].split(",")[0]
        title = template.format(n=rng.randint(1, 9999), place=place_name)
        description = rng.choice(DESCRIPTIONS)
        if rng.random() < 0.04:
            title = ""
        if rng.random() < 0.02:
            title, description = "", ""
        photo_id = str(53_300_000_000 + count * 13 - index * 13 + rng.randint(0, 12))
        # Jitter around the place (the region's centre for a place that is a region): the
        # same draws as ever, narrower in a small region, and kept inside the region's box.
        south, west, north, east = place["region"]["box"]
        latitude = clamp(place.get("latitude", place["region"]["latitude"])
                         + rng.uniform(-0.05, 0.05) * min(1.0, (north - south) / 2), south, north)
        longitude = clamp(place.get("longitude", place["region"]["longitude"])
                          + rng.uniform(-0.05, 0.05) * min(1.0, (east - west) / 2), west, east)
        photos.append({
            "id": photo_id, "owner": person["owner"], "ownername": person["name"],
            "secret": "%010x" % rng.getrandbits(40), "server": str(rng.choice([65535, 65535, 7372, 4567])),
            "farm": rng.choice([66, 8, 5]), "title": title, "description": description,
            "dateupload": str(upload), "originalsecret": "%010x" % rng.getrandbits(40),
            "originalformat": rng.choice(["jpg", "jpg", "png"]), "latitude": "%.6f" % latitude,
            "longitude": "%.6f" % longitude, "accuracy": str(rng.choice([11, 13, 16])),
            "place_id": place["place_id"], "woeid": place["woeid"],
            "license": license_for(photo_id), "pathalias": person["pathalias"],
        })
    plant_awkward_cases(rng, world, photos)
    return photos


AWKWARD = """
- titles empty, descriptions empty, both empty; digits that sort numerically (Item 2, Item 10);
  accents, CJK, emoji, right-to-left text (in titles, descriptions and names)
- photos at sea: one with place_id missing, one with place_id "" (and latitude 0 as a number)
- photos at a country-level place (no region) and at a place whose getInfo fails (code 2)
- two regions named Limburg (Netherlands, Belgium) and two named Punjab (India, Pakistan)
- a photographer whose display name changes between page 1 and page 3
- a photo that appears on two pages (pages shift while paging)
- loose types: some ids and coordinates as numbers, some `pages` as a string, a missing
  originalsecret/originalformat, a missing ownername, a missing license, a license as a
  number; pathalias "" for photographers without an alias
"""


def plant_awkward_cases(rng, world, photos):
    if len(photos) < 400:
        return
    photos[5]["place_id"] = ""
    photos[5]["woeid"] = ""
    photos[5]["latitude"], photos[5]["longitude"] = 0, 0
    del photos[6]["place_id"]
    del photos[6]["woeid"]
    photos[7]["place_id"] = world.country_place["place_id"]
    # Somewhere in that country (a rough box), from a hash so no value is drawn.
    digest = stable_hash("country:" + photos[7]["id"])
    latitude, longitude = box_point(COUNTRY_BOXES[world.country_place["name"]],
                                    (digest % 1000 / 999 * 2 - 1) / 2, (digest // 1000 % 1000 / 999 * 2 - 1) / 2)
    photos[7]["latitude"], photos[7]["longitude"] = "%.6f" % latitude, "%.6f" % longitude
    photos[8]["place_id"] = world.failing_place["place_id"]
    photos[9]["title"], photos[9]["description"] = "", "Only a description"
    photos[10]["title"], photos[10]["description"] = "", ""
    photos[11]["title"], photos[11]["description"] = "Item 10", ""
    photos[12]["title"] = "Item 2"
    photos[13]["id"] = int(photos[13]["id"])  # a number instead of a string
    photos[13]["latitude"] = float(photos[13]["latitude"])
    del photos[14]["originalsecret"]
    del photos[14]["originalformat"]
    del photos[15]["ownername"]
    del photos[16]["license"]  # extras=license, yet no licence said
    photos[17]["license"] = 4  # a number instead of a string
    # The same photographer, renamed between page 1 and page 3.
    renamed = photos[20]["owner"]
    for photo in photos[:100]:
        if photo["owner"] == renamed:
            photo["ownername"] = "Sam Lee"
    for photo in photos[200:300]:
        if photo["owner"] == renamed:
            photo["ownername"] = "Samantha Lee"
    photos[250]["owner"], photos[250]["ownername"] = renamed, "Samantha Lee"
    photos[30]["owner"], photos[30]["ownername"] = renamed, "Sam Lee"
    photos[250]["pathalias"] = photos[30]["pathalias"] = photos[20]["pathalias"]  # the alias stays


def paginate(photos, per_page):
    """Pages as Flickr serves them while new uploads arrive: one photo shows up at the end of
    a page and again at the start of the next."""
    pages = [photos[i:i + per_page] for i in range(0, len(photos), per_page)]
    if len(pages) >= 4:
        pages[3] = [dict(pages[2][-1])] + pages[3][:-1] + [pages[3][-1]]
    return pages


def photo_json(photo):
    out = dict(photo)
    out["description"] = {"_content": photo["description"]}
    out.update({"ispublic": 1, "isfriend": 0, "isfamily": 0, "context": 0, "geo_is_public": 1,
                "geo_is_contact": 0, "geo_is_friend": 0, "geo_is_family": 0})
    return out


def search_json(page, number, pages, per_page, total):
    photos = {"page": number, "pages": str(pages) if number % 2 == 0 else pages, "perpage": per_page,
              "total": str(total), "photo": [photo_json(p) for p in page]}
    return {"photos": photos, "stat": "ok"}


def search_xml(page, number, pages, per_page, total):
    lines = ['<?xml version="1.0" encoding="utf-8" ?>', '<rsp stat="ok">',
             f'<photos page="{number}" pages="{pages}" perpage="{per_page}" total="{total}">']
    for photo in page:
        attributes = " ".join(f"{key}={quoteattr(str(value))}" for key, value in photo.items() if key != "description")
        lines.append(f'\t<photo {attributes} ispublic="1" isfriend="0" isfamily="0" context="0">')
        lines.append(f"\t\t<description>{escape(photo['description'])}</description>")
        lines.append("\t</photo>")
    lines += ["</photos>", "</rsp>", ""]
    return "\n".join(lines)


def level_json(level, extra=None):
    out = {"place_id": level["place_id"], "woeid": level["woeid"], "_content": level["name"]}
    if "url" in level:
        out["place_url"] = level["url"]
    if extra:
        out.update(extra)
    return out


def place_levels(place):
    """The hierarchy of a place: (element name, level) pairs from small to large."""
    levels = []
    if place["kind"] in ("locality", "neighbourhood"):
        levels.append(("locality", place["locality"]))
    if place["kind"] in ("locality", "neighbourhood", "region"):
        region = place["region"]
        levels.append(("region", region))
        levels.append(("country", region["country"]))
    if place["kind"] == "country":
        levels.append(("country", place["country"]))
    return levels


def place_json(place):
    if place["kind"] == "failing":
        return {"stat": "fail", "code": 2, "message": "Not a valid place id"}
    body = {"place_id": place["place_id"], "woeid": place["woeid"], "place_url": place["url"],
            "place_type": place["place_type"], "place_type_id": place["place_type_id"], "name": place["name"],
            "timezone": "UTC", "has_shapedata": 1}
    if "latitude" in place:
        body["latitude"], body["longitude"] = str(place["latitude"]), str(place["longitude"])
    for element, level in place_levels(place):
        body[element] = level_json(level)
    return {"place": body, "stat": "ok"}


def place_xml(place):
    head = '<?xml version="1.0" encoding="utf-8" ?>\n'
    if place["kind"] == "failing":
        return head + '<rsp stat="fail">\n\t<err code="2" msg="Not a valid place id" />\n</rsp>\n'
    attributes = (f'place_id={quoteattr(place["place_id"])} woeid={quoteattr(place["woeid"])} '
                  f'place_url={quoteattr(place["url"])} place_type={quoteattr(place["place_type"])} '
                  f'place_type_id="{place["place_type_id"]}" timezone="UTC" name={quoteattr(place["name"])}')
    if "latitude" in place:
        attributes += f' latitude="{place["latitude"]}" longitude="{place["longitude"]}"'
    lines = [head + '<rsp stat="ok">', f"\t<place {attributes} has_shapedata=\"1\">"]
    for element, level in place_levels(place):
        lines.append(f'\t\t<{element} place_id={quoteattr(level["place_id"])} woeid={quoteattr(level["woeid"])} '
                     f'place_url={quoteattr(level.get("url", ""))}>{escape(level["name"])}</{element}>')
    lines += ["\t</place>", "</rsp>", ""]
    return "\n".join(lines)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def write_images(out, photos, count):
    for index, photo in enumerate(photos[:count]):
        if not photo.get("secret"):
            continue
        hue = index * 37 % 256

        def square(x, y, hue=hue):
            return ((x * 3 + hue) % 256, (y * 3 + 2 * hue) % 256, (x + y + hue) % 256)

        for size, (width, height) in (("s", (75, 75)), ("b", (160, 120))):
            path = os.path.join(out, "images", f"{photo['id']}_{photo['secret']}_{size}.jpg")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(jpeg.encode(width, height, square))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--photos", type=int, default=1200)
    parser.add_argument("--photographers", type=int, default=240)
    parser.add_argument("--per-page", type=int, default=100)
    parser.add_argument("--formats", default="json,xml")
    parser.add_argument("--images", type=int, default=12, help="photos that get real JPEG images")
    parser.add_argument("--seed", type=int, default=193)
    args = parser.parse_args()
    if not 1 <= args.per_page <= 500:
        parser.error("--per-page must be between 1 and 500, as Flickr's")
    rng = random.Random(args.seed)
    world = World(rng, args.photographers)
    photos = make_photos(rng, world, args.photos)
    pages = paginate(photos, args.per_page)
    total = len(photos)
    formats = [f for f in args.formats.split(",") if f]
    for fmt in formats:
        shutil.rmtree(os.path.join(args.out, fmt), ignore_errors=True)
    for number, page in enumerate(pages, start=1):
        if "json" in formats:
            write(os.path.join(args.out, "json", "flickr.photos.search", f"page-{number:04d}.json"),
                  json.dumps(search_json(page, number, len(pages), args.per_page, total), ensure_ascii=False))
        if "xml" in formats:
            write(os.path.join(args.out, "xml", "flickr.photos.search", f"page-{number:04d}.xml"),
                  search_xml(page, number, len(pages), args.per_page, total))
    for place in world.places:
        if "json" in formats:
            write(os.path.join(args.out, "json", "flickr.places.getInfo", f"{place['place_id']}.json"),
                  json.dumps(place_json(place), ensure_ascii=False))
        if "xml" in formats:
            write(os.path.join(args.out, "xml", "flickr.places.getInfo", f"{place['place_id']}.xml"), place_xml(place))
    shutil.rmtree(os.path.join(args.out, "images"), ignore_errors=True)
    write_images(args.out, photos, args.images)
    manifest = {"seed": args.seed, "photos": len(photos), "pages": len(pages), "perPage": args.per_page,
                "places": len(world.places), "regions": len(world.regions), "countries": len(world.countries),
                "photographers": len(world.photographers), "formats": formats, "newestUpload": NEWEST_UPLOAD,
                "generator": "SampleData/generate.py"}
    write(os.path.join(args.out, "manifest.json"), json.dumps(manifest, indent=2) + "\n")
    print(json.dumps(manifest))


if __name__ == "__main__":
    main()
