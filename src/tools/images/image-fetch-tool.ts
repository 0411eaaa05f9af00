import { workspaceOf } from '../files/workspace-scope.ts';
import { writeWorkspaceFile, type WrittenFile } from '../files/workspace-store.ts';
import { guardedFetch } from '../network/guarded-fetch.ts';
import type { ToolDefinition } from '../registry.ts';

/** The formats vision models take (OpenAI, Anthropic and Google all read these four). */
const IMAGE_TYPES: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' };

/**
 * Downloads an image (an ad creative, a banner) through the network guard into the session workspace under
 * images/, for a vision step to look at. It records its call with its file, as a screenshot does.
 */
export const imageFetchTool: ToolDefinition = {
  name: 'image_fetch',
  description: 'Downloads an image (PNG, JPEG, GIF or WebP) into the session workspace under images/; returns its path, media type and size.',
  parameters: {
    type: 'object',
    properties: { image_url: { type: 'string', pattern: '^https?://', maxLength: 2048, description: 'The image to download' } },
    required: ['image_url'],
    additionalProperties: false,
  },
  category: 'browser',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'database',
  namedOnly: true,
  async execute(input, context) {
    const scope = workspaceOf(context);
    const url = String(input.image_url);
    const answer = await guardedFetch(url, { network: context.settings.network, signal: context.signal, headers: { accept: Object.keys(IMAGE_TYPES).join(', ') } });
    if (answer.status !== 200) throw new Error(`${url} answered HTTP ${answer.status}`);
    const mediaType = (answer.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    const extension = IMAGE_TYPES[mediaType];
    if (!extension) throw new Error(`${url} is not a PNG, JPEG, GIF or WebP image (content-type ${mediaType || 'none'})`);
    if (answer.bodyTruncated) throw new Error(`the image is larger than ${context.settings.network.fetchMaxBytes} bytes (TOOLS_FETCH_MAX_BYTES)`);
    const path = `images/${new Date().toISOString().replaceAll(':', '-')}.${extension}`;
    const outputOf = ({ file }: WrittenFile) => ({ path: file.path, media_type: mediaType, bytes: file.size, url: answer.finalUrl });
    const written = await writeWorkspaceFile(context.db, scope, context.settings.workspace, path, () => answer.body,
      (transaction, result) => context.recordCall?.(transaction, outputOf(result)));
    return outputOf(written);
  },
};
