// The gallery in a browser: top regions → a region's photos → the photo viewer, search,
// Recents and Favorites, every list live on its change stream and paged as it scrolls.
// Text from Flickr only ever reaches the page through textContent and attributes, never
// as HTML.
import { applyBatch, changedIDs } from './batch.js';
import { api, apiPage, APIError, ChangeStream, onTokenRefused, setToken, token, tokenPattern } from './api.js';
import { element, relativeDate, timeElement } from './dom.js';
import { count, fold, parseRoute, placeName, regionName, sameOriginPath } from './format.js';
import { photoImage, probeImageSizes } from './images.js';
import { PhotoViewer } from './viewer.js';

const listKey = 'topregions.list';
// Page sizes (a test may set smaller ones, before the page loads, in
// window.topRegionsPageSizes).
const pageSizes = { regions: 50, photos: 60, search: 40, ...globalThis.topRegionsPageSizes };
const regionsPageSize = pageSizes.regions;
const photosPageSize = pageSizes.photos;
const searchPageSize = pageSizes.search;

/** Views by their element: a photo link's view is the list the viewer goes through. */
const viewOf = new WeakMap();
/** Regions seen in any list, by id (a region's heading without asking again). */
const knownRegions = new Map();

function notice(text) {
  const box = document.getElementById('notice');
  box.textContent = text;
  box.hidden = !text;
}

// MARK: A live list in the DOM

/**
 * A list kept by its change stream: rows deleted, inserted and moved in place (with a short
 * animation), never the whole list redrawn; focus and scroll position kept.
 *
 * Paging. A list with `page` (its first page's path) shows that many rows and loads the next
 * page (the `Link: rel="next"` of the last) when its end scrolls near. Its stream keeps
 * what is loaded live: `stream(loaded)` gives the stream's path for `loaded` rows and how
 * many rows it covers. The top regions' stream takes a limit (up to 1000): it is opened
 * again with the number loaded, and its snapshot replaces the pages' rows. A region's
 * photos' stream sends the whole list: the view shows its first rows, as many as the pages
 * loaded. Without a `Link` (a server without paging) there is no next page; a first page
 * refused (400: a server that takes no `limit` there) shows the whole stream.
 */
