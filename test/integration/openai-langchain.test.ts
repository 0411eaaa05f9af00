import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AIMessage, AIMessageChunk, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { useGateway } from '../helpers/gateway.ts';

// LangChain's ChatOpenAI, unmodified, over both of its wire formats: chat completions and (useResponsesApi) the
// Responses API. It writes its tools' and formats' schemas with zod 4, which names draft 2020-12 in `$schema`:
// every tool call and structured output of it was refused with 400 until schemas were read in their own dialect.
const weather = tool(async ({ city }) => `4 degrees and sleet in ${city}`, {
  name: 'get_weather', description: 'The current weather of a city', schema: z.object({ city: z.string() }),
});
const city = z.object({ name: z.string(), population: z.number(), landmarks: z.array(z.string()) });

for (const useResponsesApi of [false, true]) {
  describe(`LangChain's ChatOpenAI against the gateway (${useResponsesApi ? 'Responses API' : 'chat completions'})`, () => {
    const gateway = useGateway();
    const model = () => new ChatOpenAI({ model: 'service-chat', apiKey: 'not-needed-in-development', maxRetries: 0, useResponsesApi, configuration: { baseURL: `${gateway().url}/v1` } });

    it('a bound tool is called, its result sent back, and the answer uses it', async () => {
      const withTools = model().bindTools([weather]);
      const question = new HumanMessage('What is the weather in Oslo right now?');
      const asked = await withTools.invoke([new SystemMessage('Answer briefly.'), question]);
      assert.equal(asked.tool_calls?.length, 1, JSON.stringify(asked.content));
      assert.equal(asked.tool_calls![0].name, 'get_weather');
      assert.equal(typeof asked.tool_calls![0].args.city, 'string');
      const result = await weather.invoke(asked.tool_calls![0]);
      const answered = await withTools.invoke([new SystemMessage('Answer briefly.'), question, asked, result]);
      assert.equal(answered.tool_calls?.length ?? 0, 0);
      assert.match(answered.text, /get_weather: 4 degrees and sleet/);
    });

    it('a tool call streamed: the chunks add up to the call', async () => {
      let whole: AIMessageChunk | undefined;
      for await (const chunk of await model().bindTools([weather], { tool_choice: 'get_weather' }).stream('Oslo, please')) whole = whole ? whole.concat(chunk) : chunk;
      assert.equal(whole?.tool_calls?.length, 1);
      assert.equal(whole!.tool_calls![0].name, 'get_weather');
      assert.deepEqual(Object.keys(whole!.tool_calls![0].args), ['city']);
    });

    it('structured output, by JSON schema (the default) and by function calling, parsed into the schema', async () => {
      for (const method of ['jsonSchema', 'functionCalling'] as const) {
        const { raw, parsed } = await model().withStructuredOutput(city, { method, includeRaw: true }).invoke('Describe Oslo');
        assert.deepEqual(city.safeParse(parsed).success, true, `${method}: ${JSON.stringify(parsed)}`);
        assert.ok(raw instanceof AIMessage && raw.usage_metadata && raw.usage_metadata.total_tokens > 0, method);
      }
    });

    it('a text answer streamed, with usage at the end', async () => {
      let whole: AIMessageChunk | undefined;
      for await (const chunk of await model().stream('Tell me about Bergen')) whole = whole ? whole.concat(chunk) : chunk;
      assert.match(whole!.text, /Mock answer to "Tell me about Bergen"/);
      assert.ok(whole!.usage_metadata && whole!.usage_metadata.output_tokens > 0);
    });
  });
}
