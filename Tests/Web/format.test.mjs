// The page's pure helpers (Sources/GalleryAPI/Web/format.js and zoom.js), on Node's own
// test runner:   node --test Tests/Web/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { count, externalURL, fold, imagePath, licence, nextLink, parseRoute, placeName, regionName, sameOriginPath, srcset }
  from '../../Sources/GalleryAPI/Web/format.js';
import { clampView, fitScale, fitView, isFitted, pinchView, scaleLimits, toggleView, zoomTo } from '../../Sources/GalleryAPI/Web/zoom.js';

const base = 'http://127.0.0.1:8080/regions/x';

test('a place names each name once', () => {
  assert.equal(placeName('Giza, Egypt', 'Egypt'), 'Giza, Egypt');
  assert.equal(placeName('Yucatán', 'Mexico'), 'Yucatán, Mexico');
  assert.equal(placeName('Singapore', 'Singapore'), 'Singapore');
  assert.equal(placeName('Karnataka, india', 'India'), 'Karnataka, India');
  assert.equal(placeName('Québec, Canada', null), 'Québec, Canada');
  assert.equal(placeName(null, 'Egypt'), 'Egypt');
  assert.equal(placeName('', ''), '');
  assert.equal(regionName('Victoria, Australia', 'Australia'), 'Victoria');
  assert.equal(regionName('Limburg', 'Belgium'), 'Limburg');
  assert.equal(regionName(', Egypt', 'Egypt'), ', Egypt', 'nothing is left: the name stays');
});

test('folding drops case and accents', () => {
  assert.equal(fold('Liège QUÉBEC Ñandú Ångström'), 'liege quebec nandu angstrom');
});

test('the next page comes from Link rel="next", on this origin only', () => {
  assert.equal(nextLink('</api/regions?limit=50&after=abc>; rel="next"', base), '/api/regions?limit=50&after=abc');
  assert.equal(nextLink('<http://127.0.0.1:8080/api/regions?after=a%2Cb>; rel=next', base), '/api/regions?after=a%2Cb');
  assert.equal(nextLink('</api/a?p=1>; rel="prev", </api/a?p=3>; rel="next"', base), '/api/a?p=3');
  assert.equal(nextLink('</api/a>; rel="prev next"', base), '/api/a');
  assert.equal(nextLink('</api/a>; title="x, y"; rel="next"', base), '/api/a');
  assert.equal(nextLink('<https://evil.example/api/a>; rel="next"', base), null);
  assert.equal(nextLink('</elsewhere>; rel="next"', base), null);
  assert.equal(nextLink('</api/a>; rel="prev"', base), null);
  assert.equal(nextLink(null, base), null);
  assert.equal(nextLink('', base), null);
  assert.equal(sameOriginPath('/api/search?q=a&after=b', base), '/api/search?q=a&after=b');
  assert.equal(sameOriginPath('javascript:alert(1)', base), null);
});

test('only http and https addresses become links', () => {
  assert.equal(externalURL('https://www.flickr.com/photos/x/1/'), 'https://www.flickr.com/photos/x/1/');
  assert.equal(externalURL('javascript:alert(1)'), null);
  assert.equal(externalURL('data:text/html,x'), null);
  assert.equal(externalURL('not a url'), null);
  assert.equal(externalURL(null), null);
  assert.equal(externalURL(undefined), null);
});

test('a licence is named, or "Licence unknown"', () => {
  assert.deepEqual(licence({ license: { id: '4', name: 'CC BY 2.0', url: 'https://creativecommons.org/licenses/by/2.0/' } }),
    { known: true, name: 'CC BY 2.0', url: 'https://creativecommons.org/licenses/by/2.0/' });
  assert.deepEqual(licence({ license: { id: '0', name: 'All Rights Reserved', url: null } }), { known: true, name: 'All Rights Reserved', url: null });
  assert.deepEqual(licence({ license: { id: null, name: 'Unknown', url: null } }), { known: false, name: 'Licence unknown', url: null });
  assert.deepEqual(licence({}), { known: false, name: 'Licence unknown', url: null });
  assert.equal(licence({ license: { id: '1', name: 'x', url: 'javascript:1' } }).url, null);
});

