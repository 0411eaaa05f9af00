import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * fetch for an MCP server over HTTP whose every answer errors, while it is read, once it passes `maxBytes`: a
 * JSON answer then fails its call with the reason, and an event stream is cut (a call waiting on it ends at its
 * time limit; the standalone stream of server messages is opened again by the client). The answers of an MCP
 * server may carry whatever its tools read, so the gateway never holds more than this of one.
 */
export function cappedFetch(serverName: string, maxBytes: number): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body) return response;
    const limited = response.body.pipeThrough(byteLimit(maxBytes, `MCP server ${serverName} answered more than ${maxBytes} bytes (TOOLS_FETCH_MAX_BYTES)`));
    return new Response(limited, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function byteLimit(maxBytes: number, message: string): TransformStream<Uint8Array, Uint8Array> {
  let size = 0;
  return new TransformStream({
    transform(chunk, controller) {
      size += chunk.length;
      if (size > maxBytes) controller.error(new Error(message));
      else controller.enqueue(chunk);
    },
  });
}
