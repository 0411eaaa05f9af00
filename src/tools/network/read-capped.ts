export interface CappedBody {
  bytes: Buffer;
  /** The body went on past the cap; the rest was not read. */
  truncated: boolean;
}

/**
 * Reads a response body and stops at `maxBytes`, cancelling the rest unread, so that no body, however long,
 * holds more than the cap in memory. The buffer is reserved at the cap and filled in place: pages never written
 * are never resident, and no copy doubles the memory as a growing buffer or a final concatenation would.
 */
export async function readCapped(body: AsyncIterable<Uint8Array> | null, maxBytes: number): Promise<CappedBody> {
  const buffer = Buffer.allocUnsafe(maxBytes);
  let size = 0;
  for await (const chunk of body ?? []) {
    const room = maxBytes - size;
    buffer.set(chunk.length > room ? chunk.subarray(0, room) : chunk, size);
    size += Math.min(chunk.length, room);
    if (chunk.length > room) return { bytes: buffer.subarray(0, size), truncated: true };
  }
  return { bytes: buffer.subarray(0, size), truncated: false };
}
