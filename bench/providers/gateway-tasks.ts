/** What the providers benchmarks do with a gateway's tasks and their stand-in's calls. */

/** A task's first completion also names its session: that call is not the agent's. */
export const isTitleCall = (body: any): boolean => /^Write a title/.test(body?.messages?.[0]?.content ?? '');

/** Submits one task (`fields` beside the query); a submission the gateway refuses for now (429/503) is sent again after its Retry-After. */
export async function submitTask(gatewayUrl: string, query: string, fields: Record<string, unknown> = {}): Promise<string> {
  for (;;) {
    const response = await fetch(`${gatewayUrl}/api/v1/tasks`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, mode: 'simple', ...fields }),
    });
    if (response.status === 200) return ((await response.json()) as { task_id: string }).task_id;
    if (response.status !== 429 && response.status !== 503) throw new Error(`submit answered ${response.status}: ${await response.text()}`);
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000));
  }
}

export async function waitUntil(done: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!await done()) {
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
