import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMessages } from '../../../src/openai/chat-messages.ts';
import { normalizeInput, toConversation } from '../../../src/openai/responses/input-items.ts';
import { ONE_PIXEL_PNG } from '../../fixtures/image-site.ts';

const PNG = `data:image/png;base64,${ONE_PIXEL_PNG}`;
const imagesOf = (messages: Array<{ content: unknown }>) => messages.flatMap((message) => (Array.isArray(message.content) ? message.content : []))
  .filter((part: { type: string }) => part.type === 'image') as Array<{ providerOptions?: unknown }>;

describe('an image\'s detail reaches the model call (it was dropped)', () => {
  it('chat: image_url.detail low or high is the AI SDK\'s OpenAI imageDetail; auto or none sets nothing', () => {
    const parsed = parseMessages([{
      role: 'user', content: [
        { type: 'image_url', image_url: { url: PNG, detail: 'high' } }, { type: 'image_url', image_url: { url: PNG, detail: 'auto' } },
        { type: 'image_url', image_url: { url: 'https://example.org/a.png', detail: 'low' } }, { type: 'image_url', image_url: { url: PNG } },
      ],
    }]);
    assert.deepEqual(imagesOf(parsed.conversation).map((part) => part.providerOptions), [{ openai: { imageDetail: 'high' } }, undefined, { openai: { imageDetail: 'low' } }, undefined]);
  });

  it('Responses API: input_image detail alike', () => {
    const items = [{ role: 'user', content: [{ type: 'input_image', image_url: PNG, detail: 'low' }, { type: 'input_image', image_url: PNG }] }];
    const input = normalizeInput(items as Parameters<typeof normalizeInput>[0], '00000000-0000-0000-0000-000000000001');
    const conversation = toConversation([], input, undefined);
    assert.deepEqual(imagesOf(conversation.messages).map((part) => part.providerOptions), [{ openai: { imageDetail: 'low' } }, undefined]);
    assert.equal(conversation.query, '[image]');
  });
});
