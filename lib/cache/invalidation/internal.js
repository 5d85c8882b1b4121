// The symbol through which an InvalidationBus reaches its cache's outbox and
// applies peers' invalidations without publishing them again. Not exported
// from the package.
export const kInvalidation = Symbol('invalidation');

// An option of InvalidationBus, for tests only: the bus's clock (a function
// returning ms since the epoch, default Date.now), so that a test can run a
// peer whose clock is off. A symbol key: option checks do not see it, and it
// is not part of the documented options.
export const kClock = Symbol('clock');
