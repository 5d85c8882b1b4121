// Progress lines for long benchmarks: rewritten in place on a terminal, and
// nothing at all otherwise, so that a log or a pipe gets no escape codes.

/** { progress(message), done() } writing to `stream` (stderr) only when it is a TTY. */
export function progressReporter(stream = process.stderr) {
  if (!stream.isTTY) return { progress() {}, done() {} };
  return {
    progress: (message) => stream.write(`\r\x1b[2K… ${message}`),
    done: () => stream.write('\r\x1b[2K'),
  };
}
