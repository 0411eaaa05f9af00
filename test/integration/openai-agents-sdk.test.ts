import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { useGateway } from '../helpers/gateway.ts';

// The OpenAI Agents SDK, unmodified, with its model calls sent to the gateway over both of its wire formats. Its
// chat-completions model sends an earlier answer back with `role` and `refusal: null` inside the text parts: a
// conversation of more than one turn was refused with "invalid messages.2.content: must be string".
setTracingDisabled(true);
const weather = tool({ name: 'get_weather', description: 'The current weather of a city', parameters: z.object({ city: z.string() }), execute: async ({ city }) => `4 degrees and sleet in ${city}` });

for (const useResponses of [true, false]) {
  describe(`the OpenAI Agents SDK against the gateway (${useResponses ? 'Responses API' : 'chat completions'})`, () => {
    const gateway = useGateway();
    const runner = () => new Runner({
      modelProvider: new OpenAIProvider({ useResponses, baseURL: `${gateway().url}/v1`, apiKey: 'not-needed-in-development' }),
    });
    const assistant = new Agent({ name: 'Assistant', instructions: 'Answer briefly.', model: 'service-chat', tools: [weather] });

    it('an agent calls its tool and answers with the result', async () => {
      const result = await runner().run(assistant, 'What is the weather in Oslo?');
      assert.match(String(result.finalOutput), /get_weather: 4 degrees and sleet in/);
    });

    it('a second turn with the first one\'s history', async () => {
      const first = await runner().run(assistant, 'My name is Ada.');
      const second = await runner().run(assistant, [...first.history, { role: 'user', content: 'What is my name?' }]);
      assert.match(String(second.finalOutput), /Mock answer to "What is my name\?" after 2 earlier messages/);
    });

    it('an agent with an output type answers an object of it', async () => {
      const describer = new Agent({ name: 'Describer', instructions: 'Describe the city.', model: 'service-chat', outputType: z.object({ name: z.string(), population: z.number() }) });
      const { finalOutput } = await runner().run(describer, 'Oslo');
      assert.equal(typeof finalOutput?.name, 'string');
      assert.equal(typeof finalOutput?.population, 'number');
    });
  });
}
