/** The first `maxLength` characters of a text, and whether that left some out. */
export function cutText(text: string, maxLength: number): { content: string; truncated: boolean } {
  return text.length <= maxLength ? { content: text, truncated: false } : { content: text.slice(0, maxLength), truncated: true };
}
