/** Query parameters that carry credentials (the SSE `api_key`, spec 5.5): never logged. */
const SECRET_PARAMETERS = /([?&](?:api_key|token|access_token)=)[^&#]*/gi;

export const redactUrl = (url: string) => url.replace(SECRET_PARAMETERS, '$1[REDACTED]');

interface LoggedRequest { method?: string; url?: string; ip?: string; hostname?: string; id?: string }

/** How requests appear in logs: no headers, and credentials removed from the URL. */
export const logSerializers = {
  req: (request: LoggedRequest) => ({
    method: request.method,
    url: request.url === undefined ? undefined : redactUrl(request.url),
    hostname: request.hostname,
    remote_address: request.ip,
  }),
};
