import type { ImagePart, ModelMessage } from 'ai';
import type { Deps } from '../deps.ts';
import { badRequest } from '../errors.ts';
import { guardedFetch, type NetworkSettings } from '../tools/network/guarded-fetch.ts';
import { requireVision } from './vision.ts';

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** A request's images, in either OpenAI layer: refused unless the models that may answer take images, then fetched. */
export async function prepareImages(deps: Deps, messages: ModelMessage[]): Promise<void> {
  requireVision(deps.models);
  await fetchRemoteImages(messages, deps.config.network);
}

/**
 * Fetches the images a request gave by web address, through the network guard (TOOLS_NETWORK_ALLOW opens private
 * hosts), and puts their bytes in the messages as base64: the provider and the SDK get only bytes, so nothing the
 * guard refuses is ever fetched. A refusal, an error status or a body that is not an image is a 400 naming the URL.
 */
async function fetchRemoteImages(messages: ModelMessage[], network: NetworkSettings, signal?: AbortSignal): Promise<void> {
  const parts = messages.flatMap((message) => (message.role === 'user' && Array.isArray(message.content) ? message.content : []))
    .filter((part): part is ImagePart => part.type === 'image' && typeof part.image === 'string' && /^https?:\/\//i.test(part.image));
  for (const part of parts) Object.assign(part, await fetchImage(String(part.image), network, signal));
}

async function fetchImage(url: string, network: NetworkSettings, signal?: AbortSignal): Promise<Pick<ImagePart, 'image' | 'mediaType'>> {
  let answer;
  try {
    answer = await guardedFetch(url, { network, signal, headers: { accept: [...IMAGE_TYPES].join(', ') } });
  } catch (error) {
    throw badRequest(`image_url ${url}: not fetched (${(error as Error).message})`);
  }
  if (answer.status !== 200) throw badRequest(`image_url ${url}: answered HTTP ${answer.status}`);
  const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (!IMAGE_TYPES.has(mediaType)) throw badRequest(`image_url ${url}: not a PNG, JPEG, GIF or WebP image (content-type ${mediaType || 'none'})`);
  if (answer.bodyTruncated) throw badRequest(`image_url ${url}: larger than ${network.fetchMaxBytes} bytes (TOOLS_FETCH_MAX_BYTES)`);
  return { image: answer.body.toString('base64'), mediaType };
}
