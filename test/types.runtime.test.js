// The declarations in types/ are written by hand; this keeps them from
// falling behind the code: every export of each entry, every public method,
// accessor and static of its classes, every error code and every channel
// must be declared. (test/types/*.ts check the declared shapes themselves.)
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const ENTRIES = {
  index: '../lib/index.js',
  fs: '../lib/fs/index.js',
  meta: '../lib/inode-fs/index.js',
  snapshot: '../lib/snapshot/index.js',
  keyv: '../lib/keyv/index.js',
  'rate-limit': '../lib/rate-limit/index.js',
  redis: '../lib/redis/index.js',
};

// Public-looking members left out of the declarations on purpose.
const INTERNAL = {
  // The transports' side of the bus (called by udp.js and redis.js).
  InvalidationBus: ['clearAll', 'encode', 'receive', 'sent', 'sendFailed', 'reconnected', 'transportError'],
  // CacheFS's plumbing over an InodeFS backing.
  InodeFS: ['view', 'existing', 'uncachedView', 'loadSync', 'storeSync'],
  // Made by InodeFS from its internal store; deleted() is @private.
  Snapshot: ['view', 'existing', 'uncachedView', 'loadSync', 'deleted', 'ephemeral', 'persistent'],
  // @internal: the CLI's and gc's access to the repository.
  Workspace: ['repository', 'worktree', 'setHead'],
};

const declarations = (name) => readFileSync(new URL(`../types/${name}.d.ts`, import.meta.url), 'utf8');

/** Whether `text` declares a member `name` (a method, accessor, property or static). */
function declaresMember(text, name) {
  const escaped = name.replace(/[[\]().]/g, '\\$&');
  return new RegExp(`^\\s+(?:static\\s+)?(?:readonly\\s+)?(?:get\\s+|set\\s+)?${escaped}\\??\\s*[<(:]`, 'm').test(text);
}

/** The class's own members, its statics, and what it inherits from our base classes (not Object's, Error's or EventEmitter's). */
function publicMembers(cls) {
  const names = [];
  const owners = [cls];
  for (let proto = cls.prototype; proto && proto !== Object.prototype && proto !== EventEmitter.prototype && proto !== Error.prototype; proto = Object.getPrototypeOf(proto)) {
    owners.push(proto);
  }
  for (const owner of owners) {
    for (const key of Reflect.ownKeys(owner)) {
      if (['constructor', 'length', 'name', 'prototype'].includes(key)) continue;
      if (typeof key === 'symbol') {
        // Well-known symbols are API (iteration); the others are internal keys.
        if (key.description?.startsWith('Symbol.')) names.push(`[${key.description}]`);
      } else if (!key.startsWith('_') && !names.includes(key)) {
        names.push(key);
      }
    }
  }
  return names;
}

for (const [name, specifier] of Object.entries(ENTRIES)) {
  test(`types/${name}.d.ts declares every export of ${specifier.slice(3)} and every public member of its classes`, async () => {
    const runtime = await import(specifier);
    // Re-exports (export { ArenaCacheError, codes } from './index.js') count as declared here.
    const text = declarations(name);
    const missing = [];
    for (const [exported, value] of Object.entries(runtime)) {
      const declared =
        new RegExp(`export declare (?:const|class|function|let) ${exported}\\b`).test(text) ||
        new RegExp(`export \\{[^}]*\\b${exported}\\b[^}]*\\} from`).test(text);
      if (!declared) missing.push(`export ${exported}`);
      if (typeof value !== 'function' || !/^class\b/.test(Function.prototype.toString.call(value))) continue;
      for (const member of publicMembers(value)) {
        if (INTERNAL[exported]?.includes(member)) continue;
        if (!declaresMember(text, member)) missing.push(`${exported}.${member}`);
      }
    }
    assert.deepEqual(missing, [], `declared nowhere in types/${name}.d.ts`);
  });
}

test('every error code and diagnostics channel is declared, and nothing else', async () => {
  const { codes, channels } = await import('../lib/index.js');
  const text = declarations('index');
  const declaredCodes = [...text.matchAll(/^\s+\| '(ERR_[A-Z0-9_]+)'/gm)].map((match) => match[1]).sort();
  assert.deepEqual(declaredCodes, Object.keys(codes).sort());
  for (const [key, channel] of Object.entries(channels)) assert.match(text, new RegExp(`readonly ${key}: '${channel}'`), key);
});

test('the check finds an undeclared member', () => {
  class Probe {
    declared() {}
    undeclared() {}
  }
  const text = 'export declare class Probe {\n  declared(): void;\n}\n';
  assert.deepEqual(publicMembers(Probe).filter((member) => !declaresMember(text, member)), ['undeclared']);
});

test('every member listed as internal exists at run time', async () => {
  const classes = {};
  for (const specifier of Object.values(ENTRIES)) {
    for (const [exported, value] of Object.entries(await import(specifier))) {
      if (typeof value === 'function') classes[exported] = value;
    }
  }
  for (const [cls, members] of Object.entries(INTERNAL)) {
    assert.ok(classes[cls], `${cls} is exported`);
    for (const member of members) {
      assert.ok(publicMembers(classes[cls]).includes(member), `${cls}.${member} exists (else drop it from INTERNAL)`);
    }
  }
});
