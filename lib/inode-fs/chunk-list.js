// Chunk lists: how a large file's content is stored. Each entry is the hash
// of a stored chunk (a blob, see inode-store.js) or a number n for n chunks
// of a hole (zeros, nothing stored), so a file written far past its end, or
// truncated up, stores only what was written.

/** The hashes of the chunks `record` stores (holes store none). */
export function chunkHashes(record) {
  return (record.chunks ?? []).filter((entry) => typeof entry === 'string');
}

/**
 * The stored chunks of chunk list `chunks` (`count` chunks long) with
 * indexes from `first` to `last`, as [index, hash] pairs. A list without
 * holes longer than one chunk is indexed directly.
 * @returns {[number, string][]}
 */
export function storedIn(chunks, count, first, last) {
  /** @type {[number, string][]} */
  const found = [];
  if (chunks.length === count) {
    for (let i = first; i <= last && i < count; i++) if (typeof chunks[i] === 'string') found.push([i, chunks[i]]);
    return found;
  }
  let index = 0;
  for (const entry of chunks) {
    if (index > last) break;
    if (typeof entry === 'number') {
      index += entry;
      continue;
    }
    if (index >= first) found.push([index, entry]);
    index++;
  }
  return found;
}

/** The byte ranges [start, end) of `inode`'s content that are stored, in order; the rest of its size is holes. */
export function dataRanges(inode) {
  if (inode.chunks === undefined) return inode.size > 0 ? [[0, inode.size]] : [];
  const { chunkBytes, size } = inode;
  const ranges = [];
  for (const [index] of storedIn(inode.chunks, Math.ceil(size / chunkBytes), 0, Infinity)) {
    const start = index * chunkBytes;
    const end = Math.min(size, start + chunkBytes);
    if (ranges.length > 0 && ranges.at(-1)[1] === start) ranges.at(-1)[1] = end;
    else ranges.push([start, end]);
  }
  return ranges;
}

/** stat's `blocks` (512-byte units) for what a chunk list of a `size`-byte file stores. */
export function storedBlocks(chunks, size, chunkBytes) {
  let stored = 0;
  for (const entry of chunks) if (typeof entry === 'string') stored++;
  let bytes = stored * chunkBytes;
  // The last chunk is short when the size is not a multiple of chunkBytes.
  if (typeof chunks.at(-1) === 'string') bytes -= Math.ceil(size / chunkBytes) * chunkBytes - size;
  return Math.ceil(bytes / 512);
}

/**
 * Chunk list `old` made `count` chunks long (cut, or extended with a hole),
 * with the chunks at the indexes of `updates` (all below `count`) replaced
 * by a hash, or by a hole (null). Returns the new list, with its holes
 * merged, and the hashes it no longer holds.
 */
export function spliceChunks(old, count, updates) {
  const chunks = [];
  const released = [];
  const hole = (n) => {
    if (n === 0) return;
    if (typeof chunks.at(-1) === 'number') chunks[chunks.length - 1] += n;
    else chunks.push(n);
  };
  const put = (hash) => (hash === null ? hole(1) : chunks.push(hash));
  const changed = [...updates.keys()].sort((a, b) => a - b);
  let next = 0;
  // Chunks [from, to) of a hole, with the updates among them.
  const holeTo = (from, to) => {
    let at = from;
    for (; next < changed.length && changed[next] < to; next++) {
      hole(changed[next] - at);
      put(updates.get(changed[next]));
      at = changed[next] + 1;
    }
    hole(to - at);
  };
  let index = 0;
  for (const entry of old) {
    if (typeof entry === 'number') {
      if (index < count) holeTo(index, Math.min(count, index + entry));
      index += entry;
      continue;
    }
    if (index >= count || updates.has(index)) released.push(entry);
    if (index < count && updates.has(index)) {
      put(updates.get(index));
      next++;
    } else if (index < count) {
      chunks.push(entry);
    }
    index++;
  }
  if (index < count) holeTo(index, count);
  return { chunks, released };
}
