// The photo viewer (the assignment's photo view): a modal <dialog> over the list it was
// opened from, which stays as it was (scroll position, focus) underneath. The photo opens
// fitted to the space; wheel, pinch, double-click or double-tap, + - 0 zoom; dragging pans;
// ← → (buttons, keys, a swipe) go through the list; full screen; Back, Escape or the
// browser's back return to the list. Its credit: the photographer, the licence and the
// photo's own page on Flickr, linked.
import { element, externalLink, longDate, timeElement } from './dom.js';
import { externalURL, licence, placeName, regionName } from './format.js';
import { largeImage, missingImage, preload } from './images.js';
import { clampView, fitView, isFitted, pinchView, toggleView, zoomTo } from './zoom.js';

const swipeDistance = 60;

export class PhotoViewer {
  /**
   * hooks: back() (leave the viewer: the page goes back to its list), moved(id) (the photo
   * shown changed), load(id) → Promise of the photo's detail (records the view), missing(id,
   * error) (no such photo), favorites: {state(id) → true|false|null, toggle(id, on) →
   * Promise} or null.
   */
  constructor(dialog, hooks) {
    this.dialog = dialog;
    this.hooks = hooks;
    this.body = dialog.querySelector('#viewer-body');  // what goes full screen (a dialog cannot)
    this.stage = dialog.querySelector('#viewer-stage');
    this.info = dialog.querySelector('#viewer-info');
    this.count = dialog.querySelector('#viewer-count');
    this.status = dialog.querySelector('#viewer-status');
    this.backLabel = dialog.querySelector('#viewer-back-label');
    this.previousButton = dialog.querySelector('#viewer-prev');
    this.nextButton = dialog.querySelector('#viewer-next');
    this.zoomToggle = dialog.querySelector('#zoom-toggle');
    this.zoomIn = dialog.querySelector('#zoom-in');
    this.zoomOut = dialog.querySelector('#zoom-out');
    this.fullscreenButton = dialog.querySelector('#fullscreen');
    this.id = null;
    this.source = null;
    this.sequence = [];
    this.image = null;
    this.natural = null;
    this.view = null;
    this.loadToken = 0;
    this.pointers = new Map();
    this.gesture = null;
    this.lastTap = null;
    this.lastPointerType = 'mouse';
    this.favoriteButton = element('button', { type: 'button', id: 'favorite', class: 'favorite', hidden: true, 'aria-pressed': 'false',
      text: 'Add to Favorites' });
    this.favoriteButton.addEventListener('click', async () => {
      const id = this.id;
      const button = this.favoriteButton;
      button.disabled = true;
      await this.hooks.favorites.toggle(id, button.getAttribute('aria-pressed') !== 'true');
      button.disabled = false;
      if (this.id === id) this.refreshFavorite();
    });
    this.details = element('div', { class: 'viewer-details' });
    this.pageLink = externalLink(null, 'View on Flickr', { class: 'button flickr-page', 'data-credit': 'page', hidden: true });
    this.actions = element('div', { class: 'viewer-actions' }, this.pageLink, this.hooks.favorites ? this.favoriteButton : null);
    this.wire();
  }

  get isOpen() { return this.dialog.open; }

  // MARK: Opening, moving, closing

  /** Shows photo `id` of `source` (a list: photoRows(), hasMore(), loadMore(), label,
   *  elementFor(id)), or of no list yet (a deep link: setSource once its region is shown). */
  open(id, source) {
    this.source = source || null;
    this.sequence = source ? source.photoRows().slice() : [];
    if (!this.dialog.open) {
      this.dialog.showModal();
      document.documentElement.classList.add('viewer-open');
      if (this.hooks.opened) this.hooks.opened();
      this.dialog.querySelector('#viewer-back').focus({ preventScroll: true });
    }
    this.updateBackLabel();
    this.show(id);
  }

  setSource(source) {
    this.source = source;
    this.sequence = source.photoRows().slice();
    this.updateBackLabel();
    this.updateNavigation();
  }

  updateBackLabel() {
    const label = this.source && this.source.label ? this.source.label : 'Back';
    this.backLabel.textContent = label;
    this.dialog.querySelector('#viewer-back').setAttribute('aria-label', this.source && this.source.label ? `Back to ${label}` : 'Back');
  }

