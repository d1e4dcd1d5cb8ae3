// The gallery in a browser: top regions → a region's photos → a photo, Recents and
// Favorites, every list live on its change stream. Text from Flickr only ever reaches the
// page through textContent and attributes, never as HTML.
import { applyBatch, changedIDs, EventParser } from './batch.js';

const tokenKey = 'topregions.token';
const listKey = 'topregions.list';

// MARK: The API

/** What an API token looks like: `trk_` and 43 base64url characters. */
const tokenPattern = /^trk_[A-Za-z0-9_-]{43}$/;

/**
 * The stored token. One that cannot be a token (put there by hand, or by an older page) is
 * forgotten: a header cannot carry every character, and the browser would refuse every
 * request that tried, public ones too.
 */
function token() {
  const stored = localStorage.getItem(tokenKey) || '';
  if (stored && !tokenPattern.test(stored)) {
    localStorage.removeItem(tokenKey);
    return '';
  }
  return stored;
}

function headers(extra = {}) {
  const sent = { ...extra };
  if (token()) sent.Authorization = `Bearer ${token()}`;
  return sent;
}

/**
 * An image of the API. An <img> cannot send a token, so on a private server (serve
 * --private) its first load fails with 401: the image is then fetched with the token and
 * shown from a blob URL, once (lazy loading still decides when the first load happens).
 */
function apiImage(path, attributes) {
  const image = element('img', { src: path, ...attributes });
  image.addEventListener('error', async () => {
    if (!token() || image.dataset.fetched) return;
    image.dataset.fetched = 'true';
    try {
      const response = await fetch(path, { headers: headers() });
      if (!response.ok) return;
      const url = URL.createObjectURL(await response.blob());
      image.addEventListener('load', () => URL.revokeObjectURL(url), { once: true });
      image.src = url;
    } catch (_) { /* the image stays broken; its alt text shows */ }
  });
  return image;
}

class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * A token the server refuses (rotated, or its user removed) is forgotten: the page signs
 * out, opens its lists again without it (the catalogue is public unless the server is
 * private), and says why. True when `sent` was the stored token.
 */
function forgetRefusedToken(sent) {
  if (!sent || token() !== sent) return false;
  localStorage.removeItem(tokenKey);
  setTimeout(() => {
    reopen();
    notice('Your API token is no longer valid: sign in again.');
  });
  return true;
}

async function api(path, { method = 'GET', body } = {}) {
  const sentToken = token();
  const response = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => null);
  if (response.status === 401) forgetRefusedToken(sentToken);
  if (!response.ok) {
    const error = answer && answer.error ? answer.error : { code: 'http', message: `HTTP ${response.status}` };
    throw new APIError(response.status, error.code, error.message);
  }
  return answer;
}

// MARK: Change streams over fetch (EventSource cannot send a token)

class ChangeStream {
  constructor(path, onEvent, onState) {
    this.path = path;
    this.onEvent = onEvent;
    this.onState = onState;
    this.lastEventID = null;
    this.retry = 2000;
    this.closed = false;
    this.controller = null;
    this.run();
  }

  async run() {
    while (!this.closed) {
      this.controller = new AbortController();
      try {
        const sentToken = token();
        const sent = headers({ Accept: 'text/event-stream' });
        if (this.lastEventID !== null) sent['Last-Event-ID'] = this.lastEventID;
        const response = await fetch(this.path, { headers: sent, signal: this.controller.signal, cache: 'no-store' });
        if (response.status === 401 && forgetRefusedToken(sentToken)) return;
        if (response.status === 401 || response.status === 404) {
          this.onState(response.status === 401 ? 'signed-out' : 'gone');
          return;
        }
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        this.onState('live');
        const parser = new EventParser((event) => {
          if (event.id !== undefined) this.lastEventID = event.id;
          this.onEvent(event.event, JSON.parse(event.data));
        }, (ms) => { this.retry = ms; });
        const reader = response.body.getReader();
        const decoder = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.push(decoder.decode(value, { stream: true }));
        }
      } catch (error) {
        if (this.closed) return;
        if (error instanceof SyntaxError || error instanceof RangeError) this.lastEventID = null;  // resync: a snapshot
      }
      if (this.closed) return;
      this.onState('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, this.retry));
    }
  }

  /** Starts over with a snapshot (a batch did not fit). */
  resync() {
    this.lastEventID = null;
    if (this.controller) this.controller.abort();
  }

  close() {
    this.closed = true;
    if (this.controller) this.controller.abort();
  }
}

// MARK: Elements

