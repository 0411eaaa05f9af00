/** Query parameters that say who sent the reader, never what the page is (reference §1.9). */
const TRACKING_PARAMETERS = new Set(['fbclid', 'gclid', 'msclkid', 'ref', 'source']);

const isTrackingParameter = (name: string) => {
  const lower = name.toLowerCase();
  return lower.startsWith('utm_') || TRACKING_PARAMETERS.has(lower);
};

/**
 * The form of a url two citations share when they are the same page: http or https only (anything else, or an
 * unparseable url, is undefined), scheme and host in lower case (an IDN host in its ASCII form), no `www.`, no
 * credentials, no default port, no fragment, no tracking parameters, the other parameters sorted by name, and no
 * trailing slash. A key for comparing, not a link to show: citations keep the url a tool returned.
 */
export function normalizeUrl(raw: string): string | undefined {
  const url = URL.parse(raw.trim());
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return undefined;
  const host = url.host.replace(/^www\./, '');
  const parameters = [...url.searchParams].filter(([name]) => !isTrackingParameter(name));
  // A stable sort: repeated parameters keep their order, which can matter to the page.
  parameters.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
  const query = parameters.length === 0 ? '' : `?${new URLSearchParams(parameters).toString()}`;
  return `${url.protocol}//${host}${url.pathname.replace(/\/+$/, '')}${query}`;
}

/** The host of a url without `www.` and port (`blog.example.com` stays whole): what credibility and the diversity cap judge. */
export function domainOf(url: string): string {
  return URL.parse(url)?.hostname.replace(/^www\./, '') ?? '';
}

const DOI_PATTERN = /\b(10\.\d{4,9}\/[^\s?#"<>]+)/;

/**
 * The DOI a url names (doi.org/10.…, a publisher's /doi/10.… path), in lower case as DOIs compare without case;
 * undefined when it names none. Two urls of one DOI are one citation whatever their hosts.
 */
export function doiOf(url: string): string | undefined {
  const parsed = URL.parse(url);
  if (!parsed) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(parsed.pathname);
  } catch {
    path = parsed.pathname;
  }
  const match = DOI_PATTERN.exec(path);
  return match ? match[1].replace(/[./,;)]+$/, '').toLowerCase() : undefined;
}
