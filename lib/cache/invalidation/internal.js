// The symbol through which an InvalidationBus reaches its cache's outbox and
// applies peers' invalidations without publishing them again. Not exported
// from the package.
export const kInvalidation = Symbol('invalidation');
