// Pure helpers of the page: names, places, links, licences, image URLs. No DOM, so that
// Node's test runner checks them (Tests/Web/format.test.mjs).

/** Text folded for matching: lowercase, without accents ("Liège" → "liege"). */
export function fold(text) {
  return String(text ?? '').normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/**
 * A region's name without a trailing ", Country" that only repeats its country (Flickr
 * names some regions "Giza, Egypt"): the region list shows the country beneath it anyway.
 */
export function regionName(name, country) {
  const region = String(name ?? '').trim();
  const land = String(country ?? '').trim();
  if (!land) return region;
  const suffix = `, ${land}`;
  if (region.length > suffix.length && fold(region).endsWith(fold(suffix))) return region.slice(0, region.length - suffix.length).trim();
  return region;
}

/** "Region, Country", each name once: "Giza, Egypt" (not "Giza, Egypt, Egypt"), "Singapore". */
export function placeName(region, country) {
  const land = String(country ?? '').trim();
  const name = regionName(region, land);
  if (!name) return land;
  if (!land || fold(name) === fold(land)) return name;
  return `${name}, ${land}`;
}

/**
 * The `rel="next"` target of a `Link` header (RFC 8288), or null. Only a target on the page's
 * own origin is followed (`base` is the page's URL): the result is a path and query.
 */
export function nextLink(header, base) {
  if (!header) return null;
  const pattern = /<([^>]*)>((?:\s*;\s*[^;,=\s]+\s*(?:=\s*(?:"[^"]*"|[^;,]*))?)*)/g;
  let match;
  while ((match = pattern.exec(header))) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/i.exec(match[2]);
    if (!rel) continue;
    const names = (rel[1] ?? rel[2]).toLowerCase().split(/\s+/);
    if (!names.includes('next')) continue;
    return sameOriginPath(match[1], base);
  }
  return null;
}

/** A URL of the API (a `next` in a body or a header) as a path on the page's origin, or null. */
export function sameOriginPath(target, base) {
  try {
    const url = new URL(target, base);
    const origin = new URL(base).origin;
    if (url.origin !== origin || !url.pathname.startsWith('/api/')) return null;
    return url.pathname + url.search;
  } catch (_) {
    return null;
  }
}

/** An address that may be a link's `href`: http or https only (never `javascript:`), else null. */
export function externalURL(value) {
  if (typeof value !== 'string' || !value) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch (_) {
    return null;
  }
}

/** A photo's licence as the page names it: {known, name, url}. A missing licence, or one
 *  whose id is null, is "Licence unknown". */
export function licence(photo) {
  const given = photo && typeof photo.license === 'object' ? photo.license : null;
  if (!given || given.id === null || given.id === undefined || !given.name) return { known: false, name: 'Licence unknown', url: null };
  return { known: true, name: String(given.name), url: externalURL(given.url) };
}

/** Flickr's sizes the API serves (`?size=`), with their longest side in pixels (s and q are
 *  squares). */
export const imageSizes = { s: 75, q: 150, n: 320, z: 640, c: 800, b: 1024 };

/** The URL of a photo's image in a size; without sizes (an older server), its thumbnail
 *  (s, q) or its large image. */
export function imagePath(id, size, sized = true) {
  const photo = `/api/photos/${encodeURIComponent(id)}`;
  if (sized) return `${photo}/image?size=${size}`;
  return size === 's' || size === 'q' ? `${photo}/thumbnail` : `${photo}/image`;
}

/** A `srcset` of the given sizes ("… 150w, … 320w"), widths by their longest side. */
export function srcset(id, sizes) {
  return sizes.map((size) => `${imagePath(id, size)} ${imageSizes[size]}w`).join(', ');
}

const numbers = new Intl.NumberFormat('en');  // made once: making one per call is slow

/** Counts in words: "1 photo", "31 photos". */
export function count(number, one, many = `${one}s`) {
  const value = Number(number) || 0;
  return `${numbers.format(value)} ${value === 1 ? one : many}`;
}

/** The page's routes: what a path (and query) shows. */
export function parseRoute(pathname, search = '') {
  let match;
  if (pathname === '/' || pathname === '') return { name: 'home', list: 'regions' };
  if (pathname === '/recents') return { name: 'recents', list: 'recents' };
  if (pathname === '/favorites') return { name: 'favorites', list: 'favorites' };
  if (pathname === '/search') return { name: 'search', list: 'regions', query: new URLSearchParams(search).get('q') ?? '' };
  if ((match = pathname.match(/^\/regions\/([^/]+)$/))) {
    let id;
    try { id = decodeURIComponent(match[1]); } catch (_) { id = match[1]; }
    return { name: 'region', list: 'regions', id };
  }
  if ((match = pathname.match(/^\/photos\/([^/]+)$/))) {
    return /^\d{1,32}$/.test(match[1]) ? { name: 'photo', id: match[1] } : { name: 'missing-photo', list: 'regions', id: match[1] };
  }
  return { name: 'not-found', list: 'regions', path: pathname };
}