function element(tag, attributes = {}, ...children) {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'text') made.textContent = value;
    else if (name.startsWith('on')) made.addEventListener(name.slice(2), value);
    else made.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child) made.append(child);
  return made;
}

function when(date) {
  if (!date) return '';
  const parsed = new Date(date);
  return Number.isNaN(parsed.getTime()) ? '' : parsed.toLocaleString();
}

// MARK: A live list in the DOM

/** A list kept by its change stream: rows deleted, inserted and moved in place (with a
 *  short animation), never the whole list redrawn; focus and scroll position kept. */
class LiveListView {
  constructor({ path, container, row, title, empty, listClass = 'rows', onRow = null }) {
    this.container = container;
    this.renderRow = row;
    this.onRow = onRow;
    this.emptyText = empty;
    this.sections = [];
    this.rowElements = new Map();
    this.list = element('ol', { class: listClass, 'aria-label': title, 'data-list': title });
    this.status = element('p', { class: 'stream-state', role: 'status', 'aria-live': 'polite' });
    this.empty = element('p', { class: 'empty', text: empty, hidden: true });
    container.replaceChildren(this.status, this.list, this.empty);
    this.stream = new ChangeStream(path, (kind, data) => this.receive(kind, data), (state) => this.state(state));
  }

  state(state) {
    const words = { live: '', reconnecting: 'Reconnecting…', 'signed-out': 'Sign in with your API token to see this list.', gone: 'This list is gone.' };
    this.status.textContent = words[state] ?? '';
    this.status.dataset.state = state;
    document.body.classList.toggle('reconnecting', state === 'reconnecting');
  }

  receive(kind, data) {
    if (kind === 'snapshot') {
      this.sections = data.sections;
      this.render(null);
    } else if (kind === 'batch') {
      try {
        this.sections = applyBatch(this.sections, data);
      } catch (error) {
        this.stream.resync();
        return;
      }
      this.render(changedIDs(data));
    }
    this.list.dataset.token = String(data.token);
  }

  rows() { return this.sections.flatMap((section) => section.rows); }

  render(changes) {
    const focusedID = document.activeElement && document.activeElement.closest('[data-id]')
      && this.list.contains(document.activeElement) ? document.activeElement.closest('[data-id]').dataset.id : null;
    const before = new Map();
    if (changes) for (const [id, node] of this.rowElements) before.set(id, node.getBoundingClientRect());
    const rows = this.rows();
    const wanted = new Set(rows.map((row) => row.id));
    for (const [id, node] of this.rowElements) {
      if (!wanted.has(id)) { node.remove(); this.rowElements.delete(id); }
    }
    let previous = null;
    rows.forEach((row, index) => {
      let node = this.rowElements.get(row.id);
      const fresh = !node || !changes || changes.updated.has(row.id) || changes.moved.has(row.id) || changes.inserted.has(row.id);
      if (!node) {
        node = element('li', { 'data-id': row.id });
        this.rowElements.set(row.id, node);
        if (changes) node.classList.add('entering');
      }
      if (fresh) node.replaceChildren(...this.renderRow(row, index));
      node.dataset.position = String(index + 1);
      const next = previous ? previous.nextSibling : this.list.firstChild;
      if (next !== node) this.list.insertBefore(node, next);
      previous = node;
      if (this.onRow) this.onRow(node, row, index);
    });
    this.empty.hidden = rows.length > 0;
    if (changes) this.animate(before);
    if (focusedID && this.rowElements.has(focusedID)) {
      const target = this.rowElements.get(focusedID).querySelector('a, button, [tabindex]') || this.rowElements.get(focusedID);
      if (document.activeElement !== target) target.focus({ preventScroll: true });
    }
    this.list.dispatchEvent(new CustomEvent('listchange', { bubbles: true }));
  }

  /** Rows that moved slide from where they were (FLIP); new rows fade in. */
  animate(before) {
    if (window.matchMedia('(prefers-reduced-motion: reduce)').matches) return;
    for (const [id, node] of this.rowElements) {
      const old = before.get(id);
      if (!old) continue;
      const now = node.getBoundingClientRect();
      const dx = old.left - now.left, dy = old.top - now.top;
      if (!dx && !dy) continue;
      node.style.transition = 'none';
      node.style.transform = `translate(${dx}px, ${dy}px)`;
      requestAnimationFrame(() => {
        node.style.transition = 'transform 200ms ease-out';
        node.style.transform = '';
      });
    }
    setTimeout(() => { for (const node of this.list.querySelectorAll('.entering')) node.classList.remove('entering'); }, 250);
  }

  close() { this.stream.close(); }
}

// MARK: Rows