  /** The viewer's list: the list it came from as it was when the viewer opened (viewing a
   *  photo moves it to the top of Recents: the order must not change under the user's
   *  fingers), with the rows the list has loaded past its end since. */
  rows() {
    const current = this.source ? this.source.photoRows() : [];
    if (!this.sequence.some((row) => row.id === this.id)) {
      this.sequence = current.slice();
      return this.sequence;
    }
    const last = this.sequence[this.sequence.length - 1];
    const at = current.findIndex((row) => row.id === last.id);
    if (at >= 0) {
      const known = new Set(this.sequence.map((row) => row.id));
      for (const row of current.slice(at + 1)) if (!known.has(row.id)) this.sequence.push(row);
    }
    return this.sequence;
  }

  close() {
    if (!this.dialog.open) return;
    if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
    this.loadToken += 1;
    this.dialog.close();
    document.documentElement.classList.remove('viewer-open');
    this.clearImage();
    // Focus goes back to the photo just seen, in the list (which kept its scroll position;
    // scrolled only when that photo is off screen, after ← → went far).
    const target = this.source && this.id ? this.source.elementFor(this.id) : null;
    if (target) {
      const box = target.getBoundingClientRect();
      if (box.bottom < 0 || box.top > window.innerHeight) target.scrollIntoView({ block: 'center' });
      target.focus({ preventScroll: true });
    }
    this.source = null;
    this.id = null;
  }

  async step(delta) {
    let rows = this.rows();
    const index = rows.findIndex((row) => row.id === this.id);
    if (index < 0) return;
    const target = index + delta;
    if (target >= rows.length && this.source && this.source.hasMore()) {
      await this.source.loadMore();
      rows = this.rows();
    }
    if (target < 0 || target >= rows.length) return;
    const id = rows[target].id;
    this.hooks.moved(id);
    this.show(id);
  }

  show(id) {
    const token = ++this.loadToken;
    this.id = id;
    const row = this.rows().find((candidate) => candidate.id === id) || null;
    this.photo = row ? { ...row } : { id, title: '' };
    this.detailLoaded = false;
    this.renderInfo();
    this.loadImage(id, this.photo.title);
    this.updateNavigation();
    this.hooks.load(id).then((detail) => {
      if (token !== this.loadToken || !detail) return;
      this.photo = { ...this.photo, ...detail };
      this.detailLoaded = true;
      if (this.image && this.image.alt !== (detail.title || 'Untitled photo')) this.image.alt = detail.title || 'Untitled photo';
      this.renderInfo();
    }, (error) => {
      if (token !== this.loadToken) return;
      this.hooks.missing(id, error);
    });
  }

  updateNavigation() {
    const rows = this.rows();
    const index = rows.findIndex((row) => row.id === this.id);
    const more = this.source && this.source.hasMore();
    this.previousButton.disabled = index <= 0;
    this.nextButton.disabled = index < 0 || (index >= rows.length - 1 && !more);
    this.count.textContent = index < 0 ? '' : `${index + 1} of ${rows.length}${more ? '+' : ''}`;
    this.status.textContent = index < 0 ? (this.photo.title || '') : `Photo ${index + 1} of ${rows.length}${more ? ' or more' : ''}: ${this.photo.title || 'Untitled'}`;
    preload([rows[index - 1]?.id, rows[index + 1]?.id]);
  }

  // MARK: The image

  clearImage() {
    this.stage.querySelectorAll('img.large, .image-missing').forEach((node) => node.remove());
    this.image = null;
    this.natural = null;
    this.view = null;
    this.stage.dataset.state = 'empty';
    this.updateZoomControls();
  }

  loadImage(id, title) {
    this.clearImage();
    this.stage.dataset.state = 'loading';
    const image = largeImage(id, title, () => {
      if (this.id !== id || this.image !== image) return;
      this.showMissing(this.photo.title);
    });
    this.image = image;
    image.addEventListener('load', () => {
      if (this.id !== id || this.image !== image || !image.naturalWidth) return;
      this.natural = { width: image.naturalWidth, height: image.naturalHeight };
      image.style.width = `${this.natural.width}px`;
      image.style.height = `${this.natural.height}px`;
      this.apply(fitView(this.natural, this.stageSize()));
      this.stage.dataset.state = 'shown';
    });
    this.stage.prepend(image);
  }

