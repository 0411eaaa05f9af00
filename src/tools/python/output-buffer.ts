/**
 * What a sandboxed program prints, kept in memory shared with the gateway: the worker writes it as the program
 * runs, and the gateway reads it even after terminating a worker stuck in a loop, so a timed-out call still
 * shows its output.
 */
export const OUTPUT_CAP_BYTES = 64 * 1024;

export const STDOUT = 0;
export const STDERR = 1;
export type OutputStream = typeof STDOUT | typeof STDERR;

/** Per stream: bytes kept, bytes dropped past the cap (doubles: an endless print loop overflows 32 bits). */
const HEADER_BYTES = 4 * Float64Array.BYTES_PER_ELEMENT;

export function createOutputBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_BYTES + 2 * OUTPUT_CAP_BYTES);
}

export function appendOutput(buffer: SharedArrayBuffer, stream: OutputStream, bytes: Uint8Array): void {
  const counts = new Float64Array(buffer, 0, 4);
  const kept = counts[stream * 2];
  const room = Math.min(bytes.length, OUTPUT_CAP_BYTES - kept);
  new Uint8Array(buffer, regionStart(stream) + kept, room).set(bytes.subarray(0, room));
  counts[stream * 2] = kept + room;
  counts[stream * 2 + 1] += bytes.length - room;
}

export function readOutput(buffer: SharedArrayBuffer, stream: OutputStream): string {
  const [kept, dropped] = new Float64Array(buffer, stream * 2 * Float64Array.BYTES_PER_ELEMENT, 2);
  // Copied out first: TextDecoder refuses views of shared memory.
  const text = new TextDecoder().decode(new Uint8Array(buffer, regionStart(stream), kept).slice());
  return dropped > 0 ? `${text}\n…truncated (${dropped} more bytes)` : text;
}

const regionStart = (stream: OutputStream) => HEADER_BYTES + stream * OUTPUT_CAP_BYTES;