function regionRow(region) {
  return [element('a', { href: `/regions/${encodeURIComponent(region.id)}`, 'data-link': true },
    element('span', { class: 'name', text: region.name }),
    element('span', { class: 'country', text: region.country || '' }),
    element('span', { class: 'counts', text: `${region.photographers} photographers · ${region.photos} photos` }))];
}

function photoCell(photo) {
  return [element('a', { href: `/photos/${encodeURIComponent(photo.id)}`, 'data-link': true },
    apiImage(`/api/photos/${encodeURIComponent(photo.id)}/thumbnail`, { alt: photo.title, loading: 'lazy', width: 75, height: 75 }),
    element('span', { class: 'title', text: photo.title }),
    element('span', { class: 'subtitle', text: photo.subtitle }))];
}

function recentRow(recent) {
  return [element('a', { href: `/photos/${encodeURIComponent(recent.id)}`, 'data-link': true },
    element('span', { class: 'title', text: recent.title }),
    element('span', { class: 'subtitle', text: recent.subtitle }),
    element('time', { datetime: recent.lastViewed, text: when(recent.lastViewed) }))];
}

function favoriteRow(favorite) {
  // The row's place is read when the button is pressed: rows move without being redrawn.
  const move = (by) => (event) => {
    const from = Number(event.target.closest('li').dataset.position);
    moveFavorite(from, from + by);
  };
  return [
    element('a', { href: `/photos/${encodeURIComponent(favorite.id)}`, 'data-link': true, text: favorite.title }),
    element('span', { class: 'reorder' },
      element('button', { type: 'button', 'aria-label': `Move ${favorite.title} up`, onclick: move(-1), text: '↑' }),
      element('button', { type: 'button', 'aria-label': `Move ${favorite.title} down`, onclick: move(1), text: '↓' }),
      element('button', { type: 'button', class: 'remove', 'aria-label': `Remove ${favorite.title} from Favorites`,
        onclick: () => removeFavorite(favorite.id), text: '✕' })),
  ];
}

