import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { useGateway } from '../helpers/gateway.ts';
import { ONE_PIXEL_PNG } from '../fixtures/image-site.ts';

// The AI SDK's OpenAI provider as a client of the gateway, unmodified, over both of its wire formats: the Responses
// API (what `openai(model)` calls) and chat completions (`openai.chat(model)`). Its own agent loop runs the tools.
const PNG = ONE_PIXEL_PNG;
const weather = tool({ description: 'The current weather of a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `4 degrees and sleet in ${city}` });
const city = z.object({ name: z.string(), population: z.number(), landmarks: z.array(z.string()) });

for (const api of ['responses', 'chat'] as const) {
  describe(`the AI SDK's OpenAI provider against the gateway (${api})`, () => {
    const gateway = useGateway();
    const model = () => {
      const provider = createOpenAI({ baseURL: `${gateway().url}/v1`, apiKey: 'not-needed-in-development' });
      return api === 'chat' ? provider.chat('service-chat') : provider.responses('service-chat');
    };

    it('its agent loop: the tool is called, run by the SDK, and the next step answers with its result', async () => {
      const result = await generateText({ model: model(), prompt: 'What is the weather in Oslo?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
      assert.deepEqual(result.steps.map((step) => step.toolCalls.map((call) => call.toolName)), [['get_weather'], []]);
      assert.match(result.text, /get_weather: 4 degrees and sleet in/);
      assert.equal(result.finishReason, 'stop');
    });

    it('the same loop streamed', async () => {
      const result = streamText({ model: model(), prompt: 'What is the weather in Oslo?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
      const kinds = new Set<string>();
      for await (const part of result.fullStream) {
        if (part.type === 'error') throw part.error;
        kinds.add(part.type);
      }
      assert.ok(kinds.has('tool-call') && kinds.has('tool-result') && kinds.has('text-delta'), [...kinds].join(', '));
      assert.match(await result.text, /get_weather: 4 degrees and sleet in/);
      assert.ok((await result.totalUsage).outputTokens! > 0);
    });

    it('an object by schema', async () => {
      const { object } = await generateObject({ model: model(), schema: city, prompt: 'Describe Oslo' });
      assert.equal(city.safeParse(object).success, true, JSON.stringify(object));
    });

    it('an image, as the SDK sends one', async () => {
      const { text } = await generateText({
        model: model(),
        messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image', image: Buffer.from(PNG, 'base64'), mediaType: 'image/png' }] }],
      });
      assert.match(text, /Image 1: image\/png, 1x1 pixels/);
    });
  });
}
