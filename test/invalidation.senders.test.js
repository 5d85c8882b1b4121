// The SenderTable (lib/invalidation/senders.js): replay protection by
// per-sender sequence numbers, a sender verified by its answer, and a floor
// learnt from the sender's own clock, so the hosts' clocks need not agree.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SEQ_WINDOW, SenderTable } from '../lib/invalidation/senders.js';

const START = 1_000_000; // our clock when the bus started
const table = (options = {}) => new SenderTable({ windowMs: 30_000, maxSenders: 100, maxUnverified: 100, ...options });
const data = (seq, timestamp) => ({ type: 'invalidations', seq, timestamp });
/** The verdict without the sender record: 'replay', 'stale', 'cautious' or 'trusted'. */
function verdict(senders, id, message, now) {
  const { reason, cautious } = senders.admit(id, message, now);
  return reason ?? (cautious ? 'cautious' : 'trusted');
}
/** Verifies `id` by an answer numbered `seq`, stamped `timestamp` by its clock, received at `now`. */
function answer(senders, id, seq, timestamp, now) {
  const { sender, reason } = senders.admit(id, { type: 'answer', seq, timestamp }, now);
  assert.equal(reason, undefined);
  senders.verify(sender, { seq, timestamp }, now - START);
  return sender;
}

test('a verified sender is judged by number: a replay is refused, a late message is cautious, one below the window is stale, its clock does not matter', () => {
  const senders = table();
  const now = START + 10;
  answer(senders, 'a', 5, now, now);
  const far = now - 3_600_000; // an hour behind: beyond any window
  assert.equal(verdict(senders, 'a', data(6, far), now), 'trusted');
  assert.equal(verdict(senders, 'a', data(6, far), now), 'replay');
  assert.equal(verdict(senders, 'a', data(9, far), now), 'trusted');
  // 7 and 8 were overtaken by 9 (reordered): taken, but cautiously (a marker's value becomes a delete).
  assert.equal(verdict(senders, 'a', data(8, far), now), 'cautious');
  assert.equal(verdict(senders, 'a', data(7, far), now), 'cautious');
  assert.equal(verdict(senders, 'a', data(7, far), now), 'replay');
  assert.equal(verdict(senders, 'a', data(9 + SEQ_WINDOW + 1, far), now), 'trusted');
  assert.equal(verdict(senders, 'a', data(10, far), now), 'stale', 'too far below the highest number to tell');
  assert.equal(verdict(senders, 'a', data(9 + SEQ_WINDOW, far), now), 'cautious', 'just inside the window');
});

test('an unverified sender: its invalidations are cautious and must be stamped within the window of our clock; hellos and answers are looked at whatever their stamp', () => {
  const senders = table({ windowMs: 1000 });
  const now = START + 10;
  assert.equal(verdict(senders, 'b', data(3, now - 999), now), 'cautious');
  assert.equal(verdict(senders, 'b', data(3, now - 999), now), 'replay');
  assert.equal(verdict(senders, 'b', data(4, now - 1001), now), 'stale');
  assert.equal(verdict(senders, 'b', data(5, now + 1001), now), 'stale');
  assert.equal(verdict(senders, 'b', { type: 'hello', seq: 6, timestamp: now - 60_000 }, now), 'cautious');
  assert.equal(senders.get('b').verified, false);
  answer(senders, 'b', 7, now - 60_000, now);
  assert.equal(senders.get('b').verified, true);
  assert.equal(verdict(senders, 'b', data(8, now - 60_000), now), 'trusted', 'verified: a clock a minute behind no longer matters');
});

test('verified by its answer: what it numbered up to the answer is stale when stamped before our start by its own clock, cautious otherwise; after the answer, trusted', () => {
  for (const skew of [-5000, 0, 5000, -120_000]) {
    const senders = table();
    // It answers 20 ms after our start (our clock); the answer takes 2 ms to arrive.
    const sentAt = START + 20;
    const sender = answer(senders, 'c', 50, sentAt + skew, sentAt + 2);
    // Our start by its clock, early by the answer's travel time, never late.
    assert.equal(sender.floorStamp, START + skew - 2, `skew ${skew}`);
    const at = (ours) => ours + skew; // a stamp by its clock for a moment on ours
    const now = START + 30;
    assert.equal(verdict(senders, 'c', data(40, at(START - 1000)), now), 'stale', `skew ${skew}: sent a second before our start`);
    assert.equal(verdict(senders, 'c', data(41, at(START - 3)), now), 'stale', `skew ${skew}: just before it`);
    assert.equal(verdict(senders, 'c', data(42, at(START + 5)), now), 'cautious', `skew ${skew}: after our start, before its answer`);
    assert.equal(verdict(senders, 'c', data(51, at(START - 1000)), now), 'trusted', `skew ${skew}: numbered after the answer, whatever its stamp`);
  }
});

test('memory is bounded: the least recently heard sender is forgotten first, and is unverified when met again', () => {
  const senders = table({ maxSenders: 3, maxUnverified: 2 });
  const now = START + 10;
  for (const id of ['v1', 'v2', 'v3']) answer(senders, id, 1, now, now);
  assert.equal(verdict(senders, 'v1', data(2, now), now), 'trusted'); // v1 is now the most recently heard
  answer(senders, 'v4', 1, now, now); // forgets v2
  assert.equal(senders.get('v2'), undefined);
  assert.equal(verdict(senders, 'v1', data(3, now), now), 'trusted');
  assert.equal(verdict(senders, 'v2', data(2, now), now), 'cautious', 'forgotten: met again as a new, unverified sender');
  // Unverified senders have their own bound: they never push a verified one out.
  for (let i = 0; i < 1000; i++) senders.admit(`u${i}`, data(1, now), now);
  assert.equal(senders.size, 3 + 2);
  for (const id of ['v1', 'v3', 'v4']) assert.equal(senders.get(id)?.verified, true, id);
});
