// The page's batch applier (Sources/GalleryAPI/Web/batch.js), on Node's own test runner:
//   node --test Tests/Web/
// Against change streams recorded from a real server (fixtures/, made by
// record-fixtures.py): replaying each stream's events must give the list the API answered
// afterwards. And against hand-made batches of UIKit's hard cases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { applyBatch, changedIDs, EventParser } from '../../Sources/GalleryAPI/Web/batch.js';

const fixtures = new URL('./fixtures/', import.meta.url);

function replay(events) {
  let sections = null;
  for (const { event, data } of events) {
    sections = event === 'snapshot' ? data.sections : applyBatch(sections, data);
  }
  return sections;
}

const shape = (sections) => sections.map((section) => ({ name: section.name, ids: section.ids ?? section.rows.map((row) => row.id) }))
  .filter((section) => section.ids.length > 0);

for (const name of readdirSync(fixtures).filter((file) => file.endsWith('.json'))) {
  test(`the recorded stream ${name} replays to the list the API answered afterwards`, () => {
    const fixture = JSON.parse(readFileSync(new URL(name, fixtures), 'utf8'));
    assert.ok(fixture.events.length >= 2, 'a snapshot and batches');
    assert.equal(fixture.events[0].event, 'snapshot');
    assert.deepEqual(shape(replay(fixture.events)), shape(fixture.final));
  });
}

test('the recorded streams include moves across sections and deletes of the first and last sections', () => {
  const { events } = JSON.parse(readFileSync(new URL('regions-by-country.json', fixtures), 'utf8'));
  let sections = events[0].data.sections;
  let crossMoves = 0, firstDeleted = false, lastDeleted = false;
  for (const { data } of events.slice(1)) {
    crossMoves += data.moves.filter((move) => move[0] !== move[2]).length;
    firstDeleted ||= data.sectionDeletes.includes(0);
    lastDeleted ||= data.sectionDeletes.includes(sections.length - 1);
    sections = applyBatch(sections, data);
  }
  assert.ok(crossMoves > 0, 'a move across sections');
  assert.ok(firstDeleted && lastDeleted, 'the first and the last sections deleted');
});

const row = (id) => ({ id, title: id });
const section = (name, ...ids) => ({ name, value: name, rows: ids.map(row) });
const empty = { sectionDeletes: [], sectionInserts: [], deletes: [], inserts: [], moves: [], updates: [], token: 2 };

test('a move uses the old path for its source and the new for its destination, across sections', () => {
  const before = [section('A', 'a1', 'a2'), section('B', 'b1')];
  const after = applyBatch(before, { ...empty, moves: [[0, 0, 1, 1, row('a1')]], deletes: [[0, 1]], inserts: [[1, 0, row('n')]] });
  assert.deepEqual(shape(after), [{ name: 'B', ids: ['n', 'a1', 'b1'] }]);
  assert.deepEqual(before[0].rows.map((r) => r.id), ['a1', 'a2'], 'the input is not changed');
});

test('deleting the first and last sections and inserting a new first one', () => {
  const before = [section('A', 'a'), section('B', 'b1', 'b2'), section('C', 'c')];
  const batch = { ...empty, sectionDeletes: [0, 2], sectionInserts: [{ index: 0, name: 'Z', value: 'Z', rows: [row('z')] }],
    moves: [[1, 1, 1, 0, row('b2')]] };
  assert.deepEqual(shape(applyBatch(before, batch)), [{ name: 'Z', ids: ['z'] }, { name: 'B', ids: ['b2', 'b1'] }]);
  assert.deepEqual([...changedIDs(batch).inserted], ['z']);
});

test('an update at an old path lands at its new path with its new value', () => {
  const before = [section('', 'x', 'y', 'z')];
  const after = applyBatch(before, { ...empty, deletes: [[0, 0]], updates: [[0, 2, 0, 1, { id: 'z', title: 'new' }]] });
  assert.deepEqual(after[0].rows, [row('y'), { id: 'z', title: 'new' }]);
});

test('a batch that does not fit the list is refused, not applied', () => {
  assert.throws(() => applyBatch([section('', 'x')], { ...empty, deletes: [[0, 3]] }), RangeError);
  assert.throws(() => applyBatch([section('', 'x')], { ...empty, inserts: [[0, 5, row('q')]] }), RangeError);
  assert.throws(() => applyBatch([section('', 'x')], { ...empty, sectionDeletes: [4] }), RangeError);
});

test('the event parser reads events split anywhere across chunks, and skips comments', () => {
  const events = [];
  let retry = null;
  const parser = new EventParser((event) => events.push(event), (ms) => { retry = ms; });
  const text = 'retry: 2000\n\n: heartbeat\n\nid: 7\nevent: batch\ndata: {"a":1}\n\nid: 8\r\nevent: snapshot\r\ndata: {"b":\r\ndata: 2}\r\n\r\n';
  for (const chunk of text.match(/.{1,3}/gs)) parser.push(chunk);
  assert.equal(retry, 2000);
  assert.deepEqual(events, [{ id: '7', event: 'batch', data: '{"a":1}' }, { id: '8', event: 'snapshot', data: '{"b":\n2}' }]);
});
