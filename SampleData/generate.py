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
import shutil
import sys
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
                          "latitude": round(rng.uniform(-60, 70), 3), "longitude": round(rng.uniform(-170, 170), 3)}
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
                 "place_type_id": 22 if neighbourhood else 7,
                 "latitude": round(region["latitude"] + rng.uniform(-1, 1), 3),
                 "longitude": round(region["longitude"] + rng.uniform(-1, 1), 3)}
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
        latitude = place.get("latitude", 0) + rng.uniform(-0.05, 0.05)
        longitude = place.get("longitude", 0) + rng.uniform(-0.05, 0.05)
        photos.append({
            "id": photo_id, "owner": person["owner"], "ownername": person["name"],
            "secret": "%010x" % rng.getrandbits(40), "server": str(rng.choice([65535, 65535, 7372, 4567])),
            "farm": rng.choice([66, 8, 5]), "title": title, "description": description,
            "dateupload": str(upload), "originalsecret": "%010x" % rng.getrandbits(40),
            "originalformat": rng.choice(["jpg", "jpg", "png"]), "latitude": "%.6f" % latitude,
            "longitude": "%.6f" % longitude, "accuracy": str(rng.choice([11, 13, 16])),
            "place_id": place["place_id"], "woeid": place["woeid"],
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
  originalsecret/originalformat, a missing ownername
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
