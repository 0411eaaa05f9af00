import type { ImagePart } from 'ai';
import { badRequest } from '../errors.ts';
import type { ModelRegistry } from '../llm/provider-registry.ts';

/**
 * Images go only to models the catalogue marks `vision: true`: every candidate a service-chat task may be answered
 * by (the first and its fallbacks) must take them, else the request is refused naming the model that cannot.
 */
export function requireVision(models: ModelRegistry): void {
  const blind = models.resolveCandidates({}).find((candidate) => !candidate.catalogModel.vision);
  if (blind) {
    const { name, provider } = blind.catalogModel;
    throw badRequest(`image_url: the model ${name} (${provider}) that answers here does not take images (set vision: true in the model catalogue only for models that do)`);
  }
}

const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/=\s]+)$/;

/**
 * An image as a data URL (base64, kept JSON-safe for the task's context), or a web address the gateway fetches
 * through its network guard before the task starts (remote-images.ts): the provider and the SDK never fetch it.
 * A `detail` other than `auto` goes to OpenAI's models, the only ones that take it (the AI SDK's `imageDetail`).
 */
export function imagePart(url: string, field: string, detail?: string): ImagePart {
  const options = detail === undefined || detail === 'auto' ? {} : { providerOptions: { openai: { imageDetail: detail } } };
  const match = DATA_URL.exec(url);
  if (match) return { type: 'image', image: match[2].replace(/\s+/g, ''), mediaType: match[1], ...options };
  if (url.startsWith('data:')) throw badRequest(`invalid ${field}: a data URL of a PNG, JPEG, GIF or WebP image in base64 is expected`);
  if (!/^https?:\/\//i.test(url)) throw badRequest(`invalid ${field}: a data: URL or an http(s) address is expected`);
  return { type: 'image', image: url, ...options };
}

/** The task's query for a user turn of images and no text: a task needs words (the model is shown the images themselves). */
export const IMAGES_ONLY_QUERY = '[image]';