class LiveListView {
  constructor({ container, title, listClass = 'rows', row, onRow = null, empty, stream, page = null, pageSize = Infinity, signedOut, onGone = null,
    label = '', photos = false }) {
    this.container = container;
    this.photoList = photos;
    this.renderRow = row;
    this.onRow = onRow;
    this.onGone = onGone;
    this.signedOutText = signedOut || 'Sign in with your API token to see this list.';
    this.streamFor = typeof stream === 'function' ? stream : () => ({ path: stream, covers: Infinity });
    this.label = label;
    this.sections = null;
    this.live = null;
    this.covers = 0;
    this.pageRows = [];
    this.window = page ? pageSize : Infinity;
    this.pageDone = !page;
    this.next = null;
    this.loading = null;
    this.closed = false;
    this.rowElements = new Map();
    this.rowJSON = new Map();
    this.list = element('ol', { class: listClass, 'aria-label': title, 'data-list': title });
    this.status = element('p', { class: 'stream-state', role: 'status', 'aria-live': 'polite' });
    this.empty = element('p', { class: 'empty', text: empty, hidden: true });
    this.trigger = element('div', { class: 'page-trigger', 'aria-hidden': 'true' });
    this.more = element('div', { class: 'more', hidden: true });
    container.replaceChildren(this.status, this.list, this.trigger, this.more, this.empty);
    viewOf.set(container, this);
    container.classList.add('view');
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) this.loadMore();
    }, { rootMargin: '0px 0px 400px 0px' });
    this.observer.observe(this.trigger);
    this.observer.observe(this.more);
    if (page) this.firstPage(page);
    this.openStream();
  }

  openStream() {
    if (this.stream) this.stream.close();
    const { path, covers } = this.streamFor(this.pageRows.length);
    const stream = new ChangeStream(path, (kind, data) => {
      if (this.stream === stream) this.receive(kind, data, covers);
    }, (state) => { if (this.stream === stream) this.state(state); });
    this.stream = stream;
  }

  async firstPage(path) {
    try {
      const page = await apiPage(path);
      if (this.closed) return;
      this.pageRows = page.rows;
      this.next = page.next;
      this.window = page.next ? page.rows.length : Infinity;
    } catch (error) {
      if (this.closed) return;
      this.window = Infinity;
      if (error instanceof APIError && error.status === 404) { this.state('gone'); return; }
      // 400: a server that pages nothing here; its stream has the whole list.
    } finally {
      this.pageDone = true;
    }
    this.render(null);
    this.updateMore();
  }

  /** Loads the next page, if there is one (also for the viewer's → at the end). */
  loadMore() {
    if (!this.next || this.closed) return Promise.resolve();
    if (this.loading) return this.loading;
    const path = this.next;
    this.loading = (async () => {
      this.updateMore();
      try {
        const page = await apiPage(path);
        if (this.closed) return;
        const before = new Set(this.rows().map((row) => row.id));
        const known = new Set(this.pageRows.map((row) => row.id));
        this.pageRows.push(...page.rows.filter((row) => !known.has(row.id)));
        this.next = page.next;
        this.window = page.next ? this.window + page.rows.length : Infinity;
        if (this.covers < this.pageRows.length) this.openStream();
        const inserted = new Set(this.rows().map((row) => row.id).filter((id) => !before.has(id)));
        this.render({ inserted, moved: new Set(), updated: new Set(), appended: true });
      } catch (error) {
        if (!this.closed) notice(`Could not load more: ${error.message}`);
      } finally {
        this.loading = null;
        this.updateMore();
        // Still at the end (a tall screen): the next page too.
        this.observer.unobserve(this.trigger);
        this.observer.unobserve(this.more);
        this.observer.observe(this.trigger);
        this.observer.observe(this.more);
      }
    })();
    return this.loading;
  }

  hasMore() { return Boolean(this.next); }

  updateMore() {
    this.more.hidden = !this.next;
    if (!this.next) return;
    if (this.loading) {
      this.more.replaceChildren(element('span', { class: 'spinner', 'aria-hidden': 'true' }), element('span', { text: 'Loading more…' }));
    } else {
      this.more.replaceChildren(element('button', { type: 'button', class: 'quiet', text: 'Show more', onclick: () => this.loadMore() }));
    }
  }

  state(state) {
    if (state === 'gone' && this.onGone) {
      this.onGone();
      return;
    }
    const words = { live: '', reconnecting: 'Reconnecting…', 'signed-out': this.signedOutText, gone: 'This list is no longer available.' };
    this.status.textContent = words[state] ?? '';
    this.status.dataset.state = state;
    if (state === 'signed-out') {
      this.status.append(' ', element('button', { type: 'button', class: 'link-button', text: 'Sign in', onclick: () => openSignIn() }));
      this.empty.hidden = true;
    }
    document.body.classList.toggle('reconnecting', state === 'reconnecting');
  }

  receive(kind, data, covers) {
    if (kind === 'snapshot') {
      this.sections = data.sections;
      this.covers = covers;
      this.live = this.sections.flatMap((section) => section.rows);
      this.render(null);
    } else if (kind === 'batch') {
      if (!this.sections) return;
      try {
        this.sections = applyBatch(this.sections, data);
      } catch (error) {
        this.stream.resync();
        return;
      }
      this.live = this.sections.flatMap((section) => section.rows);
      this.render(changedIDs(data));
    }
    this.list.dataset.token = String(data.token);
  }

  /** The rows shown: the stream's, past what it covers the pages', as many as loaded. */
  rows() {
    let rows;
    if (this.live && this.covers >= this.pageRows.length) {
      rows = this.live;
    } else if (this.live) {
      const seen = new Set(this.live.map((row) => row.id));
      rows = [...this.live, ...this.pageRows.filter((row) => !seen.has(row.id))];
    } else {
      rows = this.pageRows;
    }
    return Number.isFinite(this.window) ? rows.slice(0, this.window) : rows;
  }

  photoRows() { return this.rows(); }

  elementFor(id) {
    const node = this.rowElements.get(id);
    return node ? node.querySelector('a') : null;
  }

  render(changes) {
    if (this.closed) return;
    const focusedID = document.activeElement && this.list.contains(document.activeElement) && document.activeElement.closest('[data-id]')
      ? document.activeElement.closest('[data-id]').dataset.id : null;
    // Rows that may move are measured before (FLIP); a page appended moves nothing.
    const flip = changes && !changes.appended;
    const before = new Map();
    if (flip) for (const [id, node] of this.rowElements) before.set(id, node.getBoundingClientRect());
    const rows = this.rows();
    const wanted = new Set(rows.map((row) => row.id));
    for (const [id, node] of this.rowElements) {
      if (!wanted.has(id)) { node.remove(); this.rowElements.delete(id); this.rowJSON.delete(id); }
    }
    let previous = null;
    rows.forEach((row, index) => {
      let node = this.rowElements.get(row.id);
      const json = JSON.stringify(row);
      const fresh = !node || this.rowJSON.get(row.id) !== json || (changes && (changes.moved.has(row.id) || changes.updated.has(row.id)));
      if (!node) {
        node = element('li', { 'data-id': row.id });
        this.rowElements.set(row.id, node);
        if (changes) node.classList.add('entering');
      }
      if (fresh) {
        node.replaceChildren(...this.renderRow(row, index));
        this.rowJSON.set(row.id, json);
      }
      node.dataset.position = String(index + 1);
      const next = previous ? previous.nextSibling : this.list.firstChild;
      if (next !== node) this.list.insertBefore(node, next);
      previous = node;
      if (this.onRow) this.onRow(node, row, index);
    });
    const signedOut = this.status.dataset.state === 'signed-out';
    this.empty.hidden = rows.length > 0 || signedOut || (!this.live && !this.pageDone);
    if (flip) this.animate(before);
    else if (changes) setTimeout(() => { for (const node of this.list.querySelectorAll('.entering')) node.classList.remove('entering'); }, 250);
    if (focusedID && this.rowElements.has(focusedID)) {
      const target = this.rowElements.get(focusedID).querySelector('a, button, [tabindex]') || this.rowElements.get(focusedID);
      if (document.activeElement !== target) target.focus({ preventScroll: true });
    }
    this.list.dispatchEvent(new CustomEvent('listchange', { bubbles: true }));
  }

  /** Rows that moved slide from where they were (FLIP); new rows fade in. */
  animate(before) {
    if (window.matchMedia('(prefers-reduced-motion: reduce)').matches) return;
    // All positions are read first, then all moves written: one layout, not one per row.
    const moves = [];
    for (const [id, node] of this.rowElements) {
      const old = before.get(id);
      if (!old) continue;
      const now = node.getBoundingClientRect();
      const dx = old.left - now.left, dy = old.top - now.top;
      if (dx || dy) moves.push([node, dx, dy]);
    }
    for (const [node, dx, dy] of moves) {
      node.style.transition = 'none';
      node.style.transform = `translate(${dx}px, ${dy}px)`;
    }
    if (moves.length) requestAnimationFrame(() => {
      for (const [node] of moves) {
        node.style.transition = 'transform 200ms ease-out';
        node.style.transform = '';
      }
    });
    setTimeout(() => { for (const node of this.list.querySelectorAll('.entering')) node.classList.remove('entering'); }, 250);
  }

  close() {
    this.closed = true;
    this.observer.disconnect();
    if (this.stream) this.stream.close();
  }
}

