// The API as the page uses it: the user's token, JSON requests, pages of a list (the
// `Link: <…>; rel="next"` header), and change streams read over fetch (EventSource cannot
// send a token).
import { EventParser } from './batch.js';
import { nextLink } from './format.js';

const tokenKey = 'topregions.token';

/** What an API token looks like: `trk_` and 43 base64url characters. */
export const tokenPattern = /^trk_[A-Za-z0-9_-]{43}$/;

/**
 * The stored token. One that cannot be a token (put there by hand, or by an older page) is
 * forgotten: a header cannot carry every character, and the browser would refuse every
 * request that tried, public ones too.
 */
export function token() {
  const stored = localStorage.getItem(tokenKey) || '';
  if (stored && !tokenPattern.test(stored)) {
    localStorage.removeItem(tokenKey);
    return '';
  }
  return stored;
}

export function setToken(value) {
  if (value) localStorage.setItem(tokenKey, value);
  else localStorage.removeItem(tokenKey);
}

export function headers(extra = {}) {
  const sent = { ...extra };
  const current = token();
  if (current) sent.Authorization = `Bearer ${current}`;
  return sent;
}

let refused = () => {};

/** What the page does when the server refuses the stored token (sign out, say why). */
export function onTokenRefused(handler) { refused = handler; }

/**
 * A token the server refuses (rotated, or its user removed) is forgotten: the page signs
 * out, opens its lists again without it (the catalogue is public unless the server is
 * private), and says why. True when `sent` was the stored token.
 */
export function forgetRefusedToken(sent) {
  if (!sent || token() !== sent) return false;
  setToken('');
  setTimeout(refused);
  return true;
}

export class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function failure(response, sentToken) {
  const answer = await response.json().catch(() => null);
  if (response.status === 401) forgetRefusedToken(sentToken);
  const error = answer && answer.error ? answer.error : { code: 'http', message: `HTTP ${response.status}` };
  return new APIError(response.status, error.code, error.message);
}

/** A JSON request; an APIError for an answer that is not 2xx. */
export async function api(path, { method = 'GET', body, signal } = {}) {
  const sentToken = token();
  const response = await fetch(path, {
    method,
    signal,
    headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response, sentToken);
  return response.json().catch(() => null);
}

/** One page of a list: its rows and the path of the next page (null at the end, and from a
 *  server without paging, which sends no `Link`). */
export async function apiPage(path, { signal } = {}) {
  const sentToken = token();
  const response = await fetch(path, { headers: headers(), signal });
  if (!response.ok) throw await failure(response, sentToken);
  const rows = await response.json();
  return { rows: Array.isArray(rows) ? rows : [], next: nextLink(response.headers.get('Link'), location.href) };
}

// MARK: Change streams over fetch

export class ChangeStream {
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
          if (!this.closed) this.onEvent(event.event, JSON.parse(event.data));
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