/** Removes a photo from Favorites; the list's stream redraws it. Returns the new list. */
async function removeFavorite(id) {
  try { return await api('/api/favorites', { method: 'DELETE', body: { id } }); } catch (error) { notice(error.message); return null; }
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

// MARK: Screens

const listPane = document.getElementById('list-pane');
const detailPane = document.getElementById('detail-pane');
let listView = null, listName = null, detailView = null;

function notice(text) {
  const box = document.getElementById('notice');
  box.textContent = text;
  box.hidden = !text;
}

function showList(name) {
  if (listName === name && listView) return;
  if (listView) listView.close();
  listName = name;
  sessionStorage.setItem(listKey, name);
  for (const tab of document.querySelectorAll('nav a')) tab.toggleAttribute('aria-current', tab.dataset.list === name);
  const body = element('div');
  const heading = { regions: 'Top Regions', recents: 'Recents', favorites: 'Favorites' }[name];
  listPane.replaceChildren(element('h2', { text: heading, id: 'list-heading' }), body);
  if (name === 'regions') {
    listView = new LiveListView({ path: '/api/regions/changes', container: body, row: regionRow, title: 'regions', empty: 'No regions yet: run topregions sync.' });
  } else if (name === 'recents') {
    listView = new LiveListView({ path: '/api/recents/changes', container: body, row: recentRow, title: 'recents', empty: 'No photos viewed yet.' });
  } else {
    listView = new LiveListView({ path: '/api/favorites/changes', container: body, row: favoriteRow, title: 'favorites',
      empty: 'No favorites yet: open a photo and add it.', onRow: favoriteBehaviour });
  }
}

function backButton(to) {
  return element('a', { href: to, class: 'back', 'data-link': true, 'data-back': true, text: '‹ Back' });
}

async function showRegion(id) {
  closeDetail();
  const body = element('div');
  const heading = element('h2', { text: 'Photos', id: 'detail-heading' });
  detailPane.replaceChildren(backButton('/'), heading, body);
  detailView = new LiveListView({ path: `/api/regions/${encodeURIComponent(id)}/photos/changes`, container: body, row: photoCell,
    title: 'photos', empty: 'No photos in this region.', listClass: 'grid' });
  try {
    const regions = await api('/api/regions?limit=1000');
    const region = regions.find((candidate) => candidate.id === id);
    if (region) heading.textContent = region.country ? `${region.name} (${region.country})` : region.name;
  } catch (error) { /* the heading stays generic */ }
}

async function showPhoto(id) {
  closeDetail();
  const back = backButton(history.state && history.state.from ? history.state.from : '/');
  detailPane.replaceChildren(back, element('p', { class: 'loading', text: 'Loading…' }));
  let photo;
  try {
    photo = token() ? await api(`/api/photos/${encodeURIComponent(id)}/view`, { method: 'POST' }) : await api(`/api/photos/${encodeURIComponent(id)}`);
  } catch (error) {
    detailPane.replaceChildren(back, element('p', { class: 'error', text: error.message }));
    return;
  }
  const place = [photo.region, photo.country].filter(Boolean).join(', ');
  const favorite = element('button', { type: 'button', id: 'favorite', text: 'Add to Favorites', hidden: !token() });
  const showFavorite = (list) => {
    if (!list) return;
    const isFavorite = list.some((row) => row.id === photo.id);
    favorite.textContent = isFavorite ? 'Remove from Favorites' : 'Add to Favorites';
    favorite.setAttribute('aria-pressed', String(isFavorite));
  };
  favorite.addEventListener('click', async () => {
    if (favorite.getAttribute('aria-pressed') === 'true') {
      showFavorite(await removeFavorite(photo.id));
      return;
    }
    try { showFavorite(await api('/api/favorites', { method: 'POST', body: { id: photo.id } })); } catch (error) { notice(error.message); }
  });
  if (token()) api('/api/favorites').then(showFavorite, () => {});
  detailPane.replaceChildren(back, element('article', { class: 'photo', 'data-id': photo.id },
    element('h2', { text: photo.title, id: 'detail-heading' }),
    photo.subtitle ? element('p', { class: 'subtitle', text: photo.subtitle }) : null,
    apiImage(`/api/photos/${encodeURIComponent(photo.id)}/image`, { alt: photo.title, class: 'large' }),
    element('dl', {},
      element('dt', { text: 'Photographer' }), element('dd', { text: photo.photographer || 'Unknown' }),
      element('dt', { text: 'Place' }), element('dd', { text: place || 'Unknown' }),
      element('dt', { text: 'Uploaded' }), element('dd', {}, element('time', { datetime: photo.uploaded || '', text: when(photo.uploaded) || 'Unknown' }))),
    favorite));
}

function closeDetail() {
  if (detailView) detailView.close();
  detailView = null;
}

function route() {
  const path = location.pathname;
  let match;
  notice('');
  if ((match = path.match(/^\/regions\/([^/]+)$/))) {
    showList('regions');
    showRegion(decodeURIComponent(match[1]));
    document.body.dataset.depth = 'detail';
  } else if ((match = path.match(/^\/photos\/(\d+)$/))) {
    if (!listName) showList(sessionStorage.getItem(listKey) || 'regions');
    showPhoto(match[1]);
    document.body.dataset.depth = 'detail';
  } else {
    const name = path === '/recents' ? 'recents' : path === '/favorites' ? 'favorites' : 'regions';
    showList(name);
    closeDetail();
    detailPane.replaceChildren(element('p', { class: 'placeholder', text: 'Choose a region, then a photo.' }));
    document.body.dataset.depth = 'list';
  }
}

function navigate(to) {
  if (to === location.pathname) return;
  history.pushState({ from: location.pathname }, '', to);
  route();
}

document.addEventListener('click', (event) => {
  const link = event.target.closest('a[data-link]');
  if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  if (link.dataset.back !== undefined && history.state && history.state.from) history.back();
  else navigate(link.getAttribute('href'));
});
window.addEventListener('popstate', route);

// MARK: Signing in

const signIn = document.getElementById('sign-in');
const tokenField = document.getElementById('token');
const signedIn = document.getElementById('signed-in');

function showSignIn() {
  signIn.hidden = Boolean(token());
  signedIn.hidden = !token();
}

signIn.addEventListener('submit', (event) => {
  event.preventDefault();
  const typed = tokenField.value.trim();
  tokenField.value = '';
  if (!tokenPattern.test(typed)) {
    notice('That is not an API token: one is trk_ and 43 letters, digits, - or _ (topregions users token NAME --rotate).');
    return;
  }
  localStorage.setItem(tokenKey, typed);
  reopen();
});
document.getElementById('sign-out').addEventListener('click', () => {
  localStorage.removeItem(tokenKey);
  reopen();
});

/** The token changed: every list opens again with it. */
function reopen() {
  showSignIn();
  if (listView) listView.close();
  listView = null;
  listName = null;
  route();
}

// A page left for another (or kept in the back-forward cache) closes its streams: a
// browser gives a host six connections, and a stream holds one.
window.addEventListener('pagehide', () => {
  if (listView) listView.close();
  closeDetail();
  listView = null;
  listName = null;
});
window.addEventListener('pageshow', (event) => { if (event.persisted) route(); });

showSignIn();
route();