// MARK: Rows

const photoPath = (id) => `/photos/${encodeURIComponent(id)}`;
const regionPath = (id) => `/regions/${encodeURIComponent(id)}`;
let activeRegion = null;

function regionRow(region) {
  knownRegions.set(region.id, region);
  return [element('a', { href: regionPath(region.id), 'data-link': true, class: 'region', 'aria-current': region.id === activeRegion ? 'page' : null },
    element('span', { class: 'name', text: regionName(region.name, region.country) }),
    element('span', { class: 'country', text: [region.country, count(region.photos, 'photo')].filter(Boolean).join(' · ') }),
    element('span', { class: 'counts', title: `${count(region.photographers, 'photographer')} took photos here` },
      element('strong', { text: String(region.photographers ?? 0) }),
      element('span', { text: Number(region.photographers) === 1 ? 'photographer' : 'photographers' })))];
}

function markActiveRegion(node, region) {
  const link = node.querySelector('a');
  if (link) link.toggleAttribute('aria-current', region.id === activeRegion);
  if (link && region.id === activeRegion) link.setAttribute('aria-current', 'page');
}

/** A photo in a grid: its image (the size that fits the tile), title and photographer (and
 *  its place, in search results). */
function photoTile(photo, { place = false } = {}) {
  const byline = [photo.photographer, place ? placeName(photo.region, photo.country) : null].filter(Boolean).join(' · ');
  return [element('a', { href: photoPath(photo.id), 'data-link': true, class: 'tile' },
    photoImage(photo.id, photo.title, 'tile', { loading: 'lazy', width: 320, height: 240 }),
    element('span', { class: 'caption' },
      element('span', { class: 'title', text: photo.title }),
      byline ? element('span', { class: 'byline', text: byline }) : null))];
}

function recentRow(recent) {
  return [element('a', { href: photoPath(recent.id), 'data-link': true, class: 'row-link' },
    photoImage(recent.id, recent.title, 'row', { loading: 'lazy', width: 80, height: 60 }),
    element('span', { class: 'row-text' },
      element('span', { class: 'title', text: recent.title }),
      recent.subtitle ? element('span', { class: 'subtitle', text: recent.subtitle }) : null,
      timeElement(recent.lastViewed, `Viewed ${relativeDate(recent.lastViewed)}`)))];
}

function favoriteRow(favorite) {
  // The row's place is read when the button is pressed: rows move without being redrawn.
  const move = (by) => (event) => {
    const from = Number(event.target.closest('li').dataset.position);
    moveFavorite(from, from + by);
  };
  return [
    element('a', { href: photoPath(favorite.id), 'data-link': true, class: 'row-link' },
      photoImage(favorite.id, favorite.title, 'row', { loading: 'lazy', width: 80, height: 60 }),
      element('span', { class: 'row-text' }, element('span', { class: 'title', text: favorite.title }))),
    element('span', { class: 'reorder' },
      element('button', { type: 'button', 'aria-label': `Move ${favorite.title} up`, title: 'Move up (Alt+↑)', onclick: move(-1), text: '↑' }),
      element('button', { type: 'button', 'aria-label': `Move ${favorite.title} down`, title: 'Move down (Alt+↓)', onclick: move(1), text: '↓' }),
      element('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${favorite.title} from Favorites`, title: 'Remove',
        onclick: () => removeFavorite(favorite.id), text: '✕' })),
  ];
}

// MARK: Favorites

let favoriteIDs = null;

