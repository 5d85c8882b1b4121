// Imported by fixture processes that run until told to stop: once the test
// that started one is gone (its file killed by npm test's time limit, or by
// hand), the fixture exits instead of hammering the machine for the rest
// of the run. The parent's death shows as a new parent pid (a reaper's);
// a check every 200 ms, which never keeps the process alive. Tight
// synchronous loops, which timers cannot interrupt, call exitIfOrphaned().

const parent = process.ppid;

/** Exits (status 70) when the process that started this one has died. */
export function exitIfOrphaned() {
  if (process.ppid !== parent) process.exit(70);
}

setInterval(exitIfOrphaned, 200).unref();
