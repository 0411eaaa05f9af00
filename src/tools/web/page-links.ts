/** A reference of a page made absolute against its base; undefined when it does not parse. */
export function absoluteUrl(reference: string, base: string): string | undefined {
  return URL.parse(reference.trim(), base)?.toString();
}

/** The form a crawl follows a link in: absolute, http(s) only, without its fragment. */
export function followableLink(href: string, base: string): string | undefined {
  const url = URL.parse(href.trim(), base);
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return undefined;
  url.hash = '';
  return url.toString();
}
