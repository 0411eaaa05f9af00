/** Where the last finished paragraph ends: after the last blank line with an even number of ``` fences before it. */
export function lastParagraphBreak(text: string): number {
  let cut = text.lastIndexOf('\n\n');
  while (cut > 0 && (text.slice(0, cut).match(/^\s*(```|~~~)/gm)?.length ?? 0) % 2 === 1) cut = text.lastIndexOf('\n\n', cut - 1);
  return cut > 0 ? cut + 2 : 0;
}