test('image URLs: sizes, and the older two without them', () => {
  assert.equal(imagePath('12', 'q'), '/api/photos/12/image?size=q');
  assert.equal(imagePath('12', 'q', false), '/api/photos/12/thumbnail');
  assert.equal(imagePath('12', 'b', false), '/api/photos/12/image');
  assert.equal(srcset('12', ['q', 'n']), '/api/photos/12/image?size=q 150w, /api/photos/12/image?size=n 320w');
});

test('counts and routes', () => {
  assert.equal(count(1, 'photo'), '1 photo');
  assert.equal(count(1200, 'photo'), '1,200 photos');
  assert.deepEqual(parseRoute('/'), { name: 'home', list: 'regions' });
  assert.deepEqual(parseRoute('/regions/a.b%40c'), { name: 'region', list: 'regions', id: 'a.b@c' });
  assert.deepEqual(parseRoute('/photos/123'), { name: 'photo', id: '123' });
  assert.equal(parseRoute('/photos/abc').name, 'missing-photo');
  assert.deepEqual(parseRoute('/search', '?q=li%C3%A8ge'), { name: 'search', list: 'regions', query: 'liège' });
  assert.equal(parseRoute('/nosuchpage').name, 'not-found');
});

const natural = { width: 1024, height: 768 };
const stage = { width: 800, height: 800 };
const close = (a, b) => Math.abs(a - b) < 1e-6;

test('fit fills the stage along one side, centred', () => {
  assert.equal(fitScale(natural, stage), 800 / 1024);
  const view = fitView(natural, stage);
  assert.equal(view.x, 0);
  assert.ok(close(view.y, (800 - 768 * 800 / 1024) / 2));
  assert.ok(isFitted(view, natural, stage));
  // A small image is enlarged to fill the space.
  assert.equal(fitScale({ width: 160, height: 120 }, stage), 5);
});

test('zooming keeps the point under the pointer, within limits', () => {
  const fit = fitView(natural, stage);
  const zoomed = zoomTo(fit, 2, { x: 400, y: 400 }, natural, stage);
  assert.equal(zoomed.scale, 2);
  // The image point that was under (400, 400) still is.
  const before = { x: (400 - fit.x) / fit.scale, y: (400 - fit.y) / fit.scale };
  assert.ok(close(zoomed.x + before.x * 2, 400) && close(zoomed.y + before.y * 2, 400));
  assert.equal(zoomTo(fit, 100, { x: 0, y: 0 }, natural, stage).scale, scaleLimits(natural, stage).max);
  assert.equal(zoomTo(fit, 0.01, { x: 0, y: 0 }, natural, stage).scale, fit.scale);
});

test('panning stops at the edges; a narrow side stays centred', () => {
  const view = clampView({ scale: 2, x: 500, y: -5000 }, natural, stage);
  assert.equal(view.x, 0);
  assert.equal(view.y, 800 - 768 * 2);
  const wide = clampView({ scale: 1, x: -1000, y: 300 }, { width: 2000, height: 100 }, stage);
  assert.equal(wide.x, -1000);
  assert.equal(wide.y, 350);
});

test('double-click toggles fit and 100 %, or twice fit for a small image', () => {
  const fit = fitView(natural, stage);
  const actual = toggleView(fit, { x: 400, y: 400 }, natural, stage);
  assert.equal(actual.scale, 1);
  assert.ok(isFitted(toggleView(actual, { x: 0, y: 0 }, natural, stage), natural, stage));
  const small = { width: 160, height: 120 };
  assert.equal(toggleView(fitView(small, stage), { x: 400, y: 400 }, small, stage).scale, 10);
});

test('a pinch scales by the fingers\' distance about their midpoint', () => {
  const fit = fitView(natural, stage);
  const mid = { x: 400, y: 400 };
  const pinched = pinchView(fit, mid, 100, mid, 200, natural, stage);
  assert.ok(close(pinched.scale, fit.scale * 2));
  const moved = pinchView(fit, mid, 100, { x: 420, y: 400 }, 200, natural, stage);
  assert.ok(close(moved.x - pinched.x, 20));
});