  showMissing(title) {
    this.clearImage();
    const placeholder = missingImage(title);
    placeholder.append(element('span', { class: 'missing-note', text: 'No image of this photo is available.' }));
    this.stage.prepend(placeholder);
    this.stage.dataset.state = 'missing';
  }

  stageSize() {
    return { width: this.stage.clientWidth, height: this.stage.clientHeight };
  }

  apply(view, animate = false) {
    if (!this.image || !this.natural) return;
    this.view = view;
    this.image.classList.toggle('animating', animate);
    this.image.style.transform = `translate(${view.x}px, ${view.y}px) scale(${view.scale})`;
    // Whether it is fitted is kept (a resize keeps a fitted photo fitted), also on the
    // dialog for tests.
    this.isFit = isFitted(view, this.natural, this.stageSize());
    this.dialog.dataset.fitted = String(this.isFit);
    this.dialog.dataset.zoom = String(view.scale);
    this.updateZoomControls();
  }

  get fitted() {
    return !this.view || this.isFit;
  }

  updateZoomControls() {
    const ready = Boolean(this.view);
    for (const button of [this.zoomIn, this.zoomOut, this.zoomToggle]) button.disabled = !ready;
    this.stage.classList.toggle('zoomed', ready && !this.fitted);
    if (!ready) {
      this.zoomToggle.textContent = 'Fit';
      return;
    }
    const percent = `${Math.round(this.view.scale * 100)} %`;
    this.zoomToggle.textContent = this.fitted ? 'Fit' : percent;
    this.zoomToggle.setAttribute('aria-label', this.fitted ? `Zoom in (now fitted, ${percent})` : `Fit to the screen (now ${percent})`);
  }

  zoomBy(factor, point = null, animate = true) {
    if (!this.view) return;
    const stage = this.stageSize();
    const at = point || { x: stage.width / 2, y: stage.height / 2 };
    this.apply(zoomTo(this.view, this.view.scale * factor, at, this.natural, stage), animate);
  }

  fit(animate = true) {
    if (this.view) this.apply(fitView(this.natural, this.stageSize()), animate);
  }

  toggle(point = null) {
    if (!this.view) return;
    const stage = this.stageSize();
    this.apply(toggleView(this.view, point || { x: stage.width / 2, y: stage.height / 2 }, this.natural, stage), true);
  }

  local(event) {
    const box = this.stage.getBoundingClientRect();
    return { x: event.clientX - box.left, y: event.clientY - box.top };
  }

  // MARK: The information beside the photo

  renderInfo() {
    const photo = this.photo;
    // The title stays the same element (a screen reader's place, a test's reference).
    let title = this.info.querySelector('#viewer-title');
    if (!title) title = element('h2', { id: 'viewer-title' });
    const text = photo.title || (this.detailLoaded ? 'Untitled' : '');
    if (title.textContent !== text) title.textContent = text;
    // A placeholder shown before the photo's detail arrived (a deep link) takes its title.
    const missing = this.stage.querySelector('.image-missing .missing-title');
    if (missing && text && missing.textContent !== text) {
      missing.textContent = text;
      missing.parentElement.setAttribute('aria-label', `No image: ${text}`);
    }
    const parts = [];
    if (photo.subtitle) parts.push(element('p', { class: 'viewer-subtitle', text: photo.subtitle }));

    const facts = element('dl', { class: 'facts' });
    const fact = (name, ...value) => facts.append(element('dt', { text: name }), element('dd', {}, ...value));
    if ('photographer' in photo) {
      const url = externalURL(photo.photographerURL);
      const name = photo.photographer || 'Unknown photographer';
      fact('Photographer', url ? externalLink(url, name, { class: 'photographer', 'data-credit': 'photographer' }) : element('span', { class: 'photographer', text: name }));
    }
    if (photo.region || photo.country) {
      const place = element('span', { class: 'place' });
      const name = regionName(photo.region, photo.country);
      if (name && photo.regionID) {
        place.append(element('a', { href: `/regions/${encodeURIComponent(photo.regionID)}`, 'data-link': true, class: 'region-link', text: name }));
        const full = placeName(photo.region, photo.country);
        if (full.length > name.length) place.append(full.slice(name.length));
      } else {
        place.textContent = placeName(photo.region, photo.country);
      }
      fact('Place', place);
    }
    if (photo.uploaded) fact('Uploaded', timeElement(photo.uploaded, longDate(photo.uploaded)));
    // Credit: the photographer (above), the licence by name, linked; the photo's own page.
    const credited = 'license' in photo || 'pageURL' in photo || this.detailLoaded;
    if (credited) {
      const terms = licence(photo);
      fact('Licence', terms.url ? externalLink(terms.url, terms.name, { 'data-credit': 'license', rel: 'license noopener noreferrer' })
        : element('span', { class: terms.known ? 'license' : 'license unknown', 'data-credit': 'license', text: terms.name }));
    }
    if (facts.childElementCount) parts.push(facts);
    // The title, the actions and the favorite button stay the same elements (a screen
    // reader's place, the focus, a test's reference); what is between them is drawn again.
    const page = externalURL(photo.pageURL);
    this.pageLink.hidden = !page;
    if (page) this.pageLink.href = page;
    else this.pageLink.removeAttribute('href');
    if (this.hooks.favorites) this.refreshFavorite();
    this.details.replaceChildren(...parts);
    if (this.info.firstChild !== title || this.info.childElementCount !== 3) this.info.replaceChildren(title, this.details, this.actions);
  }

