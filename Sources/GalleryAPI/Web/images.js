// Photos' images: the size that fits (`srcset`/`sizes` for grids, a large size for the
// viewer), a designed placeholder when there is no image, and on a private server
// (`serve --private`) the image fetched again with the token and shown from a blob URL.
import { headers, token } from './api.js';
import { element } from './dom.js';
import { imagePath, srcset } from './format.js';

let sized = false;
let known = null;  // the answer of the probe, once asked

/**
 * Whether the server answers `/image?size=`: an older one refuses the parameter (400
 * naming it) and has only `/thumbnail` (75×75) and `/image` (large). Asked once, with a
 * photo id that cannot exist; until it is known, and when it cannot be (a private server
 * before signing in), the page uses the two older URLs, which every server has.
 */
export function probeImageSizes() {
  known = ask();
  return known;
}

async function ask() {
  try {
    const response = await fetch(imagePath('0', 's'), { headers: headers() });
    if (response.status === 401 || response.status === 403) {
      sized = false;
    } else if (response.status === 400) {
      const answer = await response.json().catch(() => null);
      sized = !/size/.test(answer?.error?.message ?? 'size');
    } else {
      sized = true;
    }
  } catch (_) {
    sized = false;
  }
  document.documentElement.dataset.imageSizes = sized ? 'yes' : 'no';
  return sized;
}

/** How wide a grid tile is drawn, for `sizes` (style.css: two columns on a phone, tiles
 *  of 12 to about 20 rem on wider screens). */
const tileSizes = '(max-width: 700px) calc(50vw - 1.25rem), 15rem';

const variants = {
  tile: { sizes: ['q', 'n', 'z'], src: 'n', layout: tileSizes, legacy: 's' },
  row: { sizes: ['s', 'q', 'n'], src: 'q', layout: '5rem', legacy: 's' },
  large: { sizes: null, src: 'b', layout: null, legacy: 'b' },
};

/** Sets an image's sources once the server's sizes are known (a few milliseconds after the
 *  page starts: lists without images do not wait for it). */
function setSources(image, id, variant) {
  if (known) known.then(() => sourcesNow(image, id, variant));
  else sourcesNow(image, id, variant);
}

function sourcesNow(image, id, variant) {
  const kind = variants[variant];
  if (sized && kind.sizes) {
    image.setAttribute('srcset', srcset(id, kind.sizes));
    image.setAttribute('sizes', kind.layout);
  }
  image.setAttribute('src', imagePath(id, sized ? kind.src : kind.legacy, sized));
}

/** The URL a large image of the photo has (the viewer's, and what it preloads). */
export function largeImagePath(id) {
  return imagePath(id, 'b', sized);
}

/** A placeholder for a photo without an image: a picture sign and the photo's title. */
export function missingImage(title) {
  const name = title || 'Untitled';
  return element('span', { class: 'image-missing', role: 'img', 'aria-label': `No image: ${name}` },
    element('span', { class: 'missing-sign', 'aria-hidden': 'true' }),
    element('span', { class: 'missing-title', 'aria-hidden': 'true', text: name }));
}

/**
 * What an image does when it does not load. With a token, it is fetched once more with it (a
 * private server refuses an <img>'s request, which carries none) and shown from a blob URL;
 * a server that turns out not to know `?size=` gets the older URL. Else, or when that fails
 * too (404 `no_image`, bytes that do not decode), `onMissing` shows the placeholder.
 */
export function whenMissing(image, id, variant, onMissing) {
  let tries = 0;
  image.addEventListener('error', async () => {
    tries += 1;
    if (tries > 1 || !token()) {
      onMissing();
      return;
    }
    let path = image.getAttribute('src');
    try {
      let response = await fetch(image.currentSrc || path, { headers: headers() });
      if (response.status === 400 && sized) {
        sized = false;
        path = imagePath(id, variants[variant].legacy, false);
        response = await fetch(path, { headers: headers() });
      }
      if (!response.ok) {
        onMissing();
        return;
      }
      const url = URL.createObjectURL(await response.blob());
      image.addEventListener('load', () => URL.revokeObjectURL(url), { once: true });
      image.removeAttribute('srcset');
      image.removeAttribute('sizes');
      image.src = url;
    } catch (_) {
      onMissing();
    }
  });
}

/**
 * A photo's image in a frame of fixed shape (no layout shift while it loads): `tile` for
 * grids, `row` for Recents and Favorites. The frame shows the placeholder when there is no
 * image.
 */
export function photoImage(id, title, variant, attributes = {}) {
  const frame = element('span', { class: `frame frame-${variant}` });
  const image = element('img', { alt: title || 'Untitled photo', decoding: 'async', ...attributes });
  setSources(image, id, variant);
  whenMissing(image, id, variant, () => {
    frame.dataset.missing = 'true';
    frame.replaceChildren(missingImage(title));
  });
  frame.append(image);
  return frame;
}

/** The viewer's image: large; `onMissing` when there is none. */
export function largeImage(id, title, onMissing) {
  const image = element('img', { class: 'large', alt: title || 'Untitled photo', draggable: 'false', decoding: 'async' });
  setSources(image, id, 'large');
  whenMissing(image, id, 'large', onMissing);
  return image;
}

const preloaded = new Map();

/** Starts loading photos' large images (the viewer's neighbours): kept for the last few. */
export function preload(ids) {
  for (const id of ids) {
    if (!id || preloaded.has(id)) continue;
    const image = new Image();
    image.decoding = 'async';
    image.src = largeImagePath(id);
    preloaded.set(id, image);
  }
  while (preloaded.size > 6) preloaded.delete(preloaded.keys().next().value);
}
