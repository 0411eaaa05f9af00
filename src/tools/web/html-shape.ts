import { Parser } from 'htmlparser2';

/** How big a page's element tree is, read without building it. */
export interface HtmlShape {
  /** The deepest nesting of elements, counted up to one past the limit asked for. */
  depth: number;
  /** Elements seen (up to where the count stopped, for a page deeper than the limit). */
  elements: number;
}

/**
 * The shape of the tree linkedom would build from this HTML, from the tokenizer linkedom itself parses with (same
 * options), so the counts match the document the readers would walk. The parser's stack of open elements costs
 * its depth at each tag, so the count stops one element past `depthLimit`: the pass stays linear in the page.
 */
export function measureHtml(html: string, depthLimit: number): HtmlShape {
  let open = 0;
  const shape: HtmlShape = { depth: 0, elements: 0 };
  const parser: Parser = new Parser({
    onopentag() {
      open += 1;
      shape.elements += 1;
      if (open > shape.depth) shape.depth = open;
      if (open > depthLimit) parser.pause();
    },
    onclosetag() { open -= 1; },
  }, { decodeEntities: true, lowerCaseAttributeNames: false });
  parser.write(html);
  parser.end();
  return shape;
}
