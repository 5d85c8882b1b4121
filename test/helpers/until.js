// Waiting in tests for something another thread, process or server does.

/** Resolves once `check()` (sync or async) is truthy; fails after `timeoutMs` with `what`. */
export async function until(check, what, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
