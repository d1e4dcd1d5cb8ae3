// Making elements. Text from Flickr goes in as `text` (textContent) or as an attribute,
// never as HTML.

export function element(tag, attributes = {}, ...children) {
  const made = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'text') made.textContent = value;
    else if (name.startsWith('on')) made.addEventListener(name.slice(2), value);
    else made.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) made.append(child);
  return made;
}

/** A link to another site: a new tab, no opener, no referrer. */
export function externalLink(href, text, attributes = {}) {
  return element('a', { href, target: '_blank', rel: 'noopener noreferrer', ...attributes, text });
}

function parsed(date) {
  if (!date) return null;
  const value = new Date(date);
  return Number.isNaN(value.getTime()) ? null : value;
}

/** "30 November 2026 at 06:11", in the reader's language and time zone. */
export function longDate(date) {
  const value = parsed(date);
  return value ? value.toLocaleString(undefined, { dateStyle: 'long', timeStyle: 'short' }) : '';
}

let relative = null;

/** "5 minutes ago", "yesterday"; the date itself past a week. */
export function relativeDate(date, now = Date.now()) {
  const value = parsed(date);
  if (!value) return '';
  const seconds = (value.getTime() - now) / 1000;
  relative ??= new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  const format = relative;
  const steps = [[60, 'second'], [3600, 'minute', 60], [86400, 'hour', 3600], [604800, 'day', 86400]];
  if (Math.abs(seconds) < 45) return 'just now';
  for (const [limit, unit, size = 1] of steps) {
    if (Math.abs(seconds) < limit) return format.format(Math.round(seconds / size), unit);
  }
  return value.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** A `<time>` of a date, its full date in its title. */
export function timeElement(date, text) {
  const value = parsed(date);
  return element('time', { datetime: value ? value.toISOString() : null, title: value ? longDate(date) : null, text: text || '' });
}