async function loadFavoriteIDs() {
  if (!token()) { favoriteIDs = null; return; }
  try {
    const list = await api('/api/favorites');
    favoriteIDs = new Set(list.map((row) => row.id));
  } catch (_) {
    favoriteIDs = null;
  }
  viewer.refreshFavorite();
}

function rememberFavorites(list) {
  if (Array.isArray(list)) favoriteIDs = new Set(list.map((row) => row.id));
}

/** Removes a photo from Favorites; the list's stream redraws it. Returns the new list. */
async function removeFavorite(id) {
  try {
    const list = await api('/api/favorites', { method: 'DELETE', body: { id } });
    rememberFavorites(list);
    return list;
  } catch (error) { notice(error.message); return null; }
}

async function addFavorite(id) {
  try {
    const list = await api('/api/favorites', { method: 'POST', body: { id } });
    rememberFavorites(list);
    return list;
  } catch (error) { notice(error.message); return null; }
}

async function moveFavorite(from, to) {
  if (to < 1 || from === to) return;
  try { await api('/api/favorites/move', { method: 'POST', body: { from, to } }); } catch (error) { notice(error.message); }
}

/** Favorites rows can be dragged, and moved with Alt+↑ and Alt+↓: one request per move. */
function favoriteBehaviour(node) {
  node.draggable = true;
  if (node.dataset.wired) return;
  node.dataset.wired = 'yes';
  node.addEventListener('dragstart', (event) => {
    event.dataTransfer.setData('text/plain', node.dataset.position);
    event.dataTransfer.effectAllowed = 'move';
  });
  node.addEventListener('dragover', (event) => event.preventDefault());
  node.addEventListener('drop', (event) => {
    event.preventDefault();
    moveFavorite(Number(event.dataTransfer.getData('text/plain')), Number(node.dataset.position));
  });
  node.addEventListener('keydown', (event) => {
    if (!event.altKey || !['ArrowUp', 'ArrowDown'].includes(event.key)) return;
    event.preventDefault();
    const from = Number(node.dataset.position);
    moveFavorite(from, from + (event.key === 'ArrowUp' ? -1 : 1));
  });
}

// MARK: The list pane: Regions, Recents, Favorites

const listPane = document.getElementById('list-pane');
const detailPane = document.getElementById('detail-pane');
let listView = null, listName = null, detailView = null;

const streamLimit = (loaded) => Math.min(1000, Math.max(regionsPageSize, Math.ceil(loaded / regionsPageSize) * regionsPageSize));

