// The timer that drives the expiry sweeper in each thread that has the cache
// (only the holder of the arena's sweeper lease actually sweeps). It is
// unref'd, so it never keeps a process or worker alive, and it holds the
// sweeper only weakly, so a cache that is no longer referenced stops ticking.

import { Sweeper } from '../arena/entries/sweep.js';

export function startSweepTimer(arena, owner) {
  const { sweepIntervalMs, sweepChecks } = arena.header;
  const sweeper = new Sweeper(arena, owner);
  const weak = new WeakRef(sweeper);
  let warned = false;
  const timer = setInterval(() => {
    const live = weak.deref();
    if (live === undefined) {
      clearInterval(timer);
      return;
    }
    try {
      live.tick(sweepChecks);
    } catch (error) {
      // A timer must not crash the process; say it once.
      if (!warned) process.emitWarning(`arenacache: the expiry sweeper failed: ${error?.message ?? error}`, 'ArenaCacheWarning');
      warned = true;
    }
  }, sweepIntervalMs);
  timer.unref();
  return {
    sweeper,
    stop() {
      clearInterval(timer);
      sweeper.release();
    },
  };
}