  /** The favorite button's state, once Favorites are known (or changed). */
  refreshFavorite() {
    const button = this.favoriteButton;
    if (!this.hooks.favorites || !this.id) return;
    const state = this.hooks.favorites.state(this.id);
    button.hidden = state === null;
    button.setAttribute('aria-pressed', String(state === true));
    button.textContent = state ? 'Remove from Favorites' : 'Add to Favorites';
  }

  // MARK: Input

  wire() {
    const dialog = this.dialog;
    dialog.querySelector('#viewer-back').addEventListener('click', () => this.hooks.back());
    dialog.addEventListener('cancel', (event) => {
      event.preventDefault();
      this.hooks.back();
    });
    // A dialog closed by the browser itself (a second Escape it did not let the page cancel).
    dialog.addEventListener('close', () => {
      if (this.id !== null) this.hooks.back();
    });
    this.previousButton.addEventListener('click', () => this.step(-1));
    this.nextButton.addEventListener('click', () => this.step(1));
    this.zoomIn.addEventListener('click', () => this.zoomBy(1.5));
    this.zoomOut.addEventListener('click', () => this.zoomBy(1 / 1.5));
    this.zoomToggle.addEventListener('click', () => this.toggle());
    if (document.fullscreenEnabled) {
      this.fullscreenButton.addEventListener('click', () => this.toggleFullscreen());
      document.addEventListener('fullscreenchange', () => {
        const on = document.fullscreenElement === this.body;
        this.fullscreenButton.setAttribute('aria-pressed', String(on));
        this.fullscreenButton.setAttribute('aria-label', on ? 'Leave full screen' : 'Full screen');
        dialog.classList.toggle('fullscreen', on);
      });
    } else {
      this.fullscreenButton.hidden = true;
    }

    dialog.addEventListener('keydown', (event) => this.key(event));

    const stage = this.stage;
    stage.addEventListener('wheel', (event) => {
      if (!this.view) return;
      event.preventDefault();
      const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? stage.clientHeight : 1;
      const factor = Math.exp(-event.deltaY * unit * (event.ctrlKey ? 0.01 : 0.002));
      this.zoomBy(factor, this.local(event), false);
    }, { passive: false });
    stage.addEventListener('dblclick', (event) => {
      if (this.lastPointerType === 'touch' || event.target.closest('button')) return;
      this.toggle(this.local(event));
    });
    stage.addEventListener('pointerdown', (event) => this.pointerDown(event));
    stage.addEventListener('pointermove', (event) => this.pointerMove(event));
    stage.addEventListener('pointerup', (event) => this.pointerUp(event));
    stage.addEventListener('pointercancel', (event) => this.pointerUp(event, true));

    new ResizeObserver(() => {
      if (!this.view) return;
      const stageSize = this.stageSize();
      this.apply(this.isFit ? fitView(this.natural, stageSize) : clampView(this.view, this.natural, stageSize));
    }).observe(stage);
  }