function showList(name) {
  if (listName === name && listView) return;
  if (listView) listView.close();
  listName = name;
  sessionStorage.setItem(listKey, name);
  for (const tab of document.querySelectorAll('nav a')) {
    if (tab.dataset.list === name) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  const body = element('div');
  const heading = { regions: 'Top Regions', recents: 'Recents', favorites: 'Favorites' }[name];
  const about = {
    regions: 'By how many different photographers took photos there.',
    recents: 'The photos you viewed last, newest first.',
    favorites: 'Your photos, in your order: drag them, or Alt+↑ and Alt+↓.',
  }[name];
  listPane.replaceChildren(element('div', { class: 'pane-head' }, element('h2', { text: heading, id: 'list-heading' }), element('p', { class: 'pane-about', text: about })), body);
  listPane.scrollTop = 0;
  if (name === 'regions') {
    listView = new LiveListView({
      container: body, row: regionRow, title: 'regions', empty: 'No regions yet: run topregions sync.', label: 'Top Regions', onRow: markActiveRegion,
      page: `/api/regions?limit=${regionsPageSize}`, pageSize: regionsPageSize,
      stream: (loaded) => ({ path: `/api/regions/changes?limit=${streamLimit(loaded)}`, covers: streamLimit(loaded) }),
    });
  } else if (name === 'recents') {
    listView = new LiveListView({ container: body, row: recentRow, title: 'recents', empty: 'No photos viewed yet: open a photo and it shows here.',
      stream: '/api/recents/changes', listClass: 'rows photo-rows', label: 'Recents', photos: true, signedOut: 'Sign in with your API token to see your Recents.' });
  } else {
    listView = new LiveListView({ container: body, row: favoriteRow, title: 'favorites', empty: 'No favorites yet: open a photo and add it.',
      stream: '/api/favorites/changes', listClass: 'rows photo-rows', label: 'Favorites', onRow: favoriteBehaviour, photos: true,
      signedOut: 'Sign in with your API token to see your Favorites.' });
  }
}

// MARK: The detail pane: a region, search, the welcome, not found

function closeDetail() {
  if (detailView) detailView.close();
  detailView = null;
}

function showDetail(...children) {
  closeDetail();
  detailPane.replaceChildren(...children);
  detailPane.scrollTop = 0;
  if (document.body.dataset.depth === 'detail') window.scrollTo(0, 0);
}

/** The phone's way back to the list (hidden on wide screens, where the list is beside). */
function backLink(to, text) {
  return element('div', { class: 'pane-bar' }, element('a', { href: to, class: 'back', 'data-link': true, 'data-back': true },
    element('span', { 'aria-hidden': 'true', text: '‹ ' }), text));
}

class RegionView {
  constructor(id) {
    this.id = id;
    this.photoList = true;
    this.heading = element('h2', { id: 'detail-heading', text: 'Photos' });
    this.meta = element('p', { class: 'view-meta' });
    const body = element('div');
    showDetail(backLink('/', 'Top Regions'), element('div', { class: 'view-head' }, this.heading, this.meta), body);
    this.label = 'Photos';
    this.list = new LiveListView({
      container: body, row: (photo) => photoTile(photo), title: 'photos', empty: 'No photos in this region.', listClass: 'grid',
      page: `/api/regions/${encodeURIComponent(id)}/photos?limit=${photosPageSize}`, pageSize: photosPageSize,
      stream: `/api/regions/${encodeURIComponent(id)}/photos/changes`,
      onGone: () => this.gone(),
    });
    viewOf.set(body, this);
    this.describe();
  }

  async describe() {
    let region = knownRegions.get(this.id);
    if (!region) {
      try {
        const regions = await api('/api/regions?limit=1000');
        regions.forEach((row) => knownRegions.set(row.id, row));
        region = knownRegions.get(this.id);
      } catch (_) { /* the heading stays generic */ }
    }
    if (!region || this.closed) return;
    const name = regionName(region.name, region.country);
    this.label = name;
    this.heading.textContent = name;
    this.meta.textContent = [region.country, count(region.photographers, 'photographer'), count(region.photos, 'photo')].filter(Boolean).join(' · ');
    document.title = `${name} · Top Regions`;
    if (viewer.isOpen && viewer.source === this) viewer.updateBackLabel();
  }

  gone() {
    if (this.closed) return;
    showNotFound(`No region with id “${this.id}”`, 'It may have been pruned from the gallery, or the link is wrong.', { href: '/', text: 'Back to Top Regions' });
  }

  photoRows() { return this.list.rows(); }
  hasMore() { return this.list.hasMore(); }
  loadMore() { return this.list.loadMore(); }
  elementFor(id) { return this.list.elementFor(id); }
  close() { this.closed = true; this.list.close(); }
}

/**
 * Search results as one types: `GET /api/search?q=` (debounced by the search box, a stale
 * request aborted), regions first, then photos, paged by the body's `next`. A server
 * without search (404) gets the regions whose names match, from the regions it has.
 */
class SearchView {
  constructor(query) {
    this.heading = element('h2', { id: 'detail-heading', text: 'Search' });
    this.meta = element('p', { class: 'view-meta' });
    this.regions = element('div', { class: 'search-regions' });
    this.photos = element('ol', { class: 'grid', 'data-list': 'search-photos', 'aria-label': 'Photos found' });
    this.more = element('div', { class: 'more', hidden: true });
    this.body = element('div', {}, this.regions, this.photos, this.more);
    showDetail(backLink('/', 'Top Regions'), element('div', { class: 'view-head' }, this.heading, this.meta), this.body);
    viewOf.set(this.body, this);
    this.photoList = true;
    this.label = 'Search';
    this.rows = [];
    this.next = null;
    this.loading = null;
    this.controller = null;
    this.observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) this.loadMore();
    }, { rootMargin: '0px 0px 400px 0px' });
    this.observer.observe(this.more);
    this.run(query);
  }

  run(query) {
    if (this.controller) this.controller.abort();
    this.query = query;
    this.rows = [];
    this.next = null;
    const text = query.trim();
    this.label = text ? `“${text}”` : 'Search';
    document.title = text ? `${text} · Search · Top Regions` : 'Search · Top Regions';
    if (!text) {
      this.heading.textContent = 'Search';
      this.meta.textContent = 'Titles, descriptions, photographers and places; accents and case do not matter.';
      this.regions.replaceChildren();
      this.photos.replaceChildren();
      this.more.hidden = true;
      return;
    }
    this.heading.textContent = `Results for “${text}”`;
    this.meta.textContent = 'Searching…';
    this.body.setAttribute('aria-busy', 'true');
    this.fetch(`/api/search?q=${encodeURIComponent(text)}&limit=${searchPageSize}`, true);
  }

  async fetch(path, first) {
    const controller = new AbortController();
    this.controller = controller;
    const query = this.query;
    try {
      const answer = await api(path, { signal: controller.signal });
      if (controller.signal.aborted || this.closed) return;
      this.show(answer, first);
    } catch (error) {
      if (controller.signal.aborted || this.closed || error.name === 'AbortError') return;
      if (error instanceof APIError && error.status === 404 && first) this.withoutSearch(query);
      else this.meta.textContent = `Search failed: ${error.message}`;
    } finally {
      if (this.controller === controller) this.body.removeAttribute('aria-busy');
    }
  }

  show(answer, first) {
    const regions = Array.isArray(answer?.regions) ? answer.regions : [];
    const photos = Array.isArray(answer?.photos) ? answer.photos : [];
    if (first) {
      this.regions.replaceChildren();
      this.photos.replaceChildren();
      if (regions.length) this.showRegions(regions, 'Regions');
    }
    const known = new Set(this.rows.map((row) => row.id));
    for (const photo of photos) {
      if (known.has(photo.id)) continue;
      this.rows.push(photo);
      this.photos.append(element('li', { 'data-id': photo.id, class: first ? null : 'entering' }, ...photoTile(photo, { place: true })));
    }
    this.next = sameOriginPath(answer?.next ?? '', location.href);
    this.more.hidden = !this.next;
    this.more.replaceChildren(element('button', { type: 'button', class: 'quiet', text: 'Show more', onclick: () => this.loadMore() }));
    if (first) {
      const found = [regions.length ? count(regions.length, 'region') : null, count(this.rows.length, 'photo') + (this.next ? '+' : '')].filter(Boolean);
      this.meta.textContent = regions.length || this.rows.length ? found.join(' · ') : 'Nothing found. Try another word, or fewer.';
    }
    this.photos.dispatchEvent(new CustomEvent('listchange', { bubbles: true }));
    this.observer.unobserve(this.more);
    this.observer.observe(this.more);
  }

  showRegions(regions, title) {
    const list = element('ul', { class: 'region-hits', 'aria-label': title, 'data-list': 'search-regions' });
    for (const region of regions) {
      knownRegions.set(region.id, { ...knownRegions.get(region.id), ...region });
      const counts = [region.country, region.photographers !== undefined ? count(region.photographers, 'photographer') : null,
        region.photos !== undefined ? count(region.photos, 'photo') : null].filter(Boolean).join(' · ');
      list.append(element('li', { 'data-id': region.id }, element('a', { href: regionPath(region.id), 'data-link': true, class: 'region-hit' },
        element('span', { class: 'name', text: regionName(region.name, region.country) }),
        element('span', { class: 'counts', text: counts }))));
    }
    this.regions.replaceChildren(element('h3', { text: title }), list);
  }

  /** An older server has no search: the regions whose names match, from its list. */
  async withoutSearch(query) {
    let regions = [];
    try { regions = await api('/api/regions?limit=1000'); } catch (_) { /* none */ }
    if (this.query !== query || this.closed) return;
    const words = fold(query).split(/\s+/).filter(Boolean);
    const hits = regions.filter((region) => {
      const text = fold(`${region.name} ${region.country ?? ''}`);
      return words.every((word) => text.includes(word));
    });
    this.regions.replaceChildren();
    this.photos.replaceChildren();
    if (hits.length) this.showRegions(hits, 'Regions');
    this.meta.textContent = 'This server cannot search photos yet (it has no /api/search): only region names are matched here.';
    this.meta.dataset.state = 'no-search';
  }

  loadMore() {
    if (!this.next || this.loading) return this.loading || Promise.resolve();
    const path = this.next;
    this.more.replaceChildren(element('span', { class: 'spinner', 'aria-hidden': 'true' }), element('span', { text: 'Loading more…' }));
    this.loading = this.fetch(path, false).finally(() => { this.loading = null; });
    return this.loading;
  }

  photoRows() { return this.rows; }
  hasMore() { return Boolean(this.next); }
  elementFor(id) { return this.photos.querySelector(`li[data-id="${CSS.escape(id)}"] a`); }

  close() {
    this.closed = true;
    this.observer.disconnect();
    if (this.controller) this.controller.abort();
  }
}

