/**
 * The container health check: `node deploy/probe.ts [/health|/readiness]` exits 0 when this container's HTTP
 * server answers the path with a 2xx, and 1 otherwise, printing why (Docker keeps it in `docker inspect`).
 * The image has neither curl nor wget, and one script keeps the check in one place for the Dockerfile and
 * compose.yaml. It reads PORT as the server does.
 */
const TIMEOUT_MS = 4_000;

const path = process.argv[2] ?? '/health';
const port = process.env.PORT ?? '8080';
const url = `http://127.0.0.1:${port}${path}`;

try {
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  const body = await response.text();
  if (!response.ok) console.error(`${url} answered ${response.status}: ${body}`);
  process.exitCode = response.ok ? 0 : 1;
} catch (error) {
  console.error(`${url} did not answer: ${reasonOf(error)}`);
  process.exitCode = 1;
}

/** fetch says only "fetch failed"; its cause says why (connection refused, host unreachable...). */
function reasonOf(error: unknown): string {
  const cause = error instanceof Error ? error.cause ?? error : error;
  return cause instanceof Error ? cause.message : String(cause);
}