  key(event) {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest('input, textarea, select')) return;
    const handled = () => { event.preventDefault(); event.stopPropagation(); };
    switch (event.key) {
      case 'Escape': handled(); this.hooks.back(); break;
      case 'ArrowLeft': handled(); this.step(-1); break;
      case 'ArrowRight': handled(); this.step(1); break;
      case '+': case '=': handled(); this.zoomBy(1.25); break;
      case '-': case '_': handled(); this.zoomBy(1 / 1.25); break;
      case '0': handled(); this.fit(); break;
      case 'f': case 'F': if (!this.fullscreenButton.hidden) { handled(); this.toggleFullscreen(); } break;
      default: break;
    }
  }

  toggleFullscreen() {
    if (document.fullscreenElement) document.exitFullscreen().catch(() => {});
    else this.body.requestFullscreen().catch(() => {});
  }

  pointerDown(event) {
    if (event.target.closest('button, a') || (event.pointerType === 'mouse' && event.button !== 0)) return;
    this.lastPointerType = event.pointerType;
    this.stage.setPointerCapture(event.pointerId);
    this.pointers.set(event.pointerId, this.local(event));
    if (!this.view) {
      this.gesture = { kind: 'swipe', start: this.local(event), time: performance.now(), view: null };
      return;
    }
    this.beginGesture();
  }

  beginGesture() {
    const points = [...this.pointers.values()];
    if (points.length >= 2) {
      const [a, b] = points;
      this.gesture = { kind: 'pinch', view: { ...this.view }, mid: { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 },
        distance: Math.hypot(a.x - b.x, a.y - b.y), moved: true };
    } else if (points.length === 1) {
      this.gesture = { kind: this.fitted ? 'swipe' : 'pan', start: points[0], view: { ...this.view }, time: performance.now(), moved: false };
    }
    this.image?.classList.remove('animating');
  }

  pointerMove(event) {
    if (!this.pointers.has(event.pointerId) || !this.gesture) return;
    this.pointers.set(event.pointerId, this.local(event));
    const gesture = this.gesture;
    const stage = this.stageSize();
    if (gesture.kind === 'pinch') {
      const [a, b] = [...this.pointers.values()];
      if (!b || !this.view) return;
      const mid = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
      this.apply(pinchView(gesture.view, gesture.mid, gesture.distance, mid, Math.hypot(a.x - b.x, a.y - b.y), this.natural, stage));
      return;
    }
    const point = this.pointers.get(event.pointerId);
    const dx = point.x - gesture.start.x, dy = point.y - gesture.start.y;
    if (Math.hypot(dx, dy) > 6) gesture.moved = true;
    if (!gesture.moved) return;
    if (gesture.kind === 'pan') {
      this.stage.classList.add('dragging');
      this.apply(clampView({ scale: gesture.view.scale, x: gesture.view.x + dx, y: gesture.view.y + dy }, this.natural, stage));
    } else if (gesture.view && Math.abs(dx) > Math.abs(dy)) {
      // A swipe at fit: the photo follows the finger sideways, until it is let go.
      this.image.style.transform = `translate(${gesture.view.x + dx}px, ${gesture.view.y}px) scale(${gesture.view.scale})`;
    }
  }

  pointerUp(event, cancelled = false) {
    if (!this.pointers.has(event.pointerId)) return;
    const end = this.local(event);
    this.pointers.delete(event.pointerId);
    const gesture = this.gesture;
    this.stage.classList.remove('dragging');
    if (!gesture) return;
    if (gesture.kind === 'pinch') {
      // One finger left after a pinch: it pans from here.
      this.beginGesture();
      if (this.gesture) this.gesture.moved = true;
      if (this.pointers.size === 0) this.gesture = null;
      return;
    }
    this.gesture = null;
    const dx = end.x - gesture.start.x, dy = end.y - gesture.start.y;
    if (gesture.kind === 'swipe' && !cancelled) {
      if (Math.abs(dx) > swipeDistance && Math.abs(dx) > 1.5 * Math.abs(dy)) {
        this.step(dx < 0 ? 1 : -1);
        return;
      }
      if (this.view) this.apply(this.view, true);  // back into place
    }
    if (!gesture.moved && !cancelled && event.pointerType !== 'mouse') {
      // A double tap toggles fit and 100 %.
      const now = performance.now();
      if (this.lastTap && now - this.lastTap.time < 350 && Math.hypot(end.x - this.lastTap.x, end.y - this.lastTap.y) < 30) {
        this.lastTap = null;
        this.toggle(end);
      } else {
        this.lastTap = { time: now, x: end.x, y: end.y };
      }
    }
  }
}
