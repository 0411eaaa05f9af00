export interface CappedBody {
  bytes: Buffer;
  /** The body went on past the cap; the rest was not read. */
  truncated: boolean;
}

/**
 * Reads a response body and stops at `maxBytes`, cancelling the rest unread, so that no body, however long,
 * holds more than the cap in memory. The buffer is reserved at the cap and filled in place: pages never written
 * are never resident, and no copy doubles the memory as a growing buffer or a final concatenation would.
 * A shorter body ends on a buffer of its own size (the reservation is given back at once, not at the next
 * garbage collection), so that it can be moved to a parse thread without a copy.
 */
export async function readCapped(body: AsyncIterable<Uint8Array> | null, maxBytes: number): Promise<CappedBody> {
  // Slow: never a view of Node's shared pool, which a small size would get and which cannot be given back.
  const buffer = Buffer.allocUnsafeSlow(maxBytes);
  let size = 0;
  for await (const chunk of body ?? []) {
    const room = maxBytes - size;
    buffer.set(chunk.length > room ? chunk.subarray(0, room) : chunk, size);
    size += Math.min(chunk.length, room);
    if (chunk.length > room) return { bytes: buffer, truncated: true };
  }
  return { bytes: size === maxBytes ? buffer : Buffer.from(buffer.buffer.transfer(size)), truncated: false };
}