async function showWelcome() {
  const stats = element('p', { class: 'stats' });
  showDetail(element('div', { class: 'welcome' },
    element('img', { src: '/app/icon.svg', alt: '', width: 56, height: 56, class: 'welcome-icon' }),
    element('h2', { id: 'detail-heading', text: 'Where the world is taking photos' }),
    element('p', { text: 'The regions of the latest geotagged Flickr photos, ranked by how many different photographers took them. Choose a region to see its photos, or search.' }),
    stats));
  try {
    const status = await api('/api/status');
    stats.textContent = [count(status.photos, 'photo'), count(status.regions, 'region'), count(status.photographers, 'photographer')].join(' · ');
  } catch (_) { /* no figures */ }
}

function showNotFound(title, text, back) {
  showDetail(element('div', { class: 'not-found' },
    element('p', { class: 'not-found-sign', 'aria-hidden': 'true', text: '404' }),
    element('h2', { id: 'detail-heading', text: title }),
    element('p', { text }),
    element('p', {}, element('a', { href: back.href, 'data-link': true, class: 'button', text: back.text }))));
  document.title = `${title} · Top Regions`;
}

// MARK: Routes

let currentPage = null;   // the path (and query) of the page shown, under the viewer too
let listScroll = 0;
let pendingSource = null;
let deepLinkPhoto = null;

function setDepth(depth) {
  const before = document.body.dataset.depth;
  if (before === depth) return;
  if (before === 'list') listScroll = window.scrollY;
  document.body.dataset.depth = depth;
  // A phone shows one pane at a time: the list comes back where it was left.
  window.scrollTo(0, depth === 'list' ? listScroll : 0);
}

