// File mode bits shared by every file the library creates and opens: arena
// files and an InodeFS store's files follow the same rule about other users.

/**
 * Mode bits that let group or others write: a file with any of them is
 * refused (another user could change what this process reads), so no new
 * file may be created with them (see checkArenaFileMode in arena/common/file-options.js).
 */
export const FOREIGN_WRITE_BITS = 0o022;
/** Mode bits that let group or others read what the arena caches: allowed, with a warning at creation. */
export const FOREIGN_READ_BITS = 0o044;
