// Applying a change batch to a list, as UIKit applies a batch update: deletes, move sources
// and reload sources are index paths before the batch; inserts, move destinations and
// reload destinations are index paths after it; an inserted section carries its rows and
// no row operation names a row inside a deleted or inserted section. Pure: no DOM, so that
// Node's test runner checks it against batches the server sent.

/** A copy of `sections` ([{name, value, rows}]) with `batch` applied; throws on a batch
 *  that does not fit the list (the caller then asks for a fresh snapshot). */
export function applyBatch(sections, batch) {
  const removed = new Set();
  const remove = ([section, row]) => {
    if (section >= sections.length || row >= sections[section].rows.length) {
      throw new RangeError(`old index path ${section},${row} is outside the list`);
    }
    removed.add(`${section}:${row}`);
  };
  batch.deletes.forEach(remove);
  batch.moves.forEach((move) => remove(move));
  batch.updates.forEach((update) => remove(update));
  const deletedSections = new Set(batch.sectionDeletes);
  for (const index of deletedSections) {
    if (index >= sections.length) throw new RangeError(`section ${index} is outside the list`);
  }
  const kept = [];
  sections.forEach((section, index) => {
    if (deletedSections.has(index)) return;
    kept.push({ name: section.name, value: section.value, rows: section.rows.filter((_, row) => !removed.has(`${index}:${row}`)) });
  });
  for (const insert of [...batch.sectionInserts].sort((a, b) => a.index - b.index)) {
    if (insert.index > kept.length) throw new RangeError(`new section ${insert.index} is past the end`);
    kept.splice(insert.index, 0, { name: insert.name, value: insert.value, rows: [...insert.rows] });
  }
  const arrivals = [
    ...batch.inserts.map(([section, row, value]) => ({ section, row, value })),
    ...batch.moves.map(([, , section, row, value]) => ({ section, row, value })),
    ...batch.updates.map(([, , section, row, value]) => ({ section, row, value })),
  ].sort((a, b) => a.section - b.section || a.row - b.row);
  for (const { section, row, value } of arrivals) {
    if (section >= kept.length || row > kept[section].rows.length) {
      throw new RangeError(`new index path ${section},${row} is outside the list`);
    }
    kept[section].rows.splice(row, 0, value);
  }
  return kept;
}

/** The ids a batch changed, by kind, for animation: moved and updated rows keep their
 *  element; inserted ones get a new one. */
export function changedIDs(batch) {
  return {
    inserted: new Set([...batch.inserts.map((insert) => insert[2].id), ...batch.sectionInserts.flatMap((s) => s.rows.map((row) => row.id))]),
    moved: new Set(batch.moves.map((move) => move[4].id)),
    updated: new Set(batch.updates.map((update) => update[4].id)),
  };
}

/** Reads Server-Sent Events from a fetch body's chunks: calls `onEvent({id, event, data})`
 *  for each event with data, `onRetry(ms)` for a `retry:` field. Lines may span chunks. */
export class EventParser {
  constructor(onEvent, onRetry = () => {}) {
    this.onEvent = onEvent;
    this.onRetry = onRetry;
    this.buffer = '';
    this.fields = {};
  }

  push(text) {
    this.buffer += text;
    let newline;
    while ((newline = this.buffer.search(/\r\n|\n|\r/)) >= 0) {
      // A CR at the end may be the first half of a CRLF split across chunks: wait for more.
      if (newline === this.buffer.length - 1 && this.buffer.endsWith('\r')) break;
      const line = this.buffer.slice(0, newline);
      const length = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      this.buffer = this.buffer.slice(newline + length);
      this.line(line);
    }
  }

  line(line) {
    if (line === '') {
      if (this.fields.data !== undefined) {
        this.onEvent({ id: this.fields.id, event: this.fields.event || 'message', data: this.fields.data });
      }
      this.fields = {};
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') this.fields.data = this.fields.data === undefined ? value : `${this.fields.data}\n${value}`;
    else if (name === 'id') this.fields.id = value;
    else if (name === 'event') this.fields.event = value;
    else if (name === 'retry' && /^\d+$/.test(value)) this.onRetry(Number(value));
  }
}