function renderPage(target) {
  const url = new URL(target, location.origin);
  const page = parseRoute(url.pathname, url.search);
  currentPage = url.pathname + url.search;
  document.body.dataset.page = page.name;
  activeRegion = page.name === 'region' ? page.id : null;
  showList(page.list || sessionStorage.getItem(listKey) || 'regions');
  for (const link of listPane.querySelectorAll('[data-list="regions"] > li')) markActiveRegion(link, { id: link.dataset.id });
  const titles = { home: 'Top Regions', recents: 'Recents · Top Regions', favorites: 'Favorites · Top Regions' };
  if (titles[page.name]) document.title = titles[page.name];
  switch (page.name) {
    case 'home':
      setDepth('list');
      showWelcome();
      break;
    case 'recents':
    case 'favorites':
      setDepth('list');
      showDetail();
      break;
    case 'region':
      setDepth('detail');
      if (!(detailView instanceof RegionView && detailView.id === page.id)) detailView = makeView(() => new RegionView(page.id));
      break;
    case 'search':
      setDepth('detail');
      searchField.value = page.query;
      if (detailView instanceof SearchView) detailView.run(page.query);
      else detailView = makeView(() => new SearchView(page.query));
      break;
    case 'missing-photo':
      setDepth('detail');
      showNotFound(`No photo with id “${page.id}”`, 'A photo id is a number; this link has none.', { href: '/', text: 'Back to Top Regions' });
      break;
    default:
      setDepth('detail');
      showNotFound('Page not found', `There is no page at ${page.path}.`, { href: '/', text: 'Back to Top Regions' });
  }
}

/** A detail view made after the old one is closed (its constructor replaces the pane). */
function makeView(make) {
  closeDetail();
  return make();
}

function openPhoto(id) {
  let source = pendingSource;
  pendingSource = null;
  // The list it was opened from; else the list that has it; else the list of photos shown
  // (a reload: its rows are still loading); else none yet (a deep link: its region).
  const lists = [detailView, listView].filter((view) => view && view.photoList);
  if (!source) source = lists.find((view) => view.photoRows().some((row) => row.id === id)) || lists[0] || null;
  if (viewer.isOpen) {
    if (source && source !== viewer.source) viewer.setSource(source);
    viewer.show(id);
  } else {
    viewer.open(id, source);
  }
  document.title = 'Photo · Top Regions';
}

function route() {
  notice('');
  const page = parseRoute(location.pathname, location.search);
  if (page.name === 'photo') {
    if (currentPage === null) {
      const from = history.state && history.state.from;
      if (from && parseRoute(from.split('?')[0]).name !== 'photo') {
        renderPage(from);
      } else {
        // A deep link: the photo's region goes under it once the photo is known.
        deepLinkPhoto = page.id;
        showList(sessionStorage.getItem(listKey) || 'regions');
      }
    }
    openPhoto(page.id);
    return;
  }
  if (viewer.isOpen) viewer.close();
  const here = location.pathname + location.search;
  if (here !== currentPage) renderPage(here);
}

function navigate(to, { replace = false } = {}) {
  const here = location.pathname + location.search;
  if (to === here) return;
  const state = { from: here };
  if (replace) history.replaceState({ ...history.state, ...(history.state ? {} : state) }, '', to);
  else history.pushState(state, '', to);
  route();
}

document.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-link]');
  if (!link || event.defaultPrevented || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey || event.button !== 0) return;
  event.preventDefault();
  const href = link.getAttribute('href');
  if (link.dataset.back !== undefined && history.state && history.state.from === href) {
    history.back();
    return;
  }
  if (/^\/photos\//.test(href)) {
    const container = [...viewOfAncestors(link)][0];
    pendingSource = container || null;
  }
  navigate(href);
});

function* viewOfAncestors(node) {
  for (let at = node; at; at = at.parentElement) if (viewOf.has(at)) yield viewOf.get(at);
}

window.addEventListener('popstate', route);
// The list under the viewer changed (loaded, or live): its ← → and count follow.
document.addEventListener('listchange', () => { if (viewer.isOpen) viewer.updateNavigation(); });

// MARK: The viewer

const viewer = new PhotoViewer(document.getElementById('viewer'), {
  back() {
    const under = currentPage || '/';
    if (history.state && history.state.from === under) history.back();
    else navigate(under);
  },
  moved(id) {
    history.replaceState(history.state, '', photoPath(id));
  },
  async load(id) {
    const detail = token()
      ? await api(`/api/photos/${encodeURIComponent(id)}/view`, { method: 'POST' })
      : await api(`/api/photos/${encodeURIComponent(id)}`);
    if (detail && detail.title) document.title = `${detail.title} · Top Regions`;
    if (detail && deepLinkPhoto === id) {
      deepLinkPhoto = null;
      if (detail.regionID && currentPage === null) {
        renderPage(regionPath(detail.regionID));
        if (detailView instanceof RegionView) viewer.setSource(detailView);
      }
    }
    return detail;
  },
  missing(id, error) {
    if (!(error instanceof APIError) || error.status !== 404) {
      notice(error.message);
      return;
    }
    deepLinkPhoto = null;
    const back = currentPage || '/';
    viewer.close();
    showList(listName || 'regions');
    setDepth('detail');
    showNotFound(`No photo with id “${id}”`, 'It may have been pruned from the gallery, or the link is wrong.', { href: back, text: 'Back' });
    currentPage = null;
  },
  opened() { loadFavoriteIDs(); },
  favorites: {
    state(id) { return token() && favoriteIDs ? favoriteIDs.has(id) : null; },
    async toggle(id, on) { return on ? addFavorite(id) : removeFavorite(id); },
  },
});

