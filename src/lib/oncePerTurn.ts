/**
 * `fn` once per turn of the event loop however often the result is called in it, run after the
 * turn's callbacks (`setImmediate`): a wake posted to another thread per append would cost a
 * postMessage each on the request path.
 */
export function oncePerTurn(fn: () => void): () => void {
  let scheduled = false;
  return () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      fn();
    });
  };
}
