import { createHash } from 'node:crypto';
import type { LanguageModelV3Prompt } from '@ai-sdk/provider';

type FilePart = { type: 'file'; data: unknown; mediaType: string };

/**
 * The mock's look at the images of the last user message: a deterministic description of each from its bytes
 * (format, pixel size read from the PNG, JPEG, GIF or WebP header, byte count, a hash prefix), so tests and
 * demos of vision agents run offline and can assert what the model saw. Undefined when there is no image.
 */
export function describeMockImages(prompt: LanguageModelV3Prompt): string | undefined {
  const message = prompt.findLast((candidate) => candidate.role === 'user');
  if (!message || typeof message.content === 'string') return undefined;
  const images = (message.content as Array<{ type: string }>).filter((part): part is FilePart => part.type === 'file' && String((part as FilePart).mediaType).startsWith('image/'));
  if (images.length === 0) return undefined;
  return images.map((image, index) => describeImage(bytesOf(image.data), image.mediaType, index + 1)).join(' ');
}

function bytesOf(data: unknown): Buffer {
  if (data instanceof Uint8Array) return Buffer.from(data);
  if (typeof data === 'string') return Buffer.from(data, 'base64');
  return Buffer.alloc(0);
}

function describeImage(bytes: Buffer, mediaType: string, index: number): string {
  const size = pixelSize(bytes);
  const dimensions = size ? `${size.width}x${size.height} pixels` : 'unknown size';
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  return `Image ${index}: ${mediaType}, ${dimensions}, ${bytes.length} bytes, sha256 ${hash}.`;
}

function pixelSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length >= 24 && bytes.readUInt32BE(0) === 0x89504e47) return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
  if (bytes.length >= 10 && bytes.toString('latin1', 0, 3) === 'GIF') return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
  if (bytes.length >= 30 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 15) === 'WEBPVP8') {
    if (bytes[15] === 0x58) return { width: 1 + bytes.readUIntLE(24, 3), height: 1 + bytes.readUIntLE(27, 3) };
  }
  return jpegSize(bytes);
}

/** The first start-of-frame marker of a JPEG holds its height and width. */
function jpegSize(bytes: Buffer): { width: number; height: number } | undefined {
  if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  for (let offset = 2; offset + 9 < bytes.length;) {
    if (bytes[offset] !== 0xff) return undefined;
    const marker = bytes[offset + 1];
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) return { height: bytes.readUInt16BE(offset + 5), width: bytes.readUInt16BE(offset + 7) };
    offset += 2 + bytes.readUInt16BE(offset + 2);
  }
  return undefined;
}