// MARK: Search

const searchForm = document.getElementById('search-form');
const searchField = document.getElementById('search');
let searchTimer = null;

function searchFor(text, { now = false } = {}) {
  clearTimeout(searchTimer);
  const go = () => {
    const to = text.trim() ? `/search?q=${encodeURIComponent(text.trim())}` : '/search';
    const onSearch = parseRoute(location.pathname).name === 'search';
    navigate(to, { replace: onSearch });
  };
  if (now) go();
  else searchTimer = setTimeout(go, 250);
}

searchField.addEventListener('input', () => {
  if (!searchField.value.trim() && parseRoute(location.pathname).name !== 'search') return;
  searchFor(searchField.value);
});
searchForm.addEventListener('submit', (event) => {
  event.preventDefault();
  searchFor(searchField.value, { now: true });
});
searchField.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && searchField.value) {
    event.preventDefault();
    searchField.value = '';
    searchFor('');
  }
});
document.addEventListener('keydown', (event) => {
  if (event.key !== '/' || viewer.isOpen || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest('input, textarea, select, [contenteditable]')) return;
  event.preventDefault();
  searchField.focus();
  searchField.select();
});

// MARK: Signing in

const signInButton = document.getElementById('sign-in-button');
const signIn = document.getElementById('sign-in');
const tokenField = document.getElementById('token');
const signedIn = document.getElementById('signed-in');
const signedInAs = document.getElementById('signed-in-as');
const avatar = document.getElementById('avatar');

function openSignIn() {
  signIn.hidden = false;
  signInButton.setAttribute('aria-expanded', 'true');
  tokenField.focus();
}

function closeSignIn() {
  signIn.hidden = true;
  signInButton.setAttribute('aria-expanded', 'false');
}

function showSignIn() {
  const signed = Boolean(token());
  signInButton.hidden = signed;
  signedIn.hidden = !signed;
  if (signed) closeSignIn();
  if (signed) whoAmI();
}

/** Who the token belongs to (`GET /api/me`); an older server without it: "Signed in". */
async function whoAmI() {
  signedInAs.textContent = 'Signed in';
  avatar.textContent = '';
  const sent = token();
  try {
    const me = await api('/api/me');
    if (token() !== sent || !me || typeof me.name !== 'string') return;
    signedInAs.replaceChildren(element('span', { class: 'as-label', text: 'Signed in as ' }), element('strong', { text: me.name }));
    avatar.textContent = me.name.slice(0, 1).toUpperCase();
    signedIn.title = `Signed in as ${me.name}`;
  } catch (_) { /* 404: a server without /api/me; 401: the token is forgotten */ }
}

signInButton.addEventListener('click', () => (signIn.hidden ? openSignIn() : closeSignIn()));
signIn.addEventListener('keydown', (event) => {
  if (event.key === 'Escape') { closeSignIn(); signInButton.focus(); }
});
document.addEventListener('click', (event) => {
  if (!signIn.hidden && !event.target.closest('.account')) closeSignIn();
});

signIn.addEventListener('submit', async (event) => {
  event.preventDefault();
  const typed = tokenField.value.trim();
  tokenField.value = '';
  if (!tokenPattern.test(typed)) {
    notice('That is not an API token: one is trk_ and 43 letters, digits, - or _ (topregions users token NAME --rotate).');
    return;
  }
  // A token the server refuses is not kept (a server without /api/me cannot tell: kept).
  try {
    const response = await fetch('/api/me', { headers: { Authorization: `Bearer ${typed}` } });
    if (response.status === 401) {
      notice('The server refused that token: make a new one with topregions users token NAME --rotate.');
      return;
    }
  } catch (_) { /* offline: kept, the lists will say */ }
  setToken(typed);
  notice('');
  reopen();
});
document.getElementById('sign-out').addEventListener('click', () => {
  setToken('');
  favoriteIDs = null;
  reopen();
  signInButton.focus();
});

/** The token changed: every list opens again with it. */
function reopen() {
  showSignIn();
  if (listView) listView.close();
  closeDetail();
  listView = null;
  listName = null;
  currentPage = null;
  loadFavoriteIDs();
  probeImageSizes();
  route();
  return Promise.resolve();
}

onTokenRefused(() => {
  favoriteIDs = null;
  reopen().then(() => notice('Your API token is no longer valid: sign in again.'));
});

// A page left for another (or kept in the back-forward cache) closes its streams: a
// browser gives a host six connections, and a stream holds one.
window.addEventListener('pagehide', () => {
  if (listView) listView.close();
  closeDetail();
  listView = null;
  listName = null;
  currentPage = null;
});
window.addEventListener('pageshow', (event) => { if (event.persisted) route(); });

showSignIn();
loadFavoriteIDs();
probeImageSizes();
route();
