/**
 * The API's types are the SDK's, generated from the gateway's /openapi.json (`npm run generate -w @agentgate/sdk`;
 * a test fails when they fall behind the served document): one generated copy serves both.
 */
export type { paths } from '../../../packages/sdk/src/generated/openapi.ts';
export type { RequestBody, ResponseBody } from '../../../packages/sdk/src/types.ts';
